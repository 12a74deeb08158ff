//! The `ls` tool: order, markers, dotfiles, limits, errors.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod common;

use common::{call, text, write};
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test]
async fn lists_sorted_with_directory_markers_and_dotfiles() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.txt", "");
    write(dir.path(), "A.txt", "");
    write(dir.path(), ".env", "");
    write(dir.path(), "src/main.rs", "");
    write(dir.path(), ".gitignore", "b.txt\n");
    std::os::unix::fs::symlink("missing-target", dir.path().join("broken")).unwrap();
    std::os::unix::fs::symlink("src", dir.path().join("link")).unwrap();
    let r = call("ls", dir.path(), json!({})).await.unwrap();
    assert_eq!(text(&r), ".env\n.gitignore\nA.txt\nb.txt\nlink/\nsrc/");
    assert_eq!(r.details, None);
}

#[tokio::test]
async fn limit_and_empty_directories() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b", "c"] {
        write(dir.path(), name, "");
    }
    let r = call("ls", dir.path(), json!({"limit": 2})).await.unwrap();
    assert_eq!(text(&r), "a\nb\n\n[2 entries limit reached. Use limit=4 for more]");
    assert_eq!(r.details.unwrap(), json!({"entryLimitReached": 2}));

    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let r = call("ls", dir.path(), json!({"path": "empty"})).await.unwrap();
    assert_eq!(text(&r), "(empty directory)");
}

#[tokio::test]
async fn errors_name_the_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "file.txt", "");
    let err = call("ls", dir.path(), json!({"path": "nope"})).await.unwrap_err();
    assert_eq!(err.0, format!("Path not found: {}", dir.path().join("nope").display()));
    let err = call("ls", dir.path(), json!({"path": "file.txt"})).await.unwrap_err();
    assert_eq!(err.0, format!("Not a directory: {}", dir.path().join("file.txt").display()));
}

#[tokio::test]
async fn output_is_cut_at_50kb() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..400 {
        write(dir.path(), &format!("{i:0>200}"), "");
    }
    let r = call("ls", dir.path(), json!({})).await.unwrap();
    assert!(text(&r).ends_with("\n\n[50.0KB limit reached]"));
    assert_eq!(r.details.unwrap()["truncation"]["truncated"], true);
}
