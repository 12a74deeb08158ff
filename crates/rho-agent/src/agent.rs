//! The agent: conversation, model, thinking level, tools and the two queues, behind one lock,
//! and the API the application drives it with (prompt, continue, steer, follow-up, abort).
//!
//! A run ([`Agent::prompt`] / [`Agent::continue_run`]) executes on the caller's task until it
//! ends; everything else may be called from other tasks while it streams. The lock is only held
//! for short, non-async critical sections.

use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;

use rho_ai::{ProviderError, StreamOptions};
use rho_types::{Model, SystemPrompt, ThinkingLevel};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::event::{AgentEvent, AgentEventSink};
use crate::hooks::AgentHooks;
use crate::message::AgentMessage;
use crate::queue::{InterruptMode, MessageQueue, QueueMode};
use crate::run;
use crate::tool::{Tool, ToolGate};
use crate::validate::Validators;

/// Builds the per-request options (API key, headers, budgets, session id) for a model. The loop
/// fills in the thinking level and the cancellation token itself.
pub type RequestOptionsFn = Arc<dyn Fn(&Model) -> StreamOptions + Send + Sync>;

/// Builds the options for a request off the runtime's threads: resolving the key may wait (a
/// login's refresh under another process's lock, a stalled token endpoint, a `!command`), and
/// neither the command loop nor the screen may wait with it. Given up when `cancel` fires; the
/// options are then the defaults and the request, already cancelled, ends as aborted.
pub async fn resolve_request_options(
    request_options: &RequestOptionsFn,
    model: &Model,
    cancel: &CancellationToken,
) -> StreamOptions {
    let resolve = {
        let (request_options, model) = (request_options.clone(), model.clone());
        tokio::task::spawn_blocking(move || request_options(&model))
    };
    tokio::select! {
        resolved = resolve => resolved.unwrap_or_default(),
        () = cancel.cancelled() => StreamOptions::default(),
    }
}

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum AgentError {
    #[error("Agent is already processing.")]
    Busy,
    #[error("Cannot continue from message role: {0}")]
    CannotContinue(String),
    #[error("No messages to continue from")]
    NothingToContinue,
}

/// Everything a run reads, guarded by the agent's lock. Private to the loop: the application
/// reads and changes it through [`Agent`]'s methods.
pub(crate) struct AgentState {
    /// What requests send as the system prompt.
    pub(crate) system_prompt: String,
    /// The prompt the transcript declares, as sections: when set, each turn records what changed
    /// in it or in the tools as a `system` message before its request.
    pub(crate) declared_prompt: Option<SystemPrompt>,
    pub(crate) model: Model,
    pub(crate) thinking_level: ThinkingLevel,
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    pub(crate) messages: Vec<AgentMessage>,
    pub(crate) steering: MessageQueue,
    pub(crate) follow_up: MessageQueue,
    pub(crate) steering_mode: QueueMode,
    pub(crate) follow_up_mode: QueueMode,
    pub(crate) interrupt_mode: InterruptMode,
    /// Why the last request of the last run failed, if it did.
    pub(crate) last_failure: Option<Arc<ProviderError>>,
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) running: bool,
    /// Asked before each tool call runs; `None` runs every call.
    pub(crate) tool_gate: Option<Arc<dyn ToolGate>>,
    /// The application's hooks into the loop (extensions); `None` changes nothing.
    pub(crate) hooks: Option<Arc<dyn AgentHooks>>,
    /// Fits the images of tool results to the model; `None` sends them as they are.
    pub(crate) fit_images: Option<crate::tool::FitImages>,
    /// Asked before a request (see [`BeforeRequest`](crate::tool::BeforeRequest)).
    pub(crate) before_request: Option<crate::tool::BeforeRequest>,
}

/// How the queues are drained and what a steering message does to running tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueModes {
    pub steering: QueueMode,
    pub follow_up: QueueMode,
    pub interrupt: InterruptMode,
}

impl std::fmt::Debug for AgentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentState")
            .field("model", &self.model.selector())
            .field("thinking_level", &self.thinking_level)
            .field("messages", &self.messages.len())
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

