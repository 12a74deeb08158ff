//! The session's tool set: the built-in tools selected (pi's `defaultTools` and `--tools`,
//! resolved in `startup::tools`), rho's own tools when selected (`todo_write` while
//! `todo.enabled`, `ask` when a UI exists, `task` while `task.enabled` and below the sub-agent
//! depth limit), the tools a host registered with `set_host_tools`, the extensions' tools (one named
//! like a built-in replaces it, as in pi), and the tools of the MCP servers (whatever `--tools`
//! says, as omp does); and the system prompt, rebuilt whenever that set changes. The MCP tools
//! are offered but not listed in the system prompt, so servers coming and going leave it as it
//! is. An extension's `setActiveTools` narrows the set to the tools it names (the built-ins
//! `--tools` left out included).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

use rho_agent::Tool;
use rho_rpc::DumpTool;
use rho_tools::ToolOptions;
use rho_types::SystemPrompt;

use super::{AgentSession, Inner, Resources};
use crate::config::{ConfigPaths, Settings};
use crate::prompt::{PromptTool, SystemPromptInput, system_prompt_sections, today_utc};
use crate::task::{ParentModel, TaskEnv, TaskHost, TaskTool};
use crate::todo::{TodoStore, TodoWriteTool};
use crate::tools::AskTool;
pub use crate::ui::Ui;

/// Which tools are active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSelection {
    /// These built-ins and rho's own tools (`todo_write`, `ask`, `task`), in this order.
    Names(Vec<String>),
    /// `--no-tools`.
    None,
}

impl Default for ToolSelection {
    /// pi's: read, bash, edit, write.
    fn default() -> Self {
        Self::Names(rho_tools::default_tool_names().iter().map(|n| (*n).to_owned()).collect())
    }
}

impl ToolSelection {
    /// Whether `name` is selected.
    pub fn has(&self, name: &str) -> bool {
        matches!(self, Self::Names(names) if names.iter().any(|n| n == name))
    }
}

/// What the command line keeps out beyond the selection (pi 1.6): `--exclude-tools` patterns,
/// applied to every tool whatever its source, and the MCP tools `--tools` names (an entry
/// starting with `mcp__`; without one every MCP tool stays).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    pub exclude: Vec<String>,
    pub mcp: Option<Vec<String>>,
}

impl ToolFilter {
    /// Whether a tool of this name may be offered.
    pub fn allows(&self, name: &str, is_mcp: bool) -> bool {
        if self.exclude.iter().any(|p| tool_pattern_matches(p, name)) {
            return false;
        }
        match (&self.mcp, is_mcp) {
            (Some(allowed), true) => allowed.iter().any(|p| tool_pattern_matches(p, name)),
            _ => true,
        }
    }
}

/// Whether `name` matches a tool name or pattern (`*` for any run of characters).
pub fn tool_pattern_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == name;
    }
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .is_ok_and(|glob| glob.compile_matcher().is_match(name))
}

/// A host tool as the session keeps it.
pub struct HostToolEntry {
    pub tool: Arc<dyn Tool>,
    /// Registered but not offered to the model.
    pub hidden: bool,
}

/// What the host puts under the built-in tools instead of the local machine (an editor's buffers
/// and terminals in ACP mode); `None` is the local machine.
#[derive(Default)]
pub(crate) struct ToolHooks {
    pub file_access: Option<Arc<dyn rho_tools::FileAccess>>,
    pub terminals: Option<Arc<dyn rho_tools::Terminals>>,
    pub host_uris: Option<Arc<dyn rho_tools::HostUris>>,
    /// What the `bash` tool's commands learn of the session; attached once the session exists.
    pub session_environment: Arc<SessionVariables>,
    /// Where `write` and `edit` report the files they change; attached once the session exists.
    pub checkpoints: Option<Arc<crate::checkpoints::SessionCheckpoints>>,
}

