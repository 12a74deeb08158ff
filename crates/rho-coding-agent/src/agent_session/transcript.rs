//! The conversation as it is recorded: the session file and the agent's in-memory messages,
//! kept in step. Everything that adds a message outside a run, or replaces the conversation,
//! goes through here and does both in one step; a run's own messages are written as they end
//! (the run holds them already).

use parking_lot::{Mutex, MutexGuard};

use rho_agent::Agent;
use rho_session::{NewCustomMessage, Session, SessionContext, SessionError};
use rho_types::AgentMessage;
use rho_types::types::StopReason;

pub(crate) struct Transcript {
    session: Mutex<Session>,
    agent: Agent,
}

impl Transcript {
    pub fn new(session: Session, agent: Agent) -> Self {
        Self { session: Mutex::new(session), agent }
    }

    /// The session file, for reading it and for entries that are not messages (names,
    /// labels, model and level changes, compactions).
    pub fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock()
    }

    /// Adds a message outside a run: written to the file, then to the conversation. A write
    /// that fails keeps the message waiting for the file (see [`Session::append_message`]);
    /// the conversation has it either way.
    pub fn append(&self, message: AgentMessage) -> Result<(), SessionError> {
        let written = self.write(&message);
        self.agent.push_message(message);
        written
    }

    /// Writes a message a run already holds (it ended), as the record of it.
    pub fn write(&self, message: &AgentMessage) -> Result<(), SessionError> {
        let mut session = self.session();
        match message {
            AgentMessage::Custom(c) | AgentMessage::HookMessage(c) => session
                .append_custom_message(NewCustomMessage {
                    custom_type: c.custom_type.clone(),
                    content: c.content.clone(),
                    display: c.display,
                    details: c.details.clone(),
                    attribution: c.attribution,
                })
                .map(drop),
            // Summaries are recorded with the compaction or branch entry they belong to.
            AgentMessage::CompactionSummary(_) | AgentMessage::BranchSummary(_) => Ok(()),
            other => session.append_message(other).map(drop),
        }
    }

    /// Makes `session` the record and its branch the conversation; returns what the branch
    /// says about the model and level.
    pub fn replace(&self, session: Session) -> SessionContext {
        let mut current = self.session();
        *current = session;
        let context = current.build_context();
        self.agent.replace_messages(context.messages.clone());
        context
    }

    /// The conversation rebuilt from the file's current branch (after a compaction).
    pub(crate) fn rebuild(&self) {
        let messages = self.session().build_context().messages;
        self.agent.replace_messages(messages);
    }

    /// Removes the last assistant reply that ended with `stop`, and everything after it, from
    /// the model's context. The file keeps them.
    pub(crate) fn drop_last_reply(&self, stop: StopReason) {
        self.agent.truncate_from_last(|m| matches!(m, AgentMessage::Assistant(a) if a.stop_reason == stop));
    }
}
