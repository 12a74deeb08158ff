//! One configured server: its connection, its tools and prompts, and its lifecycle.
//!
//! Lifecycle: `start` connects in the background. A failure (spawn, handshake, first
//! `tools/list`, or the startup timeout) sets `failed(reason)`; an exit of a connected server
//! (seen by the connection's supervisor task, or by a call whose transport closed) sets
//! `failed(exited)`, keeps its tools listed, and the next call of one of them restarts it. Each
//! distinct failure is reported once as a [`Diagnostic`], never once per call.
//!
//! Connections are numbered (`generation`): the supervisor, the list_changed handler and a call
//! only act on the connection they belong to, so a late event from a replaced connection
//! changes nothing. One `connecting` lock makes concurrent first calls share one restart.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

use rmcp::Peer;
use rmcp::model::{CallToolRequestParams, CallToolResult, GetPromptRequestParams, GetPromptResult, Prompt};
use rmcp::service::{RoleClient, ServiceError};
use serde_json::{Map, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::child::Oversized;
use crate::config::ServerConfig;
use crate::connect::{Attempt, LogMode, connect, log_path};
use crate::diagnostic::Diagnostic;
use crate::error::McpError;
use crate::handler::ClientEvents;
use crate::shared::Shared;
use crate::status::{ServerState, ServerStatus};

/// A tool as the server listed it.
#[derive(Debug, Clone)]
pub(crate) struct ToolDef {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) schema: Value,
}

pub(crate) struct Server {
    pub(crate) config: ServerConfig,
    shared: Arc<Shared>,
    inner: Mutex<Inner>,
    connecting: tokio::sync::Mutex<()>,
    supervisors: Mutex<Vec<JoinHandle<()>>>,
    /// Set by a stdio connection that ended on a message too large.
    oversized: Arc<Oversized>,
}

struct Inner {
    state: ServerState,
    conn: Option<Conn>,
    generation: u64,
    tools: Arc<Vec<Arc<ToolDef>>>,
    prompts: Arc<Vec<Prompt>>,
    /// The last failure reported, so the same one is not reported again.
    last_report: Option<String>,
}

struct Conn {
    peer: Peer<RoleClient>,
    generation: u64,
    stop: CancellationToken,
}

