//! The policy a sandbox mode means: where writes may go, whether the network is reachable, and
//! the in-process check the built-in tools make before they write.

use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Codex's sandbox modes, by Codex's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Commands may read everything and write nothing (but `/dev/null`).
    ReadOnly,
    /// Commands may read everything and write in the project, the temp dir and the writable
    /// roots.
    WorkspaceWrite,
    /// No sandbox: the user's full authority (pi's behaviour, the default).
    #[default]
    DangerFullAccess,
}

impl SandboxMode {
    pub const NAMES: [&'static str; 3] = ["read-only", "workspace-write", "danger-full-access"];

    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "read-only" => Some(SandboxMode::ReadOnly),
            "workspace-write" => Some(SandboxMode::WorkspaceWrite),
            "danger-full-access" => Some(SandboxMode::DangerFullAccess),
            _ => None,
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a confined command (and a built-in tool) may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Where writes may go (workspace-write only), each resolved (symlinks followed) when the
    /// policy was made.
    #[serde(with = "crate::paths")]
    pub writable_roots: Vec<PathBuf>,
    /// What stays read-only inside the writable roots: the files that make rho, git or pi run
    /// code later, outside any sandbox (see [`PROTECTED_NAMES`]), each resolved.
    #[serde(with = "crate::paths", default)]
    pub read_only: Vec<PathBuf>,
    /// Whether commands may open network connections (TCP, UDP, any socket but a Unix pair).
    pub network: bool,
}

/// The entries of a writable root that stay read-only: git's repository (its hooks, its config's
/// fsmonitor, filters and editors run outside the box on the user's next git command, or on
/// rho's own) and the project's rho and pi folders (extensions, settings, MCP servers and
/// agents are loaded from them at the next start).
pub const PROTECTED_NAMES: [&str; 3] = [".git", ".rho", ".pi"];

/// A write the policy does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SandboxDenied(String);

impl SandboxDenied {
    pub(crate) fn new(message: String) -> Self {
        Self(message)
    }
}

impl SandboxPolicy {
    /// The policy of `mode` for a session in `cwd`: in workspace-write the project, the temp dir
    /// and `extra_roots` (relative ones against `cwd`) are writable, and the network is open when
    /// `network` says so. Roots that do not exist are left out.
    pub fn new(mode: SandboxMode, cwd: &Path, extra_roots: &[PathBuf], network: bool) -> Self {
        let writable_roots = match mode {
            SandboxMode::WorkspaceWrite => {
                let mut roots = vec![cwd.to_path_buf(), std::env::temp_dir(), PathBuf::from("/tmp")];
                roots.extend(extra_roots.iter().map(|root| cwd.join(root)));
                let mut resolved: Vec<PathBuf> = roots.iter().filter_map(|root| root.canonicalize().ok()).collect();
                resolved.sort();
                resolved.dedup();
                resolved
            }
            SandboxMode::ReadOnly | SandboxMode::DangerFullAccess => Vec::new(),
        };
        let read_only = protected_within(&writable_roots);
        // `network` opens it in workspace-write only: read-only is closed, full access open.
        let network = match mode {
            SandboxMode::DangerFullAccess => true,
            SandboxMode::WorkspaceWrite => network,
            SandboxMode::ReadOnly => false,
        };
        Self { mode, writable_roots, read_only, network }
    }

    /// No sandbox at all.
    pub fn full_access() -> Self {
        Self { mode: SandboxMode::DangerFullAccess, writable_roots: Vec::new(), read_only: Vec::new(), network: true }
    }

    /// Whether commands run confined.
    pub fn confines(&self) -> bool {
        self.mode != SandboxMode::DangerFullAccess
    }

    /// Whether writing `path` (absolute) is allowed, resolved as the kernel would: symlinks
    /// followed (the file's own too), `..` taken after them.
    pub fn check_write(&self, path: &Path) -> Result<(), SandboxDenied> {
        match self.mode {
            SandboxMode::DangerFullAccess => Ok(()),
            SandboxMode::ReadOnly => Err(SandboxDenied(format!(
                "The read-only sandbox allows no writes: {} was not changed",
                path.display()
            ))),
            SandboxMode::WorkspaceWrite => {
                let resolved = resolve(path);
                let shown = if resolved == path {
                    path.display().to_string()
                } else {
                    format!("{} (which is {})", path.display(), resolved.display())
                };
                if let Some(kept) = self.read_only.iter().find(|kept| resolved.starts_with(kept)) {
                    return Err(SandboxDenied(format!(
                        "The workspace-write sandbox keeps {} read-only: {shown} was not changed",
                        kept.display()
                    )));
                }
                if self.writable_roots.iter().any(|root| resolved.starts_with(root)) {
                    return Ok(());
                }
                Err(SandboxDenied(format!(
                    "The workspace-write sandbox allows writes only in {}: {shown} is outside",
                    self.roots_list()
                )))
            }
        }
    }

