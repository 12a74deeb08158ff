//! What an [`AgentSession`](super::AgentSession) reports: the agent's own events, the session's
//! events (compaction, retry, todos, TTSR, sub-agents, budgets), and the requests it makes of
//! whoever drives it (UI dialogs, host tool calls). Every mode subscribes with one
//! [`SessionEventSink`]; RPC and JSON mode turn each event into one stdout line.

use std::sync::Arc;

use rho_agent::{AgentEvent, Backpressure};
use rho_rpc::{ExtensionError, HostToolCall, HostToolCancel, HostUriCancel, HostUriRequest, SessionEvent, UiRequest};

/// One event of a session, in the order it happened.
#[derive(Debug, Clone)]
pub enum AgentSessionEvent {
    Agent(AgentEvent),
    Session(SessionEvent),
    UiRequest(UiRequest),
    HostToolCall(HostToolCall),
    HostToolCancel(HostToolCancel),
    HostUriRequest(HostUriRequest),
    HostUriCancel(HostUriCancel),
    ExtensionError(ExtensionError),
}

impl From<AgentEvent> for AgentSessionEvent {
    fn from(e: AgentEvent) -> Self {
        Self::Agent(e)
    }
}

impl From<SessionEvent> for AgentSessionEvent {
    fn from(e: SessionEvent) -> Self {
        Self::Session(e)
    }
}

/// Receives a session's events. Called on whichever task produced the event; must not block.
pub trait SessionEventSink: Send + Sync {
    fn emit(&self, event: AgentSessionEvent);

    /// Raised while the subscriber is behind: runs wait before taking more from the model.
    fn backpressure(&self) -> Option<Arc<Backpressure>> {
        None
    }

    /// Whether the subscriber reads sub-agents' progress (omp's `subagent_progress`); no
    /// payload is built for one that does not.
    fn wants_subagent_progress(&self) -> bool {
        false
    }

    /// Whether the subscriber reads every event of the sub-agents' runs (`subagent_event`).
    fn wants_subagent_events(&self) -> bool {
        false
    }
}

impl<F: Fn(AgentSessionEvent) + Send + Sync> SessionEventSink for F {
    fn emit(&self, event: AgentSessionEvent) {
        self(event)
    }
}

/// A sink that drops everything (a session nobody watches, e.g. in tests).
pub fn discard() -> Arc<dyn SessionEventSink> {
    Arc::new(|_event: AgentSessionEvent| {})
}
