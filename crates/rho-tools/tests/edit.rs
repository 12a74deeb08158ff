//! The `edit` tool: pi 0.73's multi-edit form and the single form, matching against the original
//! content, exact and fuzzy matches, every error text, line endings, BOM, diff details.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod common;

use common::{args, call, call_with, text, write};
use pretty_assertions::assert_eq;
use rho_agent::validate::Validators;
use rho_tools::{ToolOptions, create_tool};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn read(dir: &std::path::Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap()
}

fn read_text(dir: &std::path::Path, rel: &str) -> String {
    String::from_utf8(read(dir, rel)).unwrap()
}

/// The error text of a call that must fail, after checking the file was left alone.
async fn fails(dir: &std::path::Path, rel: &str, arguments: Value) -> String {
    let before = std::fs::read(dir.join(rel)).ok();
    let err = call("edit", dir, arguments).await.unwrap_err();
    assert_eq!(std::fs::read(dir.join(rel)).ok(), before, "a failed edit changed {rel}");
    err.0
}

#[tokio::test]
async fn two_edits_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "alpha\nbeta\ngamma\ndelta\n");
    let r = call(
        "edit",
        dir.path(),
        json!({"path": "f.txt", "edits": [
            {"oldText": "delta", "newText": "DELTA"},
            {"oldText": "alpha", "newText": "ALPHA"},
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(read_text(dir.path(), "f.txt"), "ALPHA\nbeta\ngamma\nDELTA\n");
    assert_eq!(
        r.details.unwrap(),
        json!({
            "diff": "-1 alpha\n+1 ALPHA\n 2 beta\n 3 gamma\n-4 delta\n+4 DELTA",
            "firstChangedLine": 1,
            "patch": "--- f.txt\n+++ f.txt\n@@ -1,4 +1,4 @@\n-alpha\n+ALPHA\n beta\n gamma\n-delta\n+DELTA\n",
        })
    );
}

#[tokio::test]
async fn the_single_form_is_still_accepted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "line1\nline2\nline3");
    let r =
        call("edit", dir.path(), json!({"path": "f.txt", "oldText": "line2", "newText": "replaced"})).await.unwrap();
    assert_eq!(text(&r), "Successfully replaced 1 block(s) in f.txt.");
    assert_eq!(
        r.details.unwrap(),
        json!({
            "diff": " 1 line1\n-2 line2\n+2 replaced\n 3 line3",
            "firstChangedLine": 2,
            "patch": "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n line1\n-line2\n+replaced\n line3\n\\ No newline at end of file\n",
        })
    );
    assert_eq!(read(dir.path(), "f.txt"), b"line1\nreplaced\nline3");
}

#[tokio::test]
async fn both_forms_together_run_the_single_edit_last() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "one two three");
    let r = call(
        "edit",
        dir.path(),
        json!({"path": "f.txt", "edits": [{"oldText": "one", "newText": "1"}], "oldText": "three", "newText": "3"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(read_text(dir.path(), "f.txt"), "1 two 3");

    // The single edit is edits[1]: it comes after the array's entries.
    let err = fails(
        dir.path(),
        "f.txt",
        json!({"path": "f.txt", "edits": [{"oldText": "two", "newText": "2"}], "oldText": "nine", "newText": "9"}),
    )
    .await;
    assert_eq!(
        err,
        "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."
    );
}

#[tokio::test]
async fn edits_sent_as_a_json_string_are_parsed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "a\nb\n");
    let edits = json!([{"oldText": "a", "newText": "A"}, {"oldText": "b", "newText": "B"}]).to_string();
    let r = call("edit", dir.path(), json!({"path": "f.txt", "edits": edits})).await.unwrap();
    assert_eq!(text(&r), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(read_text(dir.path(), "f.txt"), "A\nB\n");
}

#[tokio::test]
async fn edits_match_the_original_content_not_the_result_of_earlier_edits() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "cat\ndog\n");
    // "bird" only exists once the first edit has run: it must not be found.
    let err = fails(
        dir.path(),
        "f.txt",
        json!({"path": "f.txt", "edits": [
            {"oldText": "cat", "newText": "bird"},
            {"oldText": "bird", "newText": "fish"},
        ]}),
    )
    .await;
    assert_eq!(
        err,
        "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."
    );
    // Swapping two texts works because each edit sees the original.
    call(
        "edit",
        dir.path(),
        json!({"path": "f.txt", "edits": [
            {"oldText": "cat", "newText": "dog"},
            {"oldText": "dog", "newText": "cat"},
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(read_text(dir.path(), "f.txt"), "dog\ncat\n");
}

#[tokio::test]
async fn overlapping_edits_fail_and_touching_edits_apply() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "abcdef\n");
    let err = fails(
        dir.path(),
        "f.txt",
        json!({"path": "f.txt", "edits": [
            {"oldText": "def", "newText": "DEF"},
            {"oldText": "abcd", "newText": "ABCD"},
        ]}),
    )
    .await;
    assert_eq!(err, "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions.");

    let r = call(
        "edit",
        dir.path(),
        json!({"path": "f.txt", "edits": [
            {"oldText": "def", "newText": "DEF"},
            {"oldText": "abc", "newText": "ABC"},
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(read_text(dir.path(), "f.txt"), "ABCDEF\n");
}

#[tokio::test]
async fn single_edit_error_texts() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "foo\nbar\nfoo\n");
    let one = |old: &str, new: &str| json!({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]});
    assert_eq!(
        fails(dir.path(), "f.txt", one("baz", "x")).await,
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."
    );
    assert_eq!(
        fails(dir.path(), "f.txt", one("foo", "x")).await,
        "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."
    );
    assert_eq!(
        fails(dir.path(), "f.txt", one("bar", "bar")).await,
        "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    );
    assert_eq!(fails(dir.path(), "f.txt", one("", "x")).await, "oldText must not be empty in f.txt.");
    // The single form gives the same texts.
    assert_eq!(
        fails(dir.path(), "f.txt", json!({"path": "f.txt", "oldText": "", "newText": "x"})).await,
        "oldText must not be empty in f.txt."
    );
}

#[tokio::test]
async fn multi_edit_error_texts_name_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "foo\nbar\nfoo\n");
    let two = |old: &str, new: &str| json!({"path": "f.txt", "edits": [{"oldText": "bar", "newText": "BAR"}, {"oldText": old, "newText": new}]});
    assert_eq!(
        fails(dir.path(), "f.txt", two("baz", "x")).await,
        "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."
    );
    assert_eq!(
        fails(dir.path(), "f.txt", two("foo", "x")).await,
        "Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."
    );
    assert_eq!(fails(dir.path(), "f.txt", two("", "x")).await, "edits[1].oldText must not be empty in f.txt.");
    let same = json!({"path": "f.txt", "edits": [
        {"oldText": "bar", "newText": "bar"},
        {"oldText": "foo\nbar", "newText": "foo\nbar"},
    ]});
    assert_eq!(
        fails(dir.path(), "f.txt", same).await,
        "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions."
    );
    write(dir.path(), "g.txt", "one\ntwo\n");
    let unchanged = json!({"path": "g.txt", "edits": [
        {"oldText": "one", "newText": "one"},
        {"oldText": "two", "newText": "two"},
    ]});
    assert_eq!(
        fails(dir.path(), "g.txt", unchanged).await,
        "No changes made to g.txt. The replacements produced identical content."
    );
}

#[tokio::test]
async fn input_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "x\n");
    assert_eq!(
        fails(dir.path(), "f.txt", json!({"path": "f.txt", "edits": []})).await,
        "Edit tool input is invalid. edits must contain at least one replacement."
    );
    assert_eq!(
        fails(dir.path(), "missing.txt", json!({"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}))
            .await,
        "Could not edit file: missing.txt. Error code: ENOENT."
    );
    assert_eq!(
        fails(dir.path(), "missing.txt", json!({"path": "missing.txt", "oldText": "a", "newText": "b"})).await,
        "Could not edit file: missing.txt. Error code: ENOENT."
    );
    // The arguments are prepared first, then checked against the advertised schema; the text
    // shows the prepared arguments.
    assert_eq!(
        fails(dir.path(), "f.txt", json!({"path": "f.txt", "oldText": "x"})).await,
        "Validation failed for tool \"edit\":\n  - edits: must have required property 'edits'\n  - root: must NOT have additional properties (oldText)\n\nReceived arguments:\n{\n  \"path\": \"f.txt\",\n  \"oldText\": \"x\"\n}"
    );
    let err = fails(
        dir.path(),
        "f.txt",
        json!({"path": "f.txt", "edits": [{"oldText": "x", "newText": "y", "foo": 1}], "oldText": "x", "newText": "z"}),
    )
    .await;
    assert!(
        err.starts_with(
            "Validation failed for tool \"edit\":\n  - edits/0: must NOT have additional properties (foo)\n"
        ),
        "{err}"
    );
    assert!(err.ends_with("\"edits\": [\n    {\n      \"oldText\": \"x\",\n      \"newText\": \"y\",\n      \"foo\": 1\n    },\n    {\n      \"oldText\": \"x\",\n      \"newText\": \"z\"\n    }\n  ]\n}"), "{err}");
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
    assert_eq!(text(&r), "Successfully replaced 1 block(s) in q.js.");
    let expected =
        "// \u{201C}quoted\u{201D} header   \nlet s = \"it is\";  \nconst dash = a \u{2014} b;\t\nlast\u{00A0}line  \n";
    assert_eq!(read_text(dir.path(), "q.js"), expected);
    assert_eq!(r.details.unwrap()["firstChangedLine"], 2);
}

/// pi rewrites the whole file in fuzzy-normalized form when one edit of the call needs a fuzzy
/// match; rho changes only the matched regions.
#[tokio::test]
async fn a_fuzzy_edit_beside_an_exact_one_keeps_untouched_lines() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "alpha \u{2014} one  \nbeta\u{2019}s line\ngamma\n");
    let r = call(
        "edit",
        dir.path(),
        json!({"path": "f.txt", "edits": [
            {"oldText": "gamma", "newText": "GAMMA"},
            {"oldText": "alpha - one", "newText": "ALPHA"},
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(read_text(dir.path(), "f.txt"), "ALPHA  \nbeta\u{2019}s line\nGAMMA\n");
}

#[tokio::test]
async fn crlf_and_bom_are_preserved() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "w.txt", "\u{FEFF}one\r\ntwo\r\nthree\r\n");
    let r = call("edit", dir.path(), json!({"path": "w.txt", "oldText": "two\nthree", "newText": "2\n3\n3.5"}))
        .await
        .unwrap();
    assert_eq!(read_text(dir.path(), "w.txt"), "\u{FEFF}one\r\n2\r\n3\r\n3.5\r\n");
    assert_eq!(r.details.unwrap()["diff"], " 1 one\n-2 two\n-3 three\n+2 2\n+3 3\n+4 3.5");

    let edits = json!([{"oldText": "one\n", "newText": "1\n"}, {"oldText": "3.5", "newText": "4\n5"}]);
    call("edit", dir.path(), json!({"path": "w.txt", "edits": edits})).await.unwrap();
    assert_eq!(read_text(dir.path(), "w.txt"), "\u{FEFF}1\r\n2\r\n3\r\n4\r\n5\r\n");
}

#[tokio::test]
async fn mixed_line_endings_outside_the_match_are_untouched() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.txt", "a\r\nb\nc\r\n");
    call("edit", dir.path(), json!({"path": "m.txt", "oldText": "c", "newText": "C"})).await.unwrap();
    assert_eq!(read(dir.path(), "m.txt"), b"a\r\nb\nC\r\n");
}

#[tokio::test]
async fn an_aborted_call_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "a\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = call_with(
        "edit",
        &ToolOptions::new(dir.path()),
        json!({"path": "f.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
        cancel,
    )
    .await
    .unwrap_err();
    assert_eq!(err.0, "Operation aborted");
    assert_eq!(read_text(dir.path(), "f.txt"), "a\n");
}

#[tokio::test]
async fn edits_through_a_symlink_change_the_target() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "real.txt", "x\n");
    std::os::unix::fs::symlink(dir.path().join("real.txt"), dir.path().join("link.txt")).unwrap();
    call("edit", dir.path(), json!({"path": "link.txt", "edits": [{"oldText": "x", "newText": "y"}]})).await.unwrap();
    assert_eq!(read_text(dir.path(), "real.txt"), "y\n");
    assert!(dir.path().join("link.txt").symlink_metadata().unwrap().file_type().is_symlink());
}

