//! The tree (docs/session-format.md, "The tree"): parentId chains, `branch` / `reset_leaf` / branch
//! summaries, the `rho.leaf` marker that lets a reload (rho's or pi's) resume on the branch the
//! user was on, labels and session names.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use pretty_assertions::assert_eq;
use rho_session::{EntryId, LEAF_MARKER_TYPE, NewBranchSummary, Session, SessionEntry, SessionError, build_context};
use serde_json::{Value, json};

/// A session `u1 → a1 → u2 → a2`; returns it with the ids in that order.
fn conversation(dir: &std::path::Path) -> (Session, Vec<EntryId>) {
    let mut s = new_session(dir);
    let ids = vec![
        s.append_message(&user("u1", 1)).unwrap(),
        s.append_message(&assistant("a1", "m", 2)).unwrap(),
        s.append_message(&user("u2", 3)).unwrap(),
        s.append_message(&assistant("a2", "m", 4)).unwrap(),
    ];
    (s, ids)
}

fn last_line(s: &Session) -> Value {
    let file_lines = lines(s.session_file().unwrap());
    serde_json::from_str(file_lines.last().unwrap()).unwrap()
}

#[test]
fn every_append_hangs_under_the_leaf_and_becomes_the_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let (s, ids) = conversation(dir.path());
    let path = s.session_file().unwrap();
    assert_eq!(line_json(path, 1)["parentId"], Value::Null);
    for i in 1..ids.len() {
        assert_eq!(line_json(path, i + 1)["parentId"], ids[i - 1].as_str());
    }
    assert_eq!(s.leaf_id(), Some(&ids[3]));
    assert_eq!(s.branch_entries().iter().map(|e| e.id()).collect::<Vec<_>>(), ids.iter().collect::<Vec<_>>());
    assert_eq!(s.children(ids[1].as_str()).len(), 1);
    assert_eq!(s.leaf_entry().unwrap().id(), &ids[3]);
}

#[test]
fn branch_moves_the_leaf_and_the_next_append_starts_a_sibling() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    s.branch(ids[1].as_str()).unwrap();
    assert_eq!(s.leaf_id(), Some(&ids[1]));
    assert_eq!(summary_of(&s.build_context().messages), ["user:u1", "assistant:a1"]);
    let other = s.append_message(&user("u2 again", 5)).unwrap();
    assert_eq!(s.get_entry(other.as_str()).unwrap().parent_id(), Some(&ids[1]));

    // Both branches stay in the file and in memory; each path is its own conversation.
    let children: Vec<&EntryId> =
        s.children(ids[1].as_str()).into_iter().filter(|e| !e.is_leaf_marker()).map(SessionEntry::id).collect();
    assert_eq!(children, [&ids[2], &other]);
    let old = build_context(&s.path_to(Some(ids[3].as_str())));
    assert_eq!(summary_of(&old.messages), ["user:u1", "assistant:a1", "user:u2", "assistant:a2"]);
    assert_eq!(summary_of(&s.build_context().messages), ["user:u1", "assistant:a1", "user:u2 again"]);
    // The user messages of every branch.
    let texts: Vec<String> = s.user_message_entries().into_iter().map(|u| u.text).collect();
    assert_eq!(texts, ["u1", "u2", "u2 again"]);
}

#[test]
fn branching_to_an_unknown_entry_is_an_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    let before = bytes(s.session_file().unwrap());
    let err = s.branch("nope").unwrap_err();
    assert!(matches!(err, SessionError::EntryNotFound(ref id) if id == "nope"));
    assert_eq!(err.to_string(), "Entry nope not found");
    assert_eq!(s.leaf_id(), Some(&ids[3]));
    assert_eq!(bytes(s.session_file().unwrap()), before);
}

#[test]
fn the_leaf_survives_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    s.branch(ids[1].as_str()).unwrap();

    // The move is recorded as a marker whose parent is the new leaf.
    let marker = last_line(&s);
    assert_eq!(marker["type"], "custom");
    assert_eq!(marker["customType"], LEAF_MARKER_TYPE);
    assert_eq!(marker["parentId"], ids[1].as_str());
    assert_eq!(marker["data"], json!({"leafId": ids[1].as_str()}));
    assert_eq!(s.leaf_id(), Some(&ids[1]), "the marker never becomes the leaf");

    let reloaded = open_clean(s.session_file().unwrap());
    assert_eq!(reloaded.leaf_id(), Some(&ids[1]));
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:u1", "assistant:a1"]);
}

