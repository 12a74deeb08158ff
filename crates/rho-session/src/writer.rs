//! Getting lines onto disk: the append handle of a session file, new files, and the one atomic
//! rewrite (persisting a migration). Session files are the user's alone (0600, in folders
//! made 0700): they hold everything said and every file read.
//!
//! Invariants: every entry goes out as one `write_all` of its whole line, `\n` included, on an
//! `O_APPEND` handle kept open, so a crash leaves at most one torn last line and never a line
//! interleaved with another. If a file does not end with `\n` (a torn or unterminated last
//! line), the next write starts with `\n`, so the new entry is on a line of its own. A failed
//! write (a full disk) is undone: the file is cut back to its length before the write, so no
//! torn line stays behind; where even that fails, the next write starts on a new line.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Result, SessionError};

/// How far each append pushes a line towards the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// One `write` per line: the line is in the OS's hands and survives rho being killed, but
    /// not a power loss before the OS writes it back.
    #[default]
    Flush,
    /// Also `fdatasync` after every line: survives power loss, at the price of a disk round
    /// trip per entry.
    SyncData,
}

/// The open end of a session file.
#[derive(Debug)]
pub(crate) struct AppendFile {
    path: PathBuf,
    file: Option<File>,
    needs_newline: bool,
    durability: Durability,
}

impl AppendFile {
    /// A handle on an existing file, opened on the first append.
    pub fn existing(path: PathBuf, needs_newline: bool, durability: Durability) -> Self {
        Self { path, file: None, needs_newline, durability }
    }

    /// Creates `path` (which must not exist) with `content` as its first lines.
    pub fn create_new(path: PathBuf, content: &[u8], durability: Durability) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| SessionError::io("Cannot create session directory", dir, e))?;
        }
        let file =
            OpenOptions::new().append(true).create_new(true).mode(0o600).open(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => SessionError::AlreadyExists { path: path.clone() },
                _ => SessionError::io("Cannot create session file", &path, e),
            })?;
        let mut this = Self { path, file: Some(file), needs_newline: false, durability };
        this.append(content)?;
        Ok(this)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn set_durability(&mut self, durability: Durability) {
        self.durability = durability;
    }

    /// Closes the handle (the next append reopens the path) and records whether the file now
    /// ends without a newline. Used after the file was replaced by a rename.
    pub fn reset(&mut self, needs_newline: bool) {
        self.file = None;
        self.needs_newline = needs_newline;
    }

    /// Appends `lines` (whole lines, each ending in `\n`) with one write.
    pub fn append(&mut self, lines: &[u8]) -> Result<()> {
        let file = match &mut self.file {
            Some(f) => f,
            slot @ None => slot.insert(
                OpenOptions::new()
                    .append(true)
                    .open(&self.path)
                    .map_err(|e| SessionError::io("Cannot open session file", &self.path, e))?,
            ),
        };
        let before = file.metadata().map(|m| m.len()).ok();
        let result = if self.needs_newline {
            let mut buf = Vec::with_capacity(lines.len() + 1);
            buf.push(b'\n');
            buf.extend_from_slice(lines);
            file.write_all(&buf)
        } else {
            file.write_all(lines)
        };
        if let Err(e) = result {
            let undone = before.is_some_and(|len| file.set_len(len).is_ok());
            if !undone {
                self.needs_newline = true;
            }
            return Err(SessionError::io("Cannot append to session file", &self.path, e));
        }
        self.needs_newline = false;
        if self.durability == Durability::SyncData {
            file.sync_data().map_err(|e| SessionError::io("Cannot sync session file", &self.path, e))?;
        }
        Ok(())
    }
}

/// An advisory lock on a session file, held while a session writes to it: a second rho on the
/// same file would grow a second branch from the same leaf without either knowing.
#[derive(Debug)]
pub(crate) struct FileLock {
    _lock: nix::fcntl::Flock<File>,
}

impl FileLock {
    /// Takes the lock, or says the file is in use.
    pub fn take(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| SessionError::io("Cannot open session file", path, e))?;
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(Self { _lock: lock }),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Err(SessionError::Locked { path: path.to_path_buf() }),
            Err((_, errno)) => Err(SessionError::io("Cannot lock session file", path, errno.into())),
        }
    }
}

