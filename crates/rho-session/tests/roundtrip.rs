//! Every entry type round-trips: pi-written fixture lines (docs/session-format.md, "Header",
//! "Entries", "Messages", "Example") load without a warning and are written back byte for byte,
//! fork-only entry types are kept verbatim, and what rho appends has pi's keys in pi's order and
//! reloads to the same tree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use pretty_assertions::assert_eq;
use rho_session::{ModelRef, NewBranchSummary, NewCompaction, NewCustomMessage, SessionEntry, SessionError};
use rho_types::AgentMessage;
use rho_types::ThinkingLevel;
use rho_types::types::{UserContent, UserMessageContent};
use serde_json::json;

/// Asserts that every entry (and the header) serializes to exactly its line in `name`.
fn assert_written_back_unchanged(session: &rho_session::Session, name: &str) {
    let lines = fixture_lines(name);
    assert_eq!(String::from_utf8(session.header().to_line().unwrap()).unwrap(), format!("{}\n", lines[0]));
    assert_eq!(session.entries().len(), lines.len() - 1);
    for (entry, line) in session.entries().iter().zip(&lines[1..]) {
        assert_eq!(String::from_utf8(entry.to_line().unwrap()).unwrap(), format!("{line}\n"));
    }
}

#[test]
fn the_minimal_pi_file_loads_and_is_written_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "pi-minimal.jsonl");
    let session = open_clean(&path);

    assert_written_back_unchanged(&session, "pi-minimal.jsonl");
    assert_eq!(session.session_id(), "5b0c8f0e-2f6a-4f7e-9a51-0d3e2c9f8a11");
    assert_eq!(session.cwd(), "/home/me/proj");
    assert_eq!(session.header().version, 3);
    assert_eq!(session.leaf_id().unwrap().as_str(), "5e6f7081");
    let context = session.build_context();
    assert_eq!(context.thinking_level, Some(ThinkingLevel::Medium));
    assert_eq!(context.model, Some(ModelRef { provider: "anthropic".into(), model_id: "claude-opus-4-6".into() }));
    assert_eq!(summary_of(&context.messages), ["user:list files", "assistant:", "toolResult:README.md\nsrc"]);
    // Opening never writes.
    assert_eq!(bytes(&path), bytes(&fixtures_dir().join("pi-minimal.jsonl")));
}

#[test]
fn every_pi_entry_type_loads_typed_and_is_written_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "pi-every-entry.jsonl");
    let session = open_clean(&path);
    assert_written_back_unchanged(&session, "pi-every-entry.jsonl");

    // Each line is read into its own struct, none is kept as an unknown entry.
    let mut types: Vec<&str> = session.entries().iter().map(SessionEntry::entry_type).collect();
    assert!(!session.entries().iter().any(|e| matches!(e, SessionEntry::Other(_))));
    types.sort_unstable();
    types.dedup();
    assert_eq!(
        types,
        [
            "branch_summary",
            "compaction",
            "custom",
            "custom_message",
            "label",
            "message",
            "model_change",
            "session_info",
            "thinking_level_change"
        ]
    );
    let roles: Vec<&str> =
        session.entries().iter().filter_map(SessionEntry::as_message).map(AgentMessage::role).collect();
    for role in ["user", "assistant", "toolResult", "bashExecution", "custom"] {
        assert!(roles.contains(&role), "no {role} message in {roles:?}");
    }

    assert_eq!(
        session.header().parent_session.as_deref(),
        Some(
            "/home/me/.pi/agent/sessions/--home-me-proj--/2026-03-14T08-00-00-000Z_0f8b2c1d-0000-4000-8000-000000000000.jsonl"
        )
    );
    // A string user content stays a string.
    let Some(AgentMessage::User(u)) = session.get_entry("3c4d5e70").and_then(SessionEntry::as_message) else {
        panic!("user message expected");
    };
    assert_eq!(u.content, UserMessageContent::Text("read src/lib.rs".into()));
    // The label set on line 8 is cleared (no `label` key) on line 19: last one wins.
    assert_eq!(session.label("3c4d5e6f"), None);
    assert_eq!(session.name(), Some("Auth refactor"));
    assert_eq!(session.leaf_id().unwrap().as_str(), "b4c5d6e8");
    assert_eq!(bytes(&path), bytes(&fixtures_dir().join("pi-every-entry.jsonl")));
}

