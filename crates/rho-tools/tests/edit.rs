//! The `edit` tool: exact and fuzzy matches, uniqueness, line endings, BOM, diff details.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod common;

use common::{args, call, text, write};
use pretty_assertions::assert_eq;
use rho_tools::{ToolOptions, create_tool};
use serde_json::json;

fn read(dir: &std::path::Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap()
}

#[tokio::test]
async fn replaces_an_exact_match_and_reports_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "line1\nline2\nline3");
    let r =
        call("edit", dir.path(), json!({"path": "f.txt", "oldText": "line2", "newText": "replaced"})).await.unwrap();
    assert_eq!(text(&r), "Successfully replaced text in f.txt.");
    assert_eq!(r.details.unwrap(), json!({"diff": " 1 line1\n-2 line2\n+2 replaced\n 3 line3", "firstChangedLine": 2}));
    assert_eq!(read(dir.path(), "f.txt"), b"line1\nreplaced\nline3");
}

#[tokio::test]
async fn fuzzy_match_leaves_the_rest_of_the_file_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let original = "// \u{201C}quoted\u{201D} header   \nlet s = \u{2018}it\u{2019}s\u{2019};  \nconst dash = a \u{2014} b;\t\nlast\u{00A0}line  \n";
    write(dir.path(), "q.js", original);
    let r = call(
        "edit",
        dir.path(),
        json!({"path": "q.js", "oldText": "let s = 'it's';", "newText": "let s = \"it is\";"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "Successfully replaced text in q.js.");
    let expected =
        "// \u{201C}quoted\u{201D} header   \nlet s = \"it is\";  \nconst dash = a \u{2014} b;\t\nlast\u{00A0}line  \n";
    assert_eq!(String::from_utf8(read(dir.path(), "q.js")).unwrap(), expected);
    assert_eq!(r.details.unwrap()["firstChangedLine"], 2);
}

#[tokio::test]
async fn not_found_multiple_and_no_change_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "foo\nbar\nfoo\n");
    let err = call("edit", dir.path(), json!({"path": "f.txt", "oldText": "baz", "newText": "x"})).await.unwrap_err();
    assert_eq!(
        err.0,
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."
    );
    let err = call("edit", dir.path(), json!({"path": "f.txt", "oldText": "foo", "newText": "x"})).await.unwrap_err();
    assert_eq!(
        err.0,
        "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."
    );
    let err = call("edit", dir.path(), json!({"path": "f.txt", "oldText": "bar", "newText": "bar"})).await.unwrap_err();
    assert_eq!(
        err.0,
        "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    );
    assert_eq!(read(dir.path(), "f.txt"), b"foo\nbar\nfoo\n");

    let err =
        call("edit", dir.path(), json!({"path": "missing.txt", "oldText": "a", "newText": "b"})).await.unwrap_err();
    assert_eq!(err.0, "File not found: missing.txt");
}

#[tokio::test]
async fn crlf_and_bom_are_preserved() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "w.txt", "\u{FEFF}one\r\ntwo\r\nthree\r\n");
    let r = call("edit", dir.path(), json!({"path": "w.txt", "oldText": "two\nthree", "newText": "2\n3\n3.5"}))
        .await
        .unwrap();
    assert_eq!(String::from_utf8(read(dir.path(), "w.txt")).unwrap(), "\u{FEFF}one\r\n2\r\n3\r\n3.5\r\n");
    assert_eq!(r.details.unwrap()["diff"], " 1 one\n-2 two\n-3 three\n+2 2\n+3 3\n+4 3.5");
}

#[tokio::test]
async fn mixed_line_endings_outside_the_match_are_untouched() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.txt", "a\r\nb\nc\r\n");
    call("edit", dir.path(), json!({"path": "m.txt", "oldText": "c", "newText": "C"})).await.unwrap();
    assert_eq!(read(dir.path(), "m.txt"), b"a\r\nb\nC\r\n");
}

#[test]
fn write_target_is_the_resolved_path() {
    let tool = create_tool("edit", &ToolOptions::new("/work/p")).unwrap();
    assert_eq!(
        tool.write_target(&args(json!({"path": "a.rs", "oldText": "", "newText": ""}))),
        Some(std::path::PathBuf::from("/work/p/a.rs"))
    );
}

#[test]
fn write_target_follows_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("real.txt"), "x").unwrap();
    std::os::unix::fs::symlink(dir.path().join("real.txt"), dir.path().join("link.txt")).unwrap();
    let tool = create_tool("edit", &ToolOptions::new(dir.path())).unwrap();
    let target = |path: &str| tool.write_target(&args(json!({"path": path, "oldText": "", "newText": ""})));
    assert_eq!(target("link.txt"), target("real.txt"));
    assert_eq!(target("real.txt"), Some(dir.path().canonicalize().unwrap().join("real.txt")));
}
