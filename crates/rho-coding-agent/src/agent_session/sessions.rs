//! The session commands: a new session, switching to another file, branching from an earlier
//! user message, cloning the branch, naming, and the read-only views (branch messages, the last
//! answer, stats). Commands that replace the conversation abort the run first; the run still
//! ends with `agent_end` (docs/decisions.md D5).

use std::collections::HashMap;
use std::path::Path;

use rho_rpc::SessionEvent;
use rho_session::{Session, SessionEntry, SessionStats, UserMessageEntry};
use rho_types::AgentMessage;
use serde_json::json;

use super::{AgentSession, SessionCommandError};

/// What an extension's `ctx.newSession({setup})` wrote into the new session, each entry with
/// the id it had there (a `context_edit` names its target by that id).
#[derive(Debug, Clone)]
pub(crate) struct Seed {
    pub id: Option<String>,
    pub entry: SeedEntry,
}

#[derive(Debug, Clone)]
pub(crate) enum SeedEntry {
    Message(Box<AgentMessage>),
    Custom {
        custom_type: String,
        data: Option<serde_json::Value>,
    },
    /// pi 1.6's `appendContextEdit`: the target is a seed entry written before it.
    /// `content: None` leaves the target out.
    ContextEdit {
        target_id: String,
        content: Option<serde_json::Value>,
    },
}
use crate::export_html::{ExportError, ExportOptions, ToolInfo, export_session};

impl AgentSession {
    /// The directory this session's file is in, or would be (where `/resume` looks).
    pub fn sessions_dir(&self) -> std::path::PathBuf {
        match self.session().session_dir() {
            Some(dir) => dir.to_path_buf(),
            None => rho_session::session_dir_for_cwd(&self.paths().agent_dir, self.cwd()),
        }
    }

    /// A look at the session file's tree (entries, leaf, labels) without the means to change
    /// it: changes go through the session's own commands, which keep the file, the
    /// conversation and the events in step. The session is locked while `read` runs, so `read`
    /// must not call back into this session.
    pub fn read_session<R>(&self, read: impl FnOnce(&Session) -> R) -> R {
        read(&self.session())
    }

    /// `new_session`: an empty conversation in a new file beside the current one (in memory
    /// when the current one is), its lineage recorded when `parent_session` is given.
    pub async fn new_session(&self, parent_session: Option<&Path>) -> Result<(), SessionCommandError> {
        self.new_session_seeded(parent_session, Vec::new()).await
    }

    /// [`new_session`](Self::new_session) with these messages and entries written into the new
    /// session before its extensions start (an extension's `ctx.newSession({setup})`).
    pub(crate) async fn new_session_seeded(
        &self,
        parent_session: Option<&Path>,
        seed: Vec<Seed>,
    ) -> Result<(), SessionCommandError> {
        self.before_extensions(json!({"type": "session_before_switch", "reason": "new"})).await?;
        self.stop().await;
        self.end_session_hooks("clear").await;
        let previous = self.session_file();
        let mut replacement = {
            let current = self.session();
            match current.session_dir() {
                Some(dir) => Session::create(dir, &self.inner.paths.cwd, parent_session)?,
                None => Session::in_memory(&self.inner.paths.cwd),
            }
        };
        replacement.lock()?;
        self.install_session(replacement, true);
        // The seed's ids are the scratch session's; its edits name targets by them.
        let mut ids: HashMap<String, String> = HashMap::new();
        let mut edited = false;
        for Seed { id, entry } in seed {
            let written = match entry {
                SeedEntry::Message(message) => {
                    self.record(*message);
                    self.session().leaf_id().map(|id| id.as_str().to_owned())
                }
                SeedEntry::Custom { custom_type, data } => {
                    Some(self.session().append_custom(&custom_type, data)?.as_str().to_owned())
                }
                SeedEntry::ContextEdit { target_id, content } => {
                    let target = ids.get(&target_id).ok_or_else(|| {
                        SessionCommandError::Invalid(format!(
                            "context_edit names an entry the setup did not write: {target_id}"
                        ))
                    })?;
                    edited = true;
                    Some(self.session().append_context_edit(target, content)?.as_str().to_owned())
                }
            };
            if let (Some(id), Some(written)) = (id, written) {
                ids.insert(id, written);
            }
        }
        if edited {
            self.inner.transcript.rebuild();
        }
        self.extensions_replaced("new", previous).await;
        self.start_session_hooks("clear");
        Ok(())
    }

