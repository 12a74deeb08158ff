//! One prompt's lifecycle, from acceptance to idle: the queued `bash` records are written, the
//! context is compacted first if the last reply left it too full, the agent runs (reminding the
//! model of open todos within the run), and then — until none applies — a transient error is
//! retried, a context overflow is compacted away and retried once, and a full context is
//! compacted; last, extensions' `agent_before_settle` may ask for one more run.
//! `get_state.isStreaming` stays true throughout; `agent_settled` ends it.

use std::sync::Arc;
use std::time::Duration;

use rho_rpc::CompactionReason;
use rho_types::AgentMessage;
use rho_types::types::{AssistantMessage, StopReason};

use super::AgentSession;
use super::compaction::AutoCompaction;
use super::retry::RetryDecision;
use super::sink::RunSink;

/// The pause before an automatic continuation (after compaction), as the reference waits.
const CONTINUE_DELAY: Duration = Duration::from_millis(100);

/// What the end of a run calls for.
enum NextStep {
    Retry(Box<AssistantMessage>),
    OverflowCompaction,
    ThresholdCompaction,
    /// Rules fired during the run: inject them and continue.
    TtsrInject,
    Done,
}

impl AgentSession {
    pub(crate) async fn run_lifecycle(self, prompt: Vec<AgentMessage>) {
        self.inner.compaction.new_prompt();
        self.inner.todo_reminders.lock().reset();
        self.flush_pending_bash();
        let sink = Arc::new(RunSink::new(self.clone()));
        if self.needs_threshold_compaction() {
            self.auto_compact(CompactionReason::Threshold, false, None).await;
        }
        // The previous run may still be closing (its agent_end is out, the agent not yet idle).
        self.inner.agent.wait_idle().await;
        let scope = self.lifecycle_token();
        if self.inner.agent.prompt_within(&scope, prompt, sink.clone()).await.is_ok() && !sink.finished() {
            self.after_runs(&sink).await;
            // Nothing else follows: extensions, then Claude Code's Stop hooks, may still ask for
            // one more run.
            let mut stop_hook_active = false;
            while !sink.finished()
                && (self.before_settle_boundary().await || self.stop_hooks_continue(&mut stop_hook_active).await)
                && self.continue_run(&sink).await
            {
                self.after_runs(&sink).await;
            }
        }
        sink.close();
        self.notify_idle();
    }

    /// Runs the agent again without a new prompt (after a retry or a compaction), when the
    /// conversation allows it; false when it did not run or the lifecycle ended with it.
    async fn continue_run(&self, sink: &Arc<RunSink>) -> bool {
        // An abort during the pause before a continuation ends the lifecycle instead.
        let scope = self.lifecycle_token();
        if scope.is_cancelled() {
            return false;
        }
        self.inner.agent.continue_within(&scope, sink.clone()).await.is_ok() && !sink.finished()
    }

    /// Whether the end of the last run calls for nothing more: the lifecycle may end with its
    /// `agent_end`, so a host that reads it can prompt at once.
    pub(crate) fn nothing_follows(&self) -> bool {
        matches!(self.next_step(), NextStep::Done)
            && !self.settles_through_extensions()
            && !self.settles_through_hooks()
    }

    /// Whether the run that just ended is the prompt's last (omp's `isTerminal`): nothing
    /// follows, a retry would give up, or a compaction follows with nothing queued to continue.
    pub(crate) fn run_is_terminal(&self) -> bool {
        match self.next_step() {
            NextStep::Done => true,
            NextStep::Retry(_) => !self.retry_follows(),
            NextStep::OverflowCompaction => !self.inner.compaction.overflow_recovery_left(),
            NextStep::ThresholdCompaction => self.queued_count() == 0,
            NextStep::TtsrInject => false,
        }
    }

    /// Whether the run that just ended is retried next (pi 1.6's `agent_end.willRetry`).
    pub(crate) fn will_retry(&self) -> bool {
        matches!(self.next_step(), NextStep::Retry(_)) && self.retry_follows()
    }

    /// Called when a run would end: reminds the model of its open todos (within the run) when
    /// nothing else is due first — rules to inject, an overflow to recover from, a full context
    /// to compact. True when a reminder was added and the run goes on.
    pub(crate) fn remind_within_run(&self) -> bool {
        if self.lifecycle_token().is_cancelled() || self.ttsr_pending() {
            return false;
        }
        let overflowed = self.last_assistant().is_some_and(|last| self.is_overflow(&last));
        !overflowed && !self.needs_threshold_compaction() && self.remind_of_open_todos()
    }

