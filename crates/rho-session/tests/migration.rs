//! Version-1 and version-2 files (docs/session-format.md, "Versions and migration"): they load
//! migrated in memory and the file is left alone until something is appended; the first append
//! writes the migrated file atomically (a temporary file renamed over the original) and keeps the
//! original beside it as `<file>.v<N>.bak`. A failed migration write changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use pretty_assertions::assert_eq;
use rho_session::{CURRENT_VERSION, LoadWarningKind, SessionEntry};
use rho_types::AgentMessage;
use serde_json::Value;

#[test]
fn a_v1_file_loads_migrated_and_is_not_touched_by_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "v1.jsonl");
    let s = open_clean(&path);

    assert_eq!(s.header().version, CURRENT_VERSION);
    assert_eq!(s.cwd(), "/home/me/old");
    // Every entry got an id and the previous entry as parent.
    let entries = s.entries();
    assert_eq!(entries.len(), 6);
    assert_eq!(entries[0].parent_id(), None);
    for pair in entries.windows(2) {
        assert_eq!(pair[1].parent_id(), Some(pair[0].id()));
    }
    // firstKeptEntryIndex 3 (header = 0) is the second user message.
    let SessionEntry::Compaction(c) = &entries[4] else { panic!("compaction expected") };
    assert_eq!(c.first_kept_entry_id.as_ref(), Some(entries[2].id()));
    assert_eq!(
        summary_of(&s.build_context().messages),
        [
            "compactionSummary:Two questions were asked.",
            "user:second question",
            "assistant:second answer",
            "user:third question"
        ]
    );
    assert_eq!(bytes(&path), bytes(&fixtures_dir().join("v1.jsonl")));
    assert_eq!(file_names(dir.path()), ["v1.jsonl"]);
}

#[test]
fn appending_to_a_v1_file_persists_the_migration_with_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "v1.jsonl");
    let original = bytes(&path);
    let (mut s, _) = open(&path);
    let new_id = s.append_message(&user("fourth question", 1_761_987_607_000)).unwrap();

    // The original is kept byte for byte; no temporary file is left behind.
    assert_eq!(file_names(dir.path()), ["v1.jsonl", "v1.jsonl.v1.bak"]);
    assert_eq!(bytes(&dir.path().join("v1.jsonl.v1.bak")), original);

    // The file is now version 3 with the ids the session holds in memory.
    let file_lines = lines(&path);
    assert_eq!(file_lines.len(), 8);
    let header: Value = serde_json::from_str(&file_lines[0]).unwrap();
    assert_eq!(header["version"], 3);
    assert_eq!(header["id"], "0c1d2e3f-0000-4000-8000-000000000001");
    assert_eq!(keys(&file_lines[0]), ["type", "version", "id", "timestamp", "cwd"]);
    for (entry, line) in s.entries().iter().zip(&file_lines[1..]) {
        assert_eq!(String::from_utf8(entry.to_line().unwrap()).unwrap(), format!("{line}\n"));
    }
    let compaction: Value = serde_json::from_str(&file_lines[5]).unwrap();
    assert!(compaction.get("firstKeptEntryIndex").is_none());
    assert_eq!(compaction["firstKeptEntryId"], s.entries()[2].id().as_str());

    // A reload is a plain version-3 file: same tree, no migration pending, no second backup.
    let mut reloaded = open_clean(&path);
    assert_eq!(reloaded.entries(), s.entries());
    assert_eq!(reloaded.leaf_id(), Some(&new_id));
    reloaded.append_message(&user("fifth", 1_761_987_608_000)).unwrap();
    assert_eq!(file_names(dir.path()), ["v1.jsonl", "v1.jsonl.v1.bak"]);
    assert_eq!(lines(&path).len(), 9);
}

