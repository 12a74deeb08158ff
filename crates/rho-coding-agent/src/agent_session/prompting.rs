//! Sending the user's words: `prompt` (start a run, or queue while one streams), `steer`,
//! `follow_up` and `abort`. A prompt is expanded first (`/skill:name`, `/template args`), then
//! checked (busy, no model, no key) before anything changes; a `/mcp__<server>__<prompt> args`
//! prompt is got from its server once the run is under way (the prompt is answered first).

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use rho_agent::AgentEvent;
use rho_rpc::StreamingBehavior;
use rho_types::AgentMessage;
use rho_types::types::{
    AssistantContent, Attribution, ImageContent, StopReason, UserContent, UserMessage, UserMessageContent, now_ms,
};
use tokio::task::JoinHandle;

use super::{AbortEpoch, AgentSession, PromptTicket};
use crate::extensions::HookOutcome;
use crate::prompt::{available_commands, expand_prompt, slash_commands};

/// How a prompt is sent.
#[derive(Debug, Default)]
pub struct PromptOptions {
    pub images: Vec<ImageContent>,
    /// While a run streams: queue as steering or follow-up instead of failing.
    pub streaming_behavior: Option<StreamingBehavior>,
    /// Taken when the prompt was read, when it waited its turn (an abort read meanwhile reaches
    /// it); `None` takes one now.
    pub ticket: Option<PromptTicket>,
    /// Who sent it (the extensions' `input` event says).
    pub source: PromptSource,
    /// Sent as it is: no extension command, template or skill is looked for (an extension's
    /// `sendUserMessage`).
    pub raw: bool,
}

/// Where a prompt came from, as pi's `input` event names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PromptSource {
    #[default]
    Rpc,
    Interactive,
    Extension,
}

impl PromptSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rpc => "rpc",
            Self::Interactive => "interactive",
            Self::Extension => "extension",
        }
    }
}

/// What to do when no model is selected; `select` says how to pick one.
fn no_model(agent_dir: &str, select: &str) -> String {
    format!(
        "No model selected.\n\nSet an API key in the environment (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY), \
         or add a provider to models.json in rho's agent directory ({agent_dir}).\n\n\
         Then select a model with {select}."
    )
}

impl PromptRejection {
    /// The text as the interactive mode shows it, where a model is picked with `/model`.
    pub fn interactive_text(&self) -> String {
        match self {
            Self::NoModel { agent_dir } => no_model(agent_dir, "/model"),
            _ => self.to_string(),
        }
    }
}

/// Why a prompt was not started (the texts hosts see as the late `prompt` error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptRejection {
    #[error("Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion.")]
    Busy,
    #[error("{}", no_model(agent_dir, "--model or the set_model command"))]
    NoModel { agent_dir: String },
    /// A subscription login is why there is no key (it could not be refreshed) or no model (it
    /// is for an API rho does not speak); the text says which and what to do.
    #[error("{0}")]
    Login(String),
    #[error(
        "No API key found for {provider}.\n\nSet {env_hint} in the environment, or add an apiKey for \
         \"{provider}\" to models.json or auth.json in rho's agent directory ({agent_dir})."
    )]
    NoApiKey { provider: String, env_hint: String, agent_dir: String },
    /// `task.budget.*`: a limit was passed (`reason` is the dimension, e.g. `cost`).
    #[error("Budget exceeded: {reason}")]
    BudgetExceeded { reason: String },
    /// An MCP prompt command without its required arguments (`/<command> needs: a, b`).
    #[error("MCP prompt {0}")]
    McpPromptArguments(String),
}

/// What happened to a prompt that was accepted.
#[derive(Debug)]
pub enum PromptOutcome {
    /// A run is ready to go: the session is streaming from now on, and the run emits its first
    /// event once [`PendingRun::start`] is called (so a mode can answer the prompt first).
    Started(PendingRun),
    /// A run was streaming; the message was queued on the steering or follow-up queue.
    Queued,
    /// The prompt named an extension's command: it runs once [`PendingCommand::start`] is
    /// called, whatever the session is doing.
    Command(PendingCommand),
    /// An extension's `input` handler dealt with it; nothing was sent to the model.
    Handled,
}

