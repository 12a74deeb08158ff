//! `AgentSession`: the agent, its persisted session, the user's settings, the model registry,
//! compaction, retry and the session's own state (todos, host tools, queues), behind the one API
//! that every mode uses. RPC mode, print mode and JSON mode are thin clients of it.
//!
//! Concurrency: a prompt's whole lifecycle (the agent run, then retries, compaction and todo
//! reminders) runs on a task of its own; every other method may be called meanwhile from other
//! tasks. State lives behind short-lived `std` locks, never held across an `.await`.

mod abort_gate;
mod bash;
mod boundaries;
mod budget;
mod cache_warming;
mod claude_hooks;
mod compaction;
mod context_usage;
mod entries;
mod errors;
pub mod events;
mod extensions;
mod lifecycle;
mod mcp;
mod mcp_extensions;
mod models;
mod navigate;
mod prompting;
mod providers;
mod reload;
mod retry;
mod rewind;
mod run_control;
mod scope;
mod sessions;
mod sink;
mod state;
mod todos;
pub(crate) mod tools;
mod transcript;
mod ttsr;
mod virtual_models;

use parking_lot::{Mutex, MutexGuard};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rho_agent::{Agent, AgentConfig, RequestOptionsFn};
use rho_ai::{ModelRegistry, ScopedModel, StreamOptions};
use rho_session::Session;
use rho_types::{AgentMessage, Model, ThinkingLevel};
use tokio_util::sync::CancellationToken;

use crate::budget::BudgetTracker;
use crate::config::{ConfigPaths, Settings};
use crate::extensions::Extensions;
use crate::prompt::{ContextFile, PromptTemplate, PromptTexts, Skill};
use crate::todo::{AutoClear, TodoReminders, TodoStore};

pub use abort_gate::{AbortEpoch, PromptTicket};
pub(crate) use boundaries::edit_content;
pub use errors::SessionCommandError;
pub use events::{AgentSessionEvent, SessionEventSink, discard};
pub(crate) use mcp_extensions::RegisteredMcpServer;
pub use models::CycledModel;
pub use navigate::{BranchSummaryChoice, Navigated};
pub use prompting::{
    PendingCommand, PendingRun, PromptOptions, PromptOutcome, PromptRejection, PromptSource, RunOutcome,
};
pub use reload::{Reloaded, ResourceSources, load_resources};
pub use rewind::{RewindOptions, Rewound};
pub(crate) use sessions::{Seed, SeedEntry};
pub use tools::{HostToolEntry, ToolFilter, ToolSelection, Ui, tool_pattern_matches};

/// The files rho read before the first prompt: context files, skills, templates and the
/// custom / appended system prompt texts.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    pub context_files: Vec<ContextFile>,
    pub skills: Vec<Skill>,
    pub templates: Vec<PromptTemplate>,
    pub prompt_texts: PromptTexts,
    /// Time-traveling stream rules (taken by the session's matcher at construction).
    pub ttsr_rules: Vec<crate::ttsr::CompiledRule>,
}

/// Everything an [`AgentSession`] is built from.
pub struct SessionOptions {
    pub paths: ConfigPaths,
    pub settings: Settings,
    pub registry: ModelRegistry,
    /// The model to start with; `None` when nothing is available (prompts then fail with
    /// `No model selected.`).
    pub model: Option<Model>,
    pub thinking_level: ThinkingLevel,
    /// `--models`: the models `cycle_model` walks (empty: every available model).
    pub scope: Vec<ScopedModel>,
    pub session: Session,
    pub resources: Resources,
    /// Where the resources came from, for `reload`.
    pub resource_sources: ResourceSources,
    pub tools: ToolSelection,
    /// `--exclude-tools` and the MCP tools `--tools` names.
    pub tool_filter: tools::ToolFilter,
    pub sink: Arc<dyn SessionEventSink>,
    /// The dialogs tools may open; `None` answers every dialog with its default.
    pub ui: Option<Arc<dyn Ui>>,
    /// Where the file tools read and write text files (an editor's buffers in ACP mode);
    /// `None` is the local file system.
    pub file_access: Option<Arc<dyn rho_tools::FileAccess>>,
    /// Where `bash` runs its commands (an editor's terminals in ACP mode); `None` runs them
    /// locally.
    pub terminals: Option<Arc<dyn rho_tools::Terminals>>,
    /// The host's URL schemes `read` and `write` reach (RPC mode); `None`: no such schemes.
    pub host_uris: Option<Arc<dyn rho_tools::HostUris>>,
    /// The MCP servers to start (in the background) with the session; empty for none. `None`
    /// (`--no-mcp`): no MCP server runs at all, not even one an extension registers.
    pub mcp: Option<rho_mcp::McpConfig>,
}

