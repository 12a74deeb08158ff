//! Compaction as the session runs it: manual (`compact`) and automatic (context past
//! `contextWindow - reserveTokens`, or a context-overflow error). Either way the summary is
//! requested from the current model, recorded as a `compaction` entry, and the agent's context
//! is rebuilt from the session file. Automatic runs report `auto_compaction_start/end` (the older
//! protocol's events, docs/decisions.md D16); every run reports pi 0.73's `compaction_start/end`.

use parking_lot::Mutex;

use rho_rpc::{CompactionReason, CompactionResult, SessionEvent};
use rho_session::{SessionEntry, iso_to_ms};
use tokio_util::sync::CancellationToken;

use super::extensions::ExtensionCompaction;
use super::sink::RunSink;
use super::{AgentSession, SessionCommandError};
use crate::compaction::{
    CompactionError, CompactionOutput, CompactionSettings, SummaryRequest, SummaryRetry, SummaryRetryEvent,
    calculate_context_tokens, compact, estimate_context_tokens, prepare_compaction,
};

/// The `action` of xcsh's compaction events: rho always summarizes.
const ACTION: &str = "context-full";

/// The error of a second context overflow in one user turn.
const SECOND_OVERFLOW: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing \
                               context or switching to a larger-context model.";

/// What a handoff asks the summary to be.
const HANDOFF_FOCUS: &str = "Write the summary as a handoff document for an engineer who takes over this work \
                             now: the goal, what is done, what is in progress, the decisions made and why, the \
                             files involved, and the exact next steps.";

#[derive(Default)]
struct State {
    auto: bool,
    running: bool,
    /// One compact-and-retry per user message on context overflow.
    overflow_recovery_attempted: bool,
    /// Cancels a compaction the host asked for (`compact`, `handoff`).
    cancel: Option<CancellationToken>,
}

/// Compaction's own state: automatic compaction on or off, one in progress, the overflow
/// recovery already used for this prompt, and what cancels a requested one.
#[derive(Default)]
pub(crate) struct CompactionState {
    state: Mutex<State>,
}

impl CompactionState {
    pub fn new(auto: bool) -> Self {
        Self { state: Mutex::new(State { auto, ..State::default() }) }
    }

    pub fn auto(&self) -> bool {
        self.state.lock().auto
    }

    pub(crate) fn set_auto(&self, auto: bool) {
        self.state.lock().auto = auto;
    }

    pub(crate) fn is_running(&self) -> bool {
        self.state.lock().running
    }

    fn set_running(&self, running: bool) {
        self.state.lock().running = running;
    }

    /// A new prompt: its overflow may be recovered from once again.
    pub(crate) fn new_prompt(&self) {
        self.state.lock().overflow_recovery_attempted = false;
    }

    /// Takes this prompt's one overflow recovery; false when it was already used.
    /// Whether an overflow would be compacted away and retried (auto-compaction on, not tried
    /// yet for this prompt).
    pub(crate) fn overflow_recovery_left(&self) -> bool {
        let state = self.state.lock();
        state.auto && !state.overflow_recovery_attempted
    }

    pub(crate) fn take_overflow_recovery(&self) -> bool {
        !std::mem::replace(&mut self.state.lock().overflow_recovery_attempted, true)
    }

    /// A token for a requested compaction, cancelled by [`cancel`](Self::cancel).
    pub(super) fn requested(&self) -> CancellationToken {
        self.state.lock().cancel.insert(CancellationToken::new()).clone()
    }

    pub(super) fn request_done(&self) {
        self.state.lock().cancel = None;
    }

    /// A requested compaction or branch summary is in progress.
    pub(super) fn is_requested(&self) -> bool {
        self.state.lock().cancel.is_some()
    }