/// How to build an agent.
pub struct AgentConfig {
    pub system_prompt: String,
    /// See [`Agent::set_prompt`]; `None` records no `system` messages.
    pub declared_prompt: Option<SystemPrompt>,
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    pub tools: Vec<Arc<dyn Tool>>,
    pub messages: Vec<AgentMessage>,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    pub interrupt_mode: InterruptMode,
    pub request_options: RequestOptionsFn,
}

pub(crate) struct Shared {
    pub(crate) state: Mutex<AgentState>,
    pub(crate) request_options: RequestOptionsFn,
    pub(crate) validators: Validators,
    running_tx: watch::Sender<bool>,
}

/// The agent. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct Agent {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").finish_non_exhaustive()
    }
}

impl Agent {
    pub fn new(config: AgentConfig) -> Self {
        let state = AgentState {
            system_prompt: config.system_prompt,
            declared_prompt: config.declared_prompt,
            model: config.model,
            thinking_level: config.thinking_level,
            tools: config.tools,
            messages: config.messages,
            steering: MessageQueue::default(),
            follow_up: MessageQueue::default(),
            steering_mode: config.steering_mode,
            follow_up_mode: config.follow_up_mode,
            interrupt_mode: config.interrupt_mode,
            last_failure: None,
            cancel: None,
            running: false,
            tool_gate: None,
            hooks: None,
            fit_images: None,
            before_request: None,
        };
        let (running_tx, _) = watch::channel(false);
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                request_options: config.request_options,
                validators: Validators::default(),
                running_tx,
            }),
        }
    }

    /// The state, locked. Keep the guard short-lived and never across an await.
    pub(crate) fn state(&self) -> MutexGuard<'_, AgentState> {
        self.shared.state.lock()
    }

    /// The conversation, copied.
    pub fn messages(&self) -> Vec<AgentMessage> {
        self.state().messages.clone()
    }

    /// Reads the conversation without copying it (the lock is held while `read` runs).
    pub fn read_messages<R>(&self, read: impl FnOnce(&[AgentMessage]) -> R) -> R {
        read(&self.state().messages)
    }

    pub fn message_count(&self) -> usize {
        self.state().messages.len()
    }

    /// Replaces the conversation (a session loaded, rebuilt after a compaction).
    pub fn replace_messages(&self, messages: Vec<AgentMessage>) {
        self.state().messages = messages;
    }

    /// Adds a message to the conversation outside a run.
    pub fn push_message(&self, message: AgentMessage) {
        self.state().messages.push(message);
    }

    /// Removes the last message `matches` accepts and everything after it; false when there
    /// is none.
    pub fn truncate_from_last(&self, matches: impl Fn(&AgentMessage) -> bool) -> bool {
        let mut s = self.state();
        match s.messages.iter().rposition(matches) {
            Some(index) => {
                s.messages.truncate(index);
                true
            }
            None => false,
        }
    }

    pub fn model(&self) -> Model {
        self.state().model.clone()
    }

    /// Reads the model without copying it.
    pub fn read_model<R>(&self, read: impl FnOnce(&Model) -> R) -> R {
        read(&self.state().model)
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        self.state().thinking_level
    }

    /// Sets the model and the thinking level together (the level is the caller's, already
    /// clamped to the model).
    pub fn set_model(&self, model: Model, thinking_level: ThinkingLevel) {
        let mut s = self.state();
        s.model = model;
        s.thinking_level = thinking_level;
    }

    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        self.state().thinking_level = level;
    }

    pub fn system_prompt(&self) -> String {
        self.state().system_prompt.clone()
    }

    /// The prompt's sections, when requests send exactly them (an extension may have replaced
    /// the text for a run).
    pub fn system_prompt_sections(&self) -> Option<Vec<String>> {
        let s = self.state();
        let declared = s.declared_prompt.as_ref()?;
        (declared.render() == s.system_prompt)
            .then(|| declared.sections.iter().map(|(_, text)| text.clone()).filter(|t| !t.is_empty()).collect())
    }

    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.state().tools.clone()
    }

    /// Sets what is asked before each tool call runs (from the next batch of calls on); `None`
    /// runs every call, the default.
    pub fn set_tool_gate(&self, gate: Option<Arc<dyn ToolGate>>) {
        self.state().tool_gate = gate;
    }

    /// Sets what fits the images of tool results to the model (from the next call on); `None`
    /// sends them as the tools give them.
    pub fn set_fit_images(&self, fit: Option<crate::tool::FitImages>) {
        self.state().fit_images = fit;
    }

    /// Sets what is asked before a request is sent (see
    /// [`BeforeRequest`](crate::tool::BeforeRequest)); `None` asks nothing.
    pub fn set_before_request(&self, before: Option<crate::tool::BeforeRequest>) {
        self.state().before_request = before;
    }

    /// Sets the hooks the loop awaits at its points (from the next request or call on); `None`
    /// removes them.
    pub fn set_hooks(&self, hooks: Option<Arc<dyn AgentHooks>>) {
        self.state().hooks = hooks;
    }

    /// Replaces the system prompt alone (an extension's `before_agent_start` changed it for a
    /// run).
    pub fn set_system_prompt(&self, system_prompt: String) {
        self.state().system_prompt = system_prompt;
    }

    /// Sets the tools and the system prompt that describes them, together.
    pub fn set_tools(&self, tools: Vec<Arc<dyn Tool>>, system_prompt: String) {
        let mut s = self.state();
        s.tools = tools;
        s.system_prompt = system_prompt;
    }

    /// Sets the tools and the prompt made of sections: requests send the prompt rendered, and
    /// each turn declares what changed in either to the transcript (a `system` message).
    pub fn set_prompt(&self, tools: Vec<Arc<dyn Tool>>, prompt: SystemPrompt) {
        let mut s = self.state();
        s.tools = tools;
        s.system_prompt = prompt.render();
        s.declared_prompt = Some(prompt);
    }

    pub fn queue_modes(&self) -> QueueModes {
        let s = self.state();
        QueueModes { steering: s.steering_mode, follow_up: s.follow_up_mode, interrupt: s.interrupt_mode }
    }

    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.state().steering_mode = mode;
    }

    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.state().follow_up_mode = mode;
    }

    pub fn set_interrupt_mode(&self, mode: InterruptMode) {
        self.state().interrupt_mode = mode;
    }

    /// Why the last request of the last run failed, if it did.
    pub fn last_failure(&self) -> Option<Arc<ProviderError>> {
        self.state().last_failure.clone()
    }

    pub fn is_running(&self) -> bool {
        self.state().running
    }

    /// Queues a steering message (delivered at the next steering poll).
    pub fn steer(&self, message: AgentMessage, sink: &dyn AgentEventSink) {
        let event = {
            let mut s = self.state();
            s.steering.push(message);
            queue_event(&s)
        };
        sink.emit(event);
    }

    /// Queues a follow-up message (delivered when the agent would otherwise stop).
    pub fn follow_up(&self, message: AgentMessage, sink: &dyn AgentEventSink) {
        let event = {
            let mut s = self.state();
            s.follow_up.push(message);
            queue_event(&s)
        };
        sink.emit(event);
    }

    /// Empties both queues, returning what was in them (steering first).
    pub fn clear_queues(&self) -> Vec<AgentMessage> {
        let (mut steering, follow_up) = self.take_queues();
        steering.extend(follow_up);
        steering
    }

    /// Empties both queues, returning the texts that were queued on each (steering, follow-up)
    /// and the `queue_update` that says they are empty now.
    pub fn take_queue_texts(&self) -> (Vec<String>, Vec<String>, AgentEvent) {
        let mut s = self.state();
        let texts = (s.steering.texts(), s.follow_up.texts());
        s.steering.take(QueueMode::All);
        s.follow_up.take(QueueMode::All);
        (texts.0, texts.1, queue_event(&s))
    }

    fn take_queues(&self) -> (Vec<AgentMessage>, Vec<AgentMessage>) {
        let mut s = self.state();
        (s.steering.take(QueueMode::All), s.follow_up.take(QueueMode::All))
    }

    /// The messages waiting in both queues (steering first), left in place.
    pub fn peek_queued_messages(&self) -> Vec<AgentMessage> {
        let s = self.state();
        s.steering.messages().chain(s.follow_up.messages()).cloned().collect()
    }

    pub fn queued_count(&self) -> usize {
        let s = self.state();
        s.steering.len() + s.follow_up.len()
    }

    /// Cancels the running run, if any. Returns at once; see [`Agent::wait_idle`].
    pub fn abort(&self) {
        if let Some(token) = &self.state().cancel {
            token.cancel();
        }
    }

    /// Resolves when no run is in progress.
    pub async fn wait_idle(&self) {
        let mut rx = self.shared.running_tx.subscribe();
        // The value is only ever read here; an error means the agent is gone.
        let _ = rx.wait_for(|running| !running).await;
    }

    /// Runs the agent on `messages` (usually one user message) until it stops.
    pub async fn prompt(&self, messages: Vec<AgentMessage>, sink: Arc<dyn AgentEventSink>) -> Result<(), AgentError> {
        self.prompt_within(&CancellationToken::new(), messages, sink).await
    }

    /// [`prompt`](Self::prompt) as part of a larger piece of work: cancelling `scope` aborts the
    /// run, also when it is cancelled before the run begins (the run then ends at once, aborted).
    pub async fn prompt_within(
        &self,
        scope: &CancellationToken,
        messages: Vec<AgentMessage>,
        sink: Arc<dyn AgentEventSink>,
    ) -> Result<(), AgentError> {
        let cancel = self.begin(scope)?;
        run::run(self, messages, false, cancel, sink).await;
        self.end();
        Ok(())
    }

    /// Runs the agent again on the current conversation without a new prompt (after a retry
    /// removed a failed reply, or after compaction). When the conversation ends with an
    /// assistant message, a queued steering or follow-up message is delivered first; without
    /// one there is nothing to continue from.
    pub async fn continue_run(&self, sink: Arc<dyn AgentEventSink>) -> Result<(), AgentError> {
        self.continue_within(&CancellationToken::new(), sink).await
    }

    /// [`continue_run`](Self::continue_run) within a cancellation scope, as
    /// [`prompt_within`](Self::prompt_within).
    pub async fn continue_within(
        &self,
        scope: &CancellationToken,
        sink: Arc<dyn AgentEventSink>,
    ) -> Result<(), AgentError> {
        let queued = {
            let mut s = self.state();
            match s.messages.last() {
                None => return Err(AgentError::NothingToContinue),
                Some(AgentMessage::Assistant(_)) => {
                    let mode = s.steering_mode;
                    let mut queued = s.steering.take(mode);
                    if queued.is_empty() {
                        let mode = s.follow_up_mode;
                        queued = s.follow_up.take(mode);
                    }
                    if queued.is_empty() {
                        return Err(AgentError::CannotContinue("assistant".into()));
                    }
                    Some(queued)
                }
                Some(_) => None,
            }
        };
        let cancel = self.begin(scope)?;
        match queued {
            Some(messages) => run::run(self, messages, true, cancel, sink).await,
            None => run::run(self, Vec::new(), true, cancel, sink).await,
        }
        self.end();
        Ok(())
    }

    fn begin(&self, scope: &CancellationToken) -> Result<CancellationToken, AgentError> {
        let mut s = self.state();
        if s.running {
            return Err(AgentError::Busy);
        }
        s.running = true;
        s.last_failure = None;
        let token = scope.child_token();
        s.cancel = Some(token.clone());
        drop(s);
        self.shared.running_tx.send_replace(true);
        Ok(token)
    }

    fn end(&self) {
        {
            let mut s = self.state();
            s.running = false;
            s.cancel = None;
        }
        self.shared.running_tx.send_replace(false);
    }
}

/// The `queue_update` event for the queues' current contents.
pub(crate) fn queue_event(s: &AgentState) -> AgentEvent {
    AgentEvent::QueueUpdate { steering: s.steering.texts(), follow_up: s.follow_up.texts() }
}