/// Replaces `path` with `content` without ever leaving a half-written file at `path`: the content
/// goes to a temporary file in the same directory, is synced, the original is kept as
/// `backup` (a hard link, or a copy where links are not supported), and the temporary file is
/// renamed over the original.
pub(crate) fn replace_with_backup(path: &Path, content: &[u8], backup: &Path) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));

    let write_tmp = || -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
        f.write_all(content)?;
        f.sync_all()
    };
    if let Err(e) = write_tmp() {
        let _ = fs::remove_file(&tmp);
        return Err(SessionError::io("Cannot write migrated session", &tmp, e));
    }
    if fs::hard_link(path, backup).is_err()
        && let Err(e) = fs::copy(path, backup).and_then(|_| File::open(backup)?.sync_all())
    {
        let _ = fs::remove_file(&tmp);
        return Err(SessionError::io("Cannot back up session file", backup, e));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(SessionError::io("Cannot replace session file", path, e));
    }
    // Make the rename itself durable; not every platform can sync a directory.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// `<path>.v<version>.bak`, or with a `.N` suffix if that name is taken.
pub(crate) fn backup_path(path: &Path, version: u32) -> PathBuf {
    let with_suffix = |suffix: String| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let first = with_suffix(format!(".v{version}.bak"));
    if !first.exists() {
        return first;
    }
    (2..).map(|n| with_suffix(format!(".v{version}.bak.{n}"))).find(|p| !p.exists()).unwrap_or(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

    #[test]
    fn a_new_file_gets_its_directory_and_first_lines_and_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a").join("b").join("s.jsonl");
        let mut file = AppendFile::create_new(path.clone(), b"{\"h\":1}\n", Durability::Flush).unwrap();
        file.append(b"{\"e\":1}\n").unwrap();
        assert_eq!(read(&path), "{\"h\":1}\n{\"e\":1}\n");

        // Private to the user: the file and the folders made for it.
        let mode = |p: &Path| std::os::unix::fs::PermissionsExt::mode(&fs::metadata(p).unwrap().permissions()) & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(&dir.path().join("a").join("b")), 0o700);

        let again = AppendFile::create_new(path.clone(), b"{}\n", Durability::Flush).unwrap_err();
        assert!(matches!(again, SessionError::AlreadyExists { .. }), "{again}");
        assert_eq!(read(&path), "{\"h\":1}\n{\"e\":1}\n");
    }

    #[test]
    fn a_file_without_a_final_newline_gets_one_before_the_next_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "{\"h\":1}\n{\"torn").unwrap();
        let mut file = AppendFile::existing(path.clone(), true, Durability::SyncData);
        file.append(b"{\"e\":1}\n").unwrap();
        file.append(b"{\"e\":2}\n").unwrap();
        assert_eq!(read(&path), "{\"h\":1}\n{\"torn\n{\"e\":1}\n{\"e\":2}\n");
    }

    #[test]
    fn an_existing_file_is_opened_on_the_first_append_and_reopened_after_a_reset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut file = AppendFile::existing(path.clone(), false, Durability::Flush);
        // Nothing is created for a path that is not there.
        assert!(matches!(file.append(b"x\n"), Err(SessionError::Io { .. })));
        assert!(!path.exists());

        fs::write(&path, "a\n").unwrap();
        file.reset(false);
        file.append(b"b\n").unwrap();
        // The file is replaced behind the handle (as a migration does); a reset follows it.
        fs::write(dir.path().join("new"), "c").unwrap();
        fs::rename(dir.path().join("new"), &path).unwrap();
        file.reset(true);
        file.append(b"d\n").unwrap();
        assert_eq!(read(&path), "c\nd\n");
    }

    #[test]
    fn replace_with_backup_keeps_the_original_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "old\n").unwrap();
        let backup = backup_path(&path, 1);
        replace_with_backup(&path, b"new\n", &backup).unwrap();
        assert_eq!(read(&path), "new\n");
        assert_eq!(read(&backup), "old\n");
        let mut names: Vec<String> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, ["s.jsonl", "s.jsonl.v1.bak"]);
    }

    #[test]
    fn backup_names_never_reuse_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        assert_eq!(backup_path(&path, 2), dir.path().join("s.jsonl.v2.bak"));
        fs::write(dir.path().join("s.jsonl.v2.bak"), "").unwrap();
        assert_eq!(backup_path(&path, 2), dir.path().join("s.jsonl.v2.bak.2"));
        fs::write(dir.path().join("s.jsonl.v2.bak.2"), "").unwrap();
        assert_eq!(backup_path(&path, 2), dir.path().join("s.jsonl.v2.bak.3"));
        assert_eq!(backup_path(&path, 1), dir.path().join("s.jsonl.v1.bak"));
    }
}
