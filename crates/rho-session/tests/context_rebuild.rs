//! Rebuilding the agent's context from one branch (docs/session-format.md,
//! "Rebuilding the context"): compaction cuts at `firstKeptEntryId`, branch summaries, custom
//! messages, the model and thinking level, on the current branch and on any other; plus
//! `get_session_stats` over the rebuilt messages ("Listing and stats" there).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use pretty_assertions::assert_eq;
use rho_session::{
    ModelRef, NewBranchSummary, NewCompaction, NewCustomMessage, SessionStats, build_context, iso_to_ms,
};
use rho_types::AgentMessage;
use rho_types::ThinkingLevel;
use rho_types::types::UserMessageContent;
use serde_json::json;

fn model(provider: &str, id: &str) -> Option<ModelRef> {
    Some(ModelRef { provider: provider.into(), model_id: id.into() })
}

#[test]
fn the_current_branch_of_the_pi_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_clean(&fixture_copy(dir.path(), "pi-every-entry.jsonl"));
    let context = s.build_context();
    // The last compaction on the path keeps from 3c4d5e70; the branch summary before it is cut.
    assert_eq!(
        summary_of(&context.messages),
        [
            "compactionSummary:Reading src/lib.rs failed.",
            "user:read src/lib.rs",
            "custom:legacy hook note",
            "assistant:Reading it.",
            "toolResult:File not found: src/lib.rs",
            "custom:Keep going.",
        ]
    );
    let AgentMessage::CompactionSummary(c) = &context.messages[0] else { panic!("summary first") };
    assert_eq!(c.tokens_before, 1234);
    assert_eq!(Some(c.timestamp), iso_to_ms("2026-03-15T10:01:09.000Z"));
    assert_eq!(context.compaction.as_ref().unwrap().id.as_str(), "92a3b4c6");
    // The assistant message on the path set the model; the level is the branch's only change.
    assert_eq!(context.model, model("google", "gemini-2.5-pro"));
    assert_eq!(context.thinking_level, Some(ThinkingLevel::Medium));
    // A custom_message entry becomes a custom message stamped with the entry's time.
    let AgentMessage::Custom(custom) = &context.messages[5] else { panic!("custom message") };
    assert_eq!((custom.custom_type.as_str(), custom.display), ("reminder", false));
    assert_eq!(Some(custom.timestamp), iso_to_ms("2026-03-15T10:01:08.000Z"));
}

#[test]
fn another_branch_of_the_pi_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let s = open_clean(&fixture_copy(dir.path(), "pi-every-entry.jsonl"));
    let context = build_context(&s.path_to(Some("091a2b3c")));
    assert_eq!(
        summary_of(&context.messages),
        [
            "compactionSummary:## Goal\nList the files.",
            "assistant:A README.md and a naïve \"src\" dir.",
            "custom:Remember the style guide.",
            "bashExecution:git status",
            "user:what is this?",
            "assistant:",
        ]
    );
    assert_eq!(context.model, model("openai", "gpt-5"));
    assert_eq!(context.thinking_level, Some(ThinkingLevel::High));
    let AgentMessage::Custom(c) = &context.messages[2] else { panic!("custom message") };
    assert_eq!(c.details, Some(json!({"source": "hook"})));

    // Before either compaction: everything on the path, the branch summary included.
    let early = build_context(&s.path_to(Some("3c4d5e70")));
    assert_eq!(
        summary_of(&early.messages),
        ["user:list files", "branchSummary:Listed files with ls and read the README.", "user:read src/lib.rs"]
    );
    let AgentMessage::BranchSummary(b) = &early.messages[1] else { panic!("branch summary") };
    assert_eq!(b.from_id, "3c4d5e6f");
    assert_eq!(early.model, model("anthropic", "claude-opus-4-6"));
    assert!(early.compaction.is_none());
}

