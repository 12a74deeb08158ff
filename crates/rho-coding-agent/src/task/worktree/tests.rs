#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use super::{Repo, Worktree};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with one commit, a staged and an unstaged change and an untracked file.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "Test"]);
    git(root, &["config", "user.email", "test@example.com"]);
    std::fs::write(root.join("a.txt"), "one\n").unwrap();
    std::fs::write(root.join("b.txt"), "two\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "init"]);
    std::fs::write(root.join("a.txt"), "one staged\n").unwrap();
    git(root, &["add", "a.txt"]);
    std::fs::write(root.join("b.txt"), "two unstaged\n").unwrap();
    std::fs::create_dir_all(root.join("new")).unwrap();
    std::fs::write(root.join("new/c.txt"), "untracked\n").unwrap();
    dir
}

#[tokio::test]
async fn a_worktree_starts_from_the_working_tree_and_yields_only_the_new_changes() {
    let repo_dir = repo();
    let scratch = tempfile::tempdir().unwrap();
    let repo = Repo::open(repo_dir.path()).await.unwrap();
    let wt = Worktree::create(&repo, scratch.path().join("wt"), scratch.path().join("wt.index")).await.unwrap();
    let dir = wt.work_dir(&repo);
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one staged\n");
    assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "two unstaged\n");
    assert_eq!(std::fs::read_to_string(dir.join("new/c.txt")).unwrap(), "untracked\n");
    assert!(wt.patch().await.unwrap().is_empty(), "no change yet");

    std::fs::write(dir.join("b.txt"), "two changed by the task\n").unwrap();
    std::fs::write(dir.join("d.txt"), "created\n").unwrap();
    std::fs::create_dir_all(dir.join("target")).unwrap();
    std::fs::write(dir.join("target/out"), "ignored\n").unwrap();
    std::fs::remove_file(dir.join("new/c.txt")).unwrap();
    let patch = String::from_utf8(wt.patch().await.unwrap()).unwrap();
    assert!(patch.contains("+two changed by the task"), "{patch}");
    assert!(patch.contains("-two unstaged"), "relative to the baseline: {patch}");
    assert!(patch.contains("b/d.txt") && patch.contains("deleted file mode"), "{patch}");
    assert!(!patch.contains("target/out") && !patch.contains("a.txt"), "{patch}");

    let patch_file = scratch.path().join("task.patch");
    std::fs::write(&patch_file, &patch).unwrap();
    wt.remove().await;
    assert_eq!(git(repo_dir.path(), &["worktree", "list"]).lines().count(), 1);
    assert!(!scratch.path().join("wt").exists());

    repo.apply_patch(&patch_file).await.unwrap();
    let root = repo_dir.path();
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "two changed by the task\n");
    assert_eq!(std::fs::read_to_string(root.join("d.txt")).unwrap(), "created\n");
    assert!(!root.join("new/c.txt").exists());
}

#[tokio::test]
async fn branch_mode_commits_and_cherry_picks_then_deletes_the_branch() {
    let repo_dir = repo();
    let root = repo_dir.path();
    git(root, &["stash", "-u", "-q"]);
    let scratch = tempfile::tempdir().unwrap();
    let repo = Repo::open(root).await.unwrap();
    let wt = Worktree::create(&repo, scratch.path().join("wt"), scratch.path().join("wt.index")).await.unwrap();
    std::fs::write(wt.work_dir(&repo).join("e.txt"), "from the task\n").unwrap();
    let patch_file = scratch.path().join("task.patch");
    std::fs::write(&patch_file, wt.patch().await.unwrap()).unwrap();
    wt.remove().await;

    repo.commit_branch("rho/task/T1", &patch_file, "task T1", &scratch.path().join("branch.index")).await.unwrap();
    repo.cherry_pick("rho/task/T1").await.unwrap();
    repo.delete_branch("rho/task/T1").await;
    assert_eq!(git(root, &["log", "-1", "--format=%s"]).trim(), "task T1");
    assert_eq!(std::fs::read_to_string(root.join("e.txt")).unwrap(), "from the task\n");
    assert_eq!(git(root, &["branch", "--list", "rho/*"]).trim(), "");
}

