//! New sessions made from an existing one (docs/session-format.md, "New sessions and forks"):
//! `/fork` and `clone` (`create_branched_session`: one branch into a new file, labels re-created,
//! `parentSession` in the header) and the cross-project `--session` (`fork_into` / `fork_from`:
//! every entry copied verbatim). The source file is never modified.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;
use pretty_assertions::assert_eq;
use rho_session::{EntryId, LEAF_MARKER_TYPE, LoadWarningKind, Session, SessionEntry, SessionError};
use serde_json::Value;

/// `u1 → a1 → [label u1 "start"] → u2 → a2`, a side branch `a1 → u2b` with a label on it, then
/// back on `a2`. Returns the session and the ids `[u1, a1, u2, a2, u2b]`.
fn labelled_tree(dir: &Path) -> (Session, Vec<EntryId>) {
    let mut s = new_session(dir);
    let u1 = s.append_message(&user("u1", 1)).unwrap();
    let a1 = s.append_message(&assistant("a1", "m", 2)).unwrap();
    s.append_label(u1.as_str(), Some("start")).unwrap();
    let u2 = s.append_message(&user("u2", 3)).unwrap();
    let a2 = s.append_message(&assistant("a2", "m", 4)).unwrap();
    s.append_label(a2.as_str(), Some("tip")).unwrap();
    s.branch(a1.as_str()).unwrap();
    let u2b = s.append_message(&user("u2b", 5)).unwrap();
    s.append_label(u2b.as_str(), Some("side")).unwrap();
    s.branch(a2.as_str()).unwrap();
    (s, vec![u1, a1, u2, a2, u2b])
}

#[test]
fn a_branched_session_holds_the_path_with_its_labels_recreated() {
    let dir = tempfile::tempdir().unwrap();
    let (s, ids) = labelled_tree(dir.path());
    let source = s.session_file().unwrap().to_path_buf();
    let source_bytes = bytes(&source);

    let fork = s.create_branched_session(ids[3].as_str()).unwrap();
    let path = fork.session_file().unwrap().to_path_buf();
    assert_eq!(path.parent(), source.parent(), "written next to the source");
    assert_ne!(fork.session_id(), s.session_id());
    assert_eq!(fork.header().parent_session.as_deref(), Some(&*source.to_string_lossy()));
    assert_eq!(fork.cwd(), s.cwd());
    assert_eq!(bytes(&source), source_bytes, "the source is never modified");

    // The path without its label entries, the chain re-linked where a label was taken out.
    let kinds: Vec<(String, Option<String>)> =
        fork.entries().iter().map(|e| (e.entry_type().to_owned(), e.parent_id().map(ToString::to_string))).collect();
    assert_eq!(
        kinds[..4],
        [
            ("message".into(), None),
            ("message".into(), Some(ids[0].to_string())),
            ("message".into(), Some(ids[1].to_string())),
            ("message".into(), Some(ids[2].to_string())),
        ]
    );
    let copied: Vec<&EntryId> = fork.entries()[..4].iter().map(SessionEntry::id).collect();
    assert_eq!(copied, ids[..4].iter().collect::<Vec<_>>());
    // One label per labelled entry on the path, chained after the last path entry; the side
    // branch's label does not come along.
    let labels: Vec<(String, String, Option<String>)> = fork.entries()[4..]
        .iter()
        .map(|e| match e {
            SessionEntry::Label(l) => {
                (l.target_id.to_string(), l.label.clone().unwrap(), l.parent_id.as_ref().map(ToString::to_string))
            }
            other => panic!("label expected, got {other:?}"),
        })
        .collect();
    assert_eq!(labels.len(), 2);
    assert_eq!(labels[0], (ids[0].to_string(), "start".into(), Some(ids[3].to_string())));
    assert_eq!(labels[1].0, ids[3].to_string());
    assert_eq!(labels[1].1, "tip");
    assert_eq!(labels[1].2.as_deref(), Some(fork.entries()[4].id().as_str()));

    // On disk at once, before anything else happens, and it reads back the same.
    let reloaded = open_clean(&path);
    assert_eq!(reloaded.entries(), fork.entries());
    assert_eq!(reloaded.label(ids[0].as_str()), Some("start"));
    assert_eq!(reloaded.label(ids[3].as_str()), Some("tip"));
    assert_eq!(reloaded.label(ids[4].as_str()), None);
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:u1", "assistant:a1", "user:u2", "assistant:a2"]);
    assert_eq!(reloaded.header().parent_session, fork.header().parent_session);
}