    /// `switch_session`: loads another session file (messages, model, thinking level). A path
    /// with no file starts an empty session there, as pi 0.73 does.
    pub async fn switch_session(&self, path: &Path) -> Result<(), SessionCommandError> {
        let target = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let event = json!({"type": "session_before_switch", "reason": "resume", "targetSessionFile": target});
        self.before_extensions(event).await?;
        self.stop().await;
        self.end_session_hooks("other").await;
        let previous = self.session_file();
        if !path.exists() {
            let mut session = Session::create_at(&target, &self.inner.paths.cwd, None)?;
            session.lock()?;
            self.install_session(session, true);
        } else {
            let (mut session, warnings) = Session::open(path)?;
            session.lock()?;
            for warning in warnings {
                tracing::warn!("{}: {warning}", path.display());
            }
            self.install_session(session, false);
        }
        self.extensions_replaced("resume", previous).await;
        self.start_session_hooks("resume");
        Ok(())
    }

    /// pi 0.73's `clone`: the current branch copied into a new session file, which becomes the
    /// current session.
    pub async fn clone_session(&self) -> Result<(), SessionCommandError> {
        match self.leaf_id() {
            Some(leaf) => self.clone_at(Some(leaf)).await,
            None => Err(SessionCommandError::Invalid("Cannot clone session: no current entry selected".into())),
        }
    }

    /// The branch up to `entry` (the leaf when `None`) copied into a new session file (an
    /// extension's `ctx.fork(entry, {position: "at"})`).
    pub(crate) async fn clone_at(&self, entry: Option<String>) -> Result<(), SessionCommandError> {
        let leaf = entry;
        self.before_extensions(json!({"type": "session_before_fork", "entryId": leaf, "position": "at"})).await?;
        self.stop().await;
        let previous = self.session_file();
        let copy = {
            let session = self.session();
            match leaf.as_deref() {
                Some(leaf) if session.is_persisted() => Some(session.create_branched_session(leaf)?),
                _ => None,
            }
        };
        match copy {
            Some(mut copy) => {
                copy.lock()?;
                self.install_session(copy, false);
            }
            None => {
                // Nothing on disk to copy from: a fresh in-memory copy of the conversation.
                let mut copy = Session::in_memory(&self.inner.paths.cwd);
                for message in self.messages() {
                    copy.append_message(&message)?;
                }
                self.install_session(copy, false);
            }
        }
        self.extensions_replaced("fork", previous).await;
        Ok(())
    }

    /// `branch` (omp) and `fork` (pi 0.73): the branch up to just before the user message
    /// `entry_id` copied into a new session file (header `parentSession` = the current file),
    /// which becomes the current session; in memory, the copy stays in memory. Returns that
    /// message's text (for the host's editor).
    pub async fn fork(&self, entry_id: &str) -> Result<String, SessionCommandError> {
        if self.session().get_entry(entry_id).is_some() {
            let event = json!({"type": "session_before_fork", "entryId": entry_id, "position": "before"});
            self.before_extensions(event).await?;
        }
        self.stop().await;
        let previous = self.session_file();
        let (text, forked) = {
            let session = self.session();
            let (text, parent) = user_message_at(&session, entry_id)?;
            let forked = match parent {
                Some(parent) => session.create_branched_session(parent.as_str())?,
                // The very first entry: nothing before it to keep.
                None => match session.session_dir() {
                    Some(dir) => Session::create(dir, &self.inner.paths.cwd, session.session_file())?,
                    None => Session::in_memory(&self.inner.paths.cwd),
                },
            };
            (text, forked)
        };
        let mut forked = forked;
        forked.lock()?;
        self.install_session(forked, false);
        self.extensions_replaced("fork", previous).await;
        Ok(text)
    }

    /// `get_branch_messages`: every user message with text, across all branches, in file order.
    pub fn branch_messages(&self) -> Vec<UserMessageEntry> {
        self.session().user_message_entries().into_iter().filter(|e| !e.text.is_empty()).collect()
    }

    /// `set_session_name`: control characters become spaces, runs of spaces collapse.
    pub fn set_session_name(&self, name: &str) -> Result<(), SessionCommandError> {
        let cleaned = name
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if cleaned.is_empty() {
            return Err(SessionCommandError::EmptySessionName);
        }
        self.session().append_session_info(&cleaned)?;
        self.emit(SessionEvent::SessionInfoChanged { name: Some(cleaned) });
        Ok(())
    }

    /// The current leaf entry of the session tree.
    pub fn leaf_id(&self) -> Option<String> {
        self.session().leaf_id().map(|id| id.to_string())
    }

    pub fn session_name(&self) -> Option<String> {
        self.session().name().map(str::to_owned)
    }

    /// `get_last_assistant_text`: the newest assistant reply with content, its text trimmed.
    pub fn last_assistant_text(&self) -> Option<String> {
        self.inner.agent.read_messages(|messages| {
            messages
                .iter()
                .rev()
                .filter_map(AgentMessage::as_assistant)
                .find(|a| !(a.stop_reason == rho_types::types::StopReason::Aborted && a.content.is_empty()))
                .map(|a| a.text().trim().to_owned())
                // A blank reply has no text (pi and omp: `text.trim() || undefined`).
                .filter(|t| !t.is_empty())
        })
    }

