//! rho's own tools beyond the built-in file and shell tools of rho-tools: the `ask` tool, which
//! puts a question to the user through the [`Ui`](crate::ui::Ui) service, and `tool_search`,
//! which loads the deferred tools a query matches.

pub mod ask;
pub mod tool_rank;
pub mod tool_search;

pub use ask::AskTool;
pub use tool_search::ToolSearchTool;