#[test]
fn a_branched_session_drops_leaf_markers_and_cleared_labels() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let u1 = s.append_message(&user("u1", 1)).unwrap();
    s.append_label(u1.as_str(), Some("gone soon")).unwrap();
    s.append_label(u1.as_str(), None).unwrap();
    let a1 = s.append_message(&assistant("a1", "m", 2)).unwrap();
    s.reset_leaf().unwrap();
    s.branch(a1.as_str()).unwrap();
    // A reader that resumed on the marker (as pi does) continued under it.
    let marker = s.entries().last().unwrap().id().clone();
    s.branch(marker.as_str()).unwrap();
    let u2 = s.append_message(&user("u2", 3)).unwrap();
    assert_eq!(s.path_to(Some(u2.as_str())).len(), 6, "u1, two labels, a1, the marker, u2");

    let fork = s.create_branched_session(u2.as_str()).unwrap();
    let entries = fork.entries();
    assert_eq!(entries.len(), 3, "{entries:?}");
    assert_eq!(entries[1].parent_id(), Some(&u1));
    assert_eq!(entries[2].parent_id(), Some(&a1));
    assert!(!entries.iter().any(|e| e.is_leaf_marker() || matches!(e, SessionEntry::Label(_))));
    assert_eq!(fork.leaf_id(), Some(&u2));
    assert_eq!(open_clean(fork.session_file().unwrap()).entries(), entries);
}

#[test]
fn a_branched_session_of_an_unknown_entry_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (s, _) = labelled_tree(dir.path());
    let before = file_names(dir.path());
    let err = s.create_branched_session("nope").unwrap_err();
    assert!(matches!(err, SessionError::EntryNotFound(_)), "{err}");
    assert_eq!(file_names(dir.path()), before);
}

#[test]
fn a_branched_in_memory_session_stays_in_memory() {
    let mut s = Session::in_memory(Path::new("/home/me/proj"));
    s.append_message(&user("u1", 1)).unwrap();
    let a1 = s.append_message(&assistant("a1", "m", 2)).unwrap();
    let fork = s.create_branched_session(a1.as_str()).unwrap();
    assert!(!fork.is_persisted());
    assert_eq!(fork.header().parent_session, None);
    assert_eq!(summary_of(&fork.build_context().messages), ["user:u1", "assistant:a1"]);
}

#[test]
fn fork_into_copies_every_entry_verbatim_and_resumes_on_the_same_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, ids) = labelled_tree(dir.path());
    // The user is on the side branch, which is not the last line of the file.
    s.branch(ids[4].as_str()).unwrap();
    s.append_custom("state", None).unwrap();
    s.branch(ids[4].as_str()).unwrap();
    let source = s.session_file().unwrap().to_path_buf();
    let source_bytes = bytes(&source);
    let target = dir.path().join("sessions").join("--home-me-other--");

    let copy = s.fork_into(&target, Path::new("/home/me/other")).unwrap();
    let path = copy.session_file().unwrap().to_path_buf();
    assert_eq!(path.parent(), Some(target.as_path()));
    assert_eq!(copy.cwd(), "/home/me/other");
    assert_ne!(copy.session_id(), s.session_id());
    assert_eq!(copy.header().parent_session.as_deref(), Some(&*source.to_string_lossy()));
    assert_eq!(bytes(&source), source_bytes);

    // Every source line after the header, byte for byte, in order.
    let source_lines = lines(&source);
    let copy_lines = lines(&path);
    assert_eq!(copy_lines[1..source_lines.len()], source_lines[1..]);
    let header: Value = serde_json::from_str(&copy_lines[0]).unwrap();
    assert_eq!(keys(&copy_lines[0]), ["type", "version", "id", "timestamp", "cwd", "parentSession"]);
    assert_eq!(header["cwd"], "/home/me/other");

    // The copy resumes where the user was, in memory and after a reload.
    assert_eq!(copy.leaf_id(), Some(&ids[4]));
    let reloaded = open_clean(&path);
    assert_eq!(reloaded.leaf_id(), Some(&ids[4]));
    assert_eq!(summary_of(&reloaded.build_context().messages), ["user:u1", "assistant:a1", "user:u2b"]);
    assert_eq!(reloaded.label(ids[4].as_str()), Some("side"));
}

#[test]
fn fork_into_adds_no_marker_when_the_leaf_is_where_a_reload_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(&user("u1", 1)).unwrap();
    s.append_message(&assistant("a1", "m", 2)).unwrap();
    let copy = s.fork_into(&dir.path().join("other"), Path::new("/x")).unwrap();
    assert_eq!(copy.entries().len(), 2);
    assert!(!lines(copy.session_file().unwrap()).iter().any(|l| l.contains(LEAF_MARKER_TYPE)));
}

#[test]
fn fork_from_opens_the_source_reports_its_warnings_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let source = fixture_copy(dir.path(), "pi-every-entry.jsonl");
    let mut content = bytes(&source);
    content.extend_from_slice(br#"{"type":"mess"#);
    std::fs::write(&source, &content).unwrap();

    let target = dir.path().join("here");
    let (copy, warnings) = Session::fork_from(&source, &target, Path::new("/home/me/here")).unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].kind, LoadWarningKind::TornLastLine);
    assert_eq!(bytes(&source), content);
    let fixture = fixture_lines("pi-every-entry.jsonl");
    let copy_lines = lines(copy.session_file().unwrap());
    assert_eq!(copy_lines[1..], fixture[1..], "the torn line is not copied");
    assert_eq!(copy.name(), Some("Auth refactor"));
    assert_eq!(copy.leaf_id().unwrap().as_str(), "b4c5d6e8");

    let missing = Session::fork_from(&dir.path().join("none.jsonl"), &target, Path::new("/x")).unwrap_err();
    assert!(matches!(missing, SessionError::NotFound { .. }), "{missing}");
}