    /// Cancels a requested compaction in progress.
    pub fn cancel(&self) {
        if let Some(token) = &self.state.lock().cancel {
            token.cancel();
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AutoCompaction {
    Done,
    Skipped,
    Failed,
    Aborted,
}

impl AgentSession {
    /// `compact`: aborts any run, then summarizes the older part of the branch.
    pub async fn compact(&self, custom_instructions: Option<&str>) -> Result<CompactionResult, SessionCommandError> {
        self.stop().await;
        // Compacting from before the host hears of it until it hears of the end.
        self.inner.compaction.set_running(true);
        self.emit(SessionEvent::CompactionStart { reason: CompactionReason::Manual });
        let token = self.inner.compaction.requested();
        let outcome = self.run_compaction(custom_instructions, CompactionReason::Manual, token, false).await;
        self.inner.compaction.request_done();
        self.inner.compaction.set_running(false);
        let (result, aborted, error_message) = match &outcome {
            Ok(result) => (Some(result.clone()), false, None),
            Err(SessionCommandError::Compaction(CompactionError::Cancelled)) => (None, true, None),
            Err(e) => (None, false, Some(format!("Compaction failed: {e}"))),
        };
        self.emit(SessionEvent::CompactionEnd {
            reason: CompactionReason::Manual,
            result,
            aborted,
            will_retry: false,
            error_message,
        });
        outcome
    }

    /// omp's `handoff`: the older history replaced by a handoff document the model writes for
    /// whoever continues the work (recent messages are kept, as compaction keeps them). No
    /// compaction events: the host asked for it and gets the answer.
    pub(crate) async fn handoff(&self, custom_instructions: Option<&str>) -> Result<(), SessionCommandError> {
        if self.is_streaming() {
            return Err(SessionCommandError::Invalid("Cannot hand off while a response is in progress".into()));
        }
        if self.is_compacting() {
            return Err(SessionCommandError::Invalid("Compaction already in progress".into()));
        }
        if !*self.inner.has_model.lock() {
            return Err(SessionCommandError::Invalid("No model selected for handoff".into()));
        }
        let said = self.session().branch_entries().iter().filter(|e| matches!(e, SessionEntry::Message(_))).count();
        if said < 2 {
            return Err(SessionCommandError::Invalid("Nothing to hand off (no messages yet)".into()));
        }
        let focus = match custom_instructions.map(str::trim).filter(|c| !c.is_empty()) {
            Some(custom) => format!("{HANDOFF_FOCUS} {custom}"),
            None => HANDOFF_FOCUS.to_owned(),
        };
        let token = self.inner.compaction.requested();
        self.inner.compaction.set_running(true);
        let outcome = self.run_compaction(Some(&focus), CompactionReason::Manual, token, true).await;
        self.inner.compaction.set_running(false);
        self.inner.compaction.request_done();
        match outcome {
            Ok(_) => Ok(()),
            Err(SessionCommandError::Compaction(
                CompactionError::NothingToCompact | CompactionError::AlreadyCompacted,
            )) => Err(SessionCommandError::Invalid("Nothing to hand off (already compacted)".into())),
            Err(SessionCommandError::Compaction(CompactionError::Cancelled)) => {
                Err(SessionCommandError::Invalid("Handoff cancelled".into()))
            }
            Err(e) => Err(e),
        }
    }

    /// Automatic compaction with its events. `will_retry`: the run is continued afterwards.
    /// `last_step`: the lifecycle ends here unless the compaction succeeds with messages queued;
    /// it is then ended before the closing events go out.
    pub(crate) async fn auto_compact(
        &self,
        reason: CompactionReason,
        will_retry: bool,
        last_step: Option<&RunSink>,
    ) -> AutoCompaction {
        // Compacting from before the host hears of it until it hears of the end.
        self.inner.compaction.set_running(true);
        self.emit(SessionEvent::AutoCompactionStart { reason, action: ACTION.into() });
        self.emit(SessionEvent::CompactionStart { reason });
        let token = self.lifecycle_token().child_token();
        let outcome = self.run_compaction(None, reason, token, false).await;
        self.inner.compaction.set_running(false);
        let (status, result, error_message) = match outcome {
            Ok(result) => (AutoCompaction::Done, Some(result), None),
            Err(SessionCommandError::Compaction(CompactionError::Cancelled)) => (AutoCompaction::Aborted, None, None),
            Err(
                SessionCommandError::NoModel
                | SessionCommandError::NoApiKey(_)
                | SessionCommandError::Compaction(CompactionError::NothingToCompact | CompactionError::AlreadyCompacted),
            ) => (AutoCompaction::Skipped, None, None),
            Err(e) => {
                let prefix = match reason {
                    CompactionReason::Overflow => "Context overflow recovery failed",
                    _ => "Auto-compaction failed",
                };
                (AutoCompaction::Failed, None, Some(format!("{prefix}: {e}")))
            }
        };
        let aborted = status == AutoCompaction::Aborted;
        let will_retry = will_retry && status == AutoCompaction::Done;
        if let Some(run_sink) = last_step
            && !(status == AutoCompaction::Done && self.queued_count() > 0)
        {
            run_sink.finish();
        }
        self.emit(SessionEvent::AutoCompactionEnd {
            action: ACTION.into(),
            result: result.clone(),
            aborted,
            will_retry,
            error_message: error_message.clone(),
            skipped: (status == AutoCompaction::Skipped).then_some(true),
        });
        self.emit(SessionEvent::CompactionEnd { reason, result, aborted, will_retry, error_message });
        status
    }

    /// The compaction itself: prepare from the branch, summarize, record, rebuild the context.
    /// A branch short enough to keep whole is [`CompactionError::NothingToCompact`], as in pi,
    /// unless `whole_branch` (a handoff writes its document even of a short conversation).
    async fn run_compaction(
        &self,
        custom_instructions: Option<&str>,
        reason: CompactionReason,
        cancel: CancellationToken,
        whole_branch: bool,
    ) -> Result<CompactionResult, SessionCommandError> {
        if !*self.inner.has_model.lock() {
            return Err(SessionCommandError::NoModel);
        }
        let model = self.inner.agent.model();
        if !self.registry().has_key(&model.provider) {
            return Err(SessionCommandError::NoApiKey(model.provider.clone()));
        }
        let settings = self.compaction_settings();
        let preparation = {
            let session = self.session();
            prepare_compaction(&session.branch_entries(), settings)?.ok_or(CompactionError::AlreadyCompacted)?
        };
        if preparation.summarizes_nothing() && !whole_branch {
            return Err(CompactionError::NothingToCompact.into());
        }
        let trigger = match reason {
            CompactionReason::Manual => crate::claude_hooks::CompactTrigger::Manual,
            _ => crate::claude_hooks::CompactTrigger::Auto,
        };
        self.pre_compact_hooks(trigger, custom_instructions).await;
        // An extension may cancel the compaction or write the summary itself.
        let from_extension = match self.extension_compaction(&preparation, custom_instructions).await {
            ExtensionCompaction::Cancelled => return Err(CompactionError::Cancelled.into()),
            ExtensionCompaction::Summary(output) => Some(*output),
            ExtensionCompaction::None => None,
        };
        let by_extension = from_extension.is_some();
        let output: CompactionOutput = match from_extension {
            Some(output) => output,
            None => {
                let (model, thinking) = self.direct_model(&cancel).await.map_err(CompactionError::Summarization)?;
                let mut options =
                    rho_agent::resolve_request_options(&self.inner.request_options, &model, &cancel).await;
                options.cancel = cancel;
                let retry = self.summary_retry("compaction", Some(reason));
                compact(&preparation, SummaryRequest { model: &model, options, custom_instructions, retry, thinking })
                    .await?
            }
        };
        let mut result = CompactionResult {
            summary: output.summary.clone(),
            short_summary: None,
            first_kept_entry_id: output.first_kept_entry_id.clone(),
            tokens_before: output.tokens_before,
            estimated_tokens_after: None,
            usage: output.usage,
            details: Some(output.details.clone()).filter(|d| !d.is_null()),
        };
        let mut compaction = output.into_new_compaction();
        if by_extension {
            compaction.from_hook = Some(true);
        }
        if compaction.details.as_ref().is_some_and(serde_json::Value::is_null) {
            compaction.details = None;
        }
        let entry = {
            let mut session = self.session();
            let id = session.append_compaction(compaction)?;
            session.get_entry(id.as_str()).and_then(|e| serde_json::to_value(e).ok())
        };
        self.inner.transcript.rebuild();
        result.estimated_tokens_after =
            Some(self.inner.agent.read_messages(|messages| estimate_context_tokens(messages).tokens));
        self.tell_extensions(serde_json::json!({
            "type": "session_compact", "compactionEntry": entry, "fromExtension": by_extension,
        }));
        self.start_session_hooks("compact");
        Ok(result)
    }

    /// How a summary request (`source`: `compaction` or `branchSummary`) is tried again after a
    /// transient failure, with `retry.*` as for replies; each try is told to the host as pi 1.6's
    /// `summarization_retry_*`. `None` when retrying is off.
    pub(crate) fn summary_retry(&self, source: &'static str, reason: Option<CompactionReason>) -> Option<SummaryRetry> {
        let settings = self.settings().retry();
        if !settings.enabled {
            return None;
        }
        let session = self.clone();
        let notify = move |event| {
            session.emit(match event {
                SummaryRetryEvent::Scheduled { attempt, max_attempts, delay_ms, error_message } => {
                    SessionEvent::SummarizationRetryScheduled { attempt, max_attempts, delay_ms, error_message }
                }
                SummaryRetryEvent::AttemptStart => {
                    SessionEvent::SummarizationRetryAttemptStart { source: source.to_owned(), reason }
                }
                SummaryRetryEvent::Finished => SessionEvent::SummarizationRetryFinished,
            });
        };
        Some(SummaryRetry {
            max_retries: u32::try_from(settings.max_retries).unwrap_or(u32::MAX),
            base_delay_ms: settings.base_delay_ms,
            max_delay_ms: settings.max_delay_ms,
            notify: std::sync::Arc::new(notify),
        })
    }

    fn compaction_settings(&self) -> CompactionSettings {
        let c = self.settings().compaction();
        CompactionSettings { reserve_tokens: c.reserve_tokens, keep_recent_tokens: c.keep_recent_tokens }
    }

    /// Whether the last good reply says the context passed the compaction threshold.
    pub(crate) fn needs_threshold_compaction(&self) -> bool {
        if !self.inner.compaction.auto() || !*self.inner.has_model.lock() {
            return false;
        }
        let settings = self.settings().compaction();
        let compacted_at = self.session().branch_entries().iter().rev().find_map(|e| match e {
            SessionEntry::Compaction(c) => Some(iso_to_ms(&c.timestamp).unwrap_or(i64::MAX)),
            _ => None,
        });
        let window = self.context_window();
        if window == 0 {
            return false;
        }
        let Some(last) = self.last_assistant() else {
            return false;
        };
        // A reply from before the last compaction describes the context that compaction replaced.
        if last.is_failed() || compacted_at.is_some_and(|at| last.timestamp <= at) {
            return false;
        }
        calculate_context_tokens(&last.usage) > compaction_threshold(&settings, window)
    }

    /// pi 1.6 compacts before a request whose model's threshold the conversation as it stands
    /// passes (the last reply's usage and an estimate of what followed): before each request
    /// after a run's first, and against the model a virtual selection is routed to. The loop
    /// asks this ([`rho_agent::BeforeRequest`]); true when the conversation was compacted.
    pub(super) fn install_compaction_before_requests(&self) {
        let inner = std::sync::Arc::downgrade(&self.inner);
        self.inner.agent.set_before_request(Some(std::sync::Arc::new(move |model: rho_types::Model| {
            let inner = inner.clone();
            Box::pin(async move {
                let Some(session) = inner.upgrade().map(|inner| AgentSession { inner }) else { return false };
                session.passes_threshold_of(&model)
                    && session.auto_compact(CompactionReason::Threshold, false, None).await == AutoCompaction::Done
            })
        })));
    }

    fn passes_threshold_of(&self, model: &rho_types::Model) -> bool {
        if !self.inner.compaction.auto() || model.context_window == 0 {
            return false;
        }
        let tokens = self.inner.agent.read_messages(crate::compaction::estimate_projected_tokens);
        tokens > compaction_threshold(&self.settings().compaction(), model.context_window)
    }

    /// A second overflow in one user turn: reported, not compacted again.
    pub(crate) fn report_second_overflow(&self) {
        self.emit(SessionEvent::AutoCompactionEnd {
            action: ACTION.into(),
            result: None,
            aborted: false,
            will_retry: false,
            error_message: Some(SECOND_OVERFLOW.into()),
            skipped: None,
        });
        self.emit(SessionEvent::CompactionEnd {
            reason: CompactionReason::Overflow,
            result: None,
            aborted: false,
            will_retry: false,
            error_message: Some(SECOND_OVERFLOW.into()),
        });
    }

    pub fn set_auto_compaction(&self, enabled: bool) {
        self.inner.compaction.set_auto(enabled);
        if let Err(e) = self.settings().set_global("compaction.enabled", serde_json::Value::Bool(enabled)) {
            tracing::warn!("could not save compaction.enabled: {e}");
        }
    }

    pub(crate) fn is_compacting(&self) -> bool {
        self.inner.compaction.is_running()
    }

    pub fn auto_compaction_enabled(&self) -> bool {
        self.inner.compaction.auto()
    }
}

/// Where the context of a `window`-token model is compacted: `compaction.thresholdTokens`, else
/// `thresholdPercent` of the window, else the window less the reserve.
fn compaction_threshold(settings: &crate::config::settings::CompactionSettings, window: u64) -> u64 {
    match (settings.threshold_tokens, settings.threshold_percent) {
        (Some(t), _) => t.clamp(1, window.saturating_sub(1).max(1)),
        (None, Some(p)) => (window as f64 * p / 100.0) as u64,
        (None, None) => window.saturating_sub(settings.reserve_tokens),
    }
}
