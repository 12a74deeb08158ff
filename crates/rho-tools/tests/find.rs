//! The `find` tool on real trees: name globs, path globs, ignore rules, limits.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod common;

use common::{call, text, write};
use pretty_assertions::assert_eq;
use serde_json::json;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/lib.rs", "");
    write(dir.path(), "src/deep/mod.rs", "");
    write(dir.path(), "src/deep/mod.spec.ts", "");
    write(dir.path(), "tests/it.rs", "");
    write(dir.path(), "README.md", "");
    write(dir.path(), ".config/x.rs", "");
    dir
}

#[tokio::test]
async fn name_globs_match_at_any_depth_sorted() {
    let dir = tree();
    let r = call("find", dir.path(), json!({"pattern": "*.rs"})).await.unwrap();
    assert_eq!(text(&r), ".config/x.rs\nsrc/deep/mod.rs\nsrc/lib.rs\ntests/it.rs");
    assert_eq!(r.details, None);
}

#[tokio::test]
async fn globs_with_a_slash_match_the_relative_path() {
    let dir = tree();
    let r = call("find", dir.path(), json!({"pattern": "src/**/*.rs"})).await.unwrap();
    assert_eq!(text(&r), "src/deep/mod.rs\nsrc/lib.rs");
    let r = call("find", dir.path(), json!({"pattern": "src/**/*.spec.ts"})).await.unwrap();
    assert_eq!(text(&r), "src/deep/mod.spec.ts");
    let r = call("find", dir.path(), json!({"pattern": "*.rs", "path": "src"})).await.unwrap();
    assert_eq!(text(&r), "deep/mod.rs\nlib.rs");
}

#[tokio::test]
async fn directories_get_a_trailing_slash() {
    let dir = tree();
    let r = call("find", dir.path(), json!({"pattern": "deep"})).await.unwrap();
    assert_eq!(text(&r), "src/deep/");
}

#[tokio::test]
async fn gitignore_applies_outside_a_repository() {
    let dir = tree();
    write(dir.path(), ".gitignore", "tests/\n");
    write(dir.path(), "src/.gitignore", "/lib.rs\n");
    write(dir.path(), ".git/hooks/x.rs", "");
    let r = call("find", dir.path(), json!({"pattern": "*.rs"})).await.unwrap();
    assert_eq!(text(&r), ".config/x.rs\nsrc/deep/mod.rs");
}

#[tokio::test]
async fn limit_stops_with_a_notice() {
    let dir = tree();
    let r = call("find", dir.path(), json!({"pattern": "*.rs", "limit": 2})).await.unwrap();
    assert_eq!(
        text(&r),
        ".config/x.rs\nsrc/deep/mod.rs\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(r.details.unwrap(), json!({"resultLimitReached": 2}));
}

#[tokio::test]
async fn nothing_found_and_errors() {
    let dir = tree();
    let r = call("find", dir.path(), json!({"pattern": "*.py"})).await.unwrap();
    assert_eq!(text(&r), "No files found matching pattern");
    let err = call("find", dir.path(), json!({"pattern": "*", "path": "nope"})).await.unwrap_err();
    assert_eq!(err.0, format!("Path not found: {}", dir.path().join("nope").display()));
}