#[test]
fn a_reader_that_takes_the_last_line_lands_on_the_users_branch() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    s.branch(ids[1].as_str()).unwrap();
    let marker_id = EntryId::from(last_line(&s)["id"].as_str().unwrap());

    // pi's view: the leaf is the last entry, the marker; it is a `custom` entry, never context.
    let pi_view = build_context(&s.path_to(Some(marker_id.as_str())));
    assert_eq!(pi_view, s.build_context());

    // pi appends under the marker; rho then resumes there, and the marker stays invisible.
    let mut file_lines = lines(s.session_file().unwrap());
    file_lines.push(
        json!({"type":"message","id":"9f9f9f9f","parentId":marker_id.as_str(),"timestamp":"2026-03-15T10:00:00.000Z",
               "message":{"role":"user","content":[{"type":"text","text":"from pi"}],"timestamp":9}})
        .to_string(),
    );
    std::fs::write(s.session_file().unwrap(), file_lines.join("\n") + "\n").unwrap();
    let reloaded = open_clean(s.session_file().unwrap());
    assert_eq!(reloaded.leaf_id().unwrap().as_str(), "9f9f9f9f");
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:u1", "assistant:a1", "user:from pi"]);
}

#[test]
fn after_a_branch_and_an_append_the_reload_resumes_on_the_new_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    s.branch(ids[0].as_str()).unwrap();
    let new = s.append_message(&assistant("a1 retried", "m", 6)).unwrap();
    let reloaded = open_clean(s.session_file().unwrap());
    assert_eq!(reloaded.leaf_id(), Some(&new));
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:u1", "assistant:a1 retried"]);
}

#[test]
fn reset_leaf_starts_a_new_root_and_survives_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, _) = conversation(dir.path());
    s.reset_leaf().unwrap();
    assert_eq!(s.leaf_id(), None);
    assert!(s.build_context().messages.is_empty());
    let marker = last_line(&s);
    assert_eq!((marker["customType"].as_str(), &marker["parentId"]), (Some(LEAF_MARKER_TYPE), &Value::Null));
    assert_eq!(marker["data"], json!({"leafId": null}));

    let mut reloaded = open_clean(s.session_file().unwrap());
    assert_eq!(reloaded.leaf_id(), None);
    assert!(reloaded.build_context().messages.is_empty());
    assert_eq!(reloaded.build_context().thinking_level, None);
    assert_eq!(reloaded.build_context().model, None);

    // The next entry is a second root; several roots in one file are legal.
    let root = reloaded.append_message(&user("fresh start", 7)).unwrap();
    assert_eq!(reloaded.get_entry(root.as_str()).unwrap().parent_id(), None);
    let roots = reloaded.entries().iter().filter(|e| e.parent_id().is_none()).count();
    assert_eq!(roots, 3, "the first message, the reset marker and the new root");
    assert_eq!(summary_of(&open_clean(s.session_file().unwrap()).build_context().messages), ["user:fresh start"]);
}

#[test]
fn moving_the_leaf_to_where_a_reload_would_find_it_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    let path = s.session_file().unwrap().to_path_buf();
    let count = lines(&path).len();
    s.branch(ids[3].as_str()).unwrap();
    assert_eq!(lines(&path).len(), count, "branching to the current leaf is a no-op");

    s.branch(ids[1].as_str()).unwrap();
    s.branch(ids[2].as_str()).unwrap();
    assert_eq!(lines(&path).len(), count + 2);
    assert_eq!(open_clean(&path).leaf_id(), Some(&ids[2]));
    // Back to the entry the last marker names: nothing to record.
    s.branch(ids[2].as_str()).unwrap();
    assert_eq!(lines(&path).len(), count + 2);
}

#[test]
fn labels_are_set_cleared_and_the_last_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    let label_id = s.append_label(ids[0].as_str(), Some("checkpoint-1")).unwrap();
    // A label is an ordinary node of the branch and becomes the leaf.
    assert_eq!(s.leaf_id(), Some(&label_id));
    assert_eq!(s.get_entry(label_id.as_str()).unwrap().parent_id(), Some(&ids[3]));
    assert_eq!(s.label(ids[0].as_str()), Some("checkpoint-1"));
    assert_eq!(
        keys(lines(s.session_file().unwrap()).last().unwrap()),
        ["type", "id", "parentId", "timestamp", "targetId", "label"]
    );

    s.append_label(ids[0].as_str(), Some("checkpoint-2")).unwrap();
    s.append_label(ids[2].as_str(), Some("second")).unwrap();
    assert_eq!(s.label(ids[0].as_str()), Some("checkpoint-2"));

    // Clearing writes the entry without a `label` key, as pi does.
    s.append_label(ids[2].as_str(), None).unwrap();
    assert_eq!(last_line(&s).get("label"), None);
    assert_eq!(s.label(ids[2].as_str()), None);
    // An empty label clears too, and is written the same way.
    s.append_label(ids[0].as_str(), Some("")).unwrap();
    assert_eq!(last_line(&s).get("label"), None);
    assert_eq!(s.label(ids[0].as_str()), None);
    s.append_label(ids[0].as_str(), Some("final")).unwrap();

    let reloaded = open_clean(s.session_file().unwrap());
    assert_eq!(reloaded.label(ids[0].as_str()), Some("final"));
    assert_eq!(reloaded.label(ids[2].as_str()), None);
    // Labels are never part of the context.
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:u1", "assistant:a1", "user:u2", "assistant:a2"]);
}

