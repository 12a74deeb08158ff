//! Why an export failed. The first three texts are the reference's, which hosts show as they
//! are; every variant that concerns a file names it.

use std::path::PathBuf;

/// An HTML export that could not be written. None is retryable without a change: the session
/// has to be written first, the path fixed, or the disk freed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The session has no file (`--no-session`).
    #[error("Cannot export in-memory session to HTML")]
    InMemorySession,

    /// The session file is not written yet, or holds no entry besides its header.
    #[error("Nothing to export yet - start a conversation first")]
    NothingToExport,

    /// The session file to export does not exist (CLI `--export <file>`).
    #[error("File not found: {}", path.display())]
    FileNotFound { path: PathBuf },

    /// The session file could not be read as a session (not a session file, unreadable).
    #[error(transparent)]
    Session(#[from] rho_session::SessionError),

    /// Reading the session file or writing the page failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// `Cannot read` or `Cannot write`.
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
