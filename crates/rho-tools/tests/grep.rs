//! The `grep` tool on real trees: formats, options, limits, ignore rules.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod common;

use common::{call, text, write};
use pretty_assertions::assert_eq;
use serde_json::json;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/a.rs", "fn main() {\n    let needle = 1;\n}\n");
    write(dir.path(), "src/b.ts", "const Needle = 2;\nconst other = 3;\n");
    write(dir.path(), "README.md", "a needle here\nand a.b literal\n");
    dir
}

#[tokio::test]
async fn prints_matches_with_paths_and_line_numbers_in_path_order() {
    let dir = tree();
    let r = call("grep", dir.path(), json!({"pattern": "needle"})).await.unwrap();
    assert_eq!(text(&r), "README.md:1: a needle here\nsrc/a.rs:2:     let needle = 1;");
    assert_eq!(r.details, None);
}

#[tokio::test]
async fn ignore_case_literal_and_glob() {
    let dir = tree();
    let r = call("grep", dir.path(), json!({"pattern": "needle", "ignoreCase": true})).await.unwrap();
    assert_eq!(text(&r).lines().count(), 3);

    let r = call("grep", dir.path(), json!({"pattern": "a.b", "literal": true})).await.unwrap();
    assert_eq!(text(&r), "README.md:2: and a.b literal");
    let r = call("grep", dir.path(), json!({"pattern": "a.b"})).await.unwrap();
    assert!(text(&r).lines().count() >= 1);

    let r = call("grep", dir.path(), json!({"pattern": "needle", "ignoreCase": true, "glob": "*.ts"})).await.unwrap();
    assert_eq!(text(&r), "src/b.ts:1: const Needle = 2;");
    let r = call("grep", dir.path(), json!({"pattern": "needle", "glob": "src/**/*.rs"})).await.unwrap();
    assert_eq!(text(&r), "src/a.rs:2:     let needle = 1;");
}

#[tokio::test]
async fn context_lines_use_dashes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "one\ntwo\nthree\r\nfour\nfive\n");
    let r = call("grep", dir.path(), json!({"pattern": "three", "context": 1})).await.unwrap();
    assert_eq!(text(&r), "f.txt-2- two\nf.txt:3: three\nf.txt-4- four");
}

#[tokio::test]
async fn a_file_path_searches_that_file() {
    let dir = tree();
    let r = call("grep", dir.path(), json!({"pattern": "const", "path": "src/b.ts"})).await.unwrap();
    assert_eq!(text(&r), "b.ts:1: const Needle = 2;\nb.ts:2: const other = 3;");
}

#[tokio::test]
async fn limit_stops_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["a.txt", "b.txt", "c.txt"] {
        write(dir.path(), f, "hit\nhit\n");
    }
    let r = call("grep", dir.path(), json!({"pattern": "hit", "limit": 3})).await.unwrap();
    assert_eq!(
        text(&r),
        "a.txt:1: hit\na.txt:2: hit\nb.txt:1: hit\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]"
    );
    assert_eq!(r.details.unwrap(), json!({"matchLimitReached": 3}));
}

#[tokio::test]
async fn long_lines_are_cut_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "long.txt", format!("match {}\n", "z".repeat(600)));
    let r = call("grep", dir.path(), json!({"pattern": "match"})).await.unwrap();
    let expected_line = format!("long.txt:1: match {}... [truncated]", "z".repeat(494));
    assert_eq!(
        text(&r),
        format!("{expected_line}\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]")
    );
    assert_eq!(r.details.unwrap(), json!({"linesTruncated": true}));
}

#[tokio::test]
async fn output_is_cut_at_50kb() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("hit {}\n", "w".repeat(400));
    write(dir.path(), "big.txt", line.repeat(200));
    let r = call("grep", dir.path(), json!({"pattern": "hit", "limit": 1000})).await.unwrap();
    assert!(text(&r).ends_with("\n\n[50.0KB limit reached]"));
    assert_eq!(r.details.unwrap()["truncation"]["truncatedBy"], "bytes");
}

#[tokio::test]
async fn gitignore_is_respected_and_hidden_files_are_searched() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "ignored/\n*.log\n");
    write(dir.path(), "ignored/x.txt", "secret\n");
    write(dir.path(), "debug.log", "secret\n");
    write(dir.path(), ".hidden/conf", "secret\n");
    write(dir.path(), ".git/config", "secret\n");
    write(dir.path(), "kept.txt", "secret\n");
    let r = call("grep", dir.path(), json!({"pattern": "secret"})).await.unwrap();
    assert_eq!(text(&r), ".hidden/conf:1: secret\nkept.txt:1: secret");
}

#[tokio::test]
async fn no_matches_and_errors() {
    let dir = tree();
    let r = call("grep", dir.path(), json!({"pattern": "absent"})).await.unwrap();
    assert_eq!(text(&r), "No matches found");
    assert_eq!(r.details, None);

    let err = call("grep", dir.path(), json!({"pattern": "x", "path": "nope"})).await.unwrap_err();
    assert_eq!(err.0, format!("Path not found: {}", dir.path().join("nope").display()));

    let err = call("grep", dir.path(), json!({"pattern": "("})).await.unwrap_err();
    assert!(err.0.contains("regex parse error"), "{}", err.0);
}