#[test]
fn a_compaction_keeps_from_first_kept_and_everything_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(&user("u1", 1)).unwrap();
    s.append_message(&assistant("a1", "m", 2)).unwrap();
    let kept = s.append_message(&user("u2", 3)).unwrap();
    s.append_message(&assistant("a2", "m", 4)).unwrap();
    s.append_compaction(NewCompaction {
        summary: "first".into(),
        first_kept_entry_id: kept.to_string(),
        tokens_before: 100,
        ..Default::default()
    })
    .unwrap();
    s.append_message(&user("u3", 5)).unwrap();
    assert_eq!(
        summary_of(&s.build_context().messages),
        ["compactionSummary:first", "user:u2", "assistant:a2", "user:u3"]
    );

    // A second compaction replaces the first: only the last one on the path counts.
    let kept_again = s.append_message(&assistant("a3", "m", 6)).unwrap();
    s.append_compaction(NewCompaction {
        summary: "second".into(),
        first_kept_entry_id: kept_again.to_string(),
        tokens_before: 200,
        ..Default::default()
    })
    .unwrap();
    let context = s.build_context();
    assert_eq!(summary_of(&context.messages), ["compactionSummary:second", "assistant:a3"]);
    assert_eq!(context.compaction.unwrap().summary, "second");
    assert_eq!(open_clean(s.session_file().unwrap()).build_context(), s.build_context());
}

#[test]
fn a_first_kept_entry_off_the_path_keeps_nothing_before_the_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let u1 = s.append_message(&user("u1", 1)).unwrap();
    let other = s.append_message(&user("on another branch", 2)).unwrap();
    s.branch(u1.as_str()).unwrap();
    s.append_message(&assistant("a1", "m", 3)).unwrap();
    for first_kept in [other.to_string(), "missing".to_owned()] {
        s.append_compaction(NewCompaction {
            summary: "cut".into(),
            first_kept_entry_id: first_kept,
            ..Default::default()
        })
        .unwrap();
        s.append_message(&user("after", 4)).unwrap();
        assert_eq!(summary_of(&s.build_context().messages), ["compactionSummary:cut", "user:after"]);
    }
}

#[test]
fn a_compaction_on_another_branch_does_not_cut_this_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let u1 = s.append_message(&user("u1", 1)).unwrap();
    s.append_message(&assistant("a1", "m", 2)).unwrap();
    s.append_compaction(NewCompaction {
        summary: "cut".into(),
        first_kept_entry_id: u1.to_string(),
        ..Default::default()
    })
    .unwrap();
    s.branch(u1.as_str()).unwrap();
    s.append_message(&assistant("a1 again", "m", 3)).unwrap();
    let context = s.build_context();
    assert_eq!(summary_of(&context.messages), ["user:u1", "assistant:a1 again"]);
    assert!(context.compaction.is_none());
}

#[test]
fn summaries_custom_messages_and_entries_that_are_never_context() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let u1 = s.append_message(&user("u1", 1)).unwrap();
    s.append_custom("state", Some(json!({"x": 1}))).unwrap();
    s.append_label(u1.as_str(), Some("start")).unwrap();
    s.append_session_info("name").unwrap();
    s.append_custom_message(NewCustomMessage {
        custom_type: "note".into(),
        content: UserMessageContent::Text("injected".into()),
        display: false,
        details: Some(json!({"hidden": true})),
        attribution: None,
    })
    .unwrap();
    // An empty branch summary adds nothing.
    let tip = s.leaf_id().unwrap().to_string();
    s.branch_with_summary(Some(tip.as_str()), NewBranchSummary::default()).unwrap();
    s.append_message(&bash_execution("ls", 5)).unwrap();
    assert_eq!(summary_of(&s.build_context().messages), ["user:u1", "custom:injected", "bashExecution:ls"]);
}

#[test]
fn the_last_model_and_level_on_the_branch_win() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    assert_eq!(s.build_context().model, None);
    assert_eq!(s.build_context().thinking_level, None);
    let start = s.append_model_change("anthropic", "claude-opus-4-6").unwrap();
    s.append_thinking_level_change(ThinkingLevel::Low).unwrap();
    assert_eq!(s.build_context().model, model("anthropic", "claude-opus-4-6"));
    // An assistant message names the model that answered.
    s.append_message(&user("u", 1)).unwrap();
    s.append_message(&assistant("a", "claude-sonnet-4-5", 2)).unwrap();
    assert_eq!(s.build_context().model, model("anthropic", "claude-sonnet-4-5"));
    // A later model change wins over the assistant message before it.
    s.append_model_change("openai", "gpt-5").unwrap();
    s.append_thinking_level_change(ThinkingLevel::Xhigh).unwrap();
    let context = s.build_context();
    assert_eq!((context.model, context.thinking_level), (model("openai", "gpt-5"), Some(ThinkingLevel::Xhigh)));
    // On the branch that left before the changes, the earlier ones hold.
    s.branch(start.as_str()).unwrap();
    let context = s.build_context();
    assert_eq!((context.model, context.thinking_level), (model("anthropic", "claude-opus-4-6"), None));
    let reloaded = open_clean(s.session_file().unwrap()).build_context();
    assert_eq!((reloaded.model, reloaded.thinking_level), (model("anthropic", "claude-opus-4-6"), None));
}