#[test]
fn fork_only_entry_types_are_kept_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path(), "xcsh-entries.jsonl");
    let (session, warnings) = open(&path);
    assert_written_back_unchanged(&session, "xcsh-entries.jsonl");

    // xcsh's `model_change` has `model` instead of `provider`/`modelId`: kept as-is and understood,
    // so not reported; the types rho does not read are named once, with how many of each.
    let said: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(said, ["entries of types rho does not read are kept as they are: mode_change (1), ttsr_injection (1)"]);
    let kinds: Vec<&str> = session.entries().iter().map(SessionEntry::entry_type).collect();
    assert_eq!(kinds, ["model_change", "thinking_level_change", "ttsr_injection", "mode_change", "message"]);
    assert_eq!(session.header().title.as_deref(), Some("Plan the work"));

    let context = session.build_context();
    assert_eq!(context.model, Some(ModelRef { provider: "anthropic".into(), model_id: "claude-sonnet-4-5".into() }));
    assert_eq!(context.thinking_level, None);
    assert_eq!(summary_of(&context.messages), ["user:plan it"]);
}

/// Builds a session holding one entry of every type rho appends.
fn session_with_every_entry(dir: &std::path::Path) -> rho_session::Session {
    let mut s = new_session(dir);
    s.append_model_change("anthropic", "claude-opus-4-6").unwrap();
    s.append_thinking_level_change(ThinkingLevel::High).unwrap();
    let first = s.append_message(&user("list files", 1_773_568_805_000)).unwrap();
    s.append_message(&assistant_tool_call("toolu_01", "ls", 1_773_568_806_000)).unwrap();
    s.append_message(&tool_result("toolu_01", "README.md\nsrc", 1_773_568_807_100)).unwrap();
    s.append_message(&bash_execution("git status", 1_773_568_808_000)).unwrap();
    s.append_message(&AgentMessage::Custom(custom("legacy", "kept", 1_773_568_809_000))).unwrap();
    s.append_custom("my-ext", Some(json!({"count": 2}))).unwrap();
    s.append_custom("bare", None).unwrap();
    s.append_custom_message(NewCustomMessage {
        custom_type: "my-ext".into(),
        content: UserMessageContent::Blocks(vec![UserContent::text("Remember the style guide.")]),
        display: true,
        details: Some(json!({"source": "hook"})),
        attribution: None,
    })
    .unwrap();
    s.append_label(first.as_str(), Some("checkpoint-1")).unwrap();
    s.append_session_info("  Listing files ").unwrap();
    s.append_compaction(NewCompaction {
        summary: "## Goal\nList files".into(),
        first_kept_entry_id: first.to_string(),
        tokens_before: 50_000,
        details: Some(json!({"readFiles": ["README.md"], "modifiedFiles": []})),
        ..NewCompaction::default()
    })
    .unwrap();
    s.branch_with_summary(
        Some(first.as_str()),
        NewBranchSummary { summary: "Tried ls.".into(), details: None, from_hook: Some(true) },
    )
    .unwrap();
    s
}

