//! The manager: every configured server, started in parallel in the background, and what a host
//! needs of them: the tools known so far, each server's status, the prompts, a change signal,
//! the diagnostics, and shutdown. Servers may be added and removed while it runs (those an
//! extension registers).
//!
//! Nothing here blocks the caller: [`McpManager::start`] returns at once and tools appear as
//! servers become ready; a host re-reads [`McpManager::tools`] when [`McpManager::subscribe`]
//! fires (or awaits [`McpManager::settled`] once, as a print-mode run would before its prompt).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use parking_lot::RwLock;
use rho_agent::Tool;
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::{McpConfig, ServerConfig};
use crate::diagnostic::Diagnostic;
use crate::error::McpError;
use crate::name::{cap, sanitize, unique};
use crate::options::McpOptions;
use crate::prompt::{McpPrompt, McpPromptMessage, messages};
use crate::server::Server;
use crate::shared::Shared;
use crate::status::{ServerState, ServerStatus};
use crate::tool::McpTool;

/// The MCP servers of one session.
pub struct McpManager {
    /// Sorted by name (the config's order), so names are minted in a stable order.
    servers: RwLock<Vec<Arc<Server>>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager").field("servers", &self.status()).finish()
    }
}

impl McpManager {
    /// Starts every enabled server in the background and returns at once. Must be called
    /// within a tokio runtime.
    pub fn start(config: McpConfig, options: McpOptions) -> Arc<Self> {
        Self::start_with_diagnostics(config, options, Vec::new())
    }

    /// [`start`](Self::start), queueing `diagnostics` (those of [`McpConfig::load`]) ahead of
    /// the servers' own, so a host drains one queue.
    pub fn start_with_diagnostics(config: McpConfig, options: McpOptions, diagnostics: Vec<Diagnostic>) -> Arc<Self> {
        let shared = Arc::new(Shared::new(options, diagnostics));
        let servers: Vec<Arc<Server>> =
            config.servers().iter().map(|server| Server::new(server.clone(), shared.clone())).collect();
        for server in &servers {
            server.start();
        }
        Arc::new(Self { servers: RwLock::new(servers), shared })
    }

    /// The servers as they are now.
    fn servers(&self) -> Vec<Arc<Server>> {
        self.servers.read().clone()
    }

    /// Adds `config`'s server and starts it (unless disabled); a server of the same name is
    /// closed and replaced.
    pub async fn add(&self, config: ServerConfig) {
        let replaced = self.take(&config.name);
        let server = Server::new(config, self.shared.clone());
        {
            let mut servers = self.servers.write();
            let at = servers.partition_point(|s| s.name() < server.name());
            servers.insert(at, server.clone());
        }
        server.start();
        self.shared.changed();
        if let Some(old) = replaced {
            old.shutdown().await;
        }
    }

    /// Closes the server `name` and starts it again from its config (pi 1.6's `/mcp` reconnect);
    /// false when there is none.
    pub async fn reconnect(&self, name: &str) -> bool {
        let config = self.servers.read().iter().find(|s| s.name() == name).map(|s| s.config.clone());
        match config {
            Some(config) => {
                self.add(config).await;
                true
            }
            None => false,
        }
    }

    /// Closes the server `name` and forgets it (its tools and prompts go); false when there is
    /// none.
    pub async fn remove(&self, name: &str) -> bool {
        let Some(server) = self.take(name) else { return false };
        self.shared.changed();
        server.shutdown().await;
        true
    }

    fn take(&self, name: &str) -> Option<Arc<Server>> {
        let mut servers = self.servers.write();
        let at = servers.iter().position(|s| s.name() == name)?;
        Some(servers.remove(at))
    }

    /// The tools of every server, as known now (a server still starting contributes none yet;
    /// one that exited keeps its tools, which restart it when called), but those its `exposure`
    /// hides. Names are `mcp__<server>__<tool>`, unique across servers.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.offered_tools().into_iter().map(|(tool, _)| tool).collect()
    }

    /// [`tools`](Self::tools), each with whether it waits for `tool_search` (`deferred`).
    pub fn offered_tools(&self) -> Vec<(Arc<dyn Tool>, bool)> {
        let mut taken = HashSet::new();
        let mut tools: Vec<(Arc<dyn Tool>, bool)> = Vec::new();
        for server in &self.servers() {
            let defs = server.tools();
            for def in defs.iter().filter(|def| server.config.offers(&def.name)) {
                let name = unique(crate::name::tool_name(server.name(), &def.name), &|n| taken.contains(n));
                taken.insert(name.clone());
                let deferred = server.config.defers(&def.name);
                tools.push((Arc::new(McpTool::new(name, def.clone(), server.clone())), deferred));
            }
        }
        tools
    }

    /// Every configured server (disabled ones included), sorted by name.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers.read().iter().map(|s| s.status()).collect()
    }

    /// The prompts of the ready servers (and of exited ones, which restart on use).
    pub fn prompts(&self) -> Vec<McpPrompt> {
        let mut taken = HashSet::new();
        let mut out = Vec::new();
        for server in &self.servers() {
            for prompt in server.prompts().iter() {
                let base = cap(format!("mcp__{}__{}", sanitize(server.name()), sanitize(&prompt.name)));
                let command = unique(base, &|n| taken.contains(n));
                taken.insert(command.clone());
                out.push(McpPrompt::new(command, server.name(), prompt));
            }
        }
        out
    }

    /// Gets the prompt whose [`McpPrompt::command`] is `command`, with its arguments.
    pub async fn get_prompt(
        &self,
        command: &str,
        arguments: BTreeMap<String, String>,
        cancel: &CancellationToken,
    ) -> Result<Vec<McpPromptMessage>, McpError> {
        let prompt = self
            .prompts()
            .into_iter()
            .find(|p| p.command == command)
            .ok_or_else(|| McpError::UnknownPrompt(command.to_owned()))?;
        let server = self.server(&prompt.server)?;
        let arguments: Map<String, Value> = arguments.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
        Ok(messages(server.get_prompt(&prompt.name, arguments, cancel).await?))
    }

    fn server(&self, name: &str) -> Result<Arc<Server>, McpError> {
        self.servers
            .read()
            .iter()
            .find(|s| s.name() == name)
            .cloned()
            .ok_or_else(|| McpError::UnknownServer(name.to_owned()))
    }

    /// Fires whenever a server's state, tools or prompts change, or a diagnostic is queued.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.shared.subscribe()
    }

    /// The problems found since the last call (config problems first), each returned once.
    pub fn take_diagnostics(&self) -> Vec<Diagnostic> {
        self.shared.take_diagnostics()
    }

    /// Resolves once no server is starting: each is ready, failed or disabled.
    pub async fn settled(&self) {
        self.settled_where(|_| true).await;
    }

    /// Resolves once no server whose name `wanted` accepts is starting.
    pub async fn settled_where(&self, wanted: impl Fn(&str) -> bool) {
        let mut changes = self.subscribe();
        loop {
            changes.borrow_and_update();
            let starting =
                self.servers.read().iter().any(|s| wanted(s.name()) && s.status().state == ServerState::Starting);
            if !starting {
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Closes every connection and waits until each stdio server's process group is gone (rmcp
    /// closes stdin, waits, then signals). Calls in flight end with [`McpError::ShutDown`].
    pub async fn shutdown(&self) {
        self.shared.shutdown.cancel();
        let servers = self.servers();
        futures::future::join_all(servers.iter().map(|s| s.shutdown())).await;
    }
}

impl Drop for McpManager {
    /// A manager dropped without [`shutdown`](McpManager::shutdown) still closes its connections
    /// (in the background).
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}