    async fn after_runs(&self, sink: &Arc<RunSink>) {
        loop {
            if self.lifecycle_token().is_cancelled() {
                return;
            }
            let carry_on = match self.next_step() {
                NextStep::Retry(failed) => match self.retry_decision(&failed) {
                    RetryDecision::Wait(delay) => {
                        if !self.wait_for_retry(delay, sink).await {
                            return;
                        }
                        self.continue_run(sink).await
                    }
                    RetryDecision::GiveUp(closing) => {
                        if let Some(event) = closing {
                            if self.needs_threshold_compaction() {
                                self.emit(*event);
                            } else {
                                sink.end_with(*event);
                            }
                        }
                        self.compact_if_needed(sink).await;
                        return;
                    }
                },
                NextStep::OverflowCompaction => {
                    if !self.recover_from_overflow().await {
                        return;
                    }
                    tokio::time::sleep(CONTINUE_DELAY).await;
                    self.continue_run(sink).await
                }
                NextStep::ThresholdCompaction => {
                    self.compact_if_needed(sink).await;
                    return;
                }
                NextStep::TtsrInject => self.ttsr_inject().await && self.continue_run(sink).await,
                NextStep::Done => return,
            };
            if !carry_on {
                return;
            }
        }
    }

    /// Threshold compaction after a run; the agent continues only when messages are queued.
    async fn compact_if_needed(&self, sink: &Arc<RunSink>) {
        if !self.needs_threshold_compaction() {
            return;
        }
        if self.auto_compact(CompactionReason::Threshold, false, Some(sink)).await == AutoCompaction::Done
            && self.queued_count() > 0
        {
            tokio::time::sleep(CONTINUE_DELAY).await;
            if self.continue_run(sink).await {
                Box::pin(self.after_runs(sink)).await;
            }
        }
    }

    fn next_step(&self) -> NextStep {
        if self.ttsr_pending() {
            return NextStep::TtsrInject;
        }
        let Some(last) = self.last_assistant() else {
            return NextStep::Done;
        };
        match last.stop_reason {
            StopReason::Aborted => NextStep::Done,
            StopReason::Error if self.is_overflow(&last) => NextStep::OverflowCompaction,
            StopReason::Error if self.is_retryable(&last) => NextStep::Retry(Box::new(last)),
            _ if self.is_overflow(&last) => NextStep::OverflowCompaction,
            _ if self.needs_threshold_compaction() => NextStep::ThresholdCompaction,
            _ => NextStep::Done,
        }
    }

    /// Compacts once after a context overflow and drops the failed reply; false when the
    /// conversation cannot go on (second overflow, compaction failed or disabled).
    async fn recover_from_overflow(&self) -> bool {
        if !self.inner.compaction.auto() {
            return false;
        }
        if !self.inner.compaction.take_overflow_recovery() {
            self.report_second_overflow();
            return false;
        }
        self.drop_failed_reply();
        let done = self.auto_compact(CompactionReason::Overflow, true, None).await == AutoCompaction::Done;
        // The context was rebuilt from the file, which keeps the failed reply: drop it again.
        self.drop_failed_reply();
        done
    }

    /// Removes the last failed assistant reply (and the synthesized results of its tool calls)
    /// from the context sent to the model, for a retry (which a virtual model's router is told
    /// about). The session file keeps them.
    pub(crate) fn drop_failed_reply(&self) {
        if let Some(failed) = self.last_assistant().filter(|reply| reply.stop_reason == StopReason::Error) {
            self.remember_failed_reply(failed);
        }
        self.drop_last_reply(StopReason::Error);
    }

    /// Removes the last assistant reply that ended with `stop` and everything after it from the
    /// model's context (the session file keeps them).
    pub(crate) fn drop_last_reply(&self, stop: StopReason) {
        self.inner.transcript.drop_last_reply(stop);
    }

    /// The newest assistant reply in the context.
    pub(crate) fn last_assistant(&self) -> Option<AssistantMessage> {
        self.inner.agent.read_messages(|messages| messages.iter().rev().find_map(AgentMessage::as_assistant).cloned())
    }
}