pub(crate) struct Inner {
    pub agent: Agent,
    /// API key, headers and budgets for a request (summaries use it too).
    pub request_options: RequestOptionsFn,
    /// The current session's id, sent as the prompt-cache key (follows session switches).
    pub cache_key: CacheKey,
    pub sink: Arc<dyn SessionEventSink>,
    pub paths: ConfigPaths,
    pub settings: Mutex<Settings>,
    pub registry: Arc<providers::Registries>,
    /// The models `cycle_model` walks (empty: every available model); `/scoped-models` changes it.
    pub scope: Mutex<Vec<ScopedModel>>,
    pub has_model: Mutex<bool>,
    /// The session file and the agent's messages, kept in step.
    pub transcript: transcript::Transcript,
    /// Replaced whole by `reload`.
    pub resources: Mutex<Arc<Resources>>,
    /// Where they come from; extensions and packages add skill and template paths.
    pub resource_sources: Mutex<ResourceSources>,
    pub tools: Mutex<tools::ToolSet>,
    /// The todo list (todo_write, set_todos, get_state).
    pub todos: TodoStore,
    pub todo_reminders: Mutex<TodoReminders>,
    pub todo_auto_clear: Mutex<Option<AutoClear>>,
    pub ttsr: Mutex<ttsr::TtsrState>,
    /// A prompt's lifecycle: running or not, what stops it, which prompts an abort reaches.
    pub run: run_control::RunControl,
    pub retry: retry::RetryChain,
    pub compaction: compaction::CompactionState,
    /// The user's own shell commands (`bash`).
    pub shell: bash::UserShell,
    /// `task.budget.*`: present when a limit is set.
    pub budget: Option<Arc<BudgetTracker>>,
    /// The MCP servers; set once, when the config names any or an extension registers one.
    pub mcp: OnceLock<mcp::SessionMcp>,
    /// `--no-mcp`: no server runs.
    pub mcp_off: bool,
    /// The extensions; set once they started, and only when some are configured. Shared with
    /// the request options (which take their request hooks from it).
    pub extensions: Arc<OnceLock<Arc<Extensions>>>,
    /// The dialogs of the mode (extensions' `ctx.ui`); `None` answers them with their defaults.
    pub ui: Option<Arc<dyn Ui>>,
    /// The built-in slash commands the mode runs itself (omp's, in RPC mode), listed first.
    pub builtin_commands: OnceLock<Vec<rho_rpc::AvailableCommand>>,
    /// What routing a virtual model's next request needs to know.
    pub routing: virtual_models::Routing,
    /// Claude Code's other hooks of the settings.
    pub claude_hooks: OnceLock<claude_hooks::ClaudeHooks>,
    /// The files `write` and `edit` changed, kept for a rewind; `None` when turned off.
    pub checkpoints: Option<Arc<crate::checkpoints::SessionCheckpoints>>,
    /// Prompt-cache warming after each reply.
    pub cache_warmer: cache_warming::CacheWarmer,
}

/// The session API. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct AgentSession {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession").finish_non_exhaustive()
    }
}