    /// `get_session_stats`, over the in-memory context.
    pub fn stats(&self) -> SessionStats {
        let messages = self.messages();
        let mut stats = {
            let session = self.session();
            let mut stats = SessionStats::compute(&messages, session.session_file(), session.session_id());
            // pi 1.6's `usage` entries on the branch count too (they are never context).
            for entry in session.branch_entries() {
                if let SessionEntry::Usage(u) = entry {
                    stats.add_usage(&u.usage);
                }
            }
            stats
        };
        stats.context_usage = self.context_usage();
        stats
    }

    /// Tokens and cost over every branch of the session file, as the interactive footer shows
    /// them (`get_session_stats` counts the current context only).
    pub fn usage_all_branches(&self) -> rho_session::UsageTotals {
        let session = self.session();
        let mut totals = rho_session::UsageTotals::of(session.entries().iter().filter_map(|e| match e {
            SessionEntry::Message(m) => Some(&m.message),
            _ => None,
        }));
        for entry in session.entries() {
            if let SessionEntry::Usage(u) = entry {
                totals.add_usage(&u.usage);
            }
        }
        totals
    }

    /// The session header as JSON (JSON mode's first line, without its newline).
    pub(crate) fn header_json(&self) -> Vec<u8> {
        let mut line = self.session().header().to_line().unwrap_or_default();
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        line
    }

    /// Removes the session file this process made when nothing was said in it (a run that
    /// failed to start). A file that existed before is never removed, whatever rho could read
    /// of it.
    pub(super) fn discard_if_unused(&self) {
        let session = self.session();
        if !session.created_here() {
            return;
        }
        let said_anything = session.entries().iter().any(|e| matches!(e, SessionEntry::Message(_)));
        if let (false, Some(path)) = (said_anything, session.session_file()) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Makes `session` the current one: the agent takes its context, model and level; queues
    /// and todos are cleared. A new session records the model and level it starts with.
    fn install_session(&self, session: Session, fresh: bool) {
        // The extensions' copy of the session it replaces is complete first.
        if let Some(extensions) = self.extensions() {
            extensions.sync_now(self);
        }
        *self.inner.cache_key.lock() = session.session_id().to_owned();
        self.inner.agent.clear_queues();
        let context = self.inner.transcript.replace(session);
        let agent = &self.inner.agent;
        let mut model = agent.model();
        if let Some(model_ref) = &context.model
            && let Some(found) = self.registry().find(&model_ref.provider, &model_ref.model_id)
            && self.registry().is_available(found)
        {
            model = found.clone();
            *self.inner.has_model.lock() = true;
        }
        if let Some(chosen) = self.chosen_virtual_model() {
            model = chosen;
            *self.inner.has_model.lock() = true;
        }
        let level = context.thinking_level.map_or(agent.thinking_level(), |level| model.clamp_thinking(level));
        if fresh && *self.inner.has_model.lock() {
            let mut session = self.session();
            let _ = session.append_model_change(&model.provider, &model.id);
            let _ = session.append_thinking_level_change(level);
        }
        agent.set_model(model, level);
        if fresh {
            self.inner.todos.clear();
        } else {
            self.restore_todos();
        }
        self.restore_ttsr();
        self.inner.todo_reminders.lock().reset();
        self.inner.shell.forget_held();
        self.inner.retry.close();
    }
}

impl AgentSession {
    /// `export_html`: the session as a self-contained HTML page, with the system prompt and the
    /// tools the model is offered. Returns the path written.
    pub fn export_html(&self, output: Option<&Path>) -> Result<std::path::PathBuf, ExportError> {
        let system_prompt = self.system_prompt();
        let tools: Vec<ToolInfo> = self
            .dump_tools()
            .into_iter()
            .map(|t| ToolInfo { name: t.name, description: t.description, parameters: t.parameters })
            .collect();
        let options = ExportOptions { system_prompt: Some(&system_prompt), tools: &tools };
        export_session(&self.session(), output, &options)
    }

    /// `/export <file>.jsonl`: the current branch as a session file of its own.
    pub fn export_jsonl(&self, output: &Path) -> Result<std::path::PathBuf, String> {
        crate::export_jsonl::export_branch(&self.session(), output)
    }
}

/// The text and parent of the user message `entry_id` (the entry to branch or fork before).
pub(super) fn user_message_at(
    session: &Session,
    entry_id: &str,
) -> Result<(String, Option<rho_session::EntryId>), SessionCommandError> {
    match session.get_entry(entry_id) {
        Some(SessionEntry::Message(m)) => match &m.message {
            AgentMessage::User(u) => Ok((u.content.text_joined(""), m.parent_id.clone())),
            _ => Err(SessionCommandError::InvalidBranchEntry),
        },
        _ => Err(SessionCommandError::InvalidBranchEntry),
    }
}
