//! Isolation in a `git worktree`: each isolated sub-agent works in a detached worktree of the
//! current HEAD with the working tree's uncommitted changes (staged, unstaged and untracked)
//! copied in, so it starts from exactly what the user sees.
//!
//! Changes are measured as trees: after the baseline is applied, the worktree's files are
//! snapshotted into a tree object through a private index file (`git add -A` honours
//! `.gitignore`); after the sub-agent, again; the patch is the diff between the two trees. This
//! catches edits, new files, deletions and commits the sub-agent made, and leaves the worktree's
//! own index alone.
//!
//! Branch mode commits a patch onto HEAD as `rho/task/<id>` with plumbing only (no checkout),
//! cherry-picks it onto the user's branch and deletes it.
//!
//! rho runs git outside the sandbox, on a repository whose `.git` the model may write under
//! `workspace-write`; so no git command rho runs lets the repository choose a program to run:
//! hooks, the fsmonitor and commit signing are turned off, every filter and merge driver the
//! configuration names is emptied (an empty command runs nothing), and diffs are taken without
//! external diff programs or text conversion ([`git`]). Nothing is left behind: a worktree is
//! removed (and pruned) when its task ends however it ends, and [`Worktree`]'s `Drop` removes it
//! synchronously if the task was torn down before it could.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Held while `git worktree add`, `remove` or `prune` runs: git reads every worktree's
/// administrative files while it adds one, and fails ("failed to read .git/worktrees/<other>/
/// commondir") when another is half-written at that moment, so parallel tasks take turns.
static WORKTREE_ADMIN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A git command that could not run or failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[from] std::io::Error),
    #[error("`git {command}` failed: {stderr}")]
    Failed { command: String, stderr: String },
}

/// What turns off the programs a repository's configuration can make git run, for any command:
/// hooks, the fsmonitor and signing (filters and merge drivers are named per repository, see
/// [`driver_overrides`]).
const NO_PROGRAMS: [&str; 8] = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "tag.gpgSign=false",
];

/// `-c` overrides that empty every filter (`clean`, `smudge`, `process`) and merge `driver` the
/// repository's configuration (with its includes) names. Reading the configuration runs nothing.
async fn driver_overrides(cwd: &Path) -> Vec<OsString> {
    let listed = tokio::process::Command::new("git")
        .args(["config", "--list", "-z"])
        .current_dir(cwd)
        .env_remove("GIT_DIR")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await;
    let Ok(listed) = listed else { return Vec::new() };
    let mut overrides = Vec::new();
    for entry in listed.stdout.split(|b| *b == 0) {
        // `section.subsection.variable`: git prints the section and variable in lower case, the
        // subsection (the driver's name) as written, and the name is case-sensitive.
        let key = String::from_utf8_lossy(entry.split(|b| *b == b'\n').next().unwrap_or_default()).into_owned();
        let Some((section, variable)) = key.rsplit_once('.') else { continue };
        let emptied: &[&str] = match variable {
            "clean" | "smudge" | "process" if section.starts_with("filter.") => &["clean", "smudge", "process"],
            "driver" if section.starts_with("merge.") => &["driver"],
            _ => continue,
        };
        for name in emptied {
            let value = OsString::from(format!("{section}.{name}="));
            if !overrides.contains(&value) {
                overrides.push(OsString::from("-c"));
                overrides.push(value);
            }
        }
    }
    overrides
}

/// Runs `git args` in `cwd` with extra environment, the repository's programs turned off (see
/// the module's docs); stdout on success.
async fn git(cwd: &Path, args: &[&OsStr], env: &[(&str, &OsStr)]) -> Result<Vec<u8>, GitError> {
    let mut command = tokio::process::Command::new("git");
    command.args(NO_PROGRAMS).args(driver_overrides(cwd).await);
    if args.first().is_some_and(|a| *a == "diff") {
        command.arg("diff").args(["--no-ext-diff", "--no-textconv"]).args(&args[1..]);
    } else {
        command.args(args);
    }
    command
        .current_dir(cwd)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().await?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        let command = args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
        Err(GitError::Failed { command, stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned() })
    }
}