impl AgentSession {
    pub fn new(options: SessionOptions) -> Self {
        let SessionOptions {
            paths,
            settings,
            registry,
            model,
            thinking_level,
            scope,
            mut session,
            mut resources,
            resource_sources,
            tools: selection,
            tool_filter,
            sink,
            ui,
            file_access,
            terminals,
            host_uris,
            mcp,
        } = options;
        let registry = Arc::new(providers::Registries::new(registry));
        let todos = TodoStore::new();
        let matcher = ttsr::matcher_for(std::mem::take(&mut resources.ttsr_rules), &settings, &paths.cwd);
        let context = session.build_context();
        let resumed = !session.entries().is_empty();
        let has_model = model.is_some();
        let model = model.unwrap_or_else(placeholder_model);
        let thinking_level = if has_model { model.clamp_thinking(thinking_level) } else { thinking_level };
        let session_variables = Arc::new(tools::SessionVariables::default());
        let checkpoints = settings
            .get_bool("checkpoints.enabled")
            .unwrap_or(true)
            .then(|| crate::checkpoints::SessionCheckpoints::new(&paths.agent_dir));
        let hooks = tools::ToolHooks {
            file_access,
            terminals,
            host_uris,
            session_environment: session_variables.clone(),
            checkpoints: checkpoints.clone(),
        };
        let mut tool_set = tools::ToolSet::new(&paths, &settings, selection.clone(), ui.clone(), &todos, hooks);
        tool_set.set_filter(tool_filter);
        let ui_service = ui;
        let system_prompt = tool_set.system_prompt(&paths, &resources);
        let cache_key: CacheKey = Arc::new(Mutex::new(session.session_id().to_owned()));
        let sink = crate::telemetry::observed(sink, &cache_key);
        let extensions: Arc<OnceLock<Arc<Extensions>>> = Arc::default();
        let request_options = request_options(registry.clone(), &settings, cache_key.clone(), extensions.clone());
        let agent = Agent::new(AgentConfig {
            system_prompt: system_prompt.render(),
            declared_prompt: Some(system_prompt),
            model,
            thinking_level,
            tools: tool_set.active_tools(),
            messages: context.messages,
            steering_mode: settings.steering_mode(),
            follow_up_mode: settings.follow_up_mode(),
            interrupt_mode: settings.interrupt_mode(),
            request_options: request_options.clone(),
        });
        if session.entries().is_empty() && has_model {
            // A new session starts by recording the model and level it runs with, as pi does.
            let model = agent.model();
            let _ = session.append_model_change(&model.provider, &model.id);
            let _ = session.append_thinking_level_change(agent.thinking_level());
        }
        let budget = BudgetTracker::new(settings.task().budget, sink.clone());
        let retry = retry::RetryChain::new(settings.retry().enabled);
        let compaction = compaction::CompactionState::new(settings.compaction().enabled);
        let transcript = transcript::Transcript::new(session, agent.clone());
        let this = Self {
            inner: Arc::new(Inner {
                agent,
                request_options,
                cache_key,
                sink,
                paths,
                settings: Mutex::new(settings),
                registry,
                scope: Mutex::new(scope),
                has_model: Mutex::new(has_model),
                transcript,
                resources: Mutex::new(Arc::new(resources)),
                resource_sources: Mutex::new(resource_sources),
                tools: Mutex::new(tool_set),
                todos,
                todo_reminders: Mutex::new(TodoReminders::new()),
                todo_auto_clear: Mutex::new(None),
                ttsr: Mutex::new(ttsr::TtsrState { matcher, ..ttsr::TtsrState::default() }),
                run: run_control::RunControl::default(),
                retry,
                compaction,
                shell: bash::UserShell::default(),
                budget,
                mcp: OnceLock::new(),
                mcp_off: mcp.is_none(),
                extensions,
                ui: ui_service,
                builtin_commands: OnceLock::new(),
                routing: virtual_models::Routing::default(),
                claude_hooks: OnceLock::new(),
                checkpoints,
                cache_warmer: cache_warming::CacheWarmer::default(),
            }),
        };
        session_variables.attach(&this.inner);
        if let Some(checkpoints) = &this.inner.checkpoints {
            checkpoints.attach(&this.inner);
        }
        this.install_claude_hooks(resumed);
        this.install_compaction_before_requests();
        // Images in tool results (an MCP server's, an extension's) fit the model as a prompt's do.
        if this.settings().images().auto_resize {
            this.inner.agent.set_fit_images(Some(Arc::new(rho_tools::image_resize::fit_content)));
        }
        if let Some(gate) = permission_gate(&this, this.inner.ui.clone(), None) {
            this.inner.agent.set_tool_gate(Some(gate));
        }
        this.install_task_tool(&selection);
        if selection.has(crate::tools::tool_search::NAME) {
            this.add_tool(Arc::new(crate::tools::ToolSearchTool::new(&this.inner)));
        }
        if let Some(config) = mcp {
            this.start_mcp(config);
        }
        this.restore_todos();
        this.restore_ttsr();
        this.start_todo_auto_clear();
        this
    }

