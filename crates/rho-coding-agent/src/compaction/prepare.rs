//! Preparing a compaction of the current branch: what is summarized, what is kept, and what
//! the summary request needs to know (the previous summary, the files touched, the context
//! size before).
//!
//! The work starts where the context does after the latest compaction on the branch: at the
//! first entry it kept (its summary is handed on as the previous summary, to be updated rather
//! than rewritten, and the compaction entry itself is not summarized again). Everything before
//! the cut is summarized; for a split turn the turn's beginning is set apart for its own summary.

use rho_session::{SessionEntry, entry_message, iso_to_ms};
use rho_types::{AgentMessage, CompactionSummaryMessage};

use super::cut_point::find_cut_point;
use super::file_ops::FileOperations;
use super::tokens::estimate_context_tokens;
use super::{CompactionError, CompactionSettings};

/// Everything [`super::compact`] needs, decided from the branch alone.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPreparation {
    /// The first entry that stays verbatim.
    pub first_kept_entry_id: String,
    /// The history to summarize (up to the cut, or up to the start of a split turn).
    pub messages_to_summarize: Vec<AgentMessage>,
    /// For a split turn: the turn's messages before the cut.
    pub turn_prefix_messages: Vec<AgentMessage>,
    pub is_split_turn: bool,
    /// The estimated context size before compacting.
    pub tokens_before: u64,
    /// The summary of the latest compaction on the branch, to be updated.
    pub previous_summary: Option<String>,
    /// Files touched in the summarized part, and those the previous compaction listed.
    pub file_ops: FileOperations,
    pub settings: CompactionSettings,
}

impl CompactionPreparation {
    /// Everything on the branch is recent enough to keep: a compaction would summarize nothing.
    pub fn summarizes_nothing(&self) -> bool {
        self.messages_to_summarize.is_empty() && self.turn_prefix_messages.is_empty()
    }
}

/// A `compaction` entry as the message its summary stands for.
pub fn compaction_entry_message(entry: &SessionEntry) -> Option<AgentMessage> {
    let SessionEntry::Compaction(c) = entry else {
        return None;
    };
    Some(AgentMessage::CompactionSummary(CompactionSummaryMessage {
        summary: c.summary.clone(),
        short_summary: c.short_summary.clone(),
        tokens_before: c.tokens_before,
        timestamp: iso_to_ms(&c.timestamp).unwrap_or_default(),
    }))
}

/// The message an entry contributes to a summary: messages, custom messages, branch
/// summaries, and compactions as their summary.
fn summary_message(entry: &SessionEntry) -> Option<AgentMessage> {
    entry_message(entry).or_else(|| compaction_entry_message(entry))
}

fn messages_in(entries: &[&SessionEntry]) -> Vec<AgentMessage> {
    entries.iter().filter_map(|e| summary_message(e)).collect()
}

/// The messages to summarize among `entries`: a compaction among them (the previous one, whose
/// summary goes on as `previous_summary`) is not summarized again, and the declared prompt
/// (`system` messages) is kept with the compaction, not summarized.
fn messages_to_summarize_in(entries: &[&SessionEntry]) -> Vec<AgentMessage> {
    entries
        .iter()
        .filter(|e| !matches!(e, SessionEntry::Compaction(_)))
        .filter_map(|e| entry_message(e))
        .filter(|m| !matches!(m, AgentMessage::System(_)))
        .collect()
}