/// An extension command accepted but not yet started.
pub struct PendingCommand {
    run: futures::future::BoxFuture<'static, ()>,
}

impl std::fmt::Debug for PendingCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingCommand").finish_non_exhaustive()
    }
}

impl PendingCommand {
    /// Runs the command; the handle resolves when its handler returned.
    pub fn start(self) -> JoinHandle<()> {
        tokio::spawn(self.run)
    }
}

/// A run accepted but not yet started. Dropped without [`start`](Self::start), it starts
/// anyway: an accepted prompt never leaves the session streaming with nothing running.
#[must_use = "a pending run starts when dropped; call start() to get its handle"]
pub struct PendingRun {
    run: Option<futures::future::BoxFuture<'static, RunOutcome>>,
}

/// How a run ended, from its last reply: what a mode answers the prompt with (print mode's
/// answer and exit code, ACP's stop reason).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutcome {
    /// `None` when the run left no reply (it failed before the request).
    pub stop_reason: Option<StopReason>,
    pub error_message: Option<String>,
    /// The reply's text blocks, each followed by a line break.
    pub text: String,
}

impl RunOutcome {
    /// The reply failed or was aborted.
    pub fn failed(&self) -> bool {
        matches!(self.stop_reason, Some(StopReason::Error | StopReason::Aborted))
    }
}

impl std::fmt::Debug for PendingRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRun").finish_non_exhaustive()
    }
}

impl PendingRun {
    /// Starts the run; the handle resolves when it and its post-run work are done, with how it
    /// ended.
    pub fn start(mut self) -> JoinHandle<RunOutcome> {
        let run = self.run.take().unwrap_or_else(|| Box::pin(async { RunOutcome::default() }));
        tokio::spawn(run)
    }
}

impl Drop for PendingRun {
    fn drop(&mut self) {
        if let Some(run) = self.run.take() {
            tokio::spawn(run);
        }
    }
}

impl AgentSession {
    /// Sends a prompt as pi does with extensions: an extension's command runs instead, the
    /// `input` handlers may change or handle it, and then it goes on as [`prompt`](Self::prompt).
    /// Without extensions this is `prompt`.
    pub async fn submit(
        &self,
        text: impl Into<String>,
        options: PromptOptions,
    ) -> Result<PromptOutcome, PromptRejection> {
        self.submit_text(text.into(), options).await
    }

    // One body for every caller's string type: the run it starts is a large future.
    async fn submit_text(&self, text: String, mut options: PromptOptions) -> Result<PromptOutcome, PromptRejection> {
        // Claude Code's hooks: a prompt UserPromptSubmit blocks is not sent; what they add goes
        // with it.
        let Some(text) = self.hooked_prompt(text).await else { return Ok(PromptOutcome::Handled) };
        let Some(extensions) = self.extensions().cloned() else {
            return self.prompt_text(text, options);
        };
        if !options.raw
            && let Some((name, args)) = extensions.command_in(&text)
        {
            let run = Box::pin(async move { extensions.run_command(&name, &args).await });
            return Ok(PromptOutcome::Command(PendingCommand { run }));
        }
        // pi 1.6 tells the handlers how a message sent mid-run is queued.
        let behavior = options.streaming_behavior.filter(|_| self.is_streaming());
        let text = match extensions.input(&text, &options.images, options.source.as_str(), behavior).await {
            HookOutcome::Handled => return Ok(PromptOutcome::Handled),
            HookOutcome::Continue { text, images } => {
                options.images = images;
                text
            }
        };
        self.prompt_text(text, options)
    }

    /// Sends a prompt. Returns as soon as the run is scheduled (or the message queued). The text
    /// is moved into the message, not copied (a prompt may be megabytes).
    pub fn prompt(&self, text: impl Into<String>, options: PromptOptions) -> Result<PromptOutcome, PromptRejection> {
        self.prompt_text(text.into(), options)
    }