    /// How queued steering and follow-up messages are delivered.
    pub fn queue_modes(&self) -> rho_agent::QueueModes {
        self.inner.agent.queue_modes()
    }

    /// Takes the queued steering and follow-up messages back (they are not sent).
    pub fn take_queued(&self) -> Vec<AgentMessage> {
        self.inner.agent.clear_queues()
    }

    /// Decides, before each tool call, whether it may run (permission rules, an editor's
    /// approval).
    pub fn set_tool_gate(&self, gate: Option<Arc<dyn rho_agent::ToolGate>>) {
        self.inner.agent.set_tool_gate(gate);
    }

    pub fn cwd(&self) -> &Path {
        &self.inner.paths.cwd
    }

    /// The session's id and file, read when called; weak, so what holds it (a tool gate held by
    /// the session) does not keep the session alive.
    pub(crate) fn session_info(&self) -> SessionInfo {
        let inner = Arc::downgrade(&self.inner);
        Box::new(move || match inner.upgrade() {
            Some(inner) => {
                let session = inner.transcript.session();
                let file = session.session_file().map(|f| f.display().to_string());
                (session.session_id().to_owned(), file)
            }
            None => (String::new(), None),
        })
    }

    pub fn paths(&self) -> &ConfigPaths {
        &self.inner.paths
    }

