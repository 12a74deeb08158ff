//! Summarizing an abandoned branch when the user moves elsewhere in the session tree (`/tree`
//! with a summary), so the new position keeps what was learned there.
//!
//! The entries between the old leaf and the common ancestor with the target are summarized,
//! newest first until a token budget (the context window minus a reserve) is spent; tool
//! results are left out (the calls say enough), while earlier compaction and branch summaries
//! are kept even past the budget while the total is under 90 % of it. The stored summary is a
//! fixed preamble, the model's text and the file lists.

use std::collections::HashSet;

use rho_session::{NewBranchSummary, Session, SessionEntry, entry_message};
use rho_types::AgentMessage;
use serde_json::Value;

use super::CompactionError;
use super::file_ops::{FileOperations, format_file_operations};
use super::prepare::compaction_entry_message;
use super::prompts::{BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, conversation_block, non_empty};
use super::serialize::serialize_conversation;
use super::summarize::{RequestFailure, SummaryRequest, request_summary};
use super::tokens::estimate_tokens;

/// The summary of a selection with no messages in it (no request is made).
pub const NO_CONTENT_TO_SUMMARIZE: &str = "No content to summarize";

/// The output cap of a branch summary request.
const BRANCH_SUMMARY_MAX_TOKENS: u64 = 2048;

/// The context window assumed when the model does not give one.
const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// How a branch summary is sized and instructed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchSummaryOptions {
    /// The model's context window (0: 128000).
    pub context_window: u64,
    /// `branchSummary.reserveTokens`: kept free for the prompt and the reply.
    pub reserve_tokens: u64,
    /// The caller's custom instructions replace the built-in prompt instead of adding a focus.
    pub replace_instructions: bool,
}

impl Default for BranchSummaryOptions {
    fn default() -> Self {
        Self { context_window: DEFAULT_CONTEXT_WINDOW, reserve_tokens: 16_384, replace_instructions: false }
    }
}

/// A summarized branch, to be recorded as a `branch_summary` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchSummaryOutput {
    pub summary: String,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

impl BranchSummaryOutput {
    /// `{readFiles, modifiedFiles}`.
    pub fn details(&self) -> Value {
        serde_json::json!({"readFiles": self.read_files, "modifiedFiles": self.modified_files})
    }

    /// The entry to record for this summary.
    pub fn into_new_branch_summary(self) -> NewBranchSummary {
        NewBranchSummary { details: Some(self.details()), summary: self.summary, from_hook: None }
    }
}

/// What of a branch goes into its summary.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BranchPreparation {
    /// Oldest first.
    pub messages: Vec<AgentMessage>,
    pub file_ops: FileOperations,
    /// The estimated tokens of `messages`.
    pub total_tokens: u64,
}

/// The entries of the branch being left: from the old leaf back to (not including) the
/// deepest entry it shares with the path to `target`, oldest first. Empty without an old leaf.
pub fn entries_to_summarize<'a>(
    session: &'a Session,
    old_leaf: Option<&str>,
    target: Option<&str>,
) -> Vec<&'a SessionEntry> {
    let old_path = session.path_to(old_leaf);
    let target_ids: HashSet<&str> = session.path_to(target).into_iter().map(|e| e.id().as_str()).collect();
    let shared = old_path.iter().rposition(|e| target_ids.contains(e.id().as_str()));
    old_path[shared.map_or(0, |i| i + 1)..].to_vec()
}

/// The message an entry contributes to a branch summary: tool results are left out.
fn branch_message(entry: &SessionEntry) -> Option<AgentMessage> {
    if matches!(entry.as_message(), Some(AgentMessage::ToolResult(_))) {
        return None;
    }
    entry_message(entry).or_else(|| compaction_entry_message(entry))
}