pub(crate) struct ToolSet {
    /// The background commands, when their tools are on.
    background: Option<Arc<rho_tools::background::BackgroundJobs>>,
    builtin: Vec<Arc<dyn Tool>>,
    /// The built-ins the default set leaves out (grep, find, ls), for `setActiveTools`.
    spare: Vec<Arc<dyn Tool>>,
    own: Vec<Arc<dyn Tool>>,
    host: Vec<HostToolEntry>,
    /// The extensions' tools.
    extension: Vec<Arc<dyn Tool>>,
    /// `mcp__<server>__<tool>`, as the MCP servers list them now.
    mcp: Vec<Arc<dyn Tool>>,
    /// The MCP tools of `deferred` exposure, declared once `tool_search` loads them.
    deferred: HashSet<String>,
    /// The deferred tools loaded so far.
    loaded: HashSet<String>,
    /// The tools an extension made active (`setActiveTools`), by name; `None`: all of them.
    chosen: Option<Vec<String>>,
    /// What the command line keeps out.
    filter: ToolFilter,
}

/// Where a tool comes from, as pi's `getAllTools` says it (`sourceInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolSource {
    Builtin,
    Host,
    Extension,
    Mcp,
}

impl ToolSet {
    pub fn new(
        paths: &ConfigPaths,
        settings: &Settings,
        selection: ToolSelection,
        ui: Option<Arc<dyn Ui>>,
        todos: &TodoStore,
        hooks: ToolHooks,
    ) -> Self {
        let options = tool_options(paths, settings);
        // A confined session runs its commands itself: an editor's terminal is outside the box.
        let terminals = hooks.terminals.filter(|_| options.sandbox.is_none());
        let session_environment: Arc<dyn rho_tools::SessionEnvironment> = hooks.session_environment;
        // Background commands come with either of their tools (and `bash` then takes
        // `run_in_background`).
        let background = (selection.has("bash_output") || selection.has("kill_bash"))
            .then(|| Arc::new(rho_tools::background::BackgroundJobs::default()));
        let options = ToolOptions {
            file_access: hooks.file_access,
            terminals,
            host_uris: hooks.host_uris,
            session_environment: Some(session_environment),
            checkpoints: hooks.checkpoints.map(|c| c as Arc<dyn rho_tools::checkpoints::Checkpoints>),
            background: background.clone(),
            ..options
        };
        let (builtin, spare) = match &selection {
            ToolSelection::Names(names) => {
                let left_out: Vec<&str> =
                    rho_tools::builtin_tool_names().iter().copied().filter(|n| !selection.has(n)).collect();
                (rho_tools::create_tools(names, &options), rho_tools::create_tools(&left_out, &options))
            }
            ToolSelection::None => (Vec::new(), Vec::new()),
        };
        let mut own: Vec<Arc<dyn Tool>> = Vec::new();
        if selection.has("todo_write") && settings.todo().enabled {
            own.push(Arc::new(TodoWriteTool::new(todos.clone())));
        }
        if selection.has("ask")
            && let Some(ui) = ui
        {
            own.push(Arc::new(AskTool::new(ui)));
        }
        if selection.has("web_fetch") {
            own.push(Arc::new(rho_tools::WebFetchTool::new(options.clone())));
        }
        if selection.has("web_search") {
            let (provider, base_url) =
                (settings.get_string("webSearch.provider"), settings.get_string("webSearch.baseUrl"));
            match rho_tools::SearchApi::from_env(provider.as_deref(), base_url.as_deref()) {
                Some(api) => own.push(Arc::new(rho_tools::WebSearchTool::new(options.clone(), api))),
                None => eprintln!(
                    "Warning: web_search needs a search API key (BRAVE_API_KEY or TAVILY_API_KEY); it is not offered"
                ),
            }
        }
        if let Some(jobs) = &background {
            own.push(Arc::new(rho_tools::BashOutputTool::new(jobs.clone())));
            own.push(Arc::new(rho_tools::KillBashTool::new(jobs.clone())));
        }
        Self {
            background,
            builtin,
            spare,
            own,
            host: Vec::new(),
            extension: Vec::new(),
            mcp: Vec::new(),
            deferred: HashSet::new(),
            loaded: HashSet::new(),
            chosen: None,
            filter: ToolFilter::default(),
        }
    }

