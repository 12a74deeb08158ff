//! What a host shows about each server (`/mcp`, `get_state`): its state and how many tools it
//! brought.

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Being started (or restarted); its tools are not known yet (or are the previous ones).
    Starting,
    /// Connected; its tools are listed.
    Ready,
    /// Could not be started, or exited. A server that was ready keeps its tools listed and is
    /// restarted when one of them is next called.
    Failed(String),
    /// `enabled: false` in the config.
    Disabled,
}

impl ServerState {
    /// The state's name: `starting`, `ready`, `failed` or `disabled`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Failed(_) => "failed",
            Self::Disabled => "disabled",
        }
    }
}

/// One server's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    /// The tools it contributes to [`McpManager::tools`](crate::McpManager::tools).
    pub tool_count: usize,
    /// The prompts it contributes to [`McpManager::prompts`](crate::McpManager::prompts).
    pub prompt_count: usize,
}