#[test]
fn entries_rho_writes_have_pis_keys_in_pis_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = session_with_every_entry(dir.path());
    let lines = lines(s.session_file().unwrap());
    let base = |extra: &[&str]| -> Vec<String> {
        ["type", "id", "parentId", "timestamp"].iter().chain(extra).map(|k| (*k).to_owned()).collect()
    };
    let expected: Vec<Vec<String>> = vec![
        ["type", "version", "id", "timestamp", "cwd"].map(String::from).to_vec(),
        base(&["provider", "modelId"]),
        base(&["thinkingLevel"]),
        base(&["message"]),
        base(&["message"]),
        base(&["message"]),
        base(&["message"]),
        base(&["message"]),
        ["type", "customType", "data", "id", "parentId", "timestamp"].map(String::from).to_vec(),
        ["type", "customType", "id", "parentId", "timestamp"].map(String::from).to_vec(),
        ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"]
            .map(String::from)
            .to_vec(),
        base(&["targetId", "label"]),
        base(&["name"]),
        base(&["summary", "firstKeptEntryId", "tokensBefore", "details"]),
        base(&["fromId", "summary", "fromHook"]),
    ];
    assert_eq!(lines.len(), expected.len());
    for (line, want) in lines.iter().zip(&expected) {
        assert_eq!(&keys(line), want, "{line}");
    }
    // The first parent is null, written as null.
    assert!(lines[1].contains(r#""parentId":null"#), "{}", lines[1]);
    assert_eq!(message_keys(&lines[3]), ["role", "content", "timestamp"]);
    assert_eq!(
        message_keys(&lines[4]),
        ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"]
    );
    assert_eq!(message_keys(&lines[5]), ["role", "toolCallId", "toolName", "content", "isError", "timestamp"]);
    assert_eq!(
        message_keys(&lines[6]),
        ["role", "command", "output", "exitCode", "cancelled", "truncated", "timestamp"]
    );
    assert_eq!(message_keys(&lines[7]), ["role", "customType", "content", "display", "details", "timestamp"]);
    // Compact JSON, one object per line, the file ends with a newline.
    assert!(lines.iter().all(|l| !l.contains(": ") && l.starts_with('{') && l.ends_with('}')));
    assert!(bytes(s.session_file().unwrap()).ends_with(b"\n"));
    // The name is trimmed on write.
    assert!(lines[12].ends_with(r#""name":"Listing files"}"#), "{}", lines[12]);
}

#[test]
fn what_rho_writes_reloads_to_the_same_tree() {
    let dir = tempfile::tempdir().unwrap();
    let s = session_with_every_entry(dir.path());
    let path = s.session_file().unwrap().to_path_buf();
    let reloaded = open_clean(&path);

    assert_eq!(reloaded.header(), s.header());
    assert_eq!(reloaded.entries(), s.entries());
    assert_eq!(reloaded.leaf_id(), s.leaf_id());
    assert_eq!(reloaded.build_context(), s.build_context());
    for (entry, line) in reloaded.entries().iter().zip(&lines(&path)[1..]) {
        assert_eq!(String::from_utf8(entry.to_line().unwrap()).unwrap(), format!("{line}\n"));
    }
}

#[test]
fn summaries_are_refused_as_message_entries_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let before = bytes(s.session_file().unwrap());
    let summary = AgentMessage::CompactionSummary(rho_types::CompactionSummaryMessage {
        summary: "s".into(),
        short_summary: None,
        tokens_before: 1,
        timestamp: 1,
    });
    let err = s.append_message(&summary).unwrap_err();
    assert!(matches!(err, SessionError::NotAMessageEntry("compactionSummary")), "{err}");
    let branch = AgentMessage::BranchSummary(rho_types::BranchSummaryMessage {
        summary: "s".into(),
        from_id: "root".into(),
        timestamp: 1,
    });
    assert!(matches!(s.append_message(&branch), Err(SessionError::NotAMessageEntry("branchSummary"))));
    assert_eq!(bytes(s.session_file().unwrap()), before);
    assert!(s.entries().is_empty());
}

#[test]
fn entry_ids_are_eight_hex_digits_and_unique() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    for i in 0..200 {
        s.append_message(&user(&format!("m{i}"), i)).unwrap();
    }
    let mut ids: Vec<&str> = s.entries().iter().map(|e| e.id().as_str()).collect();
    assert!(ids.iter().all(|id| id.len() == 8 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))));
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 200);
}

#[test]
fn half_a_surrogate_pair_written_by_javascript_does_not_lose_the_entry() {
    // pi cuts long lines by UTF-16 units (`line.slice(0, 500)`), which can split an emoji;
    // `JSON.stringify` then writes the lone half as an escape. The entry must still load, or
    // every entry after it would lose its ancestors.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("surrogate.jsonl");
    let mut file_lines = fixture_lines("pi-minimal.jsonl");
    file_lines[5] = file_lines[5].replace(r#""README.md\nsrc""#, r#""match: fire \ud83d""#);
    file_lines.push(
        r#"{"type":"message","id":"6f708192","parentId":"5e6f7081","timestamp":"2026-03-15T10:00:09.000Z","message":{"role":"user","content":[{"type":"text","text":"pair \ud83d\udd25 and a lone low \udd25 half"}],"timestamp":1773568809000}}"#
            .to_owned(),
    );
    std::fs::write(&path, file_lines.join("\n") + "\n").unwrap();

    let s = open_clean(&path);
    assert_eq!(
        summary_of(&s.build_context().messages),
        [
            "user:list files",
            "assistant:",
            "toolResult:match: fire \u{fffd}",
            "user:pair 🔥 and a lone low \u{fffd} half"
        ]
    );
    let info = rho_session::read_session_info(&path, rho_session::ListOptions { include_text: true }).unwrap();
    assert_eq!(info.message_count, 4);
    assert!(info.all_messages_text.unwrap().ends_with("pair 🔥 and a lone low \u{fffd} half"));
}