/// Picks the newest messages of `entries` (oldest first) that fit `token_budget` (0: no limit)
/// and the files the whole selection touched, earlier branch summaries' lists included.
pub fn prepare_branch_entries(entries: &[&SessionEntry], token_budget: u64) -> BranchPreparation {
    let mut preparation = BranchPreparation::default();
    for entry in entries {
        match entry {
            SessionEntry::BranchSummary(b) if b.from_hook != Some(true) => {
                if let Some(details) = &b.details {
                    preparation.file_ops.add_details(details);
                }
            }
            SessionEntry::Message(m) => preparation.file_ops.add_message(&m.message),
            _ => {}
        }
    }

    let mut newest_first = Vec::new();
    for entry in entries.iter().rev() {
        let Some(message) = branch_message(entry) else {
            continue;
        };
        let tokens = estimate_tokens(&message);
        let total = preparation.total_tokens;
        if token_budget > 0 && total + tokens > token_budget {
            let is_summary = matches!(entry, SessionEntry::Compaction(_) | SessionEntry::BranchSummary(_));
            // A summary is dense context: still worth it while the total is under 90 %.
            if is_summary && (total as f64) < token_budget as f64 * 0.9 {
                newest_first.push(message);
                preparation.total_tokens += tokens;
            }
            break;
        }
        newest_first.push(message);
        preparation.total_tokens += tokens;
    }
    newest_first.reverse();
    preparation.messages = newest_first;
    preparation
}

