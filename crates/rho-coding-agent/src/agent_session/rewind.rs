//! Rewind ([`crate::checkpoints`]): the files `write` and `edit` changed since a user message put
//! back as they were before it, the conversation moved back to just before it, or both; and the
//! files moved to any point of the tree, for `/tree` to offer with the conversation.

use rho_session::SessionEntry;

use super::navigate::BranchSummaryChoice;
use super::sessions::user_message_at;
use super::{AgentSession, SessionCommandError};
use crate::checkpoints::{CHECKPOINT_ENTRY, CheckpointRecord, FileMove, RewindFiles, plan, restore};

/// What a rewind puts back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewindOptions {
    /// The files rho changed since the message.
    pub code: bool,
    /// The conversation: the leaf moves to just before the message.
    pub conversation: bool,
    /// Files changed outside rho since are overwritten too.
    pub force: bool,
    /// Nothing changes: only what would.
    pub dry_run: bool,
}

/// What a rewind did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rewound {
    pub files: RewindFiles,
    /// The message's text, to edit and send again (when the conversation moved).
    pub editor_text: Option<String>,
}

/// The checkpoint records on `path`, with their index in it.
fn records(path: &[&SessionEntry]) -> Vec<(usize, CheckpointRecord)> {
    path.iter()
        .enumerate()
        .filter_map(|(index, entry)| match entry {
            SessionEntry::Custom(custom) if custom.custom_type == CHECKPOINT_ENTRY => {
                let record = serde_json::from_value(custom.data.clone()?).ok()?;
                Some((index, record))
            }
            _ => None,
        })
        .collect()
}

impl AgentSession {
    /// Rewinds to just before the user message `entry_id` of the current branch.
    pub async fn rewind(&self, entry_id: &str, options: RewindOptions) -> Result<Rewound, SessionCommandError> {
        {
            let session = self.session();
            user_message_at(&session, entry_id)?;
            if !session.branch_entries().iter().any(|e| e.id().as_str() == entry_id) {
                return Err(SessionCommandError::InvalidBranchEntry);
            }
        }
        if !options.dry_run {
            self.stop().await;
        }
        let mut rewound = Rewound::default();
        if options.code {
            let (files, records) = self.move_files(entry_id, options.force, options.dry_run)?;
            rewound.files = files;
            // Kept in the conversation, the rewind is a change like any other: a later rewind
            // or move sees the files as they now are.
            if !options.conversation {
                let mut session = self.session();
                for record in records {
                    session.append_custom(CHECKPOINT_ENTRY, serde_json::to_value(record).ok())?;
                }
            }
        }
        if options.conversation && !options.dry_run {
            rewound.editor_text = self.navigate_tree(entry_id, BranchSummaryChoice::NoSummary).await?.editor_text;
        }
        Ok(rewound)
    }

    /// Puts the files rho changed back as they were at `entry_id` (for a user message, just
    /// before it), from wherever the branch is now; with `dry_run` only says what it would
    /// do. The records of what it changed are returned for the caller to keep.
    fn move_files(
        &self,
        entry_id: &str,
        force: bool,
        dry_run: bool,
    ) -> Result<(RewindFiles, Vec<CheckpointRecord>), SessionCommandError> {
        let target = {
            let session = self.session();
            match user_message_at(&session, entry_id) {
                Ok((_, parent)) => parent.map(|p| p.as_str().to_owned()),
                Err(_) if session.get_entry(entry_id).is_some() => Some(entry_id.to_owned()),
                Err(e) => return Err(e),
            }
        };
        let from = self.session().leaf_id().map(|l| l.as_str().to_owned());
        self.move_files_between(from.as_deref(), target.as_deref(), force, dry_run)
    }

    /// The files rho changed, from as they are at the entry `from` to as they are at `to`
    /// (`None`: before the first entry).
    fn move_files_between(
        &self,
        from: Option<&str>,
        to: Option<&str>,
        force: bool,
        dry_run: bool,
    ) -> Result<(RewindFiles, Vec<CheckpointRecord>), SessionCommandError> {
        let Some(checkpoints) = self.inner.checkpoints.clone() else {
            return Err(SessionCommandError::Invalid("Checkpoints are turned off (checkpoints.enabled)".into()));
        };
        let moves = self.plan_between(from, to);
        Ok(restore::restore(checkpoints.store(), &moves, force, dry_run))
    }

    /// The files to move from the entry `from` to the entry `to`, from the records alone.
    fn plan_between(&self, from: Option<&str>, to: Option<&str>) -> Vec<FileMove> {
        let session = self.session();
        let (current, target) = (session.path_to(from), session.path_to(to));
        let shared = current.iter().zip(&target).take_while(|(a, b)| a.id() == b.id()).count();
        plan::plan(&records(&current), &records(&target), shared)
    }

    /// How many files rho changed since just before the user message `entry_id` (from the
    /// records alone, without reading the files: for lists).
    pub fn files_changed_since(&self, entry_id: &str) -> usize {
        let target = {
            let session = self.session();
            match user_message_at(&session, entry_id) {
                Ok((_, parent)) => parent.map(|p| p.as_str().to_owned()),
                Err(_) => return 0,
            }
        };
        let from = self.session().leaf_id().map(|l| l.as_str().to_owned());
        self.plan_between(from.as_deref(), target.as_deref()).len()
    }

    /// After a move in the tree from the entry `old_leaf`: the files rho changed put as they
    /// are at the new point (with `dry_run`, only what would be). Files changed outside rho
    /// since are left alone.
    pub fn restore_files_after_move(&self, old_leaf: &str, dry_run: bool) -> RewindFiles {
        let leaf = self.session().leaf_id().map(|l| l.as_str().to_owned());
        self.move_files_between(Some(old_leaf), leaf.as_deref(), false, dry_run)
            .map(|(files, _)| files)
            .unwrap_or_default()
    }

    /// Whether `entry_id`'s point has files to put back (for `/tree` and `/rewind` to offer).
    pub fn files_to_restore(&self, entry_id: &str) -> RewindFiles {
        self.move_files(entry_id, false, true).map(|(files, _)| files).unwrap_or_default()
    }
}
