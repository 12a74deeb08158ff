//! The file as the record: the header and every entry are on disk as soon as they are produced;
//! a torn last line (a process killed mid-write) is skipped with a warning and the file is not
//! rewritten, and the next append starts on a line of its own; a file whose first line is not a
//! session header, an empty file and a missing file are refused with a clear error and left as
//! they were.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::Path;

use common::*;
use pretty_assertions::assert_eq;
use rho_session::{Durability, LoadWarning, LoadWarningKind, Session, SessionError};

/// Appends raw bytes to a file, as a killed writer would have left them.
fn append_raw(path: &Path, raw: &[u8]) {
    std::fs::OpenOptions::new().append(true).open(path).unwrap().write_all(raw).unwrap();
}

/// A session file with a user message and an answer, closed.
fn two_message_file(dir: &Path) -> std::path::PathBuf {
    let mut s = new_session(dir);
    s.append_message(&user("hello", 1)).unwrap();
    s.append_message(&assistant("hi", "claude-opus-4-6", 2)).unwrap();
    s.session_file().unwrap().to_path_buf()
}

#[test]
fn the_header_is_on_disk_when_the_session_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions").join("--home-me-proj--");
    let s = Session::create(&sessions, Path::new("/home/me/proj"), None).unwrap();
    let path = s.session_file().unwrap();
    // The directory is created; the file is named `<ts>_<id>.jsonl`.
    assert_eq!(path.parent().unwrap(), sessions);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(&format!("_{}.jsonl", s.session_id())), "{name}");
    assert!(!name.contains(':'), "{name}");
    let file_lines = lines(path);
    assert_eq!(file_lines.len(), 1);
    assert_eq!(keys(&file_lines[0]), ["type", "version", "id", "timestamp", "cwd"]);
    assert_eq!(line_json(path, 0)["id"], s.session_id());
    assert_eq!(line_json(path, 0)["cwd"], "/home/me/proj");
    assert!(s.is_persisted());
}

#[test]
fn the_first_user_message_is_on_disk_before_any_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_model_change("anthropic", "claude-opus-4-6").unwrap();
    s.append_thinking_level_change(rho_types::ThinkingLevel::Medium).unwrap();
    let id = s.append_message(&user("do not lose me", 1)).unwrap();
    // Read while the session is still open: nothing is buffered.
    let path = s.session_file().unwrap();
    let on_disk = lines(path);
    assert_eq!(on_disk.len(), 4);
    assert_eq!(line_json(path, 3)["id"], id.as_str());
    assert_eq!(line_json(path, 3)["message"]["content"][0]["text"], "do not lose me");
    // Another process sees the same session.
    let reader = open_clean(path);
    assert_eq!(reader.leaf_id(), Some(&id));
}

#[test]
fn an_in_memory_session_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Session::in_memory(dir.path());
    s.append_message(&user("hello", 1)).unwrap();
    let first = s.entries()[0].id().clone();
    s.append_message(&user("again", 2)).unwrap();
    s.branch(first.as_str()).unwrap();
    assert!(s.session_file().is_none());
    assert!(!s.is_persisted());
    assert_eq!(s.entries().len(), 2, "no leaf marker in memory");
    assert!(file_names(dir.path()).is_empty());
}

#[test]
fn create_at_refuses_an_existing_file_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("taken.jsonl");
    std::fs::write(&path, "precious\n").unwrap();
    let err = Session::create_at(&path, dir.path(), None).unwrap_err();
    assert!(matches!(err, SessionError::AlreadyExists { .. }), "{err}");
    assert_eq!(err.to_string(), format!("Session file already exists: {}", path.display()));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious\n");
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning_and_the_file_is_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_message_file(dir.path());
    let whole = open_clean(&path);
    append_raw(&path, br#"{"type":"message","id":"deadbeef","parentId":"#);
    let before = bytes(&path);

    let (s, warnings) = open(&path);
    assert_eq!(warnings, [LoadWarning { line: 4, kind: LoadWarningKind::TornLastLine }]);
    assert_eq!(warnings[0].to_string(), "line 4: incomplete last line (an interrupted write) skipped");
    assert_eq!(s.entries(), whole.entries());
    assert_eq!(s.leaf_id(), whole.leaf_id());
    drop(s);
    assert_eq!(bytes(&path), before, "loading must not touch the file");
}

