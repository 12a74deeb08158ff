//! The `write` tool: real byte counts, parent directories, overwrites, write targets.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod common;

use common::{args, call, text};
use pretty_assertions::assert_eq;
use rho_tools::{ToolOptions, create_tool};
use serde_json::json;

#[tokio::test]
async fn writes_utf8_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let content = "Hello 世界\nこんにちは\n🎉 emoji";
    let r = call("write", dir.path(), json!({"path": "u.txt", "content": content})).await.unwrap();
    assert_eq!(text(&r), "Successfully wrote to u.txt");
    assert_eq!(r.details, None);
    assert_eq!(std::fs::read_to_string(dir.path().join("u.txt")).unwrap(), content);
}

#[tokio::test]
async fn creates_parent_directories_and_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    call("write", dir.path(), json!({"path": "a/b/c.txt", "content": "one"})).await.unwrap();
    let r = call("write", dir.path(), json!({"path": "a/b/c.txt", "content": "two\r\n"})).await.unwrap();
    assert_eq!(text(&r), "Successfully wrote to a/b/c.txt");
    assert_eq!(std::fs::read(dir.path().join("a/b/c.txt")).unwrap(), b"two\r\n");
}

#[tokio::test]
async fn errors_carry_the_os_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let err = call("write", dir.path(), json!({"path": "d", "content": "x"})).await.unwrap_err();
    assert!(err.0.starts_with("EISDIR: illegal operation on a directory, open '"), "{}", err.0);
}

#[test]
fn write_target_is_the_resolved_path() {
    let tool = create_tool("write", &ToolOptions::new("/work/p")).unwrap();
    assert_eq!(
        tool.write_target(&args(json!({"path": "@src/../x.rs", "content": ""}))),
        Some(std::path::PathBuf::from("/work/p/x.rs"))
    );
}
