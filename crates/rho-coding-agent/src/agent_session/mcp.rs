//! The session's MCP servers (rho-mcp): started in the background when the config names any
//! (nothing at all otherwise), once the host's first command is answered (or after
//! [`START_DELAY`] without one), so that their start competes with neither `ready` nor the first
//! `get_state`; their tools joined to the tool set as each server is ready and
//! again whenever one changes (`tools/list_changed`, an exit), their prompts offered as commands
//! (with an `available_commands_update` when they change), their status for `get_state`, their
//! problems reported once (a `notice`, and a warning in the log like the session's other
//! run-time warnings), and shut down with the session.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use rho_mcp::{McpConfig, McpManager, McpOptions, McpPrompt, ServerState};
use rho_rpc::{AvailableCommand, CommandInput, McpServerInfo, McpServerStatus, NotifyType, RpcSlashCommand};
use rho_types::types::{ImageContent, UserContent};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{AgentSession, Inner};

/// How long the servers wait for the host's first command before they start anyway.
const START_DELAY: Duration = Duration::from_millis(20);

/// How long shutting the servers down may take before the session goes on without waiting.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// The MCP side of a session that has servers configured.
pub(crate) struct SessionMcp {
    /// The servers to start; taken when they start.
    pending: Mutex<Option<McpConfig>>,
    manager: OnceLock<Arc<McpManager>>,
    /// Ends the task that follows the servers' changes.
    stop: CancellationToken,
    /// The prompt commands last announced, so that only a change is announced.
    announced: Mutex<Vec<(String, Option<String>)>>,
    /// The servers of the config files (an extension's server of the same name is left out).
    pub(super) file_names: Vec<String>,
    /// The servers extensions registered, by name, with their entries as given.
    pub(super) from_extensions: Mutex<BTreeMap<String, serde_json::Value>>,
    /// The extensions' servers as last reported, until a change applies them.
    pub(super) reported: Mutex<Option<Vec<super::RegisteredMcpServer>>>,
    /// One change of the extensions' servers at a time (each waits for servers to close).
    pub(super) changing: tokio::sync::Mutex<()>,
}

/// A prompt's `/mcp__<server>__<prompt> args`, resolved: the prompt and its bound arguments.
pub(crate) struct McpPromptCall {
    command: String,
    arguments: BTreeMap<String, String>,
}

impl AgentSession {
    /// Takes the servers of `config`, to start in the background by [`START_DELAY`] at the
    /// latest (see [`start_mcp_now`](Self::start_mcp_now)); a config that names none costs
    /// nothing.
    pub(crate) fn start_mcp(&self, config: McpConfig) {
        if config.is_empty() {
            return;
        }
        self.set_up_mcp(config);
    }

    /// Makes `config`'s servers the session's, unless it has servers already.
    pub(super) fn set_up_mcp(&self, config: McpConfig) {
        if tokio::runtime::Handle::try_current().is_err() {
            tracing::warn!("MCP servers are not started: no async runtime");
            return;
        }
        let mcp = SessionMcp {
            file_names: config.servers().iter().map(|s| s.name.clone()).collect(),
            pending: Mutex::new(Some(config)),
            manager: OnceLock::new(),
            stop: CancellationToken::new(),
            announced: Mutex::default(),
            from_extensions: Mutex::default(),
            reported: Mutex::default(),
            changing: tokio::sync::Mutex::new(()),
        };
        if self.inner.mcp.set(mcp).is_ok() {
            let session = Arc::downgrade(&self.inner);
            tokio::spawn(async move {
                tokio::time::sleep(START_DELAY).await;
                if let Some(inner) = session.upgrade() {
                    AgentSession { inner }.start_mcp_now();
                }
            });
        }
    }

    /// Starts the configured servers now, unless they are started already (RPC mode calls this
    /// once a command is answered).
    pub(crate) fn start_mcp_now(&self) {
        let Some(mcp) = self.inner.mcp.get() else { return };
        let Some(config) = mcp.pending.lock().take() else { return };
        let paths = &self.inner.paths;
        let mut options = McpOptions::new(&paths.cwd).with_log_dir(paths.agent_dir.join("logs"));
        // A project's servers (and an editor's) run in the session's sandbox; the user's own
        // `<agent dir>/mcp.json` servers outside it.
        if let Some(sandbox) = self.sandbox() {
            options = options.with_sandbox(sandbox, paths.agent_dir.join("mcp.json"));
        }
        let manager = McpManager::start(config, options);
        let changes = manager.subscribe();
        if mcp.manager.set(manager).is_ok() {
            tokio::spawn(follow(Arc::downgrade(&self.inner), changes, mcp.stop.clone()));
        }
    }

