//! File checkpoints: what `write` and `edit` tell the session before and after they change a
//! file, so it can keep the file's earlier content and restore it on a rewind. The tools only
//! report; keeping (where, how much, for how long) is the session's.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What a file held at one moment, as a checkpoint keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Kept {
    /// There was no file.
    Absent,
    /// This content (its SHA-256, hex), kept.
    Blob(String),
    /// A file rho could not keep, and why (too large, unreadable, the store failed).
    NotKept(String),
}

/// Where the tools report the files they change.
pub trait Checkpoints: Send + Sync + std::fmt::Debug {
    /// Keeps what `path` holds before a tool writes it: `current` when the tool has read it
    /// already, else what is on disk.
    fn keep(&self, path: &Path, current: Option<&[u8]>) -> Kept;

    /// The tool wrote `written` to `path`, which held `before`.
    fn wrote(&self, path: &Path, before: Kept, written: &[u8]);
}
