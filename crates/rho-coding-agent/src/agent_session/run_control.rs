//! Whether a prompt's lifecycle (its runs and their post-run work) is in progress, the token
//! that stops it, and which prompts an abort reaches ([`AbortGate`]).
//!
//! The flag and the token live under one lock with the abort epoch, so a lifecycle starts
//! either before an abort (and the abort cancels its token) or after (and sees that its prompt
//! was read before the abort, and starts cancelled): never in between.

use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::abort_gate::{AbortEpoch, AbortGate, PromptTicket};

#[derive(Default)]
struct Lifecycle {
    running: bool,
    token: CancellationToken,
}

pub(crate) struct RunControl {
    lifecycle: Mutex<Lifecycle>,
    /// Held while a lifecycle's closing events go out (its last event, then `agent_settled`):
    /// a prompt that begins meanwhile is answered after them.
    closing: Mutex<()>,
    /// `running` as waiters see it: lowered once the lifecycle's last event is out.
    busy: watch::Sender<bool>,
    gate: Arc<AbortGate>,
}

impl Default for RunControl {
    fn default() -> Self {
        Self {
            lifecycle: Mutex::default(),
            closing: Mutex::default(),
            busy: watch::Sender::new(false),
            gate: Arc::default(),
        }
    }
}

impl RunControl {
    fn lock(&self) -> MutexGuard<'_, Lifecycle> {
        self.lifecycle.lock()
    }

    /// Starts a lifecycle; false when one is running. A prompt read before an abort starts its
    /// lifecycle cancelled.
    pub(crate) fn begin(&self, ticket: &PromptTicket) -> bool {
        let _closed = self.closing.lock();
        let mut lifecycle = self.lock();
        if lifecycle.running {
            return false;
        }
        lifecycle.running = true;
        lifecycle.token = CancellationToken::new();
        if ticket.is_stale() {
            lifecycle.token.cancel();
        }
        self.busy.send_replace(true);
        true
    }

    /// Holds back new lifecycles while the current one's closing events go out.
    pub fn closing(&self) -> MutexGuard<'_, ()> {
        self.closing.lock()
    }

    pub(crate) fn is_running(&self) -> bool {
        self.lock().running
    }

    /// Over, as far as `get_state` and new prompts go; [`wait_idle`](Self::wait_idle) waiters
    /// are woken by [`notify_idle`](Self::notify_idle).
    pub(crate) fn mark_idle(&self) {
        self.lock().running = false;
    }

    /// Wakes the waiters, unless a new lifecycle began meanwhile.
    pub(crate) fn notify_idle(&self) {
        let lifecycle = self.lock();
        if !lifecycle.running {
            self.busy.send_replace(false);
        }
    }

    pub(crate) async fn wait_idle(&self) {
        let mut rx = self.busy.subscribe();
        let _ = rx.wait_for(|busy| !busy).await;
    }

    /// The current lifecycle's token (runs and post-run work take child tokens of it).
    pub fn token(&self) -> CancellationToken {
        self.lock().token.clone()
    }

    /// Cancels the current lifecycle.
    pub fn cancel(&self) {
        self.lock().token.cancel();
    }

    /// An abort: every prompt read so far is reached, the current lifecycle cancelled. Returns
    /// the epoch to wait for with [`settled`](Self::settled).
    pub fn interrupt(&self) -> AbortEpoch {
        let lifecycle = self.lock();
        let epoch = self.gate.advance();
        lifecycle.token.cancel();
        epoch
    }

    /// A ticket for a prompt read now.
    pub(crate) fn ticket(&self) -> PromptTicket {
        self.gate.ticket()
    }

    pub(crate) fn epoch(&self) -> AbortEpoch {
        self.gate.epoch()
    }

    /// Resolves once no prompt read before the abort that began `epoch` is left.
    pub async fn settled(&self, epoch: AbortEpoch) {
        self.gate.settled(epoch).await;
    }
}
