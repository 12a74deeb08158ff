//! New sessions made from an existing one: `/fork` ([`Session::create_branched_session`], one
//! branch into a new file) and the cross-project continue ([`Session::fork_into`], every entry
//! into a new file under another project). Both write the whole new file at once; the source is
//! never modified.

use std::path::Path;

use crate::entry::{LabelEntry, SessionEntry};
use crate::error::{Result, SessionError};
use crate::header::SessionHeader;
use crate::id::{EntryId, new_session_id, now_iso};
use crate::load::LoadWarning;
use crate::paths::session_file_name;
use crate::session::{Session, Store};
use crate::writer::{AppendFile, Durability};

impl Session {
    fn header_for_copy(&self, id: &str, timestamp: &str, cwd: &str) -> SessionHeader {
        SessionHeader::new(id, timestamp, cwd, self.session_file().map(|p| p.to_string_lossy().into_owned()))
    }

    /// Writes `header` and `entries` as a new file in `dir` (or keeps them in memory when `dir`
    /// is `None`) and returns the session over them.
    fn write_copy(dir: Option<&Path>, header: SessionHeader, entries: Vec<SessionEntry>) -> Result<Session> {
        let Some(dir) = dir else {
            return Ok(Session::from_parts(header, entries, None));
        };
        let mut content = header.to_line()?;
        for entry in &entries {
            rho_types::json::write_to(&mut content, entry)?;
            content.push(b'\n');
        }
        let path = std::path::absolute(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .join(session_file_name(&header.timestamp, &header.id));
        let file = AppendFile::create_new(path, &content, Durability::default())?;
        Ok(Session::from_parts(header, entries, Some(Store::created(file))))
    }

    /// pi's `/fork`: a new session (new id; header `parentSession` = this file) holding the branch
    /// from the root to `leaf_id`, written at once next to this file (kept in memory when this
    /// session is). Labels on the branch are re-created after its last entry; label entries and
    /// leaf markers on the branch itself are dropped, their children re-parented so the chain
    /// stays whole.
    pub fn create_branched_session(&self, leaf_id: &str) -> Result<Session> {
        let path = self.path_to(Some(leaf_id));
        if path.is_empty() {
            return Err(SessionError::EntryNotFound(leaf_id.to_owned()));
        }
        let mut entries: Vec<SessionEntry> = Vec::with_capacity(path.len());
        let mut last_kept: Option<EntryId> = None;
        let mut skipped = false;
        for entry in path {
            if matches!(entry, SessionEntry::Label(_)) || entry.is_leaf_marker() {
                skipped = true;
                continue;
            }
            let mut copy = entry.clone();
            if skipped {
                copy.set_parent_id(last_kept.clone());
                skipped = false;
            }
            last_kept = Some(copy.id().clone());
            entries.push(copy);
        }

        let kept: Vec<EntryId> = entries.iter().map(|e| e.id().clone()).collect();
        let mut taken: std::collections::HashSet<EntryId> = kept.iter().cloned().collect();
        for target in kept {
            let Some(label) = self.label(target.as_str()) else {
                continue;
            };
            let id = EntryId::generate(|s| taken.contains(s));
            taken.insert(id.clone());
            entries.push(SessionEntry::Label(LabelEntry {
                id: id.clone(),
                parent_id: last_kept.replace(id),
                timestamp: now_iso(),
                target_id: target,
                label: Some(label.to_owned()),
            }));
        }

        let header = self.header_for_copy(&new_session_id(), &now_iso(), &self.header.cwd);
        Self::write_copy(self.session_dir(), header, entries)
    }

    /// Copies every entry (all branches) into a new session file in `dir` whose header names
    /// `cwd` and this file as `parentSession`; the copy resumes on this session's leaf.
    pub fn fork_into(&self, dir: &Path, cwd: &Path) -> Result<Session> {
        let header = self.header_for_copy(&new_session_id(), &now_iso(), &cwd.to_string_lossy());
        let mut copy = Self::write_copy(Some(dir), header, self.entries.clone())?;
        copy.move_leaf(self.leaf.clone())?;
        Ok(copy)
    }

    /// Opens `source` and forks it into `dir` for `cwd` (`--session` on another project's
    /// session). Returns the warnings of loading the source.
    pub fn fork_from(source: &Path, dir: &Path, cwd: &Path) -> Result<(Session, Vec<LoadWarning>)> {
        let (session, warnings) = Session::open(source)?;
        Ok((session.fork_into(dir, cwd)?, warnings))
    }
}
