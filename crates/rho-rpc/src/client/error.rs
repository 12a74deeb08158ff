//! The client's one error type, and [`ExitReport`], what is known about a server that went away
//! (its exit status and the tail of its stderr), which every error caused by the exit carries.

use std::fmt;
use std::process::ExitStatus;

/// Why a client call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The program could not be started (not found, not executable, …).
    #[error("failed to start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// The server did not write its `ready` frame in time (the wording of xcsh's clients).
    #[error("Timed out waiting for RPC ready signal{}", stderr_suffix(stderr))]
    ReadyTimeout { stderr: String },
    /// The server's stdout ended (it exited or closed it) before the answer came.
    #[error("{0}")]
    Exited(ExitReport),
    /// Writing to the server's stdin failed while it was still running.
    #[error("failed to write to the RPC server: {0}")]
    Io(#[from] std::io::Error),
    /// A command could not be encoded as JSON.
    #[error("failed to encode the command: {0}")]
    Encode(#[from] serde_json::Error),
    /// The server's answer broke the protocol (unreadable response, unexpected data shape).
    #[error("RPC protocol error: {0}")]
    Protocol(String),
    /// The server answered `success: false`.
    #[error("{command} failed: {error}")]
    Rejected { command: String, error: String },
    /// The event stream was moved out with `take_events`, so this call cannot read it.
    #[error("the event stream was taken out of the client")]
    EventsTaken,
    /// A raw line handed to `send_line` held a line break, which would split it in two.
    #[error("a protocol line must not contain a line break")]
    LineBreak,
}

/// How the server ended: its exit status when it was known in time, and its captured stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitReport {
    /// `None` when stdout closed but the process had not exited within the grace period.
    pub status: Option<ExitStatus>,
    /// The tail of everything the server wrote to stderr.
    pub stderr: String,
}

impl fmt::Display for ExitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "RPC server exited ({status})")?,
            None => write!(f, "RPC server closed its output")?,
        }
        write!(f, "{}", stderr_suffix(&self.stderr))
    }
}

fn stderr_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim_end();
    if trimmed.is_empty() { String::new() } else { format!("; stderr:\n{trimmed}") }
}
