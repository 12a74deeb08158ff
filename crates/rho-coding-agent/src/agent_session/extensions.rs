//! The session's extensions: starting them (their tools join the session's, the loop gets their
//! hooks, `session_start` runs) and stopping them (`session_shutdown`). A session without
//! extensions never gets here.

use std::sync::Arc;

use rho_types::AgentMessage;
use rho_types::types::ImageContent;
use serde_json::{Value, json};

use super::{AgentSession, SessionCommandError};
use crate::compaction::{CompactionOutput, CompactionPreparation};
use crate::extensions::{Config, Extensions, LoopHooks, StartError, Started};

impl AgentSession {
    /// Starts the extensions `config` names; with none, nothing happens. `progress` receives
    /// the line said before the host is installed (first use only).
    pub(crate) async fn start_extensions(
        &self,
        mut config: Config,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<Started, StartError> {
        // A file that is not there fails to load without a host being started for it.
        let (present, missing): (Vec<_>, Vec<_>) =
            std::mem::take(&mut config.paths).into_iter().partition(|p| p.exists());
        config.paths = present;
        let missing: Vec<(String, String)> = missing
            .iter()
            .map(|p| (p.display().to_string(), format!("Failed to load extension: {} does not exist", p.display())))
            .collect();
        if config.paths.is_empty() && !config.starts_for_packages {
            return Ok(Started { load_errors: missing });
        }
        let (extensions, mut started) = Extensions::start(self, config, progress).await?;
        started.load_errors.splice(0..0, missing);
        if self.inner.extensions.set(extensions.clone()).is_err() {
            // Started twice: the first set stays.
            extensions.shutdown().await;
            return Ok(started);
        }
        let hooks: Arc<dyn rho_agent::AgentHooks> = Arc::new(LoopHooks(extensions.clone()));
        let hooks = match self.post_tool_hooks() {
            Some(post) => Arc::new(crate::claude_hooks::WithPostToolHooks { first: Some(hooks), post }),
            None => hooks,
        };
        self.inner.agent.set_hooks(Some(hooks));
        if let Some(resources) = &extensions.registrations().package_resources {
            self.add_resource_paths(resources.skills.clone(), resources.prompts.clone());
            extensions.add_themes(resources.themes.clone());
        }
        extensions.emit(json!({"type": "session_start", "reason": "startup"})).await;
        self.discover_extension_resources("startup").await;
        Ok(started)
    }

    /// `resources_discover`: skills, prompt templates and themes the extensions bring join the
    /// session's.
    async fn discover_extension_resources(&self, reason: &str) {
        let Some(extensions) = self.extensions().cloned() else {
            return;
        };
        let event = json!({"type": "resources_discover", "cwd": self.cwd(), "reason": reason});
        let Some(answer) = extensions.hook("resources_discover", event).await else {
            return;
        };
        let paths = |key: &str| -> Vec<String> {
            answer
                .get(key)
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(|e| e.get("path")?.as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        self.add_resource_paths(paths("skillPaths"), paths("promptPaths"));
        extensions.add_themes(paths("themePaths"));
    }

    /// The theme files and folders packages and extensions bring (for the interactive mode's
    /// theme list).
    pub fn extension_theme_paths(&self) -> Vec<std::path::PathBuf> {
        self.extensions().map(|e| e.themes()).unwrap_or_default()
    }

    /// Skills and prompt templates from extensions and packages join the session's (loaded as
    /// `--skill` / `--prompt-template` paths are).
    fn add_resource_paths(&self, skills: Vec<String>, prompts: Vec<String>) {
        if skills.is_empty() && prompts.is_empty() {
            return;
        }
        let sources = {
            let mut sources = self.inner.resource_sources.lock();
            for skill in skills {
                if !sources.skills.contains(&skill) {
                    sources.skills.push(skill);
                }
            }
            for prompt in prompts {
                if !sources.prompt_templates.contains(&prompt) {
                    sources.prompt_templates.push(prompt);
                }
            }
            sources.clone()
        };
        let (mut resources, diagnostics) = super::load_resources(&self.inner.paths, &self.settings(), &sources);
        for d in diagnostics {
            tracing::warn!("{d}");
        }
        resources.ttsr_rules.clear();
        *self.inner.resources.lock() = Arc::new(resources);
        self.refresh_tools();
    }

    /// `/reload` for extensions: they are torn down (`session_shutdown`, reason `reload`) and
    /// loaded again from their files (`session_start`, reason `reload`).
    pub async fn reload_extensions(&self) {
        self.extensions_replaced("reload", None).await;
    }

    /// Runs `session_shutdown` and stops the extension host (when there is one).
    pub(super) async fn shutdown_extensions(&self) {
        if let Some(extensions) = self.extensions() {
            extensions.shutdown().await;
        }
    }

    /// Whether an extension called `ctx.shutdown()`.
    pub fn extension_shutdown_requested(&self) -> bool {
        self.extensions().is_some_and(|e| e.shutdown_requested())
    }

    /// Whether extensions run in this session (their commands and `input` handlers make a
    /// prompt asynchronous: see [`submit`](Self::submit)).
    pub fn has_extensions(&self) -> bool {
        self.extensions().is_some()
    }

    /// The keys extensions registered (`pi.registerShortcut`), in pi's key syntax.
    pub fn extension_shortcuts(&self) -> Vec<String> {
        self.extensions()
            .map(|e| e.registrations().shortcuts.iter().map(|s| s.shortcut.clone()).collect())
            .unwrap_or_default()
    }

    /// Runs an extension shortcut's handler (on a task of its own).
    pub fn run_extension_shortcut(&self, shortcut: &str) {
        if let Some(extensions) = self.extensions().cloned() {
            let shortcut = shortcut.to_owned();
            tokio::spawn(async move { extensions.run_shortcut(&shortcut).await });
        }
    }

    /// Whether an extension draws custom messages of `custom_type` itself.
    pub fn extension_renders_message(&self, custom_type: &str) -> bool {
        self.extensions().is_some_and(|e| e.renders_message(custom_type))
    }

    /// Whether an extension draws custom entries of `custom_type` (`appendEntry`).
    pub fn extension_renders_entry(&self, custom_type: &str) -> bool {
        self.extensions().is_some_and(|e| e.renders_entry(custom_type))
    }

    /// Whether an extension may draw the tool `name`'s call and its result.
    pub fn extension_renders_tool(&self, name: &str) -> (bool, bool) {
        self.extensions().map_or((false, false), |e| e.renders_tool(name))
    }

    /// The lines an extension's renderer draws (`None`: rho's own rendering applies).
    pub async fn extension_render(&self, request: rho_extensions::RenderRequest) -> Option<Vec<String>> {
        let extensions = self.extensions().cloned()?;
        extensions.render(request).await
    }

    /// Whether an extension's markdown transformer runs on `surface` (pi's `messageType`).
    pub fn extension_transforms_markdown(&self, surface: &str) -> bool {
        self.extensions().is_some_and(|e| e.transforms_markdown(surface))
    }

    /// The markdown the extensions' transformers make of a [`rho_extensions::RenderRequest::Markdown`]
    /// (`None`: the markdown as it was).
    pub async fn extension_transform_markdown(&self, request: rho_extensions::RenderRequest) -> Option<String> {
        let extensions = self.extensions().cloned()?;
        extensions.transform_markdown(request).await
    }

    /// A key for an extension's terminal component `id`, as the terminal's byte sequence.
    pub fn extension_component_input(&self, id: &str, data: String) {
        if let Some(extensions) = self.extensions() {
            extensions.component_input(id.to_owned(), data);
        }
    }

    /// Sets the text of an extension's editor (`setEditorComponent`).
    pub fn set_extension_editor_text(&self, text: &str) {
        if let Some(extensions) = self.extensions() {
            extensions.set_editor_text(text.to_owned());
        }
    }

    /// The terminal was resized: extension components render again at its new size.
    pub fn extension_terminal_resized(&self, columns: u16, rows: u16) {
        if let Some(extensions) = self.extensions() {
            extensions.resize(rho_extensions::TerminalSize { columns, rows });
        }
    }

    /// Resolves once an extension called `ctx.shutdown()` and the session is idle (never
    /// without extensions): the mode then ends as on end of input.
    pub(crate) async fn extension_shutdown(&self) {
        match self.extensions().cloned() {
            Some(extensions) => {
                extensions.shutdown_wanted().await;
                self.wait_idle().await;
            }
            None => std::future::pending().await,
        }
    }
}

/// The session's lifecycle as extensions see it.
impl AgentSession {
    /// A `session_before_*` event: `Err(Cancelled)` when a handler cancelled what is about to
    /// happen.
    pub(crate) async fn before_extensions(&self, event: Value) -> Result<(), SessionCommandError> {
        let Some(extensions) = self.extensions().cloned() else {
            return Ok(());
        };
        let answer = extensions.before(event).await;
        match answer.as_ref().and_then(|a| a.get("cancel")).and_then(Value::as_bool) {
            Some(true) => Err(SessionCommandError::Cancelled),
            _ => Ok(()),
        }
    }

    /// An event extensions only hear (not awaited): `model_select`, `thinking_level_select`, …
    pub(crate) fn tell_extensions(&self, event: Value) {
        if let Some(extensions) = self.extensions() {
            extensions.tell(event);
        }
    }

    /// The session was replaced (new, resume, fork): pi tears the extensions down and loads
    /// them again for the new session (`session_shutdown`, then `session_start`).
    pub(crate) async fn extensions_replaced(&self, reason: &str, previous: Option<std::path::PathBuf>) {
        if let Some(extensions) = self.extensions().cloned() {
            let target = self.session_file();
            extensions.replace(self, reason, previous, target).await;
            self.discover_extension_resources(if reason == "reload" { "reload" } else { "startup" }).await;
        }
    }
}

/// What `session_before_compact` decided.
pub(crate) enum ExtensionCompaction {
    /// Nobody answered: rho summarizes.
    None,
    Cancelled,
    /// An extension wrote the summary.
    Summary(Box<CompactionOutput>),
}

impl AgentSession {
    /// `session_before_compact`, with the preparation in pi's shape: a handler may cancel, or
    /// return the compaction (`{summary, firstKeptEntryId, tokensBefore, details}`).
    pub(crate) async fn extension_compaction(
        &self,
        preparation: &CompactionPreparation,
        custom_instructions: Option<&str>,
    ) -> ExtensionCompaction {
        let Some(extensions) = self.extensions().cloned() else {
            return ExtensionCompaction::None;
        };
        if !extensions.listens("session_before_compact") {
            return ExtensionCompaction::None;
        }
        let branch: Vec<Value> =
            self.session().branch_entries().iter().filter_map(|e| serde_json::to_value(e).ok()).collect();
        let ops = &preparation.file_ops;
        let event = json!({
            "type": "session_before_compact",
            "preparation": {
                "firstKeptEntryId": preparation.first_kept_entry_id,
                "messagesToSummarize": preparation.messages_to_summarize,
                "turnPrefixMessages": preparation.turn_prefix_messages,
                "isSplitTurn": preparation.is_split_turn,
                "tokensBefore": preparation.tokens_before,
                "previousSummary": preparation.previous_summary,
                "fileOps": {"read": ops.read, "written": ops.written, "edited": ops.edited},
                "settings": {
                    "enabled": true,
                    "reserveTokens": preparation.settings.reserve_tokens,
                    "keepRecentTokens": preparation.settings.keep_recent_tokens,
                },
            },
            "branchEntries": branch,
            "customInstructions": custom_instructions,
        });
        let Some(answer) = extensions.before(event).await else {
            return ExtensionCompaction::None;
        };
        if answer.get("cancel").and_then(Value::as_bool) == Some(true) {
            return ExtensionCompaction::Cancelled;
        }
        let Some(compaction) = answer.get("compaction") else {
            return ExtensionCompaction::None;
        };
        let Some(summary) = compaction.get("summary").and_then(Value::as_str) else {
            self.report_extension_error("<extension host>", "session_before_compact", "a compaction needs a summary");
            return ExtensionCompaction::None;
        };
        ExtensionCompaction::Summary(Box::new(CompactionOutput {
            summary: summary.to_owned(),
            first_kept_entry_id: compaction
                .get("firstKeptEntryId")
                .and_then(Value::as_str)
                .unwrap_or(&preparation.first_kept_entry_id)
                .to_owned(),
            tokens_before: compaction.get("tokensBefore").and_then(Value::as_u64).unwrap_or(preparation.tokens_before),
            details: compaction.get("details").cloned().unwrap_or(Value::Null),
            usage: compaction.get("usage").and_then(|u| serde_json::from_value(u.clone()).ok()),
        }))
    }
}

impl AgentSession {
    /// `session_before_tree`: `Err(Cancelled)` when a handler cancelled the move; the summary a
    /// handler wrote, if any.
    pub(crate) async fn extension_tree(
        &self,
        target: &str,
        old_leaf: Option<&str>,
        branch: &[rho_session::SessionEntry],
        summary: &super::BranchSummaryChoice,
    ) -> Result<Option<rho_session::NewBranchSummary>, SessionCommandError> {
        let Some(extensions) = self.extensions().cloned() else {
            return Ok(None);
        };
        if !extensions.listens("session_before_tree") {
            return Ok(None);
        }
        let entries: Vec<Value> = branch.iter().filter_map(|e| serde_json::to_value(e).ok()).collect();
        let common_ancestor = entries.first().and_then(|e| e.get("parentId")).cloned().unwrap_or(Value::Null);
        let (wants, instructions) = match summary {
            super::BranchSummaryChoice::NoSummary => (false, None),
            super::BranchSummaryChoice::Summarize { instructions } => (true, instructions.clone()),
        };
        let event = json!({
            "type": "session_before_tree",
            "preparation": {
                "targetId": target,
                "oldLeafId": old_leaf,
                "commonAncestorId": common_ancestor,
                "entriesToSummarize": entries,
                "userWantsSummary": wants,
                "customInstructions": instructions,
            },
        });
        let Some(answer) = extensions.before(event).await else {
            return Ok(None);
        };
        if answer.get("cancel").and_then(Value::as_bool) == Some(true) {
            return Err(SessionCommandError::Cancelled);
        }
        Ok(answer.get("summary").and_then(|s| {
            Some(rho_session::NewBranchSummary {
                summary: s.get("summary")?.as_str()?.to_owned(),
                details: s.get("details").filter(|d| !d.is_null()).cloned(),
                from_hook: Some(true),
            })
        }))
    }
}

/// What extensions ask of the session (rho's side of pi's `ExtensionAPI` actions).
impl AgentSession {
    /// The messages a prompt's run starts with: the user's, then what the extensions add (the
    /// messages `sendMessage` kept for the next turn, `before_agent_start`'s); and the system
    /// prompt for the run, which `before_agent_start` may replace (the base one otherwise).
    pub(crate) async fn prompt_messages(&self, text: String, images: Vec<ImageContent>) -> Vec<AgentMessage> {
        let Some(extensions) = self.extensions().cloned() else {
            return vec![self.user_message(text, images)];
        };
        let next_turn = extensions.take_next_turn();
        let base = self.base_system_prompt();
        let start = extensions.before_agent_start(&text, &images, &base, self.system_prompt_options()).await;
        let mut messages = vec![self.user_message(text, images)];
        messages.extend(next_turn);
        messages.extend(start.messages);
        self.inner.agent.set_system_prompt(start.system_prompt.unwrap_or(base));
        messages
    }

    /// [`prompt_messages`](Self::prompt_messages) for a run an extension's custom message starts:
    /// `before_agent_start` hears of it as pi 1.6's `messageType: "custom"`.
    pub(crate) async fn custom_prompt_messages(&self, message: AgentMessage) -> Vec<AgentMessage> {
        let Some(extensions) = self.extensions().cloned() else {
            return vec![message];
        };
        let base = self.base_system_prompt();
        let start = extensions.before_custom_start(&message, &base, self.system_prompt_options()).await;
        let mut messages = vec![message];
        messages.extend(start.messages);
        self.inner.agent.set_system_prompt(start.system_prompt.unwrap_or(base));
        messages
    }

    /// The system prompt for the tools and resources as they are (before any extension
    /// changed it for a run).
    fn base_system_prompt(&self) -> String {
        self.inner.tools.lock().system_prompt(&self.inner.paths, &self.resources()).render()
    }

    /// pi's `systemPromptOptions`: what the system prompt was built from.
    fn system_prompt_options(&self) -> Value {
        let resources = self.resources();
        let tools = self.active_tool_names();
        json!({
            "cwd": self.cwd(),
            "customPrompt": resources.prompt_texts.custom,
            "appendSystemPrompt": resources.prompt_texts.append,
            "selectedTools": tools,
            "contextFiles": resources.context_files.iter().map(|f| json!({"path": f.path, "content": f.content})).collect::<Vec<_>>(),
            "skills": resources.skills.iter().map(|s| json!({
                "name": s.name, "description": s.description, "filePath": s.file_path, "baseDir": s.base_dir,
            })).collect::<Vec<_>>(),
        })
    }

    /// `sendMessage`: a custom message, queued while a run streams (`steer` or `followUp`),
    /// kept for the next prompt (`nextTurn`), starting a run (`triggerTurn`), or else just
    /// recorded.
    pub(crate) fn send_custom_message(&self, message: AgentMessage, deliver_as: Option<&str>, trigger_turn: bool) {
        match deliver_as {
            Some("nextTurn") => {
                if let Some(extensions) = self.extensions() {
                    extensions.keep_for_next_turn(message);
                }
            }
            _ if self.is_streaming() => {
                if deliver_as == Some("followUp") {
                    self.queue_follow_up(message);
                } else {
                    self.queue_steer(message);
                }
            }
            _ if trigger_turn => match self.run_custom_message(message) {
                Some(run) => drop(run.start()),
                None => tracing::warn!("an extension's message could not start a run: one is already running"),
            },
            _ => {
                self.emit(rho_agent::AgentEvent::MessageStart { message: message.clone() });
                self.record(message.clone());
                self.emit(rho_agent::AgentEvent::MessageEnd { message });
            }
        }
    }

    /// `appendEntry`: a custom entry in the session file (not seen by the model); hosts hear of
    /// it as pi 1.6's `entry_appended {entry}`.
    pub(crate) fn append_custom_entry(
        &self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<(), SessionCommandError> {
        let id = self.session().append_custom(custom_type, data)?;
        self.announce_entry(&id);
        Ok(())
    }

    /// `user_bash`: a handler's result for a command the user typed, if one gave it.
    pub(crate) async fn extension_bash(&self, command: &str, excluded: bool) -> Option<rho_rpc::BashResult> {
        let extensions = self.extensions().cloned()?;
        let event = json!({
            "type": "user_bash", "command": command, "excludeFromContext": excluded, "cwd": self.cwd(),
        });
        let answer = extensions.hook("user_bash", event).await?;
        let result = answer.get("result")?;
        let output = result.get("output").and_then(Value::as_str).unwrap_or_default().to_owned();
        let lines = output.lines().count() as u64;
        let bytes = output.len() as u64;
        Some(rho_rpc::BashResult {
            exit_code: result.get("exitCode").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok()),
            cancelled: result.get("cancelled").and_then(Value::as_bool).unwrap_or(false),
            truncated: result.get("truncated").and_then(Value::as_bool).unwrap_or(false),
            full_output_path: result.get("fullOutputPath").and_then(Value::as_str).map(str::to_owned),
            total_lines: lines,
            output_lines: lines,
            total_bytes: bytes,
            output_bytes: bytes,
            artifact_id: None,
            working_dir: None,
            output,
        })
    }

    /// Labels the current leaf (`ctx.navigateTree(…, {label})`).
    pub(crate) fn label_leaf(&self, label: &str) -> Result<(), SessionCommandError> {
        match self.leaf_id() {
            Some(leaf) => self.set_label(&leaf, Some(label)),
            None => Ok(()),
        }
    }

    /// `setLabel`, and the tree's Shift+L: marks (or, with `None` or an empty label, unmarks) an
    /// entry of the tree.
    pub fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), SessionCommandError> {
        let mut session = self.session();
        if session.get_entry(entry_id).is_none() {
            return Err(SessionCommandError::Invalid(format!("Entry {entry_id} not found")));
        }
        session.append_label(entry_id, label.filter(|l| !l.is_empty()))?;
        Ok(())
    }
}