    // One body for every caller's string type: the run it builds is a large future.
    fn prompt_text(&self, text: String, options: PromptOptions) -> Result<PromptOutcome, PromptRejection> {
        let text = if options.raw { text } else { self.expand(text) };
        self.check_budget()?;
        if self.is_streaming() {
            return match options.streaming_behavior {
                Some(StreamingBehavior::Steer) => {
                    self.queue_steer(self.user_message(text, options.images));
                    Ok(PromptOutcome::Queued)
                }
                Some(StreamingBehavior::FollowUp) => {
                    self.queue_follow_up(self.user_message(text, options.images));
                    Ok(PromptOutcome::Queued)
                }
                // Between a failed reply and its retry the run has ended for the host (pi's
                // client prompts again at agent_end): the retry starts now and carries it.
                None if self.inner.retry.is_waiting() => {
                    self.queue_steer(self.user_message(text, options.images));
                    self.inner.retry.hurry();
                    Ok(PromptOutcome::Queued)
                }
                None => Err(PromptRejection::Busy),
            };
        }
        self.check_model()?;
        let mcp_prompt = self.mcp_prompt_call(&text).map_err(PromptRejection::McpPromptArguments)?;
        let ticket = options.ticket.unwrap_or_else(|| self.prompt_ticket());
        if !self.begin_streaming(&ticket) {
            return Err(PromptRejection::Busy);
        }
        // The MCP servers ready by now have their tools in the run's first request.
        self.sync_mcp_tools();
        let images = options.images;
        let this = self.clone();
        let run = async move {
            let (text, images) = match mcp_prompt {
                Some(call) => {
                    let cancel = this.lifecycle_token();
                    this.expand_mcp_prompt(call, &text, images, &cancel).await
                }
                None => (text, images),
            };
            // The message takes the text: a long prompt is not kept twice through the run.
            let messages = this.prompt_messages(text, images).await;
            let lifecycle = AssertUnwindSafe(this.clone().run_lifecycle(messages));
            if lifecycle.catch_unwind().await.is_err() {
                // A bug ended the run early: the session must not stay "streaming" forever.
                tracing::error!("the run ended with an internal error");
                this.mark_idle();
                this.notify_idle();
            }
            // An abort waiting for this prompt is over only now, after the run's last event.
            drop(ticket);
            this.last_outcome()
        };
        Ok(PromptOutcome::Started(PendingRun { run: Some(Box::pin(run)) }))
    }

    /// Starts a run with an extension's custom message as its prompt (`sendMessage` with
    /// `triggerTurn`), after `before_agent_start` had its say; `None` when a run is already
    /// going.
    pub(crate) fn run_custom_message(&self, message: AgentMessage) -> Option<PendingRun> {
        let ticket = self.prompt_ticket();
        if !self.begin_streaming(&ticket) {
            return None;
        }
        self.sync_mcp_tools();
        let this = self.clone();
        let run = async move {
            let messages = this.custom_prompt_messages(message).await;
            let lifecycle = AssertUnwindSafe(this.clone().run_lifecycle(messages));
            if lifecycle.catch_unwind().await.is_err() {
                tracing::error!("the run ended with an internal error");
                this.mark_idle();
                this.notify_idle();
            }
            drop(ticket);
            this.last_outcome()
        };
        Some(PendingRun { run: Some(Box::pin(run)) })
    }

