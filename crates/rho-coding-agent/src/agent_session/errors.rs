//! Why a session command failed, with the texts hosts see (docs/protocol.md, "Exact strings").
//! Whether a failure is answered as a correlated error or as a handler failure is the mode's
//! business.

use crate::compaction::CompactionError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionCommandError {
    /// `set_model` with a model that is not available.
    #[error("Model not found: {0}")]
    ModelNotFound(String),
    /// The model exists but its provider has no credentials (`provider/id`, or the provider).
    #[error("No API key for {0}")]
    NoApiKey(String),
    #[error("No model selected")]
    NoModel,
    #[error("Session name cannot be empty")]
    EmptySessionName,
    #[error("Invalid thinking level: {0}")]
    InvalidThinkingLevel(String),
    #[error("Invalid entry ID for branching")]
    InvalidBranchEntry,
    #[error("Cannot export in-memory session to HTML")]
    InMemoryExport,
    #[error("Session file not found: {0}")]
    SessionNotFound(String),
    #[error(transparent)]
    Compaction(#[from] CompactionError),
    /// Reading or writing the session file failed.
    #[error("{0}")]
    Session(String),
    #[error("{0}")]
    Invalid(String),
    /// An extension's `session_before_*` handler cancelled the command; nothing changed.
    #[error("Cancelled by an extension")]
    Cancelled,
}

impl From<rho_session::SessionError> for SessionCommandError {
    fn from(e: rho_session::SessionError) -> Self {
        Self::Session(e.to_string())
    }
}
