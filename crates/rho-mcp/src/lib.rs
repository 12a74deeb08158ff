//! rho's MCP (Model Context Protocol) client: the tools of the configured MCP servers as
//! [`rho_agent::Tool`]s, on the official Rust SDK (`rmcp`).
//!
//! ```ignore
//! let (config, diagnostics) = McpConfig::load(&cwd, &agent_dir);
//! let options = McpOptions::new(&cwd).with_log_dir(agent_dir.join("logs"));
//! let mcp = McpManager::start_with_diagnostics(config, options, diagnostics);
//! // later, and again whenever `mcp.subscribe()` fires:
//! let tools = mcp.tools();          // Vec<Arc<dyn rho_agent::Tool>>
//! let status = mcp.status();        // starting / ready / failed(reason) / disabled
//! for d in mcp.take_diagnostics() { eprintln!("{d}") }
//! mcp.shutdown().await;
//! ```
//!
//! - [`McpConfig`]: `mcpServers` from `<agent dir>/mcp.json`, `<cwd>/.mcp.json` and
//!   `<cwd>/.rho/mcp.json` (Claude Code's format; project over user), `${VAR}` expansion;
//! - [`McpManager`]: servers started in parallel in the background, restarted on next use
//!   after an exit, `tools/list_changed` followed, stderr to a log file;
//! - tools named `mcp__<server>__<tool>` (see [`name`]); results mapped to rho content
//!   (text, images, resources as text, `structuredContent` in `details`, `isError` as a tool
//!   error); abort sends `notifications/cancelled`; a per-call timeout.
//!
//! Transports: stdio (a process group per server), streamable HTTP, and the older HTTP+SSE.
#![deny(clippy::print_stdout)]

mod cap;
mod child;
mod config;
mod config_parse;
mod connect;
mod diagnostic;
mod error;
mod expand;
mod handler;
mod http;
mod manager;
pub mod name;
mod options;
mod prompt;
mod result;
mod server;
mod shared;
mod sse;
mod status;
mod tool;

pub use config::{Exposure, McpConfig, RemoteServer, ServerConfig, StdioServer, Transport};
pub use diagnostic::Diagnostic;
pub use error::McpError;
pub use manager::McpManager;
pub use options::{DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, McpOptions};
pub use prompt::{McpPrompt, McpPromptArgument, McpPromptMessage, PromptRole};
pub use status::{ServerState, ServerStatus};