    /// The background commands, when their tools are on.
    pub fn background_jobs(&self) -> Option<Arc<rho_tools::background::BackgroundJobs>> {
        self.background.clone()
    }

    /// Keeps out what `filter` excludes, from now on.
    pub(crate) fn set_filter(&mut self, filter: ToolFilter) {
        self.filter = filter;
    }

    /// Every tool the model is offered, in order: built-ins, rho's own, the host's, the MCP
    /// servers' (one whose name another tool already has is left out).
    pub(crate) fn active_tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut tools = self.listed_tools();
        for tool in &self.mcp {
            let declared = !self.deferred.contains(tool.name()) || self.loaded.contains(tool.name());
            if declared && self.filter.allows(tool.name(), true) && !tools.iter().any(|t| t.name() == tool.name()) {
                tools.push(tool.clone());
            }
        }
        tools
    }

    /// The deferred tools `tool_search` may load: not loaded yet, and not kept out.
    pub(crate) fn searchable_tools(&self) -> Vec<Arc<dyn Tool>> {
        let open = |t: &&Arc<dyn Tool>| {
            self.deferred.contains(t.name()) && !self.loaded.contains(t.name()) && self.filter.allows(t.name(), true)
        };
        self.mcp.iter().filter(open).cloned().collect()
    }

    /// Declares these deferred tools from the next request on.
    pub(crate) fn load_deferred(&mut self, names: &[String]) {
        self.loaded.extend(names.iter().cloned());
    }

    /// The tools the system prompt lists: built-ins, rho's own, the host's, the extensions'
    /// (narrowed to the chosen ones when an extension chose).
    fn listed_tools(&self) -> Vec<Arc<dyn Tool>> {
        let spare = self.chosen.as_ref().map_or(&[][..], |_| &self.spare[..]);
        let mut tools: Vec<Arc<dyn Tool>> = self.builtin.iter().chain(spare).chain(&self.own).cloned().collect();
        tools.extend(self.host.iter().filter(|h| !h.hidden).map(|h| h.tool.clone()));
        for tool in &self.extension {
            match tools.iter().position(|t| t.name() == tool.name()) {
                Some(i) => tools[i] = tool.clone(),
                None => tools.push(tool.clone()),
            }
        }
        if let Some(chosen) = &self.chosen {
            tools.retain(|t| chosen.iter().any(|n| n == t.name()));
        }
        tools.retain(|t| self.filter.allows(t.name(), false));
        tools
    }

    /// Every tool the session could offer, with where it comes from (pi's `getAllTools`).
    pub(crate) fn all_tools(&self) -> Vec<(Arc<dyn Tool>, ToolSource)> {
        let mut all: Vec<(Arc<dyn Tool>, ToolSource)> = Vec::new();
        let mut put =
            |tool: &Arc<dyn Tool>, source: ToolSource| match all.iter().position(|(t, _)| t.name() == tool.name()) {
                Some(i) => all[i] = (tool.clone(), source),
                None => all.push((tool.clone(), source)),
            };
        for tool in self.builtin.iter().chain(&self.spare).chain(&self.own) {
            put(tool, ToolSource::Builtin);
        }
        for entry in &self.host {
            put(&entry.tool, ToolSource::Host);
        }
        for tool in &self.extension {
            put(tool, ToolSource::Extension);
        }
        for tool in &self.mcp {
            put(tool, ToolSource::Mcp);
        }
        all
    }

    /// Replaces the extensions' tools.
    pub(crate) fn set_extension_tools(&mut self, tools: Vec<Arc<dyn Tool>>) {
        self.extension = tools;
    }

    /// `setActiveTools`: only these, of the tools the session has (unknown names are ignored).
    pub fn choose(&mut self, names: Vec<String>) {
        self.chosen = Some(names);
    }

    /// Replaces the MCP servers' tools.
    /// The MCP servers' tools, each with whether it is deferred; deferred tools the transcript
    /// declares already (`declared`, e.g. loaded before a resume) stay loaded.
    pub(crate) fn set_mcp_tools(&mut self, tools: Vec<(Arc<dyn Tool>, bool)>, declared: &HashSet<String>) {
        self.deferred = tools.iter().filter(|(_, deferred)| *deferred).map(|(t, _)| t.name().to_owned()).collect();
        self.loaded.extend(self.deferred.iter().filter(|name| declared.contains(*name)).cloned());
        self.mcp = tools.into_iter().map(|(tool, _)| tool).collect();
    }

    /// Whether some MCP tools wait for `tool_search`.
    pub(crate) fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// True when a tool of that name exists that the host does not own.
    pub(crate) fn has_own_tool(&self, name: &str) -> bool {
        self.builtin.iter().chain(&self.own).chain(&self.extension).any(|t| t.name() == name)
    }

    pub fn set_host_tools(&mut self, tools: Vec<HostToolEntry>) {
        self.host = tools;
    }

    pub(crate) fn add_own_tool(&mut self, tool: Arc<dyn Tool>) {
        self.own.retain(|t| t.name() != tool.name());
        self.own.push(tool);
    }

    pub fn system_prompt(&self, paths: &ConfigPaths, resources: &Resources) -> SystemPrompt {
        let tools: Vec<PromptTool> = self
            .listed_tools()
            .iter()
            .map(|t| {
                if self.extension.iter().any(|e| e.name() == t.name()) {
                    return extension_prompt_tool(&**t);
                }
                let blurb = rho_tools::blurb(t.name())
                    .map(str::to_owned)
                    .unwrap_or_else(|| t.description().lines().next().unwrap_or_default().to_owned());
                PromptTool::new(t.name(), blurb)
            })
            .collect();
        system_prompt_sections(&SystemPromptInput {
            cwd: &paths.cwd,
            tools: &tools,
            custom_prompt: resources.prompt_texts.custom.as_deref(),
            append_prompt: resources.prompt_texts.append.as_deref(),
            context_files: &resources.context_files,
            skills: &resources.skills,
            date: today_utc(),
            readme_path: None,
        })
    }
}