#[test]
fn after_a_torn_line_the_next_append_starts_on_a_fresh_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_message_file(dir.path());
    let torn = br#"{"type":"message","id":"deadbeef","parentId":"#;
    append_raw(&path, torn);
    let before = bytes(&path);

    let (mut s, _) = open(&path);
    let answer = s.leaf_id().unwrap().clone();
    let new_id = s.append_message(&user("after the crash", 3)).unwrap();

    // The old bytes are untouched; the new entry follows on a line of its own.
    let after = bytes(&path);
    assert!(after.starts_with(&before));
    assert_eq!(after[before.len()], b'\n');
    let file_lines = lines(&path);
    assert_eq!(file_lines.len(), 5);
    assert_eq!(file_lines[3].as_bytes(), torn);
    assert_eq!(line_json(&path, 4)["id"], new_id.as_str());
    assert_eq!(line_json(&path, 4)["parentId"], answer.as_str());

    // The reload has the old entries and the new one; the torn line is now a broken middle line.
    let (reloaded, warnings) = open(&path);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].line, 4);
    assert!(matches!(warnings[0].kind, LoadWarningKind::InvalidJson(_)), "{:?}", warnings[0]);
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:hello", "assistant:hi", "user:after the crash"]);
    assert_eq!(reloaded.leaf_id(), Some(&new_id));
}

#[test]
fn a_torn_line_right_after_the_header_leaves_an_empty_session() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_session(dir.path());
    let path = s.session_file().unwrap().to_path_buf();
    drop(s);
    append_raw(&path, br#"{"type":"model_ch"#);
    let (mut s, warnings) = open(&path);
    assert_eq!(warnings, [LoadWarning { line: 2, kind: LoadWarningKind::TornLastLine }]);
    assert!(s.entries().is_empty());
    assert_eq!(s.leaf_id(), None);
    s.append_message(&user("first", 1)).unwrap();
    assert_eq!(line_json(&path, 2)["parentId"], serde_json::Value::Null);
}

#[test]
fn a_complete_last_line_without_newline_is_kept_and_the_next_append_goes_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_message_file(dir.path());
    let mut content = bytes(&path);
    assert_eq!(content.pop(), Some(b'\n'));
    std::fs::write(&path, &content).unwrap();

    let (mut s, warnings) = open(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(s.entries().len(), 2);
    s.append_message(&user("next", 3)).unwrap();
    let reloaded = open_clean(&path);
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:hello", "assistant:hi", "user:next"]);
}

#[test]
fn broken_lines_in_the_middle_are_skipped_and_named_by_line_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_message_file(dir.path());
    let mut file_lines = lines(&path);
    file_lines.insert(2, "not json at all".into());
    file_lines.insert(3, String::new());
    file_lines.insert(4, r#"{"no":"type"}"#.into());
    file_lines.insert(5, r#"{"type":"session","version":3,"id":"again"}"#.into());
    std::fs::write(&path, file_lines.join("\n") + "\n").unwrap();
    let before = bytes(&path);

    let (s, warnings) = open(&path);
    let lines_and_kinds: Vec<(usize, &str)> = warnings
        .iter()
        .map(|w| {
            let kind = match &w.kind {
                LoadWarningKind::InvalidJson(_) => "invalid",
                LoadWarningKind::NotAnEntry(_) => "not-an-entry",
                LoadWarningKind::TornLastLine => "torn",
                LoadWarningKind::Unreadable(_) => "unreadable",
                LoadWarningKind::More(_) => "more",
                LoadWarningKind::UnknownTypes(_) => "unknown-types",
            };
            (w.line, kind)
        })
        .collect();
    assert_eq!(lines_and_kinds, [(3, "invalid"), (5, "not-an-entry"), (6, "not-an-entry")]);
    assert!(warnings[0].to_string().starts_with("line 3: not valid JSON, skipped"), "{}", warnings[0]);
    assert_eq!(summary_of(&s.build_context().messages), ["user:hello", "assistant:hi"]);
    assert_eq!(bytes(&path), before);
}

/// Asserts that opening `content` is refused as not a session file and leaves the file as it was.
fn assert_refused(content: &[u8], reason_part: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, content).unwrap();
    let err = Session::open(&path).unwrap_err();
    let SessionError::InvalidHeader { path: at, reason } = &err else {
        panic!("InvalidHeader expected, got {err}");
    };
    assert_eq!(at, &path);
    assert!(reason.contains(reason_part), "{reason_part:?} not in {reason:?}");
    let message = err.to_string();
    assert!(message.starts_with(&format!("Not a session file: {} (", path.display())), "{message}");
    assert_eq!(bytes(&path), content, "a refused file is left untouched");
    assert_eq!(file_names(dir.path()), ["bad.jsonl"]);
}