#[test]
fn stats_count_the_rebuilt_context_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(&user("old", 1)).unwrap();
    s.append_message(&assistant("old answer", "m", 2)).unwrap();
    let kept = s.append_message(&user("list", 3)).unwrap();
    s.append_message(&assistant_tool_call("toolu_01", "ls", 4)).unwrap();
    s.append_message(&tool_result("toolu_01", "a b", 5)).unwrap();
    s.append_compaction(NewCompaction {
        summary: "s".into(),
        first_kept_entry_id: kept.to_string(),
        ..Default::default()
    })
    .unwrap();
    s.append_message(&assistant("done", "m", 6)).unwrap();

    let context = s.build_context();
    let stats = SessionStats::compute(&context.messages, s.session_file(), s.session_id());
    assert_eq!(stats.session_file.as_deref(), Some(&*s.session_file().unwrap().to_string_lossy()));
    assert_eq!(stats.session_id, s.session_id());
    // compactionSummary + user + assistant(tool call) + toolResult + assistant.
    assert_eq!(
        (stats.user_messages, stats.assistant_messages, stats.tool_calls, stats.tool_results, stats.total_messages),
        (1, 2, 1, 1, 5)
    );
    assert_eq!((stats.tokens.input, stats.tokens.output), (1300, 40));
    assert_eq!(stats.tokens.total, 1340);
    assert!((stats.cost - 0.50675).abs() < 1e-12, "{}", stats.cost);
    let stats_json = serde_json::to_value(&stats).unwrap();
    assert_eq!(
        stats_json["tokens"],
        json!({"input":1300,"output":40,"cacheRead":0,"cacheWrite":0,"total":1340,"reasoning":0})
    );
}

#[test]
fn stats_of_an_in_memory_session_have_no_file() {
    let s = rho_session::Session::in_memory(std::path::Path::new("/tmp"));
    let stats = SessionStats::compute(&s.build_context().messages, s.session_file(), s.session_id());
    assert_eq!(stats.session_file, None);
    assert!(serde_json::to_value(&stats).unwrap().get("sessionFile").is_none());
    assert_eq!(stats.total_messages, 0);
}

#[test]
fn a_context_edit_appended_leaves_out_or_replaces_its_target_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(&user("first question", 1)).unwrap();
    let answer = s.append_message(&assistant("a long answer", "m", 2)).unwrap();
    let second = s.append_message(&user("second question", 3)).unwrap();
    s.append_context_edit(answer.as_str(), None).unwrap();
    s.append_context_edit(second.as_str(), Some(json!("the question, shortened"))).unwrap();
    assert_eq!(summary_of(&s.build_context().messages), ["user:first question", "user:the question, shortened"]);
    // Written as pi writes it: `"replacement": null` leaves out, `{"content": …}` replaces.
    let path = s.session_file().unwrap().to_owned();
    let edit = line_json(&path, lines(&path).len() - 2);
    assert_eq!(
        (&edit["type"], &edit["targetId"], &edit["replacement"]),
        (&json!("context_edit"), &json!(answer.as_str()), &json!(null))
    );
    let replaced = line_json(&path, lines(&path).len() - 1);
    assert_eq!(replaced["replacement"], json!({"content": "the question, shortened"}));
    assert!(s.append_context_edit("nowhere", None).is_err());
    // Read back, the edits hold.
    let reopened = open_clean(&path);
    assert_eq!(summary_of(&reopened.build_context().messages), ["user:first question", "user:the question, shortened"]);
}