async fn git_str(cwd: &Path, args: &[&str]) -> Result<String, GitError> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = git(cwd, &args, &[]).await?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// The repository the parent works in, at the moment the batch starts.
#[derive(Debug, Clone)]
pub struct Repo {
    pub root: PathBuf,
    pub head: String,
    /// The working directory relative to the root (sub-agents work at the same place).
    pub rel_cwd: PathBuf,
    /// Staged changes (binary diff against HEAD).
    staged: Vec<u8>,
    /// Unstaged changes to tracked files.
    unstaged: Vec<u8>,
    /// Untracked, not ignored files, relative to the root.
    untracked: Vec<PathBuf>,
}

impl Repo {
    /// The repository of `cwd` and its uncommitted changes.
    pub async fn open(cwd: &Path) -> Result<Self, GitError> {
        let root = PathBuf::from(git_str(cwd, &["rev-parse", "--show-toplevel"]).await?);
        let head = git_str(&root, &["rev-parse", "--verify", "HEAD"]).await?;
        let rel_cwd = cwd
            .canonicalize()
            .ok()
            .zip(root.canonicalize().ok())
            .and_then(|(c, r)| c.strip_prefix(r).ok().map(Path::to_path_buf))
            .unwrap_or_default();
        let raw = |args: &'static [&'static str]| {
            let root = root.clone();
            async move {
                let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
                git(&root, &args, &[]).await
            }
        };
        let staged = raw(&["diff", "--cached", "--binary"]).await?;
        let unstaged = raw(&["diff", "--binary"]).await?;
        let listing = raw(&["ls-files", "--others", "--exclude-standard", "-z"]).await?;
        let untracked = listing
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect();
        Ok(Self { root, head, rel_cwd, staged, unstaged, untracked })
    }

    /// Applies `patch` to the user's working tree (`git apply --check` first, so a patch that
    /// does not apply changes nothing).
    pub async fn apply_patch(&self, patch: &Path) -> Result<(), GitError> {
        let p = patch.as_os_str();
        git(&self.root, &[OsStr::new("apply"), OsStr::new("--check"), OsStr::new("--binary"), p], &[]).await?;
        git(&self.root, &[OsStr::new("apply"), OsStr::new("--binary"), p], &[]).await.map(drop)
    }

    /// Commits `patch` onto HEAD as branch `name` (index `scratch_index`, no checkout).
    pub async fn commit_branch(
        &self,
        name: &str,
        patch: &Path,
        message: &str,
        scratch_index: &Path,
    ) -> Result<(), GitError> {
        let env = [("GIT_INDEX_FILE", scratch_index.as_os_str())];
        let s = OsStr::new;
        git(&self.root, &[s("read-tree"), s(&self.head)], &env).await?;
        git(&self.root, &[s("apply"), s("--cached"), s("--binary"), patch.as_os_str()], &env).await?;
        let tree = git(&self.root, &[s("write-tree")], &env).await?;
        let tree = String::from_utf8_lossy(&tree).trim().to_owned();
        let commit =
            git(&self.root, &[s("commit-tree"), s(&tree), s("-p"), s(&self.head), s("-m"), s(message)], &env).await?;
        let commit = String::from_utf8_lossy(&commit).trim().to_owned();
        let _ = std::fs::remove_file(scratch_index);
        git_str(&self.root, &["branch", "-f", name, &commit]).await.map(drop)
    }

    /// Cherry-picks branch `name` onto the user's current branch; on a conflict the pick is
    /// aborted and the working tree left as it was.
    pub async fn cherry_pick(&self, name: &str) -> Result<(), GitError> {
        match git_str(&self.root, &["cherry-pick", name]).await {
            Ok(_) => Ok(()),
            Err(e) => {
                let _ = git_str(&self.root, &["cherry-pick", "--abort"]).await;
                Err(e)
            }
        }
    }

    pub async fn delete_branch(&self, name: &str) {
        let _ = git_str(&self.root, &["branch", "-D", name]).await;
    }
}

/// One sub-agent's worktree. Removed by [`Worktree::remove`], or on drop.
#[derive(Debug)]
pub struct Worktree {
    repo_root: PathBuf,
    dir: PathBuf,
    /// The private index used for snapshots (outside the worktree).
    index_file: PathBuf,
    /// The tree of the worktree right after the baseline was applied.
    base_tree: String,
    removed: bool,
}