    fn roots_list(&self) -> String {
        self.writable_roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// The protected entries of each root that exist, resolved, with the repository a `.git` file
/// points to (a worktree's `gitdir:`, and that repository's common dir).
fn protected_within(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut kept = Vec::new();
    for root in roots {
        for name in PROTECTED_NAMES {
            let entry = root.join(name);
            if std::fs::symlink_metadata(&entry).is_err() {
                continue;
            }
            if name == ".git"
                && let Some(gitdir) = gitdir_of(&entry)
            {
                if let Some(common) = std::fs::read_to_string(gitdir.join("commondir"))
                    .ok()
                    .and_then(|c| gitdir.join(c.trim()).canonicalize().ok())
                {
                    kept.push(common);
                }
                kept.push(gitdir);
            }
            kept.push(resolve(&entry));
        }
    }
    kept.sort();
    kept.dedup();
    kept
}

/// The folder a `.git` file names (`gitdir: <path>`); `None` for a `.git` folder.
fn gitdir_of(dot_git: &Path) -> Option<PathBuf> {
    if !std::fs::symlink_metadata(dot_git).ok()?.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.lines().find_map(|line| line.strip_prefix("gitdir:"))?.trim();
    dot_git.parent()?.join(target).canonicalize().ok()
}

/// `path` with its longest existing prefix resolved by the file system (symlinks, `..`) and
/// the rest (which does not exist yet) normalised by name; a dangling symlink is followed to
/// where a write through it would create its target.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    resolve_within(path, 0)
}

/// Symlinks followed before giving up, as the kernel's `ELOOP` limit.
const MAX_LINKS: usize = 40;

fn resolve_within(path: &Path, links: usize) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<OsString> = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return append(real, &rest);
        }
        if links < MAX_LINKS
            && std::fs::symlink_metadata(&existing).is_ok_and(|m| m.file_type().is_symlink())
            && let Ok(target) = std::fs::read_link(&existing)
        {
            let base = existing.parent().map(Path::to_path_buf).unwrap_or_default();
            return resolve_within(&append(base.join(target), &rest), links + 1);
        }
        let Some(last) = existing.components().next_back() else {
            return path.to_path_buf();
        };
        rest.push(last.as_os_str().to_owned());
        if !existing.pop() {
            return path.to_path_buf();
        }
    }
}

/// `base` followed by `rest` (collected last part first), `..` and `.` taken by name.
fn append(mut base: PathBuf, rest: &[OsString]) -> PathBuf {
    for part in rest.iter().rev() {
        match Path::new(part).components().next() {
            Some(Component::ParentDir) => {
                base.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(_) => base.push(part),
        }
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace(dir: &Path) -> SandboxPolicy {
        SandboxPolicy::new(SandboxMode::WorkspaceWrite, &dir.join("project"), &[], false)
    }

    #[test]
    fn workspace_write_allows_the_project_and_nothing_beside_it() {
        // Outside the temp dir, which workspace-write always allows.
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        std::fs::create_dir(dir.path().join("project")).unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        let policy = workspace(dir.path());
        let project = dir.path().join("project");
        assert!(policy.check_write(&project.join("src/new/file.rs")).is_ok());
        assert!(policy.check_write(&project.join("a/../b.txt")).is_ok());
        assert!(policy.check_write(&project.join("../outside/x")).is_err(), "`..` out of the project");
        std::os::unix::fs::symlink(dir.path().join("outside"), project.join("link")).unwrap();
        let denied = policy.check_write(&project.join("link/x")).unwrap_err().to_string();
        assert!(denied.contains("is outside"), "{denied}");
        std::os::unix::fs::symlink(dir.path().join("outside/target"), project.join("file-link")).unwrap();
        assert!(policy.check_write(&project.join("file-link")).is_err(), "a dangling link out of the project");
        assert!(policy.check_write(Path::new("/etc/passwd")).is_err());
        assert!(policy.check_write(&std::env::temp_dir().join("scratch")).is_ok());
    }

    #[test]
    fn read_only_allows_no_write_and_full_access_every_write() {
        let policy = SandboxPolicy::new(SandboxMode::ReadOnly, Path::new("/"), &[], true);
        assert!(policy.check_write(Path::new("/tmp/x")).is_err());
        assert!(!policy.network, "read-only keeps the network closed");
        assert!(SandboxPolicy::full_access().check_write(Path::new("/etc/passwd")).is_ok());
    }
}
