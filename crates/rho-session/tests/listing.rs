//! Finding sessions on disk (docs/session-format.md, "Choosing the session at start-up",
//! "Listing and stats"): the `/resume` listing (newest first by last message, names, counts, first
//! message, search text), `--continue`'s most recent file, and `--session <id-prefix>` lookup in
//! this project first and then in the others. Files that are not sessions are left out.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::*;
use pretty_assertions::assert_eq;
use rho_session::{
    ListOptions, Session, find_session_by_id_prefix, iso_to_ms, list_all_sessions, list_sessions, list_sessions_with,
    most_recent_session, read_session_info, session_dir_for_cwd,
};

/// A session in `dir` with one user message and one answer at `at_ms`, optionally named.
fn session_at(dir: &Path, question: &str, at_ms: i64, name: Option<&str>) -> PathBuf {
    let mut s = Session::create(dir, Path::new("/home/me/proj"), None).unwrap();
    s.append_message(&user(question, at_ms - 1000)).unwrap();
    s.append_message(&assistant(&format!("answer to {question}"), "m", at_ms)).unwrap();
    if let Some(name) = name {
        s.append_session_info(name).unwrap();
    }
    s.session_file().unwrap().to_path_buf()
}

fn set_mtime(path: &Path, secs_ago: u64) {
    let file = std::fs::File::options().append(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(secs_ago)).unwrap();
}

#[test]
fn sessions_are_listed_newest_message_first() {
    let dir = tempfile::tempdir().unwrap();
    let old = session_at(dir.path(), "old", 1_700_000_000_000, None);
    let new = session_at(dir.path(), "new", 1_800_000_000_000, Some("  Newest work "));
    let mid = session_at(dir.path(), "mid", 1_750_000_000_000, None);
    // Not sessions: another extension, a file without a header, an empty file.
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    std::fs::write(dir.path().join("bad.jsonl"), "{\"type\":\"message\",\"id\":\"a\"}\n").unwrap();
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();

    let listed = list_sessions(dir.path());
    assert_eq!(listed.iter().map(|s| s.path.clone()).collect::<Vec<_>>(), [new.clone(), mid, old]);
    let first = &listed[0];
    assert_eq!(first.modified, 1_800_000_000_000);
    assert_eq!(first.name.as_deref(), Some("Newest work"));
    assert_eq!(first.message_count, 2);
    assert_eq!(first.first_message, "new");
    assert_eq!(first.cwd, "/home/me/proj");
    assert_eq!(first.parent_session_path, None);
    assert_eq!(first.all_messages_text, None);
    let header = open_clean(&new);
    assert_eq!(first.id, header.session_id());
    assert_eq!(first.created, header.header().timestamp);
    assert_eq!(listed[1].name, None);
}

#[test]
fn the_listing_reads_every_branch_and_the_last_non_empty_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let u1 = s.append_message(&user("first question", 1_000_000)).unwrap();
    s.append_message(&assistant("first answer", "m", 2_000_000)).unwrap();
    s.append_session_info("Named once").unwrap();
    s.branch(u1.as_str()).unwrap();
    s.append_message(&assistant("other answer", "m", 3_000_000)).unwrap();
    s.append_message(&tool_result("t", "not counted as text", 9_000_000)).unwrap();
    s.append_session_info("Renamed").unwrap();
    // Neither an empty nor a blank name replaces the one before.
    s.append_session_info("").unwrap();
    let path = s.session_file().unwrap().to_path_buf();
    let mut blank = lines(&path);
    blank.push(
        serde_json::json!({"type":"session_info","id":"ffffffff","parentId":null,
                           "timestamp":"2026-03-15T10:00:00.000Z","name":"   "})
        .to_string(),
    );
    std::fs::write(&path, blank.join("\n") + "\n").unwrap();

    let info = read_session_info(&path, ListOptions { include_text: true }).unwrap();
    assert_eq!(info.name.as_deref(), Some("Renamed"));
    assert_eq!(info.message_count, 4, "messages of every role on every branch");
    assert_eq!(info.first_message, "first question");
    // Only user and assistant messages count as activity and as search text.
    assert_eq!(info.modified, 3_000_000);
    assert_eq!(info.all_messages_text.as_deref(), Some("first question first answer other answer"));
    assert_eq!(open_clean(&path).name(), Some("Renamed"));
}

#[test]
fn a_session_without_messages_lists_with_its_creation_time() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_session(dir.path());
    let info = read_session_info(s.session_file().unwrap(), ListOptions::default()).unwrap();
    assert_eq!(info.first_message, "(no messages)");
    assert_eq!(info.message_count, 0);
    assert_eq!(Some(info.modified), iso_to_ms(&s.header().timestamp));
}