    /// `/mcp reconnect <name>`: the server closed and started again; false when there is none.
    pub async fn reconnect_mcp_server(&self, name: &str) -> bool {
        match self.mcp_manager().cloned() {
            Some(manager) => manager.reconnect(name).await,
            None => false,
        }
    }

    pub(super) fn mcp_manager(&self) -> Option<&Arc<McpManager>> {
        self.inner.mcp.get()?.manager.get()
    }

    /// Starts the servers and resolves once those named in `needed` are no longer starting
    /// (each ready, failed or disabled) and the others are too or `grace` has passed: print mode
    /// waits for this before its first prompt, so a slow server the prompt does not name holds
    /// it up by `grace` at most (its tools join later turns). At once without servers.
    pub(crate) async fn mcp_settled(&self, needed: &[String], grace: std::time::Duration) {
        self.start_mcp_now();
        if let Some(manager) = self.mcp_manager() {
            let named = manager.settled_where(|name| needed.iter().any(|n| n == name));
            let others = tokio::time::timeout(grace, manager.settled());
            let _ = tokio::join!(named, others);
        }
    }

    /// The end of the session, the same in every mode: Claude Code's `SessionEnd` hooks run,
    /// the extensions hear `session_shutdown` and stop, the MCP servers stop (bounded), and a
    /// session file in which nothing was said is removed.
    pub async fn shutdown(&self) {
        self.end_session_hooks("other").await;
        self.shutdown_extensions().await;
        self.shutdown_mcp().await;
        self.discard_if_unused();
    }

    /// Closes every server and waits (bounded) until their processes are gone; servers not
    /// started yet never will be.
    pub(super) async fn shutdown_mcp(&self) {
        let Some(mcp) = self.inner.mcp.get() else { return };
        mcp.pending.lock().take();
        mcp.stop.cancel();
        let Some(manager) = mcp.manager.get() else { return };
        if tokio::time::timeout(SHUTDOWN_GRACE, manager.shutdown()).await.is_err() {
            tracing::warn!("shutdown: the MCP servers did not stop in time");
        }
    }

    /// `get_state.mcpServers`: every configured server (`starting` until they are started);
    /// `None` when none is configured.
    pub fn mcp_servers(&self) -> Option<Vec<McpServerInfo>> {
        let mcp = self.inner.mcp.get()?;
        let Some(manager) = mcp.manager.get() else {
            let pending = mcp.pending.lock();
            let servers = pending.as_ref().map(|c| c.servers()).unwrap_or_default().iter().map(|s| McpServerInfo {
                name: s.name.clone(),
                status: if s.enabled { McpServerStatus::Starting } else { McpServerStatus::Disabled },
                error: None,
                tool_count: 0,
                prompt_count: 0,
            });
            return Some(servers.collect());
        };
        let servers = manager.status().into_iter().map(|s| {
            let (status, error) = match s.state {
                ServerState::Starting => (McpServerStatus::Starting, None),
                ServerState::Ready => (McpServerStatus::Ready, None),
                ServerState::Failed(reason) => (McpServerStatus::Failed, Some(reason)),
                ServerState::Disabled => (McpServerStatus::Disabled, None),
            };
            McpServerInfo { name: s.name, status, error, tool_count: s.tool_count, prompt_count: s.prompt_count }
        });
        Some(servers.collect())
    }

    /// Takes the servers' tools as they are now (a prompt does this before its run starts, so a
    /// server reported ready has its tools in the first request).
    pub(crate) fn sync_mcp_tools(&self) {
        if let Some(manager) = self.mcp_manager() {
            self.set_mcp_tools(manager.offered_tools());
        }
    }