impl Worktree {
    /// Adds a detached worktree of `repo.head` at `dir` and applies the baseline to it.
    /// `index_file` is a scratch path for the private index.
    pub async fn create(repo: &Repo, dir: PathBuf, index_file: PathBuf) -> Result<Self, GitError> {
        let s = OsStr::new;
        let admin = WORKTREE_ADMIN.lock().await;
        git(&repo.root, &[s("worktree"), s("add"), s("--detach"), dir.as_os_str(), s(&repo.head)], &[]).await?;
        drop(admin);
        let mut worktree =
            Self { repo_root: repo.root.clone(), dir, index_file, base_tree: String::new(), removed: false };
        worktree.apply_baseline(repo).await?;
        worktree.base_tree = worktree.snapshot().await?;
        Ok(worktree)
    }

    /// Where the sub-agent works: the worktree, at the parent's place inside the repository.
    pub fn work_dir(&self, repo: &Repo) -> PathBuf {
        let dir = self.dir.join(&repo.rel_cwd);
        if dir.is_dir() { dir } else { self.dir.clone() }
    }

    async fn apply_baseline(&self, repo: &Repo) -> Result<(), GitError> {
        let scratch = self.index_file.with_extension("baseline.patch");
        for (patch, index) in [(&repo.staged, true), (&repo.unstaged, false)] {
            if patch.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            std::fs::write(&scratch, patch)?;
            let s = OsStr::new;
            let mut args = vec![s("apply"), s("--binary")];
            if index {
                args.push(s("--index"));
            }
            args.push(scratch.as_os_str());
            let applied = git(&self.dir, &args, &[]).await;
            let _ = std::fs::remove_file(&scratch);
            applied?;
        }
        for rel in &repo.untracked {
            let (from, to) = (repo.root.join(rel), self.dir.join(rel));
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            match std::fs::copy(&from, &to) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// The worktree's files as a tree object.
    async fn snapshot(&self) -> Result<String, GitError> {
        let env = [("GIT_INDEX_FILE", self.index_file.as_os_str())];
        let s = OsStr::new;
        git(&self.dir, &[s("read-tree"), s("HEAD")], &env).await?;
        git(&self.dir, &[s("add"), s("-A"), s(".")], &env).await?;
        let tree = git(&self.dir, &[s("write-tree")], &env).await?;
        Ok(String::from_utf8_lossy(&tree).trim().to_owned())
    }

    /// What the sub-agent changed since the baseline, as a binary patch (empty: nothing).
    pub async fn patch(&self) -> Result<Vec<u8>, GitError> {
        let tree = self.snapshot().await?;
        let s = OsStr::new;
        git(&self.dir, &[s("diff"), s("--binary"), s("--full-index"), s(&self.base_tree), s(&tree)], &[]).await
    }

    /// Removes the worktree and its administrative files.
    pub async fn remove(mut self) {
        self.removed = true;
        let s = OsStr::new;
        let _admin = WORKTREE_ADMIN.lock().await;
        let _ = git(&self.repo_root, &[s("worktree"), s("remove"), s("--force"), self.dir.as_os_str()], &[]).await;
        if self.dir.exists() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        let _ = git(&self.repo_root, &[s("worktree"), s("prune")], &[]).await;
        let _ = std::fs::remove_file(&self.index_file);
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        if self.removed {
            return;
        }
        // A task torn down mid-flight: removal cannot wait for [`WORKTREE_ADMIN`] here, and a
        // concurrent `add` that trips over it fails its own task with a clear error.
        let run = |args: &[&OsStr]| {
            let _ = std::process::Command::new("git")
                .args(NO_PROGRAMS)
                .args(args)
                .current_dir(&self.repo_root)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        };
        run(&[OsStr::new("worktree"), OsStr::new("remove"), OsStr::new("--force"), self.dir.as_os_str()]);
        let _ = std::fs::remove_dir_all(&self.dir);
        run(&[OsStr::new("worktree"), OsStr::new("prune")]);
        let _ = std::fs::remove_file(&self.index_file);
    }
}

#[cfg(test)]
mod tests;
