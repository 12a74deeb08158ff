//! Auto-retry of transient provider failures (docs/agent-behavior.md, "Auto-retry"): exponential
//! back-off from `retry.baseDelayMs`, raised to the server's `Retry-After`, at most
//! `retry.maxRetries` attempts, `auto_retry_start` / `auto_retry_end` around the wait, and a wait
//! that `abort` or `abort_retry` cancels. A prompt sent during the wait is taken (pi takes it: its
//! run has ended) and carried by the attempt, which starts at once.

use parking_lot::Mutex;
use std::time::Duration;

use rho_rpc::SessionEvent;
use rho_types::types::{AssistantMessage, StopReason};
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use super::sink::RunSink;

/// The `finalError` of a retry chain cut short by `abort` or `abort_retry`.
pub const RETRY_CANCELLED: &str = "Retry cancelled";

#[derive(Default)]
struct Chain {
    enabled: bool,
    /// The current chain's attempt (0: no chain).
    attempt: u32,
    /// Cancels the wait before the next attempt (`abort_retry`).
    wait: Option<CancellationToken>,
    /// Ends the wait early and retries now (a prompt arrived meanwhile).
    hurry: Option<CancellationToken>,
}

/// Auto-retry's own state: on or off, the attempt of the chain in progress, and its wait.
#[derive(Default)]
pub(crate) struct RetryChain {
    chain: Mutex<Chain>,
}

impl RetryChain {
    pub fn new(enabled: bool) -> Self {
        Self { chain: Mutex::new(Chain { enabled, ..Chain::default() }) }
    }

    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.chain.lock().enabled = enabled;
    }

    /// Counts one more attempt; `None` when retrying is off.
    fn next_attempt(&self) -> Option<u32> {
        let mut chain = self.chain.lock();
        chain.enabled.then(|| {
            chain.attempt += 1;
            chain.attempt
        })
    }

    /// Whether retrying is on and the chain has an attempt left of `max`.
    fn has_attempt_left(&self, max: u32) -> bool {
        let chain = self.chain.lock();
        chain.enabled && chain.attempt < max
    }

    /// Ends the chain; returns how many attempts it made (0: there was none).
    pub fn close(&self) -> u32 {
        std::mem::take(&mut self.chain.lock().attempt)
    }

    /// The tokens that cancel the coming wait and that end it early, made when the retry is
    /// announced.
    fn arm(&self) -> (CancellationToken, CancellationToken) {
        let mut chain = self.chain.lock();
        let wait = chain.wait.get_or_insert_with(CancellationToken::new).clone();
        let hurry = chain.hurry.get_or_insert_with(CancellationToken::new).clone();
        (wait, hurry)
    }

    fn disarm(&self) {
        let mut chain = self.chain.lock();
        chain.wait = None;
        chain.hurry = None;
    }

    /// Whether a retry is announced and waiting for its attempt.
    pub(crate) fn is_waiting(&self) -> bool {
        self.chain.lock().wait.is_some()
    }

    /// Ends the wait in progress early: the attempt starts now.
    pub(crate) fn hurry(&self) {
        if let Some(token) = &self.chain.lock().hurry {
            token.cancel();
        }
    }

    /// `abort_retry`: cancels the wait in progress, if any.
    pub(crate) fn cancel_wait(&self) {
        if let Some(token) = &self.chain.lock().wait {
            token.cancel();
        }
    }
}

pub(crate) enum RetryDecision {
    /// Retry after this delay (the attempt is already counted and announced).
    Wait(Duration),
    /// Retrying is off, or exhausted: the chain's closing event to send.
    GiveUp(Option<Box<SessionEvent>>),
}

impl AgentSession {
    /// Whether a failed reply is worth retrying: a transient error, not a context overflow.
    pub(crate) fn is_retryable(&self, message: &AssistantMessage) -> bool {
        if message.stop_reason != StopReason::Error {
            return false;
        }
        let failure = self.inner.agent.last_failure();
        match failure {
            Some(f) => f.is_retryable(),
            None => message.error_message.as_deref().is_some_and(rho_ai::error::is_retryable_message),
        }
    }

