//! rho's own tools beyond the built-in file and shell tools of rho-tools: the `ask` tool, which
//! puts a question to the user through the [`Ui`](crate::ui::Ui) service.

pub mod ask;

pub use ask::AskTool;