#[tokio::test]
async fn a_dropped_worktree_is_removed() {
    let repo_dir = repo();
    let scratch = tempfile::tempdir().unwrap();
    let repo = Repo::open(repo_dir.path()).await.unwrap();
    let wt = Worktree::create(&repo, scratch.path().join("wt"), scratch.path().join("wt.index")).await.unwrap();
    drop(wt);
    assert_eq!(git(repo_dir.path(), &["worktree", "list"]).lines().count(), 1);
    assert!(!scratch.path().join("wt").exists());
}

/// What a model that can write `.git` plants so that rho's own git commands (which run outside
/// the sandbox) run its programs: every hook, the fsmonitor, filters (a long-running `process`
/// one and `clean`/`smudge`, under a name in mixed case), a merge driver, an external diff and a
/// text conversion, and commit signing. Each program would leave a mark outside the repository.
fn plant_programs(root: &Path, marks: &Path) {
    let mark = |what: &str| format!("sh -c 'touch {}/{what}; cat'", marks.display());
    let hooks = root.join(".git/hooks");
    for hook in ["post-checkout", "pre-commit", "post-commit", "post-rewrite", "prepare-commit-msg", "commit-msg"] {
        let path = hooks.join(hook);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {}/hook-{hook}\n", marks.display())).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    git(root, &["config", "core.fsmonitor", &format!("{}/fsmonitor.sh", marks.display())]);
    std::fs::write(marks.join("fsmonitor.sh"), format!("#!/bin/sh\ntouch {}/fsmonitor\n", marks.display())).unwrap();
    std::fs::set_permissions(marks.join("fsmonitor.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    git(root, &["config", "filter.Evil.process", &mark("filter-process")]);
    git(root, &["config", "filter.Evil.clean", &mark("filter-clean")]);
    git(root, &["config", "filter.Evil.smudge", &mark("filter-smudge")]);
    git(root, &["config", "merge.evil.driver", &mark("merge-driver")]);
    git(root, &["config", "diff.evil.command", &mark("diff-command")]);
    git(root, &["config", "diff.evil.textconv", &mark("diff-textconv")]);
    git(root, &["config", "diff.external", &mark("diff-external")]);
    git(root, &["config", "commit.gpgSign", "true"]);
    git(root, &["config", "gpg.program", &mark("gpg")]);
    std::fs::write(root.join(".gitattributes"), "* filter=Evil merge=evil diff=evil\n").unwrap();
}

#[tokio::test]
async fn a_planted_hook_filter_or_driver_never_runs_in_rhos_own_git_commands() {
    let repo_dir = repo();
    let root = repo_dir.path();
    git(root, &["stash", "-u", "-q"]);
    let marks = tempfile::tempdir().unwrap();
    plant_programs(root, marks.path());
    // The plants work: git itself, as the user runs it, runs them.
    std::fs::write(root.join("a.txt"), "edited\n").unwrap();
    git(root, &["diff", "--", "a.txt"]);
    git(root, &["checkout", "--", "a.txt"]);
    let names = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != "fsmonitor.sh")
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        names(marks.path()),
        ["diff-command", "filter-process", "fsmonitor", "hook-post-checkout"],
        "plain git runs the plants"
    );
    for entry in std::fs::read_dir(marks.path()).unwrap() {
        let path = entry.unwrap().path();
        if !path.ends_with("fsmonitor.sh") {
            std::fs::remove_file(path).unwrap();
        }
    }

    let scratch = tempfile::tempdir().unwrap();
    let repo = Repo::open(root).await.unwrap();
    let wt = Worktree::create(&repo, scratch.path().join("wt"), scratch.path().join("wt.index")).await.unwrap();
    std::fs::write(wt.work_dir(&repo).join("a.txt"), "changed by the task\n").unwrap();
    let patch_file = scratch.path().join("task.patch");
    std::fs::write(&patch_file, wt.patch().await.unwrap()).unwrap();
    wt.remove().await;
    repo.commit_branch("rho/task/T2", &patch_file, "task T2", &scratch.path().join("branch.index")).await.unwrap();
    repo.cherry_pick("rho/task/T2").await.unwrap();
    repo.delete_branch("rho/task/T2").await;
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "changed by the task\n");

    assert_eq!(names(marks.path()), [] as [String; 0], "rho's git ran the repository's programs");
}
