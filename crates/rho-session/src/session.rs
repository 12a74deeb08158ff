//! [`Session`]: one session tree, in memory and (unless it is an in-memory session) in its file.
//!
//! The file is the record. Every entry is appended and handed to the OS as it is produced, the
//! header included, so a killed process loses at most the entry in flight. The in-memory state
//! mirrors the file: the entries in file order, an id index, the resolved labels, and the leaf
//! (the entry the next append attaches to).
//!
//! The leaf survives a reload. pi takes the last line of the file as the leaf; when rho moves the
//! leaf without appending ([`Session::branch`], [`Session::reset_leaf`]) it appends a `custom`
//! entry of type `rho.leaf` whose parent is the new leaf, so pi (which then lands on the marker)
//! and rho (which reads a trailing marker as "its parent") both resume on the branch the user
//! was on. The marker never becomes the leaf itself.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rho_types::AgentMessage;

use crate::context::{SessionContext, build_context};
use crate::entry::SessionEntry;
use crate::error::{Result, SessionError};
use crate::header::SessionHeader;
use crate::id::{EntryId, new_session_id, now_iso};
use crate::load::{LoadWarning, load_file};
use crate::paths::session_file_name;
use crate::writer::{AppendFile, Durability, FileLock, backup_path, replace_with_backup};

/// A user message entry and its text (for choosing where to branch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserMessageEntry {
    pub entry_id: EntryId,
    /// The message's text blocks concatenated.
    pub text: String,
}

/// Where a persisted session writes.
#[derive(Debug)]
pub(crate) struct Store {
    pub file: AppendFile,
    /// The on-disk version when older than the current one: the migrated content is written
    /// (atomically, keeping a backup) before the next append.
    pub pending_migration: Option<u32>,
    /// Lines of entries kept in memory whose write failed, oldest first: written before any
    /// later entry, so the file never skips one.
    pub unsaved: Vec<Vec<u8>>,
    /// Held while this session is the one writing the file (see [`Session::lock`]).
    pub lock: Option<FileLock>,
    /// This process made the file (it did not exist before): only such a file may be removed.
    pub created: bool,
}

impl Store {
    pub fn new(file: AppendFile, pending_migration: Option<u32>) -> Self {
        Self { file, pending_migration, unsaved: Vec::new(), lock: None, created: false }
    }

    /// The store of a file this process just made.
    pub fn created(file: AppendFile) -> Self {
        Self { created: true, ..Self::new(file, None) }
    }

    /// Writes what waits, oldest first, then `line`. On failure what was written is off the
    /// list and the rest (without `line`) is still waiting.
    fn write(&mut self, line: &[u8]) -> Result<()> {
        while let Some(next) = self.unsaved.first() {
            self.file.append(next)?;
            self.unsaved.remove(0);
        }
        self.file.append(line)
    }
}

/// What a failed write does to the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnWriteFailure {
    /// The entry is not added (a command that changes the session fails as a whole).
    Refuse,
    /// The entry is added in memory and its line waits to be written (a message of a run that
    /// already happened: the record must not lose it).
    KeepUnsaved,
}

/// A session tree. See the module docs for the durability and leaf rules.
#[derive(Debug)]
pub struct Session {
    pub(crate) header: SessionHeader,
    pub(crate) entries: Vec<SessionEntry>,
    pub(crate) index: HashMap<EntryId, usize>,
    pub(crate) labels: HashMap<EntryId, String>,
    pub(crate) leaf: Option<EntryId>,
    /// The leaf a reload of the file would find.
    pub(crate) file_leaf: Option<EntryId>,
    /// `None` for an in-memory session.
    pub(crate) store: Option<Store>,
}

