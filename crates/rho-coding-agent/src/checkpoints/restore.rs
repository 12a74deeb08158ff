//! Putting files back as a [`plan`](super::plan) says: each file is checked first (its content
//! now must be what rho last wrote, else it was changed outside rho and is left alone unless
//! forced) and then written from the store, or removed when it did not exist.

use std::path::Path;

use rho_rpc::{RewindFailure, RewindFiles};
use rho_tools::checkpoints::Kept;

use super::plan::{CheckpointRecord, FileMove};
use super::store::{BlobStore, digest};

/// Where a file stands before it is put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// It holds what rho last wrote: it can be put back.
    Ready,
    /// It was changed outside rho since.
    ChangedOutside,
    /// What it held at the target was not kept (too large, or gone from the store).
    NotKept,
}

/// What `path` holds now, as a checkpoint names it.
fn current(path: &Path) -> std::io::Result<Kept> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Kept::Blob(digest(&bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Kept::Absent),
        Err(e) => Err(e),
    }
}

/// Whether `file` can be put back.
pub fn status(store: &BlobStore, file: &FileMove) -> FileStatus {
    let kept = match &file.to {
        Kept::Absent => true,
        Kept::Blob(digest) => store.has(digest),
        Kept::NotKept(_) => false,
    };
    if !kept {
        return FileStatus::NotKept;
    }
    match current(Path::new(&file.path)) {
        Ok(now) if now == file.now && !matches!(now, Kept::NotKept(_)) => FileStatus::Ready,
        _ => FileStatus::ChangedOutside,
    }
}

/// Puts `files` back (those changed outside rho too when `force`); with `dry_run` only says
/// what it would do. Also returns the records of the files put back (what each held, what
/// it holds now), for a rewind that keeps the conversation to record.
pub fn restore(
    store: &BlobStore,
    files: &[FileMove],
    force: bool,
    dry_run: bool,
) -> (RewindFiles, Vec<CheckpointRecord>) {
    let mut done = RewindFiles::default();
    let mut records = Vec::new();
    for file in files {
        match status(store, file) {
            FileStatus::NotKept => {
                done.not_kept.push(file.path.clone());
                continue;
            }
            FileStatus::ChangedOutside if !force => {
                done.changed_outside.push(file.path.clone());
                continue;
            }
            _ => {}
        }
        if dry_run {
            done.restored.push(file.path.clone());
            continue;
        }
        match put_back(store, file) {
            Ok(before) => {
                records.push(CheckpointRecord { path: file.path.clone(), before, after: file.to.clone() });
                done.restored.push(file.path.clone());
            }
            Err(error) => done.failed.push(RewindFailure { path: file.path.clone(), error }),
        }
    }
    (done, records)
}

/// Writes (or removes) one file; what it held, kept, so the rewind can itself be undone.
fn put_back(store: &BlobStore, file: &FileMove) -> Result<Kept, String> {
    let path = Path::new(&file.path);
    let before = match std::fs::read(path) {
        Ok(bytes) => match store.put(&bytes) {
            Ok(digest) => Kept::Blob(digest),
            Err(e) => Kept::NotKept(e.to_string()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Kept::Absent,
        Err(e) => return Err(e.to_string()),
    };
    match &file.to {
        Kept::Absent => match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.to_string()),
            _ => {}
        },
        Kept::Blob(digest) => {
            let content = store.get(digest).ok_or("its content is gone from the store")?;
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            std::fs::write(path, content).map_err(|e| e.to_string())?;
        }
        Kept::NotKept(why) => return Err(why.clone()),
    }
    Ok(before)
}
