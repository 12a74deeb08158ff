//! Growing the tree: one method per entry type, and moving the leaf.
//!
//! Every append creates an entry whose parent is the current leaf and makes it the new leaf, as
//! pi does; labels and session-info entries are ordinary nodes of the branch. Moving the leaf
//! without appending records a `rho.leaf` marker (see [`crate::Session`]). Any failure leaves
//! the session as it was.

use rho_types::AgentMessage;
use rho_types::ThinkingLevel;
use rho_types::types::{Attribution, Usage, UserMessageContent};
use serde_json::{Value, json};

use crate::entry::{
    BranchSummaryEntry, CompactionEntry, ContextEditEntry, CustomEntry, CustomMessageEntry, LEAF_MARKER_TYPE,
    LabelEntry, MessageEntry, ModelChangeEntry, SessionEntry, SessionInfoEntry, ThinkingLevelChangeEntry, UsageEntry,
};
use crate::error::{Result, SessionError};
use crate::id::{EntryId, now_iso};
use crate::session::{OnWriteFailure, Session};

/// A compaction to record (see [`Session::append_compaction`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewCompaction {
    pub summary: String,
    /// The first entry of the branch whose message stays in context.
    pub first_kept_entry_id: String,
    /// Estimated context tokens before compaction.
    pub tokens_before: u64,
    /// Compactor data (`{readFiles, modifiedFiles}` for rho's own).
    pub details: Option<Value>,
    /// `Some(true)` when an extension supplied the compaction.
    pub from_hook: Option<bool>,
    pub short_summary: Option<String>,
}

/// A branch summary to record (see [`Session::branch_with_summary`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewBranchSummary {
    pub summary: String,
    pub details: Option<Value>,
    pub from_hook: Option<bool>,
}

/// A message injected into the context as user text (see
/// [`Session::append_custom_message`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NewCustomMessage {
    pub custom_type: String,
    pub content: UserMessageContent,
    /// Whether a UI shows it; the model always sees it.
    pub display: bool,
    /// Never sent to the model.
    pub details: Option<Value>,
    pub attribution: Option<Attribution>,
}

impl Session {
    fn parent(&self) -> Option<EntryId> {
        self.leaf.clone()
    }

    /// Appends a conversation message. Compaction and branch summaries have entry types of their
    /// own and are refused here.
    pub fn append_message(&mut self, message: &AgentMessage) -> Result<EntryId> {
        match message {
            AgentMessage::CompactionSummary(_) => {
                return Err(SessionError::NotAMessageEntry("compactionSummary"));
            }
            AgentMessage::BranchSummary(_) => {
                return Err(SessionError::NotAMessageEntry("branchSummary"));
            }
            _ => {}
        }
        let entry = SessionEntry::Message(MessageEntry {
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            message: message.clone(),
        });
        // A message is the record of what happened: a failed write keeps it for later.
        self.push_entry_or(entry, true, OnWriteFailure::KeepUnsaved)
    }

    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<EntryId> {
        let entry = SessionEntry::ModelChange(ModelChangeEntry {
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
        });
        self.push_entry(entry, true)
    }

    pub fn append_thinking_level_change(&mut self, level: ThinkingLevel) -> Result<EntryId> {
        let entry = SessionEntry::ThinkingLevelChange(ThinkingLevelChangeEntry {
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            thinking_level: Some(level),
        });
        self.push_entry(entry, true)
    }

    /// Appends a compaction at the end of the branch (after the kept messages).
    pub fn append_compaction(&mut self, compaction: NewCompaction) -> Result<EntryId> {
        // The prompt and tools declared so far, kept whole: the compacted context starts with them.
        let system_message = rho_types::current_system_message(&self.build_context().messages);
        let entry = SessionEntry::Compaction(CompactionEntry {
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            summary: compaction.summary,
            first_kept_entry_id: Some(EntryId::from(compaction.first_kept_entry_id)),
            tokens_before: compaction.tokens_before,
            system_message,
            details: compaction.details,
            from_hook: compaction.from_hook,
            short_summary: compaction.short_summary,
            preserve_data: None,
        });
        self.push_entry(entry, true)
    }