/// Summarizes the branch `entries` (oldest first, as [`entries_to_summarize`] returns them).
///
/// The request carries the summarization system prompt, the conversation and the branch
/// instructions (the caller's instructions appended as `Additional focus: …`, or in their place
/// with `replace_instructions`), a 2048-token cap and no reasoning. An empty selection answers
/// [`NO_CONTENT_TO_SUMMARIZE`] without a request.
pub async fn generate_branch_summary(
    entries: &[&SessionEntry],
    request: SummaryRequest<'_>,
    options: BranchSummaryOptions,
) -> Result<BranchSummaryOutput, CompactionError> {
    if request.options.cancel.is_cancelled() {
        return Err(CompactionError::Cancelled);
    }
    let window = if options.context_window == 0 { DEFAULT_CONTEXT_WINDOW } else { options.context_window };
    let budget = window.saturating_sub(options.reserve_tokens);
    let preparation = prepare_branch_entries(entries, budget);
    if preparation.messages.is_empty() {
        return Ok(BranchSummaryOutput {
            summary: NO_CONTENT_TO_SUMMARIZE.to_owned(),
            read_files: Vec::new(),
            modified_files: Vec::new(),
        });
    }

    let conversation = serialize_conversation(&rho_types::convert_to_llm(&preparation.messages));
    let custom = non_empty(request.custom_instructions);
    let instructions = match custom {
        Some(custom) if options.replace_instructions => custom.to_owned(),
        Some(custom) => format!("{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom}"),
        None => BRANCH_SUMMARY_PROMPT.to_owned(),
    };
    let prompt = conversation_block(&conversation) + &instructions;
    let retry = request.retry.as_ref();
    let (text, _usage) =
        request_summary(request.model, &request.options, retry, prompt, BRANCH_SUMMARY_MAX_TOKENS, request.thinking())
            .await
            .map_err(|e| match e {
                RequestFailure::Cancelled => CompactionError::Cancelled,
                RequestFailure::Failed(m) => CompactionError::Summarization(m),
            })?;

    let read_files = preparation.file_ops.read_files();
    let modified_files = preparation.file_ops.modified_files();
    let summary = format!("{BRANCH_SUMMARY_PREAMBLE}{text}{}", format_file_operations(&read_files, &modified_files));
    Ok(BranchSummaryOutput { summary, read_files, modified_files })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::test_support::*;
    use rho_types::ThinkingLevel;
    use serde_json::json;

    fn roles(p: &BranchPreparation) -> Vec<&'static str> {
        p.messages.iter().map(AgentMessage::role).collect()
    }

    #[test]
    fn tool_results_are_left_out_and_order_is_kept() {
        let entries = vec![
            message("u", user("do it")),
            message("a", assistant_calls(vec![tool_call("read", json!({"path": "r.rs"}))])),
            message("r", tool_result("contents")),
            model_change("mc"),
            custom_message("cm", "note"),
            compaction("c", "summary", "u", None),
            message("a2", assistant_text("done")),
        ];
        let p = prepare_branch_entries(&refs(&entries), 0);
        assert_eq!(roles(&p), ["user", "assistant", "custom", "compactionSummary", "assistant"]);
        assert_eq!(p.file_ops.read_files(), ["r.rs"]);
    }

    #[test]
    fn newest_messages_within_the_budget() {
        let entries = vec![
            message("u1", user(&filler(400))),
            message("u2", user(&filler(400))),
            message("u3", user(&filler(400))),
        ];
        let p = prepare_branch_entries(&refs(&entries), 250);
        assert_eq!(p.messages.len(), 2);
        assert_eq!(p.total_tokens, 200);
        let p = prepare_branch_entries(&refs(&entries), 300);
        assert_eq!(p.messages.len(), 3);
    }

    #[test]
    fn a_summary_past_the_budget_still_fits_under_90_percent() {
        let entries = vec![
            message("u0", user("first")),
            branch_summary("bs", &filler(800), None),
            message("u1", user(&filler(400))),
        ];
        // Everything fits: 302 ≤ 1000.
        let p = prepare_branch_entries(&refs(&entries), 1000);
        assert_eq!(p.messages.len(), 3);
        // Budget 250: the summary would make 300; 100 < 225, so it is taken, then the walk stops.
        let p = prepare_branch_entries(&refs(&entries), 250);
        assert_eq!(roles(&p), ["branchSummary", "user"]);
        assert_eq!(p.total_tokens, 300);
        // Budget 110: 100 is not under 99, so the summary is dropped too.
        let p = prepare_branch_entries(&refs(&entries), 110);
        assert_eq!(roles(&p), ["user"]);
    }

    #[test]
    fn file_lists_of_earlier_branch_summaries_count() {
        let mut hook = branch_summary("h", "ext", Some(json!({"readFiles": ["hook.rs"]})));
        if let SessionEntry::BranchSummary(b) = &mut hook {
            b.from_hook = Some(true);
        }
        let entries = vec![
            branch_summary("bs", "earlier", Some(json!({"readFiles": ["a.rs", "b.rs"], "modifiedFiles": ["c.rs"]}))),
            hook,
            message("a", assistant_calls(vec![tool_call("write", json!({"path": "b.rs"}))])),
        ];
        let p = prepare_branch_entries(&refs(&entries), 0);
        assert_eq!(p.file_ops.read_files(), ["a.rs"]);
        assert_eq!(p.file_ops.modified_files(), ["b.rs", "c.rs"]);
    }

    #[test]
    fn the_abandoned_part_of_the_tree() {
        let mut session = Session::in_memory(std::path::Path::new("/tmp"));
        let u1 = session.append_message(&user("one")).unwrap();
        let a1 = session.append_message(&assistant_text("two")).unwrap();
        let u2 = session.append_message(&user("three")).unwrap();
        let a2 = session.append_message(&assistant_text("four")).unwrap();
        let ids = |v: Vec<&SessionEntry>| v.iter().map(|e| e.id().to_string()).collect::<Vec<_>>();
        // Going back to u1 leaves a1, u2, a2 behind.
        assert_eq!(
            ids(entries_to_summarize(&session, Some(a2.as_str()), Some(u1.as_str()))),
            [a1.to_string(), u2.to_string(), a2.to_string()]
        );
        // Going to the root leaves everything.
        assert_eq!(entries_to_summarize(&session, Some(a2.as_str()), None).len(), 4);
        // No old leaf, nothing to summarize; going to an ancestor of itself, nothing either.
        assert!(entries_to_summarize(&session, None, Some(u1.as_str())).is_empty());
        assert!(entries_to_summarize(&session, Some(a2.as_str()), Some(a2.as_str())).is_empty());
    }

    #[tokio::test]
    async fn an_empty_selection_needs_no_request() {
        let model = rho_types::Model {
            id: "m".into(),
            name: "m".into(),
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            base_url: "http://127.0.0.1:9".into(),
            reasoning: false,
            input: vec![],
            cost: Default::default(),
            context_window: 0,
            max_tokens: 1000,
            headers: Default::default(),
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
            input_limits: None,
            sampling: None,
        };
        let entries = vec![model_change("mc"), message("r", tool_result("only a result"))];
        let request = SummaryRequest {
            model: &model,
            options: rho_ai::StreamOptions::default(),
            custom_instructions: None,
            retry: None,
            thinking: ThinkingLevel::Off,
        };
        let output = generate_branch_summary(&refs(&entries), request, BranchSummaryOptions::default()).await.unwrap();
        assert_eq!(output.summary, NO_CONTENT_TO_SUMMARIZE);
        assert!(output.read_files.is_empty() && output.modified_files.is_empty());
    }
}