impl Server {
    pub(crate) fn new(config: ServerConfig, shared: Arc<Shared>) -> Arc<Self> {
        let state = if config.enabled { ServerState::Starting } else { ServerState::Disabled };
        Arc::new(Self {
            config,
            shared,
            inner: Mutex::new(Inner {
                state,
                conn: None,
                generation: 0,
                tools: Arc::default(),
                prompts: Arc::default(),
                last_report: None,
            }),
            connecting: tokio::sync::Mutex::new(()),
            supervisors: Mutex::new(Vec::new()),
            oversized: Arc::new(Oversized::default()),
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    /// Connects in the background (enabled servers only).
    pub(crate) fn start(self: &Arc<Self>) {
        if !self.config.enabled {
            return;
        }
        let server = self.clone();
        tokio::spawn(async move {
            // A failure is recorded and reported by `connect`.
            let _ = server.ensure_connected(&CancellationToken::new()).await;
        });
    }

    pub(crate) fn status(&self) -> ServerStatus {
        let inner = self.inner.lock();
        ServerStatus {
            name: self.config.name.clone(),
            state: inner.state.clone(),
            tool_count: inner.tools.len(),
            prompt_count: inner.prompts.len(),
        }
    }

    pub(crate) fn tools(&self) -> Arc<Vec<Arc<ToolDef>>> {
        self.inner.lock().tools.clone()
    }

    pub(crate) fn prompts(&self) -> Arc<Vec<Prompt>> {
        self.inner.lock().prompts.clone()
    }

    /// Calls `tool`, restarting the server first if it exited. Dropping the request (abort,
    /// timeout) makes rmcp send `notifications/cancelled` for it.
    pub(crate) async fn call_tool(
        self: &Arc<Self>,
        tool: &str,
        args: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let (peer, generation) = self.ensure_connected(cancel).await?;
        let timeout = self.config.timeout.unwrap_or(self.shared.options.call_timeout);
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        let timed_out = || McpError::Timeout { server: self.name().to_owned(), tool: tool.to_owned(), timeout };
        self.request(peer.call_tool(params), generation, timeout, cancel, timed_out).await
    }

    /// Gets prompt `name` with `arguments`, restarting the server first if it exited.
    pub(crate) async fn get_prompt(
        self: &Arc<Self>,
        name: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<GetPromptResult, McpError> {
        let (peer, generation) = self.ensure_connected(cancel).await?;
        let timeout = self.shared.options.call_timeout;
        let params = GetPromptRequestParams::new(name).with_arguments(arguments);
        let timed_out = || McpError::Timeout { server: self.name().to_owned(), tool: name.to_owned(), timeout };
        self.request(peer.get_prompt(params), generation, timeout, cancel, timed_out).await
    }

    async fn request<T>(
        &self,
        request: impl Future<Output = Result<T, ServiceError>>,
        generation: u64,
        timeout: Duration,
        cancel: &CancellationToken,
        timed_out: impl FnOnce() -> McpError,
    ) -> Result<T, McpError> {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(McpError::Aborted),
            _ = self.shared.shutdown.cancelled() => Err(McpError::ShutDown),
            answer = tokio::time::timeout(timeout, request) => match answer {
                Err(_) => Err(timed_out()),
                Ok(Ok(result)) => Ok(result),
                Ok(Err(ServiceError::TransportClosed)) => {
                    self.exited(generation);
                    let server = self.name().to_owned();
                    Err(if self.oversized.happened_on(generation) {
                        McpError::Oversized { server }
                    } else {
                        McpError::Exited { server }
                    })
                }
                Ok(Err(e)) => Err(McpError::Request { server: self.name().to_owned(), message: e.to_string() }),
            },
        }
    }

    /// The live connection, connecting (once, whoever asks first) when there is none.
    async fn ensure_connected(
        self: &Arc<Self>,
        cancel: &CancellationToken,
    ) -> Result<(Peer<RoleClient>, u64), McpError> {
        if let Some(live) = self.live() {
            return Ok(live);
        }
        if !self.config.enabled {
            return Err(McpError::Disabled(self.name().to_owned()));
        }
        let shutdown = &self.shared.shutdown;
        let _guard = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(McpError::Aborted),
            _ = shutdown.cancelled() => return Err(McpError::ShutDown),
            guard = self.connecting.lock() => guard,
        };
        if let Some(live) = self.live() {
            return Ok(live);
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(McpError::Aborted),
            _ = shutdown.cancelled() => Err(McpError::ShutDown),
            connected = self.connect() => connected,
        }
    }

    fn live(&self) -> Option<(Peer<RoleClient>, u64)> {
        let inner = self.inner.lock();
        let conn = inner.conn.as_ref()?;
        (!conn.peer.is_transport_closed()).then(|| (conn.peer.clone(), conn.generation))
    }

    async fn connect(self: &Arc<Self>) -> Result<(Peer<RoleClient>, u64), McpError> {
        let (generation, log_mode) = {
            let mut inner = self.inner.lock();
            let log_mode = if inner.generation == 0 { LogMode::Truncate } else { LogMode::Append };
            inner.generation += 1;
            inner.state = ServerState::Starting;
            (inner.generation, log_mode)
        };
        self.shared.changed();
        let Some(transport) = &self.config.transport else {
            return Err(self.failed(generation, "no command or url is configured".to_owned()));
        };
        let options = &self.shared.options;
        let handler = ClientEvents::new(Arc::downgrade(self), generation, &options.client_version);
        let attempt = async {
            let sandbox = options.sandbox_for(&self.config.source);
            let attempt = Attempt { log: log_mode, sandbox, oversized: (&self.oversized, generation) };
            let running = connect(self.name(), transport, handler, options, attempt).await?;
            let peer = running.peer().clone();
            let tools = peer.list_all_tools().await.map_err(|e| format!("tools/list failed: {e}"))?;
            let prompts = if offers_prompts(&peer) {
                peer.list_all_prompts().await.unwrap_or_else(|e| {
                    tracing::warn!("MCP server {}: prompts/list failed: {e}", self.name());
                    Vec::new()
                })
            } else {
                Vec::new()
            };
            Ok::<_, String>((running, peer, tools, prompts))
        };
        let (running, peer, tools, prompts) = match tokio::time::timeout(options.startup_timeout, attempt).await {
            Err(_) => {
                let reason = format!("it did not start within {} s", options.startup_timeout.as_secs_f64());
                return Err(self.failed(generation, reason));
            }
            Ok(Err(reason)) => return Err(self.failed(generation, reason)),
            Ok(Ok(connected)) => connected,
        };
        // A child of the manager's token: shutdown closes every connection, even one that
        // finished connecting while shutdown began.
        let stop = self.shared.shutdown.child_token();
        {
            let mut inner = self.inner.lock();
            inner.conn = Some(Conn { peer: peer.clone(), generation, stop: stop.clone() });
            inner.state = ServerState::Ready;
            inner.tools = Arc::new(tools.into_iter().map(|t| Arc::new(tool_def(t))).collect());
            inner.prompts = Arc::new(prompts);
            inner.last_report = None;
        }
        self.supervise(running, generation, stop);
        self.shared.changed();
        Ok((peer, generation))
    }

    /// Watches a connection until it ends: an end that was not asked for is an exit.
    fn supervise(self: &Arc<Self>, running: crate::connect::Running, generation: u64, stop: CancellationToken) {
        let server = Arc::downgrade(self);
        let service = running.cancellation_token();
        let task = tokio::spawn(async move {
            let mut waiting = std::pin::pin!(running.waiting());
            tokio::select! {
                _ = &mut waiting => {
                    if let Some(server) = server.upgrade() {
                        server.exited(generation);
                    }
                }
                _ = stop.cancelled() => {
                    service.cancel();
                    let _ = waiting.await;
                }
            }
        });
        let mut supervisors = self.supervisors.lock();
        supervisors.retain(|t| !t.is_finished());
        supervisors.push(task);
    }

    /// Connection `generation` ended without being asked to.
    pub(crate) fn exited(&self, generation: u64) {
        {
            let mut inner = self.inner.lock();
            if inner.conn.as_ref().is_none_or(|c| c.generation != generation) {
                return;
            }
            inner.conn = None;
            inner.state = ServerState::Failed("the server exited".to_owned());
            inner.last_report = None;
        }
        let hint = self.log_hint();
        let why = if self.oversized.happened_on(generation) {
            format!(
                "the server sent a message over {} MiB and its connection was closed",
                crate::child::MAX_MESSAGE_BYTES / (1024 * 1024)
            )
        } else {
            "the server exited".to_owned()
        };
        self.shared.report(Diagnostic::server(
            self.name(),
            format!("{why}; it is restarted when one of its tools is next called{hint}"),
        ));
    }

    /// Records a failed start of connection `generation` and reports it unless it is the same
    /// failure as the last one reported.
    fn failed(&self, generation: u64, reason: String) -> McpError {
        let report = {
            let mut inner = self.inner.lock();
            if inner.generation == generation {
                inner.state = ServerState::Failed(reason.clone());
            }
            let new = inner.last_report.as_deref() != Some(reason.as_str());
            inner.last_report = Some(reason.clone());
            new
        };
        if report {
            let hint = self.log_hint();
            self.shared.report(Diagnostic::server(self.name(), format!("could not be started: {reason}{hint}")));
        } else {
            self.shared.changed();
        }
        McpError::Start { server: self.name().to_owned(), reason }
    }

    fn log_hint(&self) -> String {
        match (&self.config.transport, log_path(self.name(), &self.shared.options)) {
            (Some(crate::config::Transport::Stdio(_)), Some(path)) => format!(" (its stderr: {})", path.display()),
            _ => String::new(),
        }
    }

    pub(crate) async fn refresh_tools(&self, generation: u64) {
        let Some(peer) = self.peer_of(generation) else { return };
        match tokio::time::timeout(self.shared.options.startup_timeout, peer.list_all_tools()).await {
            Ok(Ok(tools)) => {
                {
                    let mut inner = self.inner.lock();
                    if inner.conn.as_ref().is_none_or(|c| c.generation != generation) {
                        return;
                    }
                    inner.tools = Arc::new(tools.into_iter().map(|t| Arc::new(tool_def(t))).collect());
                }
                self.shared.changed();
            }
            Ok(Err(e)) => tracing::warn!("MCP server {}: tools/list after list_changed failed: {e}", self.name()),
            Err(_) => tracing::warn!("MCP server {}: tools/list after list_changed timed out", self.name()),
        }
    }

    pub(crate) async fn refresh_prompts(&self, generation: u64) {
        let Some(peer) = self.peer_of(generation) else { return };
        match tokio::time::timeout(self.shared.options.startup_timeout, peer.list_all_prompts()).await {
            Ok(Ok(prompts)) => {
                {
                    let mut inner = self.inner.lock();
                    if inner.conn.as_ref().is_none_or(|c| c.generation != generation) {
                        return;
                    }
                    inner.prompts = Arc::new(prompts);
                }
                self.shared.changed();
            }
            Ok(Err(e)) => tracing::warn!("MCP server {}: prompts/list after list_changed failed: {e}", self.name()),
            Err(_) => tracing::warn!("MCP server {}: prompts/list after list_changed timed out", self.name()),
        }
    }

    fn peer_of(&self, generation: u64) -> Option<Peer<RoleClient>> {
        let inner = self.inner.lock();
        inner.conn.as_ref().filter(|c| c.generation == generation).map(|c| c.peer.clone())
    }

    /// Closes the connection (a stdio server's process group ends) and waits for that.
    pub(crate) async fn shutdown(&self) {
        if let Some(conn) = self.inner.lock().conn.take() {
            conn.stop.cancel();
        }
        let supervisors = std::mem::take(&mut *self.supervisors.lock());
        for task in supervisors {
            let _ = task.await;
        }
    }
}

fn offers_prompts(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| info.capabilities.prompts.is_some())
}

/// A listed tool with a schema every provider takes: an object schema with `properties`.
fn tool_def(tool: rmcp::model::Tool) -> ToolDef {
    let mut schema = (*tool.input_schema).clone();
    schema.entry("type").or_insert_with(|| Value::String("object".to_owned()));
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        schema.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    }
    let name = tool.name.into_owned();
    let description = tool
        .description
        .map(|d| d.into_owned())
        .filter(|d| !d.trim().is_empty())
        .or_else(|| tool.title.clone())
        .unwrap_or_else(|| name.clone());
    ToolDef { name, title: tool.title, description, schema: Value::Object(schema) }
}