/// An extension tool as the system prompt shows it: listed with its `promptSnippet` (not
/// listed without one, as in pi), its `promptGuidelines` among the guidelines.
fn extension_prompt_tool(tool: &dyn Tool) -> PromptTool {
    PromptTool {
        name: tool.name().to_owned(),
        blurb: tool.prompt_snippet().unwrap_or_default().to_owned(),
        guidelines: tool.prompt_guidelines().to_vec(),
        builtin: false,
    }
}

/// What the built-in tools are told about the session and the settings.
pub(crate) fn tool_options(paths: &ConfigPaths, settings: &Settings) -> ToolOptions {
    let images = settings.images();
    ToolOptions {
        cwd: paths.cwd.clone(),
        shell_path: settings.shell_path(),
        shell_command_prefix: settings.shell_command_prefix(),
        auto_resize_images: images.auto_resize,
        block_images: images.block_images,
        agent_dir: Some(paths.agent_dir.clone()),
        settings_path: settings.global_file().map(std::path::Path::to_path_buf),
        environment: settings.bash_environment(),
        file_access: None,
        terminals: None,
        host_uris: None,
        sandbox: sandbox(&paths.cwd, settings),
        inherit_provider_keys: settings.get_bool("bash.inheritProviderKeys").unwrap_or(false),
        session_environment: None,
        checkpoints: None,
        background: None,
    }
}

/// The sandbox of the session's commands and writes; `None` for full access.
pub(crate) fn sandbox(cwd: &std::path::Path, settings: &Settings) -> Option<Arc<rho_sandbox::Sandbox>> {
    let config = settings.sandbox();
    if config.mode == rho_sandbox::SandboxMode::DangerFullAccess {
        return None;
    }
    let roots: Vec<std::path::PathBuf> = config.writable_roots.iter().map(std::path::PathBuf::from).collect();
    let policy = rho_sandbox::SandboxPolicy::new(config.mode, cwd, &roots, config.network);
    // rho confines each command by starting it through its own binary, by `/proc/self/exe`: a
    // command that replaces the file at rho's path does not choose what runs next.
    Some(Arc::new(rho_sandbox::Sandbox::new(policy, rho_sandbox::own_binary())))
}