impl Session {
    /// Starts a new session in `dir` (created if missing): a fresh id, the file
    /// `<dir>/<ts>_<id>.jsonl`, and the header written at once.
    pub fn create(dir: &Path, cwd: &Path, parent_session: Option<&Path>) -> Result<Self> {
        let timestamp = now_iso();
        let id = new_session_id();
        let path =
            std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()).join(session_file_name(&timestamp, &id));
        Self::create_file(path, id, timestamp, cwd, parent_session)
    }

    /// Starts a new session with the id `id` in `dir` (pi's `--session-id`). The id names the
    /// file, so it is letters, digits, `.`, `_` and `-` only.
    pub fn create_with_id(dir: &Path, cwd: &Path, id: &str) -> Result<Self> {
        let valid = !id.is_empty()
            && !id.starts_with('.')
            && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !valid {
            return Err(SessionError::InvalidId(id.to_owned()));
        }
        let timestamp = now_iso();
        let path =
            std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()).join(session_file_name(&timestamp, id));
        Self::create_file(path, id.to_owned(), timestamp, cwd, None)
    }

    /// Starts a new session in the file `path`, which must not exist yet.
    pub fn create_at(path: &Path, cwd: &Path, parent_session: Option<&Path>) -> Result<Self> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        Self::create_file(path, new_session_id(), now_iso(), cwd, parent_session)
    }

    fn create_file(
        path: PathBuf,
        id: String,
        timestamp: String,
        cwd: &Path,
        parent_session: Option<&Path>,
    ) -> Result<Self> {
        let header = SessionHeader::new(
            id,
            timestamp,
            cwd.to_string_lossy(),
            parent_session.map(|p| p.to_string_lossy().into_owned()),
        );
        let file = AppendFile::create_new(path, &header.to_line()?, Durability::default())?;
        Ok(Self::from_parts(header, Vec::new(), Some(Store::created(file))))
    }

    /// A session that is never written (`--no-session`).
    pub fn in_memory(cwd: &Path) -> Self {
        let header = SessionHeader::new(new_session_id(), now_iso(), cwd.to_string_lossy(), None);
        Self::from_parts(header, Vec::new(), None)
    }

    /// Opens an existing session file. The file is not modified; lines that had to be skipped
    /// are reported as warnings. Older versions are migrated in memory and persisted (with a
    /// backup of the original) only when something is appended.
    pub fn open(path: &Path) -> Result<(Self, Vec<LoadWarning>)> {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let loaded = load_file(&path)?;
        let pending_migration = (loaded.file_version < crate::header::CURRENT_VERSION).then_some(loaded.file_version);
        let store =
            Store::new(AppendFile::existing(path, loaded.needs_newline, Durability::default()), pending_migration);
        let session = Self::from_parts(loaded.header, loaded.entries, Some(store));
        Ok((session, loaded.warnings))
    }

    /// Builds the in-memory state; the leaf is the one a reload of these entries finds.
    pub(crate) fn from_parts(header: SessionHeader, entries: Vec<SessionEntry>, store: Option<Store>) -> Self {
        let mut index = HashMap::with_capacity(entries.len());
        let mut labels = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            index.insert(entry.id().clone(), i);
            if let SessionEntry::Label(l) = entry {
                apply_label(&mut labels, &l.target_id, l.label.as_deref());
            }
        }
        let leaf = match entries.last() {
            None => None,
            Some(last) if last.is_leaf_marker() => match last.parent_id() {
                None => None,
                Some(p) if index.contains_key(p.as_str()) => Some(p.clone()),
                Some(_) => Some(last.id().clone()),
            },
            Some(last) => Some(last.id().clone()),
        };
        Self { header, entries, index, labels, file_leaf: leaf.clone(), leaf, store }
    }

    /// How far each append pushes a line to disk (default [`Durability::Flush`]). The first
    /// synced append also syncs everything written before it, the header included.
    pub fn set_durability(&mut self, durability: Durability) {
        if let Some(store) = &mut self.store {
            store.file.set_durability(durability);
        }
    }

    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// The working directory recorded in the header.
    pub fn cwd(&self) -> &str {
        &self.header.cwd
    }

    /// The session file, `None` for an in-memory session.
    pub fn session_file(&self) -> Option<&Path> {
        self.store.as_ref().map(|s| s.file.path())
    }

    /// The directory of the session file, where new and forked sessions go by default.
    pub fn session_dir(&self) -> Option<&Path> {
        self.session_file().and_then(Path::parent)
    }

    /// Whether this process made the session's file (a new, forked or cloned session), as opposed
    /// to opening one that existed: a file rho did not make is never removed, whatever it holds.
    pub fn created_here(&self) -> bool {
        self.store.as_ref().is_some_and(|s| s.created)
    }

    pub fn is_persisted(&self) -> bool {
        self.store.is_some()
    }

    /// The entry the next append attaches to; `None` before the first entry or after
    /// [`Session::reset_leaf`].
    pub fn leaf_id(&self) -> Option<&EntryId> {
        self.leaf.as_ref()
    }

    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.leaf.as_ref().and_then(|id| self.get_entry(id.as_str()))
    }

    /// Every entry in file order (all branches, leaf markers included).
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    pub fn get_entry(&self, id: &str) -> Option<&SessionEntry> {
        self.index.get(id).map(|&i| &self.entries[i])
    }

    /// The label on `id`, if one is set.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(String::as_str)
    }

    /// The entries whose parent is `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<&SessionEntry> {
        self.entries.iter().filter(|e| e.parent_id().is_some_and(|p| p == id)).collect()
    }

    /// The branch ending at `leaf`, root first (every entry type included). Empty for `None` or
    /// an unknown id.
    pub fn path_to(&self, leaf: Option<&str>) -> Vec<&SessionEntry> {
        let mut path = Vec::new();
        let mut current = leaf.and_then(|id| self.get_entry(id));
        while let Some(entry) = current {
            path.push(entry);
            if path.len() > self.entries.len() {
                break; // a parent cycle in a damaged file
            }
            current = entry.parent_id().and_then(|p| self.get_entry(p.as_str()));
        }
        path.reverse();
        path
    }

    /// The current branch, root first.
    pub fn branch_entries(&self) -> Vec<&SessionEntry> {
        self.path_to(self.leaf.as_ref().map(EntryId::as_str))
    }

    /// What the agent resumes with on the current branch (see [`crate::context`]).
    pub fn build_context(&self) -> SessionContext {
        build_context(&self.branch_entries())
    }

    /// Every user `message` entry in file order, across all branches, with its text (texts may
    /// be empty; `get_branch_messages` lists only non-empty ones).
    pub fn user_message_entries(&self) -> Vec<UserMessageEntry> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                SessionEntry::Message(m) => match &m.message {
                    AgentMessage::User(u) => {
                        Some(UserMessageEntry { entry_id: m.id.clone(), text: u.content.text_joined("") })
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// The session's display name: the last non-empty `session_info` name in the file.
    pub fn name(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match e {
            SessionEntry::SessionInfo(i) => i.name.as_deref().map(str::trim).filter(|n| !n.is_empty()),
            _ => None,
        })
    }

    pub(crate) fn new_entry_id(&self) -> EntryId {
        EntryId::generate(|s| self.index.contains_key(s))
    }

    /// Writes the migrated content over an older-version file, keeping the original as a backup.
    fn persist_migration(&mut self) -> Result<()> {
        let Some(store) = &mut self.store else {
            return Ok(());
        };
        let Some(old_version) = store.pending_migration else {
            return Ok(());
        };
        let mut content = self.header.to_line()?;
        for entry in &self.entries {
            rho_types::json::write_to(&mut content, entry)?;
            content.push(b'\n');
        }
        let path = store.file.path().to_path_buf();
        replace_with_backup(&path, &content, &backup_path(&path, old_version))?;
        store.file.reset(false);
        store.pending_migration = None;
        Ok(())
    }

    /// Writes `entry` (unless in memory) and adds it to the tree. With `advance_leaf` the entry
    /// becomes the leaf. Nothing changes in memory when the write fails.
    pub(crate) fn push_entry(&mut self, entry: SessionEntry, advance_leaf: bool) -> Result<EntryId> {
        self.push_entry_or(entry, advance_leaf, OnWriteFailure::Refuse)
    }

    /// [`push_entry`](Self::push_entry), choosing what a failed write does.
    pub(crate) fn push_entry_or(
        &mut self,
        entry: SessionEntry,
        advance_leaf: bool,
        on_failure: OnWriteFailure,
    ) -> Result<EntryId> {
        let mut unsaved = None;
        if self.store.is_some() {
            self.persist_migration()?;
            let line = entry.to_line()?;
            if let Some(store) = &mut self.store
                && let Err(e) = store.write(&line)
            {
                if on_failure == OnWriteFailure::Refuse {
                    return Err(e);
                }
                store.unsaved.push(line);
                unsaved = Some(SessionError::Unsaved { pending: store.unsaved.len(), source: Box::new(e) });
            }
        }
        let id = self.add_entry(entry, advance_leaf);
        match unsaved {
            Some(e) => Err(e),
            None => Ok(id),
        }
    }

    /// Takes the advisory lock that makes this session the only writer of its file (nothing
    /// for an in-memory session). Fails with [`SessionError::Locked`] when another process
    /// has it.
    pub fn lock(&mut self) -> Result<()> {
        match &mut self.store {
            Some(store) if store.lock.is_none() => {
                store.lock = Some(FileLock::take(store.file.path())?);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Entries kept in memory that are not in the file yet.
    pub fn unsaved_count(&self) -> usize {
        self.store.as_ref().map_or(0, |s| s.unsaved.len())
    }

    /// Writes the entries that wait, if the file takes them now.
    pub fn save_pending(&mut self) -> Result<()> {
        let Some(store) = &mut self.store else { return Ok(()) };
        while let Some(next) = store.unsaved.first() {
            store.file.append(next)?;
            store.unsaved.remove(0);
        }
        Ok(())
    }

    fn add_entry(&mut self, entry: SessionEntry, advance_leaf: bool) -> EntryId {
        let id = entry.id().clone();
        if let SessionEntry::Label(l) = &entry {
            apply_label(&mut self.labels, &l.target_id, l.label.as_deref());
        }
        self.file_leaf = if entry.is_leaf_marker() { entry.parent_id().cloned() } else { Some(id.clone()) };
        self.index.insert(id.clone(), self.entries.len());
        self.entries.push(entry);
        if advance_leaf {
            self.leaf = Some(id.clone());
        }
        id
    }

    pub(crate) fn require_entry(&self, id: &str) -> Result<()> {
        if self.index.contains_key(id) { Ok(()) } else { Err(SessionError::EntryNotFound(id.to_owned())) }
    }
}

fn apply_label(labels: &mut HashMap<EntryId, String>, target: &EntryId, label: Option<&str>) {
    match label.filter(|l| !l.is_empty()) {
        Some(l) => {
            labels.insert(target.clone(), l.to_owned());
        }
        None => {
            labels.remove(target.as_str());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::entry::{CustomEntry, LEAF_MARKER_TYPE};

    fn custom(id: &str, parent: Option<&str>, custom_type: &str) -> SessionEntry {
        SessionEntry::Custom(CustomEntry {
            custom_type: custom_type.to_owned(),
            data: None,
            id: EntryId::from(id),
            parent_id: parent.map(EntryId::from),
            timestamp: String::new(),
        })
    }

    fn leaf_of(entries: Vec<SessionEntry>) -> Option<String> {
        let header = SessionHeader::new("s", "t", "/p", None);
        Session::from_parts(header, entries, None).leaf_id().map(ToString::to_string)
    }

    #[test]
    fn the_leaf_is_the_last_entry_or_the_parent_of_a_trailing_marker() {
        assert_eq!(leaf_of(vec![]), None);
        assert_eq!(leaf_of(vec![custom("a", None, "x"), custom("b", Some("a"), "x")]), Some("b".into()));
        let marker = |parent| custom("m", parent, LEAF_MARKER_TYPE);
        assert_eq!(
            leaf_of(vec![custom("a", None, "x"), custom("b", Some("a"), "x"), marker(Some("a"))]),
            Some("a".into())
        );
        assert_eq!(leaf_of(vec![custom("a", None, "x"), marker(None)]), None);
        // A marker naming an entry that is not in the file is an ordinary last entry.
        assert_eq!(leaf_of(vec![custom("a", None, "x"), marker(Some("gone"))]), Some("m".into()));
        // Only a trailing marker counts.
        assert_eq!(
            leaf_of(vec![custom("a", None, "x"), marker(Some("a")), custom("b", Some("m"), "x")]),
            Some("b".into())
        );
    }

    #[test]
    fn a_parent_cycle_in_a_damaged_file_ends_the_path() {
        let header = SessionHeader::new("s", "t", "/p", None);
        let s = Session::from_parts(header, vec![custom("a", Some("b"), "x"), custom("b", Some("a"), "x")], None);
        let path = s.path_to(Some("b"));
        assert!(path.len() <= 3, "{}", path.len());
        assert_eq!(path.last().map(|e| e.id().as_str()), Some("b"));
    }

    #[test]
    fn labels_resolve_in_file_order() {
        let label = |id: &str, target: &str, text: Option<&str>| {
            SessionEntry::Label(crate::entry::LabelEntry {
                id: EntryId::from(id),
                parent_id: None,
                timestamp: String::new(),
                target_id: EntryId::from(target),
                label: text.map(str::to_owned),
            })
        };
        let header = SessionHeader::new("s", "t", "/p", None);
        let entries = vec![
            custom("a", None, "x"),
            label("l1", "a", Some("one")),
            label("l2", "a", Some("two")),
            custom("b", None, "x"),
            label("l3", "b", Some("b")),
            label("l4", "b", Some("")),
        ];
        let s = Session::from_parts(header, entries, None);
        assert_eq!(s.label("a"), Some("two"));
        assert_eq!(s.label("b"), None);
    }

    #[test]
    fn in_memory_moves_record_nothing() {
        let mut s = Session::in_memory(Path::new("/p"));
        let a = s.append_custom("x", Some(json!(1))).unwrap();
        s.append_custom("x", None).unwrap();
        s.branch(a.as_str()).unwrap();
        s.reset_leaf().unwrap();
        assert_eq!(s.entries().len(), 2);
        assert_eq!(s.leaf_id(), None);
        assert_eq!(s.session_dir(), None);
    }
}
