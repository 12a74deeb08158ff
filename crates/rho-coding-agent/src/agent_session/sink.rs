//! The agent's event sink during a prompt's lifecycle: every message is written to the session
//! file as it ends (the file is the record), a retry chain is closed on its first good reply, and
//! then the event goes to the session's subscriber. It also ends the lifecycle as hosts see it:
//! the session is idle before the last event goes out, and `agent_settled` follows that event.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rho_agent::{AgentEvent, AgentEventSink, Backpressure};
use rho_rpc::{NotifyType, SessionEvent};
use rho_types::AgentMessage;
use rho_types::types::StopReason;

use super::AgentSession;

pub(crate) struct RunSink {
    session: AgentSession,
    /// The lifecycle ended with the last `agent_end` (nothing followed it).
    finished: AtomicBool,
    /// Whether an abort cut the lifecycle short, as it stood when it ended: a command that
    /// cancels after the end (`compact` right after `agent_end`) does not make it aborted.
    aborted: AtomicBool,
    /// `agent_settled` went out.
    settled: AtomicBool,
}

impl RunSink {
    pub fn new(session: AgentSession) -> Self {
        Self {
            session,
            finished: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
            settled: AtomicBool::new(false),
        }
    }

    pub fn finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    /// Ends the lifecycle now, before its last event goes out (so a host that reads that event
    /// finds the session idle). Waiters are woken when the lifecycle returns.
    pub fn finish(&self) {
        if !self.finished.swap(true, Ordering::AcqRel) {
            let aborted = self.session.lifecycle_token().is_cancelled()
                || self.session.last_assistant().is_some_and(|m| m.stop_reason == StopReason::Aborted);
            self.aborted.store(aborted, Ordering::Release);
            self.session.mark_idle();
        }
    }

    /// Ends the lifecycle with `event` as its last event: idle first, then the event, then
    /// `agent_settled`, with no new prompt's answer between them.
    pub(crate) fn end_with(&self, event: impl Into<super::AgentSessionEvent>) {
        let _closing = self.session.inner.run.closing();
        self.finish();
        self.session.emit(event);
        self.settle();
    }

    /// Ends the lifecycle with nothing more to say than `agent_settled` (when it was not ended
    /// already).
    pub fn close(&self) {
        let _closing = self.session.inner.run.closing();
        self.finish();
        self.settle();
    }

    /// `agent_settled`, once per lifecycle: nothing more follows on its own. `aborted` when an
    /// abort (or a command that replaced the conversation) cut the lifecycle short.
    fn settle(&self) {
        if !self.settled.swap(true, Ordering::AcqRel) {
            let aborted = self.aborted.load(Ordering::Acquire);
            self.session.emit(SessionEvent::AgentSettled { aborted });
        }
    }
}

impl AgentEventSink for RunSink {
    fn backpressure(&self) -> Option<Arc<Backpressure>> {
        self.session.inner.sink.backpressure()
    }

    /// A run that would end takes another turn when the model stopped with tasks still open:
    /// the reminder is part of the run, so hosts read one `agent_end` for the prompt.
    fn carries_on(&self) -> bool {
        self.session.remind_within_run()
    }

    fn emit(&self, event: AgentEvent) {
        let mut last = false;
        // The last agent_end and agent_settled go out before a new prompt is answered.
        let mut closing = None;
        let event = match event {
            AgentEvent::AgentEnd { messages, .. } => {
                last = self.session.nothing_follows();
                if last {
                    closing = Some(self.session.inner.run.closing());
                    // Idle before the host reads agent_end, so its next prompt is never "busy".
                    self.finish();
                }
                AgentEvent::AgentEnd {
                    messages,
                    will_retry: self.session.will_retry(),
                    is_terminal: self.session.run_is_terminal(),
                }
            }
            other => other,
        };
        self.session.ttsr_observe(&event);
        let budget_input = self.session.budget_input(&event);
        let ended_ok = match &event {
            AgentEvent::MessageEnd { message } => {
                self.session.persist(message);
                if let AgentMessage::Assistant(reply) = message {
                    self.session.warm_cache_after(reply);
                }
                matches!(message, AgentMessage::Assistant(a) if a.stop_reason != StopReason::Error)
            }
            _ => false,
        };
        self.session.emit(event);
        if let Some(input) = budget_input {
            self.session.record_budget(input);
        }
        if ended_ok {
            self.session.close_retry_chain();
        }
        if last {
            self.settle();
        }
        drop(closing);
    }
}

impl AgentSession {
    /// Writes a message the run already holds to the session file. When the write fails (a
    /// full disk) the run goes on, the message waits to be written before the next entry, and
    /// the host gets a `notice` (omp's shape, `source: "session-persistence"`).
    pub(crate) fn persist(&self, message: &AgentMessage) {
        let written = self.inner.transcript.write(message);
        self.report_write(written);
    }

    /// Adds a message outside a run: to the file and the conversation in one step.
    pub(crate) fn record(&self, message: AgentMessage) {
        let written = self.inner.transcript.append(message);
        self.report_write(written);
    }

    fn report_write(&self, written: Result<(), rho_session::SessionError>) {
        match written {
            Ok(()) => {}
            // Kept and retried before the next entry: the host must know the file lags.
            Err(e @ rho_session::SessionError::Unsaved { .. }) => {
                tracing::error!("{e}");
                self.emit(SessionEvent::Notice {
                    level: NotifyType::Error,
                    message: e.to_string(),
                    source: Some("session-persistence".into()),
                });
            }
            Err(e) => tracing::warn!("could not write to the session file: {e}"),
        }
    }

    /// Emits `auto_retry_end {success:true}` when a retry chain is running.
    pub(crate) fn close_retry_chain(&self) {
        let attempt = self.inner.retry.close();
        if attempt > 0 {
            self.emit(SessionEvent::AutoRetryEnd { success: true, attempt, final_error: None });
        }
    }
}