/// The session as the `bash` tool's commands see it (pi 1.6's variables), read at each command's
/// start. Weak, so the tools (held by the session) do not keep the session alive.
#[derive(Debug, Default)]
pub struct SessionVariables(OnceLock<Weak<Inner>>);

impl SessionVariables {
    pub(crate) fn attach(&self, inner: &Arc<Inner>) {
        let _ = self.0.set(Arc::downgrade(inner));
    }
}

impl rho_tools::SessionEnvironment for SessionVariables {
    fn variables(&self) -> Vec<(&'static str, String)> {
        let Some(inner) = self.0.get().and_then(Weak::upgrade) else { return Vec::new() };
        let session = inner.transcript.session();
        let mut vars = vec![("PI_SESSION_ID", session.session_id().to_owned())];
        if let Some(file) = session.session_file() {
            vars.push(("PI_SESSION_FILE", file.display().to_string()));
        }
        drop(session);
        if *inner.has_model.lock() {
            let (provider, id) = inner.agent.read_model(|m| (m.provider.clone(), m.id.clone()));
            vars.push(("PI_PROVIDER", provider));
            vars.push(("PI_MODEL", id));
        }
        vars.push(("PI_REASONING_LEVEL", inner.agent.thinking_level().as_str().to_owned()));
        vars
    }
}

/// The `task` tool's view of its session: the model and session file at call time. Weak, so
/// the tool (held by the session) does not keep the session alive.
struct SessionTaskHost(Weak<Inner>);

impl TaskHost for SessionTaskHost {
    fn parent_model(&self) -> Option<ParentModel> {
        let inner = self.0.upgrade()?;
        if !*inner.has_model.lock() {
            return None;
        }
        let (provider, id) = inner.agent.read_model(|m| (m.provider.clone(), m.id.clone()));
        Some(ParentModel { provider, id, thinking: inner.agent.thinking_level() })
    }

    fn session_file(&self) -> Option<PathBuf> {
        let inner = self.0.upgrade()?;
        inner.transcript.session().session_file().map(std::path::Path::to_path_buf)
    }
}

impl AgentSession {
    /// The commands started in the background with `bash`'s `run_in_background`, oldest first
    /// (none when their tools are off).
    pub fn background_jobs(&self) -> Vec<rho_tools::background::JobInfo> {
        let jobs = self.inner.tools.lock().background_jobs();
        jobs.map(|jobs| jobs.list()).unwrap_or_default()
    }

    /// Registers the `task` tool when it is selected, `task.enabled` is on and this process is
    /// not a sub-agent at `task.maxRecursionDepth`.
    pub(crate) fn install_task_tool(&self, selection: &ToolSelection) {
        let settings = self.settings().clone();
        let task = settings.task();
        let depth = u64::from(crate::task::depth_from_env());
        if !selection.has("task") || !task.enabled || depth >= task.max_recursion_depth {
            return;
        }
        let program = rho_sandbox::own_binary();
        let env = TaskEnv {
            tool_options: tool_options(&self.inner.paths, &settings),
            paths: self.inner.paths.clone(),
            settings,
            sink: self.inner.sink.clone(),
            budget: self.inner.budget.clone(),
            host: Arc::new(SessionTaskHost(Arc::downgrade(&self.inner))),
            program,
        };
        self.add_tool(Arc::new(TaskTool::new(env)));
    }

    /// Replaces the host's tools; they are offered from the next model call on.
    pub(crate) fn set_host_tools(&self, tools: Vec<HostToolEntry>) {
        self.inner.tools.lock().set_host_tools(tools);
        self.refresh_tools();
    }