#[test]
fn a_label_needs_an_existing_target() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    let before = bytes(s.session_file().unwrap());
    let err = s.append_label("missing", Some("x")).unwrap_err();
    assert_eq!(err.to_string(), "Entry missing not found");
    assert_eq!(bytes(s.session_file().unwrap()), before);
    assert_eq!(s.leaf_id(), Some(&ids[3]));
}

#[test]
fn the_session_name_is_the_last_non_empty_one_anywhere_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    assert_eq!(s.name(), None);
    s.append_session_info("  Refactor auth module \n").unwrap();
    assert_eq!(s.name(), Some("Refactor auth module"));
    assert_eq!(last_line(&s)["name"], "Refactor auth module");
    // An empty name does not clear it.
    s.append_session_info("   ").unwrap();
    assert_eq!(s.name(), Some("Refactor auth module"));
    // Names are not branch-scoped: one set on another branch still counts.
    s.branch(ids[0].as_str()).unwrap();
    s.append_session_info("Other branch name").unwrap();
    s.branch(ids[3].as_str()).unwrap();
    assert_eq!(s.name(), Some("Other branch name"));
    assert_eq!(open_clean(s.session_file().unwrap()).name(), Some("Other branch name"));
}

#[test]
fn branch_with_summary_hangs_the_summary_under_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = conversation(dir.path());
    let summary =
        NewBranchSummary { summary: "Tried u2.".into(), details: Some(json!({"readFiles": []})), from_hook: None };
    let id = s.branch_with_summary(Some(ids[1].as_str()), summary).unwrap();
    assert_eq!(s.leaf_id(), Some(&id));
    let line = last_line(&s);
    assert_eq!(line["parentId"], ids[1].as_str());
    assert_eq!(line["fromId"], ids[1].as_str());
    assert_eq!(keys(&line.to_string()), ["type", "id", "parentId", "timestamp", "fromId", "summary", "details"]);
    assert_eq!(summary_of(&s.build_context().messages), ["user:u1", "assistant:a1", "branchSummary:Tried u2."]);

    // From the root: no parent, `fromId` is "root".
    let root =
        s.branch_with_summary(None, NewBranchSummary { summary: "All of it.".into(), ..Default::default() }).unwrap();
    let line = last_line(&s);
    assert_eq!((&line["parentId"], line["fromId"].as_str()), (&Value::Null, Some("root")));
    assert_eq!(s.leaf_id(), Some(&root));
    assert_eq!(summary_of(&s.build_context().messages), ["branchSummary:All of it."]);

    let err = s.branch_with_summary(Some("nope"), NewBranchSummary::default()).unwrap_err();
    assert_eq!(err.to_string(), "Entry nope not found");
    assert_eq!(open_clean(s.session_file().unwrap()).leaf_id(), Some(&root));
}

#[test]
fn paths_and_orphans() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orphans.jsonl");
    let header = &fixture_lines("pi-minimal.jsonl")[0];
    let entry = |id: &str, parent: Value| {
        json!({"type":"custom","customType":"x","id":id,"parentId":parent,"timestamp":"2026-03-15T10:00:00.000Z"})
            .to_string()
    };
    let content = [
        header.clone(),
        entry("aaaaaaaa", Value::Null),
        entry("bbbbbbbb", json!("aaaaaaaa")),
        entry("cccccccc", json!("gone0000")),
        entry("dddddddd", json!("cccccccc")),
    ]
    .join("\n");
    std::fs::write(&path, content + "\n").unwrap();
    let s = open_clean(&path);
    // A parent that is not in the file ends the path there, as a root would.
    let ids = |p: Vec<&SessionEntry>| p.iter().map(|e| e.id().to_string()).collect::<Vec<_>>();
    assert_eq!(ids(s.path_to(Some("dddddddd"))), ["cccccccc", "dddddddd"]);
    assert_eq!(ids(s.path_to(Some("bbbbbbbb"))), ["aaaaaaaa", "bbbbbbbb"]);
    assert!(s.path_to(Some("unknown")).is_empty());
    assert!(s.path_to(None).is_empty());
    assert_eq!(s.leaf_id().unwrap().as_str(), "dddddddd");
}
