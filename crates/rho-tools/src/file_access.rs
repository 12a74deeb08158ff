//! Where the file tools read and write text: the local file system unless the session hands
//! them a [`FileAccess`]. An editor that drives rho (ACP mode) serves its open buffers this way,
//! unsaved changes included, and sees every write the agent makes as an edit of its own.
//!
//! The hook is narrow on purpose: whole text files in, whole text files out. Everything else
//! stays local, so errors read the same in every mode: a path that is missing, a directory, an
//! image or a binary file is handled by the tools as before; only a regular text file that exists
//! is read through the hook, and `write` / `edit` write through it.

use std::io;
use std::path::{Path, PathBuf};

use futures::future::BoxFuture;

/// Reads and writes whole text files for the `read`, `edit` and `write` tools. Paths are
/// absolute (resolved against the session's working directory).
pub trait FileAccess: Send + Sync + std::fmt::Debug {
    /// The text of `path` as the file's owner has it now.
    fn read_text(&self, path: PathBuf) -> BoxFuture<'static, io::Result<String>>;

    /// Replaces the text of `path` (the file is created when missing; its parent exists).
    fn write_text(&self, path: PathBuf, content: String) -> BoxFuture<'static, io::Result<()>>;
}

/// Bytes looked at to tell a text file from an image or a binary one.
const SNIFF_BYTES: usize = 8192;

/// True for a regular file whose first bytes are neither an image nor binary (no NUL): the files
/// a [`FileAccess`] serves.
pub(crate) fn is_text_file(path: &Path) -> bool {
    use std::io::Read;
    let Ok(meta) = std::fs::metadata(path) else { return false };
    if !meta.is_file() {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else { return false };
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    if file.take(SNIFF_BYTES as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    crate::read::image_mime(&head).is_none() && !head.contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_existing_text_files_count_as_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        std::fs::write(dir.path().join("p.png"), b"\x89PNG\r\n\x1a\n0000").unwrap();
        std::fs::write(dir.path().join("b.bin"), b"ab\0cd").unwrap();
        assert!(is_text_file(&dir.path().join("a.txt")));
        assert!(!is_text_file(&dir.path().join("p.png")));
        assert!(!is_text_file(&dir.path().join("b.bin")));
        assert!(!is_text_file(&dir.path().join("missing.txt")));
        assert!(!is_text_file(dir.path()));
    }
}