    pub fn settings(&self) -> MutexGuard<'_, Settings> {
        self.inner.settings.lock()
    }

    /// The context files, skills and templates in use (as last loaded or reloaded).
    pub fn resources(&self) -> Arc<Resources> {
        self.inner.resources.lock().clone()
    }

    /// The session file, unless the session lives in memory only.
    pub fn session_file(&self) -> Option<PathBuf> {
        self.session().session_file().map(Path::to_path_buf)
    }

    pub fn session_id(&self) -> String {
        self.session().session_id().to_owned()
    }

    /// True from a prompt's acceptance until its run and post-run work are finished.
    pub fn is_streaming(&self) -> bool {
        self.inner.run.is_running()
    }

    /// Resolves when no prompt lifecycle is in progress.
    pub(crate) async fn wait_idle(&self) {
        self.inner.run.wait_idle().await;
    }

    /// The whole in-memory conversation.
    pub fn messages(&self) -> Vec<AgentMessage> {
        self.inner.agent.messages()
    }

    /// How many of the conversation's messages are declared prompts (`system`), counted
    /// without copying the conversation.
    pub(crate) fn system_message_count(&self) -> usize {
        self.inner.agent.read_messages(|m| m.iter().filter(|m| matches!(m, AgentMessage::System(_))).count())
    }

    pub(crate) fn emit(&self, event: impl Into<AgentSessionEvent>) {
        let event = event.into();
        match (&event, self.extensions()) {
            (AgentSessionEvent::Agent(agent_event), Some(extensions)) => extensions.observe(agent_event),
            (AgentSessionEvent::Session(rho_rpc::SessionEvent::AgentSettled { aborted }), Some(extensions)) => {
                extensions.tell(serde_json::json!({"type": "agent_settled", "aborted": aborted}));
            }
            _ => {}
        }
        self.inner.sink.emit(event);
    }

    /// The mode's dialogs, if it has any.
    pub(crate) fn ui(&self) -> Option<Arc<dyn Ui>> {
        self.inner.ui.clone()
    }

    /// The session's extensions, once started.
    pub(crate) fn extensions(&self) -> Option<&Arc<Extensions>> {
        self.inner.extensions.get()
    }

    /// An extension failed (pi's `extension_error`): the mode reports it, the agent goes on.
    pub(crate) fn report_extension_error(&self, extension_path: &str, event: &str, error: &str) {
        self.inner.sink.emit(AgentSessionEvent::ExtensionError(rho_rpc::ExtensionError {
            extension_path: extension_path.to_owned(),
            event: event.to_owned(),
            error: error.to_owned(),
        }));
    }

    /// A `notice` for the host (omp's shape).
    pub(crate) fn emit_notice(&self, level: rho_rpc::NotifyType, message: &str, source: Option<&str>) {
        self.emit(rho_rpc::SessionEvent::Notice {
            level,
            message: message.to_owned(),
            source: source.map(str::to_owned),
        });
    }

    /// omp's `available_commands_update` with the commands as they are now.
    pub fn announce_commands(&self) {
        self.emit(rho_rpc::SessionEvent::AvailableCommandsUpdate { commands: self.available_commands() });
    }

    pub(crate) fn session(&self) -> MutexGuard<'_, Session> {
        self.inner.transcript.session()
    }

    /// Marks the start of a prompt lifecycle; false when one is already running. A lifecycle
    /// whose prompt was read before an abort starts cancelled.
    pub(crate) fn begin_streaming(&self, ticket: &PromptTicket) -> bool {
        self.inner.run.begin(ticket)
    }

    /// A ticket for a prompt read now (see [`PromptTicket`]): an abort read later reaches it.
    pub(crate) fn prompt_ticket(&self) -> PromptTicket {
        self.inner.run.ticket()
    }

    /// The abort epoch now: commands read now belong to it.
    pub(crate) fn abort_epoch(&self) -> AbortEpoch {
        self.inner.run.epoch()
    }

    /// Resolves once every prompt read before the abort that began `epoch` is over: refused,
    /// queued, or its run (started cancelled, if it had not started) ended.
    pub(crate) async fn settled(&self, epoch: AbortEpoch) {
        self.inner.run.settled(epoch).await;
    }

    /// The lifecycle is over as far as `get_state` and new prompts go. Waiters of
    /// [`wait_idle`](Self::wait_idle) are woken by [`notify_idle`](Self::notify_idle), once the
    /// lifecycle's last event is queued.
    pub(crate) fn mark_idle(&self) {
        self.inner.run.mark_idle();
    }

    /// Wakes [`wait_idle`](Self::wait_idle) waiters, unless a new lifecycle began meanwhile.
    pub(crate) fn notify_idle(&self) {
        self.inner.run.notify_idle();
    }

    pub(crate) fn lifecycle_token(&self) -> CancellationToken {
        self.inner.run.token()
    }
}

