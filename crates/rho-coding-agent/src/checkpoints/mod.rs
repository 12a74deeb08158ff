//! File checkpoints and rewind. Before `write` or `edit` changes a file, what it held is kept
//! in the agent directory's content store ([`store`]), and the change is recorded in the
//! session as a `rho.checkpoint` custom entry (`{path, before, after}`) where it happened in
//! the tree. Moving the files to another point of the tree ([`plan`]) — back to before a user
//! message (a rewind), or to another branch — puts each file rho changed since back as it was
//! there ([`restore`]); a file changed outside rho since is named and left alone unless
//! forced. What `bash` commands did to files is not recorded, and so not restored.

pub mod plan;
pub mod restore;
pub mod store;

use std::path::Path;
use std::sync::{Arc, OnceLock, Weak};

use rho_tools::checkpoints::{Checkpoints, Kept};

use crate::agent_session::Inner;
pub use plan::{CHECKPOINT_ENTRY, CheckpointRecord, FileMove};
pub use rho_rpc::RewindFiles;
use store::{BlobStore, MAX_FILE_BYTES, MAX_STORE_BYTES};

/// The session's checkpoints: keeps what the tools report and records it in the session.
/// Weak, so the tools (held by the session) do not keep the session alive.
#[derive(Debug)]
pub struct SessionCheckpoints {
    store: BlobStore,
    session: OnceLock<Weak<Inner>>,
    /// The store is trimmed once per process, at the first change.
    pruned: std::sync::Once,
}

impl SessionCheckpoints {
    pub fn new(agent_dir: &Path) -> Arc<Self> {
        Arc::new(Self { store: BlobStore::new(agent_dir), session: OnceLock::new(), pruned: std::sync::Once::new() })
    }

    pub(crate) fn attach(&self, inner: &Arc<Inner>) {
        let _ = self.session.set(Arc::downgrade(inner));
    }

    /// The content store.
    pub fn store(&self) -> &BlobStore {
        &self.store
    }

    fn put(&self, bytes: &[u8]) -> Kept {
        self.pruned.call_once(|| self.store.prune(MAX_STORE_BYTES));
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Kept::NotKept(format!("larger than {} MiB", MAX_FILE_BYTES / (1024 * 1024)));
        }
        match self.store.put(bytes) {
            Ok(digest) => Kept::Blob(digest),
            Err(e) => {
                tracing::warn!("checkpoints: a file's content could not be kept: {e}");
                Kept::NotKept(e.to_string())
            }
        }
    }
}

impl Checkpoints for SessionCheckpoints {
    fn keep(&self, path: &Path, current: Option<&[u8]>) -> Kept {
        if let Some(bytes) = current {
            return self.put(bytes);
        }
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Kept::Absent,
            Ok(meta) if meta.len() > MAX_FILE_BYTES => {
                Kept::NotKept(format!("larger than {} MiB", MAX_FILE_BYTES / (1024 * 1024)))
            }
            _ => match std::fs::read(path) {
                Ok(bytes) => self.put(&bytes),
                Err(e) => Kept::NotKept(e.to_string()),
            },
        }
    }

    fn wrote(&self, path: &Path, before: Kept, written: &[u8]) {
        let record = CheckpointRecord { path: path.display().to_string(), before, after: self.put(written) };
        let Some(inner) = self.session.get().and_then(Weak::upgrade) else { return };
        let data = serde_json::to_value(record).ok();
        if let Err(e) = inner.transcript.session().append_custom(CHECKPOINT_ENTRY, data) {
            tracing::warn!("checkpoints: the change of {} could not be recorded: {e}", path.display());
        }
    }
}