    /// The servers' changes: problems reported, tools replaced, prompt commands announced.
    fn follow_mcp(&self) {
        let Some(mcp) = self.inner.mcp.get() else { return };
        let Some(manager) = mcp.manager.get() else { return };
        for diagnostic in manager.take_diagnostics() {
            let message = diagnostic.to_string();
            tracing::warn!("{message}");
            self.emit_notice(NotifyType::Warning, &message, Some("mcp"));
        }
        self.set_mcp_tools(manager.offered_tools());
        let prompts: Vec<(String, Option<String>)> =
            manager.prompts().into_iter().map(|p| (p.command, p.description)).collect();
        let changed = {
            let mut announced = mcp.announced.lock();
            let changed = *announced != prompts;
            *announced = prompts;
            changed
        };
        if changed {
            self.announce_commands();
        }
    }

    fn mcp_prompts(&self) -> Vec<McpPrompt> {
        self.mcp_manager().map(|manager| manager.prompts()).unwrap_or_default()
    }

    /// `get_commands`' entries for the MCP prompts.
    pub(crate) fn mcp_slash_commands(&self) -> Vec<RpcSlashCommand> {
        self.mcp_prompts()
            .into_iter()
            .map(|p| RpcSlashCommand {
                description: Some(prompt_description(&p)),
                name: p.command,
                source: rho_rpc::SlashCommandSource::McpPrompt,
                source_info: None,
                location: None,
                path: None,
            })
            .collect()
    }

    /// `get_available_commands`' entries for the MCP prompts, in omp's shape.
    pub(crate) fn mcp_available_commands(&self) -> Vec<AvailableCommand> {
        self.mcp_prompts()
            .into_iter()
            .map(|p| AvailableCommand {
                description: Some(prompt_description(&p)),
                name: p.command,
                aliases: None,
                input: Some(CommandInput { hint: "arguments".into() }),
                subcommands: None,
                source: "mcp_prompt".into(),
            })
            .collect()
    }

    /// `text` as an MCP prompt command (`/mcp__<server>__<prompt> args`), its words bound to the
    /// prompt's arguments; `None` when it names no MCP prompt. A missing required argument is
    /// the error, listing them.
    pub(crate) fn mcp_prompt_call(&self, text: &str) -> Result<Option<McpPromptCall>, String> {
        let Some(line) = text.strip_prefix("/mcp__").map(|_| &text[1..]) else { return Ok(None) };
        let (command, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let Some(prompt) = self.mcp_prompts().into_iter().find(|p| p.command == command) else { return Ok(None) };
        match prompt.bind_arguments(rest) {
            Ok(arguments) => Ok(Some(McpPromptCall { command: prompt.command, arguments })),
            Err(missing) => Err(format!("/{} needs: {}", prompt.command, missing.join(", "))),
        }
    }

    /// Gets the prompt from its server: its messages' text joined as one prompt (as omp does),
    /// their images after `images`. On failure the prompt is sent as it was typed, with a
    /// warning, as a prompt template that cannot be read is.
    pub(crate) async fn expand_mcp_prompt(
        &self,
        call: McpPromptCall,
        typed: &str,
        mut images: Vec<ImageContent>,
        cancel: &CancellationToken,
    ) -> (String, Vec<ImageContent>) {
        let Some(manager) = self.mcp_manager() else { return (typed.to_owned(), images) };
        match manager.get_prompt(&call.command, call.arguments, cancel).await {
            Ok(messages) => {
                let mut texts = Vec::new();
                for content in messages.into_iter().flat_map(|m| m.content) {
                    match content {
                        UserContent::Text(t) => texts.push(t.text),
                        UserContent::Image(image) => images.push(image),
                    }
                }
                (texts.join("\n\n"), images)
            }
            Err(e) => {
                let message = format!("MCP prompt /{}: {e}; sent as typed", call.command);
                tracing::warn!("{message}");
                self.emit_notice(NotifyType::Warning, &message, Some("mcp"));
                (typed.to_owned(), images)
            }
        }
    }
}

fn prompt_description(prompt: &McpPrompt) -> String {
    prompt
        .description
        .clone()
        .or_else(|| prompt.title.clone())
        .unwrap_or_else(|| format!("MCP prompt from {}", prompt.server))
}

/// Follows the servers' changes until the session is gone or its servers are shut down.
async fn follow(session: Weak<Inner>, mut changes: watch::Receiver<u64>, stop: CancellationToken) {
    loop {
        changes.borrow_and_update();
        match session.upgrade() {
            Some(inner) => AgentSession { inner }.follow_mcp(),
            None => return,
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = stop.cancelled() => return,
        }
    }
}