    /// Moves the leaf to `target` (`None`: before the first entry) and appends a
    /// `branch_summary` there, which becomes the leaf.
    pub fn branch_with_summary(&mut self, target: Option<&str>, summary: NewBranchSummary) -> Result<EntryId> {
        if let Some(t) = target {
            self.require_entry(t)?;
        }
        let parent = target.map(EntryId::from);
        let entry = SessionEntry::BranchSummary(BranchSummaryEntry {
            id: self.new_entry_id(),
            parent_id: parent.clone(),
            timestamp: now_iso(),
            from_id: target.unwrap_or("root").to_owned(),
            summary: summary.summary,
            details: summary.details,
            from_hook: summary.from_hook,
        });
        self.push_entry(entry, true)
    }

    /// Appends usage that belongs to no message (pi 1.6's `usage` entry: a cache warm's).
    pub fn append_usage(&mut self, kind: &str, provider: &str, model: &str, usage: Usage) -> Result<EntryId> {
        let entry = SessionEntry::Usage(UsageEntry {
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            kind: kind.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            usage,
        });
        self.push_entry(entry, true)
    }

    /// Appends extension state (never part of the context).
    pub fn append_custom(&mut self, custom_type: &str, data: Option<Value>) -> Result<EntryId> {
        let entry = SessionEntry::Custom(CustomEntry {
            custom_type: custom_type.to_owned(),
            data,
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
        });
        self.push_entry(entry, true)
    }

    /// Appends a message that reaches the model as user text.
    pub fn append_custom_message(&mut self, message: NewCustomMessage) -> Result<EntryId> {
        let entry = SessionEntry::CustomMessage(CustomMessageEntry {
            custom_type: message.custom_type,
            content: message.content,
            display: message.display,
            details: message.details,
            attribution: message.attribution,
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
        });
        self.push_entry_or(entry, true, OnWriteFailure::KeepUnsaved)
    }

    /// Leaves the message of `target_id`, which must exist, out of future context (`None`), or
    /// replaces its content there with `content` (pi 1.6's `context_edit`, written as
    /// `"replacement": {"content": …}`); the message itself stays as it was.
    pub fn append_context_edit(&mut self, target_id: &str, content: Option<Value>) -> Result<EntryId> {
        self.require_entry(target_id)?;
        let entry = SessionEntry::ContextEdit(ContextEditEntry {
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            target_id: EntryId::from(target_id.to_owned()),
            replacement: content.map(|content| json!({ "content": content })),
        });
        self.push_entry(entry, true)
    }

    /// Sets (`Some`, non-empty) or clears (`None` or empty) the label of `target_id`, which must
    /// exist. A clearing entry is written without a `label` key, as pi writes it.
    pub fn append_label(&mut self, target_id: &str, label: Option<&str>) -> Result<EntryId> {
        self.require_entry(target_id)?;
        let entry = SessionEntry::Label(LabelEntry {
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            target_id: EntryId::from(target_id),
            label: label.filter(|l| !l.is_empty()).map(str::to_owned),
        });
        self.push_entry(entry, true)
    }

    /// Records the display name (trimmed).
    pub fn append_session_info(&mut self, name: &str) -> Result<EntryId> {
        let entry = SessionEntry::SessionInfo(SessionInfoEntry {
            id: self.new_entry_id(),
            parent_id: self.parent(),
            timestamp: now_iso(),
            name: Some(name.trim().to_owned()),
        });
        self.push_entry(entry, true)
    }

    /// Moves the leaf to `entry_id`; the next append starts a branch there. The move is recorded
    /// in the file so a reload resumes here.
    pub fn branch(&mut self, entry_id: &str) -> Result<()> {
        self.require_entry(entry_id)?;
        self.move_leaf(Some(EntryId::from(entry_id)))
    }

    /// Moves the leaf before the first entry; the next append starts a new root.
    pub fn reset_leaf(&mut self) -> Result<()> {
        self.move_leaf(None)
    }

    pub(crate) fn move_leaf(&mut self, leaf: Option<EntryId>) -> Result<()> {
        let previous = std::mem::replace(&mut self.leaf, leaf);
        if self.store.is_none() || self.leaf == self.file_leaf {
            return Ok(());
        }
        let marker = SessionEntry::Custom(CustomEntry {
            custom_type: LEAF_MARKER_TYPE.to_owned(),
            data: Some(json!({ "leafId": self.leaf })),
            id: self.new_entry_id(),
            parent_id: self.leaf.clone(),
            timestamp: now_iso(),
        });
        if let Err(e) = self.push_entry(marker, false) {
            self.leaf = previous;
            return Err(e);
        }
        Ok(())
    }
}
