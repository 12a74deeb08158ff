//! Moving in the session tree (pi's `/tree`): the leaf goes to another entry, and the branch
//! being left may first be summarized into a `branch_summary` entry at the new position, so
//! what was learned there is not lost. The summary request can be cancelled like a requested
//! compaction (`abort`).

use rho_session::SessionEntry;

use super::sessions::user_message_at;
use super::{AgentSession, SessionCommandError};
use crate::compaction::{BranchSummaryOptions, SummaryRequest, entries_to_summarize, generate_branch_summary};

/// Whether the branch being left is summarized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchSummaryChoice {
    NoSummary,
    /// Summarized with the built-in instructions, plus these (as a focus) when given.
    Summarize {
        instructions: Option<String>,
    },
}

/// Where navigation left the session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Navigated {
    /// The text of the user message navigated to (the leaf is now just before it), to edit
    /// and send again.
    pub editor_text: Option<String>,
    /// A branch summary was recorded.
    pub summarized: bool,
}

impl AgentSession {
    /// A summary asked for (a branch summary, or a compaction) is being written.
    pub fn is_summarizing(&self) -> bool {
        self.inner.compaction.is_requested()
    }

    /// Cancels the summary being written: the navigation or compaction ends cancelled and
    /// nothing changes.
    pub fn abort_summary(&self) {
        self.inner.compaction.cancel();
    }

    /// Moves the leaf to `entry_id`, or for a user message to just before it. With a summary,
    /// the entries from the old leaf back to the common ancestor are summarized by the current
    /// model and the summary becomes the new leaf. The conversation becomes that branch; the
    /// next prompt branches from there.
    pub async fn navigate_tree(
        &self,
        entry_id: &str,
        summary: BranchSummaryChoice,
    ) -> Result<Navigated, SessionCommandError> {
        self.stop().await;
        let (target, editor_text, branch, old_leaf) = {
            let session = self.session();
            let (target, editor_text) = match user_message_at(&session, entry_id) {
                Ok((text, parent)) => (parent.map(|p| p.to_string()), Some(text)),
                Err(_) if session.get_entry(entry_id).is_some() => (Some(entry_id.to_owned()), None),
                Err(e) => return Err(e),
            };
            let old_leaf = session.leaf_id().map(|l| l.to_string());
            let branch: Vec<SessionEntry> =
                entries_to_summarize(&session, old_leaf.as_deref(), Some(entry_id)).into_iter().cloned().collect();
            (target, editor_text, branch, old_leaf)
        };
        let wants_summary = matches!(summary, BranchSummaryChoice::Summarize { .. });
        // Extensions may cancel the move, or write the summary themselves.
        let from_extension = match self.extension_tree(entry_id, old_leaf.as_deref(), &branch, &summary).await? {
            Some(written) if wants_summary => Some(written),
            _ => None,
        };
        let by_extension = from_extension.is_some();
        let summary_entry = match (&summary, branch.is_empty(), from_extension) {
            (_, _, Some(written)) => Some(written),
            (BranchSummaryChoice::Summarize { instructions }, false, None) => {
                Some(self.summarize_branch(&branch, instructions.as_deref()).await?)
            }
            _ => None,
        };
        let summarized = summary_entry.is_some();
        let (new_leaf, written) = {
            let mut session = self.session();
            let written = match (summary_entry, target) {
                (Some(summary), target) => {
                    let id = session.branch_with_summary(target.as_deref(), summary)?;
                    session.get_entry(id.as_str()).and_then(|e| serde_json::to_value(e).ok())
                }
                (None, Some(target)) => {
                    session.branch(&target)?;
                    None
                }
                (None, None) => {
                    session.reset_leaf()?;
                    None
                }
            };
            (session.leaf_id().map(|l| l.to_string()), written)
        };
        self.inner.transcript.rebuild();
        let mut event = serde_json::json!({"type": "session_tree", "newLeafId": new_leaf, "oldLeafId": old_leaf});
        if let Some(entry) = written {
            event["summaryEntry"] = entry;
            event["fromExtension"] = serde_json::json!(by_extension);
        }
        self.tell_extensions(event);
        Ok(Navigated { editor_text, summarized })
    }

    async fn summarize_branch(
        &self,
        entries: &[SessionEntry],
        instructions: Option<&str>,
    ) -> Result<rho_session::NewBranchSummary, SessionCommandError> {
        if !*self.inner.has_model.lock() {
            return Err(SessionCommandError::NoModel);
        }
        let selected = self.inner.agent.model();
        if !self.registry().has_key(&selected.provider) {
            return Err(SessionCommandError::NoApiKey(selected.provider.clone()));
        }
        let cancel = self.inner.compaction.requested();
        let (model, thinking) = match self.direct_model(&cancel).await {
            Ok(routed) => routed,
            Err(e) => {
                self.inner.compaction.request_done();
                return Err(SessionCommandError::Invalid(e));
            }
        };
        let options = BranchSummaryOptions {
            context_window: model.context_window,
            reserve_tokens: self.settings().branch_summary().reserve_tokens,
            replace_instructions: false,
        };
        let mut request_options =
            rho_agent::resolve_request_options(&self.inner.request_options, &model, &cancel).await;
        request_options.cancel = cancel;
        let refs: Vec<&SessionEntry> = entries.iter().collect();
        let retry = self.summary_retry("branchSummary", None);
        let request = SummaryRequest {
            model: &model,
            options: request_options,
            custom_instructions: instructions,
            retry,
            thinking,
        };
        let output = generate_branch_summary(&refs, request, options).await;
        self.inner.compaction.request_done();
        Ok(output?.into_new_branch_summary())
    }
}