/// The model is shown pi 0.73's multi-edit schema.
#[test]
fn the_model_sees_the_multi_edit_schema() {
    let tool = create_tool("edit", &ToolOptions::new("/work/p")).unwrap();
    let spec = tool.spec();
    assert_eq!(spec.name, "edit");
    assert_eq!(
        spec.parameters,
        json!({"type": "object", "required": ["path", "edits"], "additionalProperties": false,
            "properties": {
                "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
                "edits": {"type": "array", "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
                    "items": {"type": "object", "required": ["oldText", "newText"], "additionalProperties": false,
                        "properties": {
                            "oldText": {"type": "string", "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},
                            "newText": {"type": "string", "description": "Replacement text for this targeted edit."}}}}}})
    );
}

/// The agent prepares arguments before it validates them against `parameters()`: every
/// accepted form becomes the multi-edit form and passes.
#[test]
fn every_accepted_form_is_prepared_into_one_that_validates() {
    let tool = create_tool("edit", &ToolOptions::new("/work/p")).unwrap();
    let validators = Validators::default();
    let one = json!([{"oldText": "x", "newText": "y"}]);
    for (form, edits) in [
        (json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}), one.clone()),
        (json!({"path": "a", "oldText": "x", "newText": "y"}), one.clone()),
        (
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}], "oldText": "x", "newText": "y"}),
            json!([{"oldText": "x", "newText": "y"}, {"oldText": "x", "newText": "y"}]),
        ),
        (json!({"path": "a", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"}), one.clone()),
    ] {
        let checked = validators.check("edit", tool.parameters(), &tool.prepare_arguments(args(form))).unwrap();
        assert_eq!(Value::Object(checked), json!({"path": "a", "edits": edits}));
    }
}

#[test]
fn write_target_is_the_resolved_path() {
    let tool = create_tool("edit", &ToolOptions::new("/work/p")).unwrap();
    assert_eq!(
        tool.write_target(&args(json!({"path": "a.rs", "edits": []}))),
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