    /// How the last run ended: the newest assistant message's stop reason, error and text.
    pub(crate) fn last_outcome(&self) -> RunOutcome {
        self.inner.agent.read_messages(|messages| match messages.last() {
            Some(AgentMessage::Assistant(last)) => RunOutcome {
                stop_reason: Some(last.stop_reason),
                error_message: last.error_message.clone(),
                text: last
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantContent::Text(t) => Some(format!("{}\n", t.text)),
                        _ => None,
                    })
                    .collect(),
            },
            _ => RunOutcome::default(),
        })
    }

    /// Queues a steering message (delivered at the next steering poll, or by the next run).
    pub(crate) fn steer(&self, text: &str, images: Vec<ImageContent>) {
        let text = self.expand(text.to_owned());
        self.queue_steer(self.user_message(text, images));
    }

    /// Queues a follow-up message (delivered when the agent would otherwise stop).
    pub fn follow_up(&self, text: &str, images: Vec<ImageContent>) {
        let text = self.expand(text.to_owned());
        self.queue_follow_up(self.user_message(text, images));
    }

    /// `abort`: stops the run and its post-run work (retry waits, compaction), and every prompt
    /// taken before it that has not started yet, and waits until they are over. Queued messages
    /// stay queued.
    pub async fn abort(&self) {
        let epoch = self.interrupt();
        self.settled(epoch).await;
    }

    /// The first half of [`abort`](Self::abort), without waiting: also reaches the prompts read
    /// before now. Returns the epoch to wait for with [`settled`](Self::settled).
    pub fn interrupt(&self) -> AbortEpoch {
        let epoch = self.inner.run.interrupt();
        self.cancel_current();
        epoch
    }

    /// Stops the work in progress and waits for the session to be idle, for commands that
    /// replace the conversation (compact, new and switched sessions). Prompts still waiting
    /// their turn are not touched: they come after the command that called this.
    pub(crate) async fn stop(&self) {
        self.cancel_current();
        self.wait_idle().await;
    }

    /// Cancels the current lifecycle (its run and post-run work) and a manual compaction.
    fn cancel_current(&self) {
        self.inner.run.cancel();
        self.inner.compaction.cancel();
        self.inner.agent.abort();
    }

    /// `get_commands`: the extensions' commands, then the prompt templates, skills and MCP
    /// prompts a prompt may start with (pi's order).
    pub fn slash_commands(&self) -> Vec<rho_rpc::RpcSlashCommand> {
        let resources = self.resources();
        let enable_skills = self.settings().enable_skill_commands();
        let mut commands = self.extensions().map(|e| e.slash_commands()).unwrap_or_default();
        commands.extend(slash_commands(&resources.templates, &resources.skills, enable_skills));
        commands.extend(self.mcp_slash_commands());
        commands
    }

    /// omp's `get_available_commands`: the same commands in omp's shape, after the built-ins
    /// the mode runs itself, which shadow any other command of the same name or alias, except
    /// an extension's (which runs instead of the built-in, as in pi).
    pub(crate) fn available_commands(&self) -> Vec<rho_rpc::AvailableCommand> {
        let resources = self.resources();
        let enable_skills = self.settings().enable_skill_commands();
        let extensions = self.extensions().map(|e| e.available_commands()).unwrap_or_default();
        let mut others = extensions.clone();
        others.extend(available_commands(&resources.templates, &resources.skills, enable_skills));
        others.extend(self.mcp_available_commands());
        let Some(builtins) = self.inner.builtin_commands.get() else { return others };
        let builtins: Vec<_> = builtins.iter().filter(|b| !extensions.iter().any(|e| e.name == b.name)).collect();
        let taken = |name: &str| {
            builtins.iter().any(|b| b.name == name || b.aliases.iter().flatten().any(|alias| alias == name))
        };
        let mut commands: Vec<rho_rpc::AvailableCommand> = builtins.iter().map(|b| (*b).clone()).collect();
        commands.extend(others.into_iter().filter(|c| !taken(&c.name)));
        commands
    }

    /// Whether `text` names an extension's command (which runs before any built-in of the
    /// mode's with that name).
    pub(crate) fn names_extension_command(&self, text: &str) -> bool {
        self.extensions().is_some_and(|e| e.command_in(text).is_some())
    }

    /// Lists `commands` first in [`available_commands`](Self::available_commands): the mode
    /// runs them when a prompt starts with one. Set once.
    pub fn offer_builtin_commands(&self, commands: Vec<rho_rpc::AvailableCommand>) {
        let _ = self.inner.builtin_commands.set(commands);
    }

    /// `clear_queue`: empties both queues (a `queue_update` says so) and returns the texts that
    /// waited on each, for the host to put back in its editor.
    pub(crate) fn clear_queue(&self) -> rho_rpc::ClearedQueueData {
        let (steering, follow_up, update) = self.inner.agent.take_queue_texts();
        self.emit(update);
        rho_rpc::ClearedQueueData { steering, follow_up }
    }

    /// Steering plus follow-up messages not yet delivered.
    pub(crate) fn queued_count(&self) -> usize {
        self.inner.agent.queued_count()
    }

    pub(super) fn queue_steer(&self, message: AgentMessage) {
        let sink = self.event_forwarder();
        self.inner.agent.steer(message, &sink);
    }

    pub(super) fn queue_follow_up(&self, message: AgentMessage) {
        let sink = self.event_forwarder();
        self.inner.agent.follow_up(message, &sink);
    }

    /// A sink for agent events raised outside a run (queue updates).
    fn event_forwarder(&self) -> impl Fn(AgentEvent) + Send + Sync + use<> {
        let this = self.clone();
        move |event: AgentEvent| this.emit(event)
    }

    /// `/skill:name args` and `/template args` expanded; anything else as it is.
    fn expand(&self, text: String) -> String {
        if !text.starts_with('/') {
            return text;
        }
        let resources = self.resources();
        let enable_skills = self.settings().enable_skill_commands();
        match expand_prompt(&text, &resources.templates, &resources.skills, enable_skills) {
            Ok(expanded) => expanded,
            Err(e) => {
                tracing::warn!("{e}");
                text
            }
        }
    }

    /// The model and its credentials, checked before a run starts.
    pub(crate) fn check_model(&self) -> Result<(), PromptRejection> {
        let agent_dir = self.inner.paths.agent_dir.display().to_string();
        if !*self.inner.has_model.lock() {
            let no_model = PromptRejection::NoModel { agent_dir };
            let unusable: Vec<String> = self.registry().unusable_logins().iter().map(ToString::to_string).collect();
            if unusable.is_empty() {
                return Err(no_model);
            }
            return Err(PromptRejection::Login(format!("{no_model}\n\n{}", unusable.join("\n\n"))));
        }
        let provider = self.inner.agent.read_model(|m| m.provider.clone());
        // Never waits here (the command loop and the screen would): a login's refresh or a
        // `!command` key is resolved when the request is made.
        if !self.registry().has_key(&provider) {
            if let Some(problem) = self.registry().login_problem(&provider) {
                return Err(PromptRejection::Login(problem.to_string()));
            }
            let env_hint = match provider.as_str() {
                // AWS's own credential sources come first; the key variable is the exception.
                "amazon-bedrock" => {
                    "AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK"
                }
                other => rho_ai::env_var_for(other).unwrap_or("the provider's API key variable"),
            }
            .to_owned();
            return Err(PromptRejection::NoApiKey { provider, env_hint, agent_dir });
        }
        Ok(())
    }
}

