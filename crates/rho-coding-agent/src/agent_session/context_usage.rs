//! How full the model's context window is (`contextUsage` of `get_session_stats` and
//! `get_state`), and how fast the last reply came (`tokensPerSecond`).
//!
//! The size is what the last good reply reported plus estimates of what came after it, as
//! compaction measures it. Right after a compaction no reply has measured the new context yet:
//! the size is then unknown (`null`), as pi reports it, rather than a guess.

use rho_session::SessionEntry;
use rho_types::AgentMessage;
use rho_types::types::ContextUsage;

use super::AgentSession;
use crate::compaction::{calculate_context_tokens, estimate_context_tokens};

/// Replies shorter than this say nothing reliable about speed.
const MIN_RATE_MS: u32 = 100;

impl AgentSession {
    /// The context window's fill, `None` without a model or a window.
    pub fn context_usage(&self) -> Option<ContextUsage> {
        if !*self.inner.has_model.lock() {
            return None;
        }
        let window = self.context_window();
        let estimate = self.inner.agent.read_messages(|messages| estimate_context_tokens(messages).tokens);
        let known = !self.compacted_since_last_measure();
        ContextUsage::new(known.then_some(estimate), window)
    }

    /// Whether the branch was compacted and no good reply has reported a size since.
    fn compacted_since_last_measure(&self) -> bool {
        let session = self.session();
        let branch = session.branch_entries();
        let Some(compaction) = branch.iter().rposition(|e| matches!(e, SessionEntry::Compaction(_))) else {
            return false;
        };
        let measured = branch[compaction + 1..].iter().rev().find_map(|e| match e {
            SessionEntry::Message(m) => match &m.message {
                AgentMessage::Assistant(a) if !a.is_failed() => Some(calculate_context_tokens(&a.usage) > 0),
                _ => None,
            },
            _ => None,
        });
        measured != Some(true)
    }

    /// Output tokens per second of the last reply; `None` when it is unknown or too short.
    pub(crate) fn tokens_per_second(&self) -> Option<f64> {
        self.inner.agent.read_messages(|messages| {
            let last = messages.iter().rev().find_map(AgentMessage::as_assistant)?;
            let duration = last.duration.filter(|d| *d >= MIN_RATE_MS)?;
            (last.usage.output > 0).then(|| last.usage.output as f64 / (duration as f64 / 1000.0))
        })
    }
}