#[test]
fn a_file_whose_first_line_is_not_a_header_is_refused_and_left_untouched() {
    let message_line = fixture_lines("pi-minimal.jsonl")[3].clone();
    assert_refused(format!("{message_line}\n").as_bytes(), "first line has type \"message\"");
    assert_refused(b"hello world\n", "first line is not valid JSON");
    assert_refused(b"{\"type\":\"session\",\"version\":3}\n{\"type\":\"label\"}\n", "no string \"id\"");
    assert_refused(b"{\"version\":3,\"id\":\"x\"}\n", "no \"type\"");
    assert_refused(b"{\"type\":\"session\",\"version\":\"three\",\"id\":\"x\"}\n", "malformed session header");
    assert_refused(b"{\"type\":\"session\",\"version\":3,\"id\":\"5b0c", "not valid JSON");
}

#[test]
fn an_empty_file_is_refused_and_left_untouched() {
    assert_refused(b"", "empty");
    assert_refused(b"\n\n  \n", "empty");
}

#[test]
fn a_missing_file_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nowhere.jsonl");
    let err = Session::open(&path).unwrap_err();
    assert!(matches!(&err, SessionError::NotFound { path: p } if p == &path), "{err}");
    assert_eq!(err.to_string(), format!("Session file not found: {}", path.display()));
    assert!(!path.exists(), "opening must not create the file");
}

#[test]
fn a_directory_is_an_io_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let err = Session::open(dir.path()).unwrap_err();
    assert!(matches!(err, SessionError::Io { .. } | SessionError::InvalidHeader { .. }), "{err}");
}

#[test]
fn blank_lines_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blank.jsonl");
    let minimal = fixture_lines("pi-minimal.jsonl");
    std::fs::write(&path, format!("\n{}\n\n{}\n  \n{}\n", minimal[0], minimal[1], minimal[2])).unwrap();
    let s = open_clean(&path);
    assert_eq!(s.entries().len(), 2);
    assert_eq!(s.leaf_id().unwrap().as_str(), "2b3c4d5e");
}

#[test]
fn synced_appends_reach_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.set_durability(Durability::SyncData);
    s.append_message(&user("synced", 1)).unwrap();
    s.append_message(&assistant("ok", "m", 2)).unwrap();
    let reloaded = open_clean(s.session_file().unwrap());
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:synced", "assistant:ok"]);
}

#[test]
fn a_message_that_cannot_be_written_is_kept_and_written_before_the_next_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_message_file(dir.path());
    let (mut s, _) = open(&path);
    let saved = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();

    // A message is the record of what happened: kept in memory, waiting for the file.
    let err = s.append_message(&user("kept", 3)).unwrap_err();
    assert!(matches!(err, SessionError::Unsaved { pending: 1, .. }), "{err}");
    assert!(err.to_string().contains(&path.display().to_string()), "{err}");
    assert_eq!(s.entries().len(), 3);
    assert_eq!(s.unsaved_count(), 1);
    assert!(!path.exists(), "a failed append must not create a headerless file");

    // A change a command asks for is refused while the file lags, and changes nothing.
    let leaf = s.leaf_id().cloned();
    assert!(s.append_session_info("name").is_err());
    assert_eq!((s.entries().len(), s.leaf_id()), (3, leaf.as_ref()));

    // Once the file is back, what waited goes first and nothing is skipped.
    std::fs::write(&path, saved).unwrap();
    s.append_message(&assistant("after", "m", 4)).unwrap();
    assert_eq!(s.unsaved_count(), 0);
    let reloaded = open_clean(&path);
    assert_eq!(
        summary_of(&reloaded.build_context().messages),
        ["user:hello", "assistant:hi", "user:kept", "assistant:after"]
    );
}

#[test]
fn a_second_writer_of_one_file_is_refused_until_the_first_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_message_file(dir.path());
    let (mut first, _) = open(&path);
    first.lock().unwrap();
    let (mut second, _) = open(&path);
    let err = second.lock().unwrap_err();
    assert!(matches!(err, SessionError::Locked { .. }), "{err}");
    assert_eq!(err.to_string(), format!("Session file is in use by another process: {}", path.display()));
    drop(first);
    second.lock().unwrap();
    Session::in_memory(dir.path()).lock().unwrap();
}

#[test]
fn a_file_of_bad_lines_lists_the_first_problems_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"cwd\":\"/\"}\n",
    );
    for _ in 0..100_000 {
        text.push_str("not json\n");
    }
    std::fs::write(&path, text).unwrap();
    let (_, warnings) = open(&path);
    assert_eq!(warnings.len(), rho_session::MAX_WARNINGS + 1);
    let last = warnings.last().unwrap();
    assert_eq!(last.kind, LoadWarningKind::More(100_000 - rho_session::MAX_WARNINGS));
    assert_eq!(last.to_string(), "99980 more lines with problems, up to line 100001, not listed");
}
