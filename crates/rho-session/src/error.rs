//! The one error type of the session layer. Every variant that concerns a file names its path,
//! so a host that reports the message verbatim tells the user which file is at fault.

use std::io;
use std::path::PathBuf;

/// What can go wrong opening, creating or writing a session.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The session file to open does not exist. Not retryable; the wording is the protocol's
    /// (`switch_session` to a missing path).
    #[error("Session file not found: {}", path.display())]
    NotFound { path: PathBuf },

    /// `create_at` was asked to create a file that is already there; rho never overwrites one.
    #[error("Session file already exists: {}", path.display())]
    AlreadyExists { path: PathBuf },

    /// The first line of the file is not a session header. The file is left untouched.
    #[error("Not a session file: {} ({reason})", path.display())]
    InvalidHeader { path: PathBuf, reason: String },

    /// A session id that cannot name a file (`--session-id`).
    #[error("Invalid session id \"{0}\": use letters, digits, '.', '_' and '-'")]
    InvalidId(String),

    /// An entry id that is not in the session (branch, label, fork targets).
    #[error("Entry {0} not found")]
    EntryNotFound(String),

    /// Summaries have entry types of their own (`compaction`, `branch_summary`) and are never
    /// written as `message` entries.
    #[error("{0} messages are recorded with their own entry type, not as a message entry")]
    NotAMessageEntry(&'static str),

    /// Reading or writing a file failed. Retryable when the cause is (disk full, interrupted).
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// A message could not be written: it is kept, in order, and written before the next entry
    /// (the conversation goes on; the file catches up once the disk takes it).
    #[error("Session file not saved: {source} ({pending} entries wait to be written)")]
    Unsaved {
        pending: usize,
        #[source]
        source: Box<SessionError>,
    },

    /// Another process has the session file open for writing (an advisory lock).
    #[error("Session file is in use by another process: {}", path.display())]
    Locked { path: PathBuf },

    /// An entry could not be turned into JSON (a `details` value with a non-string map key).
    #[error("Cannot serialize session entry: {0}")]
    Serialize(#[from] serde_json::Error),
}

impl SessionError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io { action, path: path.into(), source }
    }
}

pub type Result<T, E = SessionError> = std::result::Result<T, E>;