    /// Replaces the MCP servers' tools; they are offered from the next model request on (a
    /// turn in progress keeps the tools its request offered).
    pub(crate) fn set_mcp_tools(&self, tools: Vec<(Arc<dyn Tool>, bool)>) {
        let declared: HashSet<String> = self.inner.agent.read_messages(|messages| {
            let record = rho_types::system::current_system_message(messages);
            record.and_then(|r| r.tools_added).unwrap_or_default().into_iter().map(|t| t.name).collect()
        });
        let search = {
            let mut set = self.inner.tools.lock();
            set.set_mcp_tools(tools, &declared);
            // A server with deferred tools brings `tool_search` with it.
            set.has_deferred() && !set.has_own_tool(crate::tools::tool_search::NAME)
        };
        if search {
            self.inner.tools.lock().add_own_tool(Arc::new(crate::tools::ToolSearchTool::new(&self.inner)));
        }
        self.refresh_tools();
    }

    /// Adds (or replaces) one of rho's own tools, e.g. the `task` tool.
    pub(crate) fn add_tool(&self, tool: Arc<dyn Tool>) {
        self.inner.tools.lock().add_own_tool(tool);
        self.refresh_tools();
    }

    /// Replaces the extensions' tools; they are offered from the next model request on.
    pub(crate) fn set_extension_tools(&self, tools: Vec<Arc<dyn Tool>>) {
        self.inner.tools.lock().set_extension_tools(tools);
        self.refresh_tools();
    }

    /// pi's `setActiveTools`: from the next request on, only the named tools are offered
    /// (names the session has no tool for are ignored).
    pub(crate) fn set_active_tools(&self, names: Vec<String>) {
        self.inner.tools.lock().choose(names);
        self.refresh_tools();
    }

    /// The names of the tools offered now, in order.
    pub(crate) fn active_tool_names(&self) -> Vec<String> {
        self.inner.agent.tools().iter().map(|t| t.name().to_owned()).collect()
    }

    /// The names of every tool the session could offer, in order.
    pub(crate) fn all_tool_names(&self) -> Vec<String> {
        self.inner.tools.lock().all_tools().iter().map(|(tool, _)| tool.name().to_owned()).collect()
    }

    /// pi's `getAllTools`: every tool the session could offer, with its `sourceInfo`.
    pub(crate) fn all_tools_info(&self) -> Vec<serde_json::Value> {
        let all = self.inner.tools.lock().all_tools();
        all.iter()
            .map(|(tool, source)| {
                let source_info = match source {
                    ToolSource::Extension => tool.source_info().cloned().unwrap_or(serde_json::Value::Null),
                    other => {
                        let (path, source) = match other {
                            ToolSource::Host => (format!("<sdk:{}>", tool.name()), "sdk"),
                            ToolSource::Mcp => (format!("<mcp:{}>", tool.name()), "mcp"),
                            _ => (format!("<builtin:{}>", tool.name()), "builtin"),
                        };
                        serde_json::json!({"path": path, "source": source, "scope": "temporary", "origin": "top-level"})
                    }
                };
                serde_json::json!({
                    "name": tool.name(),
                    "description": tool.description(),
                    "parameters": tool.parameters(),
                    "sourceInfo": source_info,
                })
            })
            .collect()
    }

    /// True when `name` is a built-in or rho tool (a host tool may not take its name).
    pub(crate) fn has_own_tool(&self, name: &str) -> bool {
        self.inner.tools.lock().has_own_tool(name)
    }

    /// Hands the current tool set and the system prompt rebuilt for it to the agent.
    pub(crate) fn refresh_tools(&self) {
        let (tools, prompt) = {
            let set = self.inner.tools.lock();
            (set.active_tools(), set.system_prompt(&self.inner.paths, &self.resources()))
        };
        self.inner.agent.set_prompt(tools, prompt);
    }

    /// The active tools as `get_state.dumpTools` lists them.
    pub(crate) fn dump_tools(&self) -> Vec<DumpTool> {
        self.inner
            .agent
            .tools()
            .iter()
            .map(|t| DumpTool {
                name: t.name().to_owned(),
                description: t.description().to_owned(),
                parameters: t.parameters().clone(),
            })
            .collect()
    }

    pub(crate) fn system_prompt(&self) -> String {
        self.inner.agent.system_prompt()
    }

    /// The system prompt as its sections, in order (omp's list), when it is made of them.
    pub(crate) fn system_prompt_sections(&self) -> Option<Vec<String>> {
        self.inner.agent.system_prompt_sections()
    }
}
