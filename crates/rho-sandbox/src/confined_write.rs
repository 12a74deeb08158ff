//! The built-in tools' writes under a sandbox, made without a race: the path is checked, then
//! opened from the writable root that holds it, one component at a time, by `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`. The path checked is the resolved one (no symlink
//! left in it), so a symlink found on the way was put there after the check, by a command
//! racing the write: the write is refused, and nothing outside the root is created or changed.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::policy::{SandboxDenied, SandboxMode, SandboxPolicy, resolve};

/// Why a write did not happen.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Denied(#[from] SandboxDenied),
    /// The file system's own refusal, with the operation (`mkdir`, `open`) and its path.
    #[error("{op} {}: {source}", path.display())]
    Io { op: &'static str, path: PathBuf, source: std::io::Error },
}

impl SandboxPolicy {
    /// Writes `contents` to `path` (absolute), its folders made as needed, where the policy
    /// allows it.
    pub fn write_file(&self, path: &Path, contents: &[u8]) -> Result<(), WriteError> {
        self.check_write(path)?;
        if self.mode != SandboxMode::WorkspaceWrite {
            return plain_write(path, contents);
        }
        #[cfg(target_os = "linux")]
        return self.write_beneath(path, contents);
        #[cfg(not(target_os = "linux"))]
        plain_write(path, contents)
    }

    #[cfg(target_os = "linux")]
    fn write_beneath(&self, path: &Path, contents: &[u8]) -> Result<(), WriteError> {
        let resolved = resolve(path);
        // The outermost root: what lies above it is not writable, so cannot be swapped.
        let Some(root) =
            self.writable_roots.iter().filter(|root| resolved.starts_with(root)).min_by_key(|r| r.as_os_str().len())
        else {
            return Err(raced(path).into());
        };
        let parts: Vec<&std::ffi::OsStr> = resolved
            .strip_prefix(root)
            .unwrap_or(Path::new(""))
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        write_parts(root, &parts, path, contents)
    }
}

/// Opens `root`/`parts…` beneath `root` with no link followed, making missing folders, and
/// writes `contents` there; `shown` is the path as asked for, for messages.
#[cfg(target_os = "linux")]
fn write_parts(root: &Path, parts: &[&std::ffi::OsStr], shown: &Path, contents: &[u8]) -> Result<(), WriteError> {
    use rustix::fs::{Mode, OFlags, ResolveFlags, mkdirat, openat2};
    let path = shown;
    let Some((file, folders)) = parts.split_last() else {
        return plain_write(path, contents);
    };
    let io = |op: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |e: rustix::io::Errno| WriteError::Io { op, path, source: e.into() }
    };
    let beneath = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS;
    let folder_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(root, folder_flags, Mode::empty()).map_err(io("open", root))?;
    let mut walked = root.to_path_buf();
    for name in folders {
        walked.push(name);
        dir = match openat2(&dir, *name, folder_flags, Mode::empty(), beneath) {
            Err(rustix::io::Errno::NOENT) => {
                match mkdirat(&dir, *name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(io("mkdir", &walked)(e)),
                }
                openat2(&dir, *name, folder_flags, Mode::empty(), beneath)
            }
            other => other,
        }
        .map_err(|e| refusal(e, path, "mkdir", &walked))?;
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC | OFlags::NOCTTY;
    walked.push(file);
    let fd = openat2(&dir, *file, flags, Mode::from_bits_truncate(0o666), beneath)
        .map_err(|e| refusal(e, path, "open", &walked))?;
    std::fs::File::from(fd).write_all(contents).map_err(|source| WriteError::Io { op: "open", path: walked, source })
}

/// A link met on the way (`ELOOP`, `EXDEV`) is a race; anything else the file system's answer.
#[cfg(target_os = "linux")]
fn refusal(errno: rustix::io::Errno, path: &Path, op: &'static str, at: &Path) -> WriteError {
    match errno {
        rustix::io::Errno::LOOP | rustix::io::Errno::XDEV => raced(path).into(),
        other => WriteError::Io { op, path: at.to_path_buf(), source: other.into() },
    }
}

fn raced(path: &Path) -> SandboxDenied {
    SandboxDenied::new(format!(
        "{} changed while it was being written (a link appeared in its path): nothing was written",
        path.display()
    ))
}

fn plain_write(path: &Path, contents: &[u8]) -> Result<(), WriteError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| WriteError::Io {
            op: "mkdir",
            path: parent.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(path, contents).map_err(|source| WriteError::Io { op: "open", path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_makes_its_folders_and_a_link_planted_on_the_way_is_refused() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, &project, &[], false);
        policy.write_file(&project.join("a/b/c.txt"), b"hi").unwrap();
        assert_eq!(std::fs::read_to_string(project.join("a/b/c.txt")).unwrap(), "hi");
        // A link inside the project to a folder inside it is followed by the check itself.
        std::os::unix::fs::symlink(project.join("a"), project.join("alias")).unwrap();
        policy.write_file(&project.join("alias/d.txt"), b"via").unwrap();
        assert_eq!(std::fs::read_to_string(project.join("a/d.txt")).unwrap(), "via");
        // What a race leaves: the folder the check saw is a link out by the time of the open.
        std::os::unix::fs::symlink(dir.path().join("outside"), project.join("swapped")).unwrap();
        let parts = ["swapped", "x.txt"].map(std::ffi::OsStr::new);
        let root = project.canonicalize().unwrap();
        let error = write_parts(&root, &parts, &project.join("swapped/x.txt"), b"out").unwrap_err().to_string();
        assert!(error.contains("changed while it was being written"), "{error}");
        assert!(!dir.path().join("outside/x.txt").exists());
    }
}
