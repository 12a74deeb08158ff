//! Which prompts an abort reaches. A host may write a `prompt` and an `abort` in one write: the
//! abort is read, and acted on, before the prompt has had its turn to start a run. Reading order
//! is what the host meant, so every prompt takes a [`PromptTicket`] when it is read, stamped with
//! the current abort epoch; an abort starts a new epoch, and a run started on a ticket of an
//! older epoch starts cancelled. An abort is over when no ticket of an older epoch is left:
//! neither a prompt still waiting its turn nor the run one started.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::watch;

/// The abort epoch a command was read in.
pub type AbortEpoch = u64;

#[derive(Debug, Default)]
struct Tickets {
    epoch: AbortEpoch,
    /// Live tickets per epoch.
    live: BTreeMap<AbortEpoch, usize>,
}

#[derive(Debug)]
pub(crate) struct AbortGate {
    tickets: watch::Sender<Tickets>,
}

impl Default for AbortGate {
    fn default() -> Self {
        Self { tickets: watch::Sender::new(Tickets::default()) }
    }
}

/// Held by a prompt from the moment it is read until the run it started has ended (or until it
/// was refused or queued).
#[derive(Debug)]
pub struct PromptTicket {
    epoch: AbortEpoch,
    gate: Arc<AbortGate>,
}

impl PromptTicket {
    /// An abort was read after this prompt.
    pub(crate) fn is_stale(&self) -> bool {
        self.gate.epoch() > self.epoch
    }
}

impl Drop for PromptTicket {
    fn drop(&mut self) {
        let epoch = self.epoch;
        self.gate.tickets.send_modify(|t| {
            if let Some(count) = t.live.get_mut(&epoch) {
                *count -= 1;
                if *count == 0 {
                    t.live.remove(&epoch);
                }
            }
        });
    }
}

impl AbortGate {
    pub(crate) fn epoch(&self) -> AbortEpoch {
        self.tickets.borrow().epoch
    }

    pub(crate) fn ticket(self: &Arc<Self>) -> PromptTicket {
        let mut epoch = 0;
        self.tickets.send_modify(|t| {
            epoch = t.epoch;
            *t.live.entry(epoch).or_default() += 1;
        });
        PromptTicket { epoch, gate: self.clone() }
    }

    /// Starts a new epoch: every ticket taken so far is stale. Returns the new epoch.
    pub fn advance(&self) -> AbortEpoch {
        let mut epoch = 0;
        self.tickets.send_modify(|t| {
            t.epoch += 1;
            epoch = t.epoch;
        });
        epoch
    }

    /// Resolves once no ticket older than `epoch` is left.
    pub async fn settled(&self, epoch: AbortEpoch) {
        let mut rx = self.tickets.subscribe();
        let _ = rx.wait_for(|t| t.live.first_key_value().is_none_or(|(oldest, _)| *oldest >= epoch)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_abort_waits_for_older_tickets_only() {
        let gate = Arc::new(AbortGate::default());
        let before = gate.ticket();
        let epoch = gate.advance();
        assert!(before.is_stale());
        let after = gate.ticket();
        assert!(!after.is_stale());

        let mut settled = std::pin::pin!(gate.settled(epoch));
        assert!(futures::poll!(settled.as_mut()).is_pending(), "settled while an older ticket was live");
        drop(before);
        assert!(futures::poll!(settled.as_mut()).is_ready());
        // The newer ticket never holds up an abort that came before it.
        assert!(futures::poll!(std::pin::pin!(gate.settled(epoch))).is_ready());
        drop(after);
        assert!(futures::poll!(std::pin::pin!(gate.settled(gate.advance()))).is_ready());
    }
}