/// Decides what a compaction of `branch` (root first, as `Session::branch_entries` returns it)
/// summarizes and keeps.
///
/// `Ok(None)` when the branch already ends with a compaction (a manual compaction reports
/// [`CompactionError::AlreadyCompacted`]); [`CompactionError::NothingToCompact`] for an empty
/// branch. On a short branch the cut lands at the start: nothing is summarized, everything is
/// kept, and a summary of the empty history is still requested (as the reference does).
pub fn prepare_compaction(
    branch: &[&SessionEntry],
    settings: CompactionSettings,
) -> Result<Option<CompactionPreparation>, CompactionError> {
    let Some(last) = branch.last() else {
        return Err(CompactionError::NothingToCompact);
    };
    if matches!(last, SessionEntry::Compaction(_)) {
        return Ok(None);
    }

    let previous = branch.iter().rposition(|e| matches!(e, SessionEntry::Compaction(_)));
    // The context after a compaction holds what it kept: those entries are summarized next time
    // too, as pi does.
    let boundary_start = match previous.map(|i| (i, branch[i])) {
        Some((i, SessionEntry::Compaction(c))) => c
            .first_kept_entry_id
            .as_ref()
            .and_then(|kept| branch[..i].iter().position(|e| e.id() == kept))
            .unwrap_or(i + 1),
        _ => 0,
    };
    let end = branch.len();

    let tokens_before = estimate_context_tokens(&messages_in(&branch[previous.unwrap_or(0)..end])).tokens;

    let cut = find_cut_point(branch, boundary_start, end, settings.keep_recent_tokens);
    let first_kept_entry_id = branch[cut.first_kept_index].id().to_string();

    let history_end = match cut.turn_start_index {
        Some(turn_start) if cut.is_split_turn => turn_start,
        _ => cut.first_kept_index,
    };
    let messages_to_summarize = messages_to_summarize_in(&branch[boundary_start..history_end]);
    let turn_prefix_messages = if cut.is_split_turn {
        messages_to_summarize_in(&branch[history_end..cut.first_kept_index])
    } else {
        Vec::new()
    };

    let mut file_ops = FileOperations::default();
    let mut previous_summary = None;
    if let Some(SessionEntry::Compaction(c)) = previous.map(|i| branch[i]) {
        previous_summary = Some(c.summary.clone());
        if c.from_hook != Some(true)
            && let Some(details) = &c.details
        {
            file_ops.add_details(details);
        }
    }
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(message);
    }

    Ok(Some(CompactionPreparation {
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
        settings,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::test_support::*;
    use rho_types::types::StopReason;
    use serde_json::json;

    fn settings(keep: u64) -> CompactionSettings {
        CompactionSettings { reserve_tokens: 16_384, keep_recent_tokens: keep }
    }

    fn roles(messages: &[AgentMessage]) -> Vec<&'static str> {
        messages.iter().map(AgentMessage::role).collect()
    }

    #[test]
    fn empty_branch_and_trailing_compaction() {
        assert_eq!(prepare_compaction(&[], settings(10)), Err(CompactionError::NothingToCompact));
        let entries = vec![message("u", user("hi")), compaction("c", "summary", "u", None)];
        assert_eq!(prepare_compaction(&refs(&entries), settings(10)), Ok(None));
    }

    #[test]
    fn small_session_keeps_everything_and_summarizes_nothing() {
        let mut a = assistant(vec![]);
        a.usage.total_tokens = 30;
        let entries = vec![model_change("mc"), message("u", user("hello")), message("a", AgentMessage::Assistant(a))];
        let p = prepare_compaction(&refs(&entries), settings(20_000)).unwrap().unwrap();
        // The cut moves back over the model change to the start of the branch.
        assert_eq!(p.first_kept_entry_id, "mc");
        assert!(p.messages_to_summarize.is_empty());
        assert!(!p.is_split_turn);
        assert_eq!(p.previous_summary, None);
        assert_eq!(p.tokens_before, 30);
    }

    #[test]
    fn summarizes_before_the_cut_and_keeps_the_rest() {
        let entries = vec![
            message("u1", user(&filler(400))),
            message("a1", assistant_calls(vec![tool_call("read", json!({"path": "a.rs"}))])),
            message("r1", tool_result(&filler(400))),
            message("a2", assistant_calls(vec![tool_call("edit", json!({"path": "b.rs"}))])),
            message("r2", tool_result("ok")),
            message("u2", user(&filler(400))),
            message("a3", assistant_text(&filler(400))),
        ];
        let p = prepare_compaction(&refs(&entries), settings(200)).unwrap().unwrap();
        assert_eq!(p.first_kept_entry_id, "u2");
        assert!(!p.is_split_turn);
        assert_eq!(roles(&p.messages_to_summarize), ["user", "assistant", "toolResult", "assistant", "toolResult"]);
        assert!(p.turn_prefix_messages.is_empty());
        assert_eq!(p.file_ops.read_files(), ["a.rs"]);
        assert_eq!(p.file_ops.modified_files(), ["b.rs"]);
    }

    #[test]
    fn split_turn_sets_the_turn_prefix_apart() {
        let entries = vec![
            message("u0", user("earlier")),
            message("a0", assistant_text("done")),
            message("u1", user(&filler(400))),
            message("a1", assistant_calls(vec![tool_call("write", json!({"path": "w.rs"}))])),
            message("r1", tool_result(&filler(400))),
            message("a2", assistant_text(&filler(800))),
        ];
        let p = prepare_compaction(&refs(&entries), settings(200)).unwrap().unwrap();
        assert_eq!(p.first_kept_entry_id, "a2");
        assert!(p.is_split_turn);
        assert_eq!(roles(&p.messages_to_summarize), ["user", "assistant"]);
        assert_eq!(roles(&p.turn_prefix_messages), ["user", "assistant", "toolResult"]);
        // Files from the turn prefix count too.
        assert_eq!(p.file_ops.modified_files(), ["w.rs"]);
    }

    #[test]
    fn after_a_previous_compaction() {
        let entries = vec![
            message("u0", user(&filler(4000))),
            message("a0", assistant_text("old")),
            compaction(
                "c1",
                "previous summary",
                "a0",
                Some(json!({"readFiles": ["old.rs", "both.rs"], "modifiedFiles": ["mod.rs"]})),
            ),
            message("u1", user(&filler(400))),
            message("a1", assistant_calls(vec![tool_call("edit", json!({"path": "both.rs"}))])),
            message("r1", tool_result("ok")),
            label("l", "u1"),
            message("u2", user(&filler(400))),
            message("a2", assistant_text(&filler(40))),
        ];
        let p = prepare_compaction(&refs(&entries), settings(100)).unwrap().unwrap();
        assert_eq!(p.first_kept_entry_id, "l");
        assert_eq!(p.previous_summary.as_deref(), Some("previous summary"));
        // What the previous compaction kept (a0) and what followed it is summarized; the
        // compaction itself is not.
        assert_eq!(roles(&p.messages_to_summarize), ["assistant", "user", "assistant", "toolResult"]);
        assert_eq!(p.file_ops.read_files(), ["old.rs"]);
        assert_eq!(p.file_ops.modified_files(), ["both.rs", "mod.rs"]);
    }

    #[test]
    fn what_the_previous_compaction_kept_is_summarized_by_the_next() {
        let entries = vec![
            message("u0", user(&filler(400))),
            message("a0", assistant_text("a")),
            compaction("c1", "first summary", "u0", None),
            message("u1", user(&filler(400))),
            message("a1", assistant_text(&filler(400))),
        ];
        let p = prepare_compaction(&refs(&entries), settings(100)).unwrap().unwrap();
        assert_eq!(p.first_kept_entry_id, "a1");
        assert_eq!(roles(&p.messages_to_summarize), ["user", "assistant"]);
        assert_eq!(roles(&p.turn_prefix_messages), ["user"]);
        assert_eq!(p.previous_summary.as_deref(), Some("first summary"));
    }

    #[test]
    fn tokens_before_counts_from_the_previous_compaction_summary() {
        let mut old = assistant(vec![]);
        old.usage.total_tokens = 99_999;
        let entries = vec![
            message("u0", user("q")),
            message("a0", AgentMessage::Assistant(old)),
            compaction("c1", &filler(16), "a0", None),
            message("u1", user(&filler(400))),
            message("b", bash("ls", &filler(38))),
        ];
        let p = prepare_compaction(&refs(&entries), settings(10)).unwrap().unwrap();
        // The summary (4) and what follows it (100 + 10); the usage before it is history.
        assert_eq!(p.tokens_before, 4 + 100 + 10);
    }

    #[test]
    fn details_of_an_extension_compaction_are_not_trusted() {
        let mut c = compaction("c1", "ext", "u0", Some(json!({"readFiles": ["x.rs"]})));
        if let SessionEntry::Compaction(e) = &mut c {
            e.from_hook = Some(true);
        }
        let entries = vec![message("u0", user("a")), c, message("u1", user("b"))];
        let p = prepare_compaction(&refs(&entries), settings(10)).unwrap().unwrap();
        assert!(p.file_ops.read_files().is_empty());
    }

    #[test]
    fn tokens_before_uses_the_last_usage() {
        let mut a = assistant(vec![]);
        a.usage.total_tokens = 50_000;
        let mut failed = assistant(vec![]);
        failed.usage.total_tokens = 90_000;
        failed.stop_reason = StopReason::Error;
        let entries = vec![
            message("u0", user("q")),
            message("a0", AgentMessage::Assistant(a)),
            message("u1", user(&filler(40))),
            message("a1", AgentMessage::Assistant(failed)),
            custom_message("cm", &filler(8)),
        ];
        let p = prepare_compaction(&refs(&entries), settings(10)).unwrap().unwrap();
        assert_eq!(p.tokens_before, (50_000 + 10) + 2);
    }

    #[test]
    fn user_role_entries_are_summarized_as_messages() {
        let entries = vec![
            branch_summary("bs", "explored", None),
            custom_message("cm", "note"),
            message("u", user(&filler(400))),
            message("a", assistant_text(&filler(400))),
        ];
        let p = prepare_compaction(&refs(&entries), settings(100)).unwrap().unwrap();
        assert_eq!(p.first_kept_entry_id, "a");
        assert!(p.is_split_turn);
        assert_eq!(roles(&p.messages_to_summarize), ["branchSummary", "custom"]);
        assert_eq!(roles(&p.turn_prefix_messages), ["user"]);
    }
}