/// The gate of `session`'s permission rules and approval mode, asking through `ui` (or `asker`,
/// when the mode has its own way, with the `Notification` hooks told), and leaving what they do
/// not decide to `fallback`, behind the `PreToolUse` hooks; `None` when there are no rules and
/// no hooks, the approval mode is `auto` and there is no fallback (every call runs).
pub fn permission_gate(
    session: &AgentSession,
    ui: Option<Arc<dyn Ui>>,
    acp: Option<(Arc<dyn crate::permissions::Asker>, Arc<dyn rho_agent::ToolGate>)>,
) -> Option<Arc<dyn rho_agent::ToolGate>> {
    use crate::claude_hooks::{HookGate, NotifyingAsker};
    use crate::permissions::{Approval, Asker, PermissionGate, Rules, UiAsker};
    let settings = session.settings().clone();
    let paths = session.paths();
    let (rules, warnings) = Rules::from_settings(&settings, &paths.cwd, paths.home.as_deref());
    for warning in warnings {
        eprintln!("{warning}");
    }
    let approval = crate::permissions::approval(&settings);
    let asking = match acp {
        Some((asker, fallback)) => Some((Some(asker), Some(fallback))),
        None if rules.is_empty() && approval == Approval::Auto => None,
        None => Some((ui.map(|ui| Arc::new(UiAsker(ui)) as Arc<dyn Asker>), None)),
    };
    let notifying = |asker: Arc<dyn Asker>| match session.session_hooks() {
        Some(hooks) => Arc::new(NotifyingAsker { inner: asker, hooks: hooks.clone() }) as Arc<dyn Asker>,
        None => asker,
    };
    let rules_gate = asking.map(|(asker, fallback)| {
        let asker = asker.map(notifying);
        Arc::new(PermissionGate::new(rules, approval, asker, fallback, paths.cwd.clone(), paths.home.clone()))
            as Arc<dyn rho_agent::ToolGate>
    });
    // Claude Code's PreToolUse hooks come first: what they block is never asked about.
    let hooks = session.hook_env().and_then(|env| HookGate::from_settings(&settings, &env, rules_gate.clone()));
    match hooks {
        Some(hooks) => Some(Arc::new(hooks)),
        None => rules_gate,
    }
}

/// The session's id and file as they are when asked (for hooks, which outlive a `/new`).
pub type SessionInfo = Box<dyn Fn() -> (String, Option<String>) + Send + Sync>;

/// The session id the requests use as their prompt-cache key.
pub(crate) type CacheKey = Arc<Mutex<String>>;

/// The per-request options: the API key (resolved per request, so a key that changes on disk is
/// picked up, and a login is refreshed when it expires mid-session; one that cannot be fails the
/// request with the reason), the model's headers, thinking budgets and the session id as cache key.
fn request_options(
    registries: Arc<providers::Registries>,
    settings: &Settings,
    session_id: CacheKey,
    extensions: Arc<OnceLock<Arc<Extensions>>>,
) -> RequestOptionsFn {
    let budgets = settings.thinking_budgets();
    let transport = settings.transport();
    Arc::new(move |model: &Model| {
        let defaults = rho_ai::ThinkingBudgets::default();
        let thinking_budgets = rho_ai::ThinkingBudgets {
            minimal: budgets.minimal.unwrap_or(defaults.minimal),
            low: budgets.low.unwrap_or(defaults.low),
            medium: budgets.medium.unwrap_or(defaults.medium),
            high: budgets.high.unwrap_or(defaults.high),
        };
        let registry = registries.current();
        let api_key = registry.api_key(&model.provider);
        let login_problem = api_key.is_none().then(|| registry.login_problem(&model.provider)).flatten();
        StreamOptions {
            api_key,
            login_problem: login_problem.map(|problem| problem.to_string()),
            session_id: Some(session_id.lock().clone()),
            transport,
            thinking_budgets,
            headers: registry.headers_for(model).into_iter().collect(),
            hooks: extensions.get().map(|e| crate::extensions::request_hooks(e, model)).unwrap_or_default(),
            custom: registries
                .streams_itself(&model.api)
                .then(|| extensions.get().map(crate::extensions::provider_stream))
                .flatten(),
            ..StreamOptions::default()
        }
    })
}

/// Stands in for the model when none is available, so the agent always has one; never sent a
/// request (prompts fail first with `No model selected.`).
fn placeholder_model() -> Model {
    Model {
        id: String::new(),
        name: String::new(),
        api: "openai-completions".into(),
        provider: String::new(),
        base_url: String::new(),
        reasoning: false,
        input: Vec::new(),
        cost: Default::default(),
        context_window: 0,
        max_tokens: 0,
        headers: Default::default(),
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
        input_limits: None,
        sampling: None,
    }
}