#[test]
fn pi_files_list_with_their_parent_and_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "pi-every-entry.jsonl");
    let mut content = bytes(&path);
    content.extend_from_slice(b"{\"type\":\"message\",\"id\":\"0");
    std::fs::write(&path, content).unwrap();
    let info = read_session_info(&path, ListOptions { include_text: true }).unwrap();
    assert_eq!(info.id, "7c9e6679-7425-40de-944b-e07fc1f90ae7");
    assert!(info.parent_session_path.unwrap().ends_with("0f8b2c1d-0000-4000-8000-000000000000.jsonl"));
    assert_eq!(info.name.as_deref(), Some("Auth refactor"));
    assert_eq!(info.message_count, 11);
    assert_eq!(info.first_message, "list files");
    // The newest user/assistant message is the Gemini answer on the second branch.
    assert_eq!(info.modified, 1_773_568_866_000);
    let text = info.all_messages_text.unwrap();
    assert!(text.starts_with("list files A README.md"), "{text}");
    assert!(text.contains("what is this?") && text.contains("read src/lib.rs"), "{text}");
}

#[test]
fn the_most_recent_session_is_the_last_modified_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(most_recent_session(dir.path()), None);
    assert_eq!(most_recent_session(&dir.path().join("missing")), None);
    // The file touched last wins, whatever its messages say.
    let a = session_at(dir.path(), "a", 1_900_000_000_000, None);
    let b = session_at(dir.path(), "b", 1_600_000_000_000, None);
    set_mtime(&a, 100);
    set_mtime(&b, 50);
    assert_eq!(most_recent_session(dir.path()), Some(b.clone()));
    // A newer file that is not a session is passed over.
    std::fs::write(dir.path().join("zz.jsonl"), "garbage\n").unwrap();
    assert_eq!(most_recent_session(dir.path()), Some(b));
    set_mtime(&a, 1);
    assert_eq!(most_recent_session(dir.path()), Some(a));
}

#[test]
fn sessions_are_found_by_id_prefix_here_first_then_in_other_projects() {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path();
    let here_dir = session_dir_for_cwd(agent, Path::new("/home/me/here"));
    let there_dir = session_dir_for_cwd(agent, Path::new("/home/me/there"));
    let here = session_at(&here_dir, "here", 1_700_000_000_000, None);
    let there = session_at(&there_dir, "there", 1_800_000_000_000, None);
    let id_of = |p: &Path| open_clean(p).session_id().to_owned();
    let (here_id, there_id) = (id_of(&here), id_of(&there));

    let found = find_session_by_id_prefix(agent, &here_dir, &here_id[..8]).unwrap();
    assert_eq!((found.info.path, found.in_other_project), (here.clone(), false));
    let found = find_session_by_id_prefix(agent, &here_dir, &there_id[..6]).unwrap();
    assert_eq!((found.info.path, found.in_other_project), (there.clone(), true));
    assert_eq!(found.info.cwd, "/home/me/proj");
    assert!(find_session_by_id_prefix(agent, &here_dir, "zzzz").is_none());
    // A prefix both share matches in this project first, even if the other one is newer.
    let both = find_session_by_id_prefix(agent, &here_dir, "").unwrap();
    assert_eq!((both.info.path, both.in_other_project), (here, false));
    // From a project with no sessions, the newest match anywhere.
    let elsewhere = session_dir_for_cwd(agent, Path::new("/home/me/empty"));
    let any = find_session_by_id_prefix(agent, &elsewhere, "").unwrap();
    assert_eq!((any.info.path, any.in_other_project), (there, true));
}

#[test]
fn all_projects_are_listed_together_newest_first() {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path();
    let a = session_at(&session_dir_for_cwd(agent, Path::new("/p/a")), "a", 1_700_000_000_000, None);
    let b = session_at(&session_dir_for_cwd(agent, Path::new("/p/b")), "b", 1_800_000_000_000, None);
    let c = session_at(&session_dir_for_cwd(agent, Path::new("/p/a")), "c", 1_750_000_000_000, None);
    std::fs::write(agent.join("sessions").join("stray.jsonl"), "not in a project dir\n").unwrap();
    let all = list_all_sessions(agent, ListOptions::default());
    assert_eq!(all.iter().map(|s| s.path.clone()).collect::<Vec<_>>(), [b, c, a]);
    assert!(list_all_sessions(&agent.join("nothing"), ListOptions::default()).is_empty());
}

#[test]
fn search_text_is_filled_only_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    session_at(dir.path(), "find me", 1_700_000_000_000, None);
    let with = list_sessions_with(dir.path(), ListOptions { include_text: true });
    assert_eq!(with[0].all_messages_text.as_deref(), Some("find me answer to find me"));
    assert_eq!(list_sessions(dir.path())[0].all_messages_text, None);
}

#[test]
fn backups_and_temporary_files_are_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "v2.jsonl");
    let (mut s, _) = open(&path);
    s.append_message(&user("migrate", 1)).unwrap();
    assert_eq!(file_names(dir.path()), ["v2.jsonl", "v2.jsonl.v2.bak"]);
    let listed = list_sessions(dir.path());
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].path, path);
}
