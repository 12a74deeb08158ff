//! Where checkpoints keep file contents: `<agent dir>/checkpoints/<aa>/<sha256>`, one file per
//! distinct content (so the same content, in any session, is kept once), written to a
//! temporary name and renamed into place. Never inside the user's project or its git.
//! Bounded: a file larger than [`MAX_FILE_BYTES`] is not kept, and when the store grows past
//! [`MAX_STORE_BYTES`] the contents used least recently are removed (a rewind that needs one
//! then names its file as not kept).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// The largest file whose content is kept.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// How large the store may grow before its least recently used contents go.
pub const MAX_STORE_BYTES: u64 = 1024 * 1024 * 1024;

/// The content store.
#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
}

/// The SHA-256 of `bytes`, hex.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

impl BlobStore {
    pub fn new(agent_dir: &Path) -> Self {
        Self { dir: agent_dir.join("checkpoints") }
    }

    fn path(&self, digest: &str) -> PathBuf {
        self.dir.join(&digest[..2.min(digest.len())]).join(digest)
    }

    /// Keeps `bytes`; their digest.
    pub fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let digest = digest(bytes);
        let path = self.path(&digest);
        if path.exists() {
            // Used again: the pruning keeps what was used last.
            let _ = std::fs::File::options().append(true).open(&path).and_then(|f| f.set_modified(SystemTime::now()));
            return Ok(digest);
        }
        let folder = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(folder)?;
        let mut temp = tempfile::NamedTempFile::new_in(folder)?;
        temp.write_all(bytes)?;
        temp.persist(&path).map_err(|e| e.error)?;
        Ok(digest)
    }

    /// Whether the content `digest` is kept.
    pub fn has(&self, digest: &str) -> bool {
        valid(digest) && self.path(digest).is_file()
    }

    /// The content kept as `digest`; `None` when it is gone (or never was).
    pub fn get(&self, digest: &str) -> Option<Vec<u8>> {
        if !valid(digest) {
            return None;
        }
        std::fs::read(self.path(digest)).ok()
    }

    /// Removes the least recently used contents while the store is larger than `limit`.
    pub fn prune(&self, limit: u64) {
        let mut blobs: Vec<(SystemTime, u64, PathBuf)> = walk(&self.dir)
            .into_iter()
            .filter_map(|path| {
                let meta = std::fs::metadata(&path).ok()?;
                Some((meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), meta.len(), path))
            })
            .collect();
        let mut total: u64 = blobs.iter().map(|(_, len, _)| len).sum();
        if total <= limit {
            return;
        }
        blobs.sort();
        for (_, len, path) in blobs {
            if total <= limit {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }
}

/// Whether `digest` names a content (a session file could say anything).
fn valid(digest: &str) -> bool {
    digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The files one level down in `dir`'s folders.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(folders) = std::fs::read_dir(dir) else { return Vec::new() };
    folders
        .flatten()
        .filter_map(|folder| std::fs::read_dir(folder.path()).ok())
        .flat_map(|files| files.flatten().map(|f| f.path()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_are_kept_once_and_the_oldest_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let a = store.put(b"first").unwrap();
        assert_eq!(store.put(b"first").unwrap(), a);
        assert_eq!(walk(&store.dir).len(), 1, "the same content twice is kept once");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options().append(true).open(store.path(&a)).unwrap().set_modified(old).unwrap();
        let b = store.put(b"second").unwrap();
        assert_eq!(store.get(&a).as_deref(), Some(&b"first"[..]));
        store.prune(6);
        assert_eq!((store.get(&a), store.get(&b).as_deref()), (None, Some(&b"second"[..])));
        assert_eq!(store.get("../../etc/passwd"), None);
    }
}