    /// Whether a reply says the context no longer fits: a context-overflow error, or a reply that
    /// reports more input than the window holds ("silent" overflow). Only replies of the current
    /// model count.
    pub(crate) fn is_overflow(&self, message: &AssistantMessage) -> bool {
        let (same_model, window) = self
            .inner
            .agent
            .read_model(|m| (message.provider == m.provider && message.model == m.id, m.context_window));
        if !same_model {
            return false;
        }
        match message.stop_reason {
            StopReason::Error => message.error_message.as_deref().is_some_and(rho_ai::error::is_context_overflow),
            StopReason::Stop => window > 0 && message.usage.input + message.usage.cache_read > window,
            _ => false,
        }
    }

    /// Counts the attempt and decides; announces the retry (`auto_retry_start`) or the end of
    /// an exhausted chain (`auto_retry_end`).
    /// Whether [`retry_decision`](Self::retry_decision) would retry now, decided without
    /// counting or announcing anything.
    pub(crate) fn retry_follows(&self) -> bool {
        let settings = self.settings().retry();
        let max_attempts = u32::try_from(settings.max_retries).unwrap_or(u32::MAX);
        let server_delay = self.inner.agent.last_failure().and_then(|f| f.retry_after());
        let too_long = server_delay.is_some_and(|d| d.as_millis() > u128::from(settings.max_delay_ms));
        self.inner.retry.has_attempt_left(max_attempts) && !too_long
    }

    pub(crate) fn retry_decision(&self, failed: &AssistantMessage) -> RetryDecision {
        let settings = self.settings().retry();
        let error_message = failed.error_message.clone().unwrap_or_default();
        let max_attempts = u32::try_from(settings.max_retries).unwrap_or(u32::MAX);
        let Some(attempt) = self.inner.retry.next_attempt() else {
            return RetryDecision::GiveUp(None);
        };
        let server_delay = self.inner.agent.last_failure().and_then(|f| f.retry_after());
        let too_long = server_delay.is_some_and(|d| d.as_millis() > u128::from(settings.max_delay_ms));
        if attempt > max_attempts || too_long {
            self.inner.retry.close();
            if attempt == 1 {
                // No retry was announced, so there is no chain to close.
                return RetryDecision::GiveUp(None);
            }
            let final_error = match server_delay.filter(|_| too_long) {
                Some(d) => format!("{error_message} (the server asked to retry after {} s)", d.as_secs()),
                None => error_message,
            };
            return RetryDecision::GiveUp(Some(Box::new(SessionEvent::AutoRetryEnd {
                success: false,
                attempt: attempt - 1,
                final_error: Some(final_error),
            })));
        }
        let backoff = settings.base_delay_ms.saturating_mul(1u64 << (attempt - 1).min(30));
        let delay_ms = server_delay.map_or(backoff, |d| backoff.max(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)));
        // Cancellable from the moment the host hears of the retry.
        self.inner.retry.arm();
        self.emit(SessionEvent::AutoRetryStart { attempt, max_attempts, delay_ms, error_message });
        RetryDecision::Wait(Duration::from_millis(delay_ms))
    }

    /// Drops the failed reply and sleeps; false (with `auto_retry_end`, the lifecycle ended
    /// first) when the wait was cancelled.
    pub(crate) async fn wait_for_retry(&self, delay: Duration, run_sink: &RunSink) -> bool {
        self.drop_failed_reply();
        let lifecycle = self.lifecycle_token();
        let (retry, hurry) = self.inner.retry.arm();
        let cancelled = tokio::select! {
            () = tokio::time::sleep(delay) => false,
            () = hurry.cancelled() => false,
            () = lifecycle.cancelled() => true,
            () = retry.cancelled() => true,
        };
        self.inner.retry.disarm();
        if cancelled {
            let attempt = self.inner.retry.close();
            run_sink.end_with(SessionEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error: Some(RETRY_CANCELLED.to_owned()),
            });
            return false;
        }
        true
    }

    /// `abort_retry`: cancels a retry wait in progress (a run streaming is not aborted).
    pub(crate) fn abort_retry(&self) {
        self.inner.retry.cancel_wait();
    }

    pub(crate) fn set_auto_retry(&self, enabled: bool) {
        self.inner.retry.set_enabled(enabled);
        if let Err(e) = self.settings().set_global("retry.enabled", serde_json::Value::Bool(enabled)) {
            tracing::warn!("could not save retry.enabled: {e}");
        }
    }
}
