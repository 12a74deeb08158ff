//! rho-mcp's errors. A tool call turns them into a [`ToolError`] whose text the model reads, so
//! each message says which server, what happened and what follows.

use std::time::Duration;

use rho_agent::ToolError;
use rho_agent::tool::OPERATION_ABORTED;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// No server of that name is configured.
    #[error("no MCP server named \"{0}\" is configured")]
    UnknownServer(String),
    /// No ready server offers a prompt of that command name.
    #[error("no MCP prompt named \"{0}\"")]
    UnknownPrompt(String),
    /// The server has `enabled: false`.
    #[error("MCP server \"{0}\" is disabled")]
    Disabled(String),
    /// The server could not be started (spawn, connect or initialize failed, or took too long).
    /// The next use tries again.
    #[error("MCP server \"{server}\" could not be started: {reason}")]
    Start { server: String, reason: String },
    /// The server went away during the request; the next use restarts it.
    #[error("MCP server \"{server}\" exited during the request; it is restarted on next use")]
    Exited { server: String },
    /// The server sent a message over [`crate::child::MAX_MESSAGE_BYTES`]; its connection was
    /// closed (the next use restarts it).
    #[error(
        "MCP server \"{server}\" sent a message over {} MiB (a result too large to take); its connection was closed, and it is restarted on next use",
        crate::child::MAX_MESSAGE_BYTES / (1024 * 1024)
    )]
    Oversized { server: String },
    /// The server answered with a JSON-RPC error, or the transport failed.
    #[error("MCP server \"{server}\": {message}")]
    Request { server: String, message: String },
    /// No answer within the per-call timeout; the request was cancelled on the server.
    #[error("MCP tool \"{tool}\" of server \"{server}\" did not answer within {}; the call was cancelled", seconds(*.timeout))]
    Timeout { server: String, tool: String, timeout: Duration },
    /// The caller's cancellation token fired; the request was cancelled on the server.
    #[error("{OPERATION_ABORTED}")]
    Aborted,
    /// [`McpManager::shutdown`](crate::McpManager::shutdown) was called.
    #[error("MCP servers are shut down")]
    ShutDown,
}

impl From<McpError> for ToolError {
    fn from(e: McpError) -> Self {
        ToolError::new(e.to_string())
    }
}

fn seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 { format!("{secs:.0} s") } else { format!("{secs:.1} s") }
}