#[test]
fn a_v2_file_renames_hook_messages_and_persists_on_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "v2.jsonl");
    let original = bytes(&path);
    let (mut s, warnings) = open(&path);
    assert!(warnings.is_empty(), "{warnings:?}");

    // Ids are kept; the hookMessage role is read as custom.
    let ids: Vec<&str> = s.entries().iter().map(|e| e.id().as_str()).collect();
    assert_eq!(ids, ["aa000001", "aa000002", "aa000003"]);
    let Some(AgentMessage::Custom(c)) = s.entries()[1].as_message() else { panic!("custom message expected") };
    assert_eq!(c.custom_type, "my-hook");
    assert_eq!(summary_of(&s.build_context().messages), ["user:hello", "custom:injected by a hook", "assistant:hi"]);
    assert_eq!(bytes(&path), original);

    // A leaf move is an append too: it persists the migration first.
    s.branch("aa000001").unwrap();
    assert_eq!(file_names(dir.path()), ["v2.jsonl", "v2.jsonl.v2.bak"]);
    assert_eq!(bytes(&dir.path().join("v2.jsonl.v2.bak")), original);
    let migrated: Value = serde_json::from_str(&lines(&path)[2]).unwrap();
    assert_eq!(migrated["message"]["role"], "custom");
    assert_eq!(serde_json::from_str::<Value>(&lines(&path)[0]).unwrap()["version"], 3);
    let reloaded = open_clean(&path);
    assert_eq!(reloaded.leaf_id().unwrap().as_str(), "aa000001");
}

#[test]
fn an_existing_backup_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "v2.jsonl");
    std::fs::write(dir.path().join("v2.jsonl.v2.bak"), "an older backup\n").unwrap();
    let (mut s, _) = open(&path);
    s.append_message(&user("x", 1)).unwrap();
    assert_eq!(file_names(dir.path()), ["v2.jsonl", "v2.jsonl.v2.bak", "v2.jsonl.v2.bak.2"]);
    assert_eq!(std::fs::read_to_string(dir.path().join("v2.jsonl.v2.bak")).unwrap(), "an older backup\n");
    assert_eq!(bytes(&dir.path().join("v2.jsonl.v2.bak.2")), bytes(&fixtures_dir().join("v2.jsonl")));
}

#[test]
fn a_failed_migration_write_leaves_file_and_session_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "v1.jsonl");
    let original = bytes(&path);
    let (mut s, _) = open(&path);
    let entries_before = s.entries().to_vec();

    // The temporary file cannot be created: a directory stands in its place.
    let blocker = dir.path().join(format!(".v1.jsonl.{}.tmp", std::process::id()));
    std::fs::create_dir(&blocker).unwrap();
    let err = s.append_message(&user("x", 1)).unwrap_err();
    assert!(err.to_string().contains("Cannot write migrated session"), "{err}");
    assert_eq!(bytes(&path), original);
    assert_eq!(s.entries(), entries_before.as_slice());
    assert!(!dir.path().join("v1.jsonl.v1.bak").exists());

    // Once the obstacle is gone the same session migrates and appends.
    std::fs::remove_dir(&blocker).unwrap();
    s.append_message(&user("x", 1)).unwrap();
    assert_eq!(file_names(dir.path()), ["v1.jsonl", "v1.jsonl.v1.bak"]);
    assert_eq!(open_clean(&path).entries().len(), 7);
}

#[test]
fn a_torn_line_in_an_old_file_is_dropped_by_the_migration_but_kept_in_the_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "v2.jsonl");
    let mut content = bytes(&path);
    content.extend_from_slice(br#"{"type":"message","id":"aa0"#);
    std::fs::write(&path, &content).unwrap();

    let (mut s, warnings) = open(&path);
    assert_eq!(warnings.len(), 1);
    assert_eq!((warnings[0].line, &warnings[0].kind), (5, &LoadWarningKind::TornLastLine));
    assert_eq!(bytes(&path), content, "opening must not touch the file");
    s.append_message(&user("after", 1)).unwrap();
    assert_eq!(bytes(&dir.path().join("v2.jsonl.v2.bak")), content);
    let reloaded = open_clean(&path);
    assert_eq!(reloaded.entries().len(), 4);
    assert_eq!(reloaded.entries()[3].parent_id().unwrap().as_str(), "aa000003");
}

#[test]
fn copies_of_an_old_file_are_written_migrated_and_leave_the_source_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "v1.jsonl");
    let (s, _) = open(&path);
    let other = dir.path().join("other");
    let copy = s.fork_into(&other, std::path::Path::new("/home/me/new")).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&lines(copy.session_file().unwrap())[0]).unwrap()["version"], 3);
    assert_eq!(copy.entries(), s.entries());
    assert_eq!(bytes(&path), bytes(&fixtures_dir().join("v1.jsonl")));
    assert_eq!(file_names(dir.path()), ["other", "v1.jsonl"]);
}