/// A user message as a prompt builds it: the text block, then the images.
impl AgentSession {
    /// The user's message with `text` and `images`, the images fitted to the current model's
    /// profile first (`images.autoResize`, on by default, as pi 1.6 does for prompts, steering
    /// and follow-ups): shrunk when too large, left out with a note when nothing fits.
    pub(crate) fn user_message(&self, text: String, images: Vec<ImageContent>) -> AgentMessage {
        if images.is_empty() || !self.settings().images().auto_resize {
            return user_message(text, images);
        }
        let profile = self.inner.agent.read_model(|m| m.image_resize());
        let mut text = text;
        let mut kept = Vec::with_capacity(images.len());
        for image in rho_tools::image_resize::fit_images(images, profile) {
            match image {
                Some(image) => kept.push(image),
                None => {
                    text.push('\n');
                    text.push_str(rho_tools::image_resize::IMAGE_TOO_LARGE);
                }
            }
        }
        user_message(text, kept)
    }
}

pub(crate) fn user_message(text: impl Into<rho_types::Text>, images: Vec<ImageContent>) -> AgentMessage {
    let mut content = Vec::with_capacity(1 + images.len());
    content.push(UserContent::text(text));
    content.extend(images.into_iter().map(UserContent::Image));
    AgentMessage::User(UserMessage {
        content: UserMessageContent::Blocks(content),
        synthetic: None,
        attribution: Some(Attribution::User),
        timestamp: now_ms(),
    })
}
