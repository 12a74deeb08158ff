//! A session's extensions: the host process (rho-extensions), what the extensions registered,
//! and the session's side of the channel. Started only when some extension is configured; a
//! session without extensions has no [`Extensions`] and pays nothing.
//!
//! Before every message that runs extension code (an event, a tool call, a command) the host's
//! copy of the session is brought up to date ([`sync`]). Hooks whose results change behaviour
//! wait for their answer at most [`Config::hook_timeout`], not counting the time a dialog the
//! handler opened stays open; a hook that fails, times out or meets a crashed host is reported
//! and the agent goes on as if nobody had answered (a `tool_call` is blocked: pi's fail-safe). A
//! crashed host is started again on next use, with `session_start` (reason `reload`).

mod actions;
mod commands;
mod forward;
mod hooks;
pub mod project_trust;
mod provider;
mod render;
mod sync;
mod tools;
mod virtual_models;

use parking_lot::Mutex;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use rho_extensions::host::HostOutput;
use rho_extensions::protocol::{Init, Registrations};
use rho_extensions::{ExtensionHost, FlagValue, HostCommand, HostError, Incoming, Runtime, TerminalSize, ToHost};
use serde_json::Value;
use tokio::sync::{Mutex as AsyncMutex, mpsc};

use crate::agent_session::{AgentSession, Inner};

pub use hooks::HookOutcome;
pub(crate) use hooks::{LoopHooks, request_hooks};
pub(crate) use provider::provider_stream;

/// What a session's extensions are started with.
#[derive(Debug, Clone)]
pub struct Config {
    /// The extensions' entry files rho found by pi's rules (whether to start the host, and
    /// which named files are missing).
    pub paths: Vec<PathBuf>,
    /// Those only rho looks for (`.rho/extensions/`): the host loads them after what pi's
    /// package manager resolves.
    pub rho_only: Vec<PathBuf>,
    /// `-e` values as given.
    pub cli: Vec<String>,
    /// Packages are configured (the host starts for them even when no file was found).
    pub starts_for_packages: bool,
    /// `--no-extensions`.
    pub no_extensions: bool,
    /// The project is trusted: its settings' packages and extensions and its extension folders
    /// load (pi's package manager in the host otherwise sees none of them).
    pub trusted_project: bool,
    /// Command-line flags rho does not know, for the flags extensions register.
    pub flag_values: Vec<(String, FlagValue)>,
    /// `ctx.hasUI`.
    pub has_ui: bool,
    /// `ctx.mode`: `tui`, `rpc`, `json` or `print`.
    pub mode: &'static str,
    /// The terminal that draws the extensions' components (the interactive mode), at its size
    /// when the extensions start.
    pub terminal: Option<TerminalSize>,

    /// Where what extensions print goes.
    pub output: Output,
    pub hook_timeout: Duration,
}

/// Where the host's output goes (see [`HostOutput`]).
#[derive(Debug, Clone)]
pub enum Output {
    Stderr,
    File(PathBuf),
}

/// Why the extensions could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Install(#[from] rho_extensions::InstallError),
    #[error("{0}")]
    Host(#[from] HostError),
    /// The command line's extension flags are wrong (unknown or missing a value).
    #[error("{0}")]
    Flags(String),
}

/// What starting the extensions found, for the mode to report.
#[derive(Debug, Default)]
pub struct Started {
    /// Extensions that failed to load, as pi says it (`Failed to load extension: …`).
    pub load_errors: Vec<(String, String)>,
}

/// How long a host has to answer a ping before it counts as stuck.
const PING_TIMEOUT: Duration = Duration::from_secs(1);

pub(crate) struct Extensions {
    config: Config,
    runtime: Runtime,
    session: Weak<Inner>,
    host: Mutex<Option<ExtensionHost>>,
    /// One restart at a time.
    restarting: AsyncMutex<()>,
    incoming_tx: mpsc::UnboundedSender<Incoming>,
    registrations: Mutex<Arc<Registrations>>,
    /// The events some handler listens to.
    subscribed: Mutex<Arc<HashSet<String>>>,
    synced: Mutex<sync::Synced>,
    forwarding: Mutex<forward::Forwarding>,
    /// Dialogs extension code has open: hook timeouts wait while any is.
    open_dialogs: AtomicUsize,
    /// Set by `ctx.shutdown()`; the mode ends when it next can.
    shutdown_requested: AtomicBool,
    shutdown_notify: tokio::sync::Notify,
    /// `sendMessage(…, {deliverAs: "nextTurn"})`: sent with the next prompt.
    next_turn: Mutex<Vec<rho_types::AgentMessage>>,
    /// Messages `agent_end` handlers sent (with how to deliver them), waiting for those handlers
    /// to be done.
    after_agent_end: Mutex<Vec<(rho_types::AgentMessage, Option<String>)>>,
    /// The terminal's size now, where components are drawn.
    terminal: Mutex<Option<TerminalSize>>,
    /// Theme files and folders from packages and `resources_discover`.
    themes: Mutex<Vec<PathBuf>>,
}

impl Extensions {
    /// Installs the host if needed, starts it, and loads the extensions into it.
    pub(crate) async fn start(
        session: &AgentSession,
        config: Config,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(Arc<Self>, Started), StartError> {
        let agent_dir = session.paths().agent_dir.clone();
        let runtime = rho_extensions::install::prepare(&agent_dir, progress).await?;
        let (incoming_tx, incoming_rx) = mpsc::unbounded_channel();
        let this = Arc::new(Self {
            runtime,
            session: Arc::downgrade(&session.inner),
            host: Mutex::new(None),
            restarting: AsyncMutex::new(()),
            incoming_tx,
            registrations: Mutex::default(),
            subscribed: Mutex::default(),
            synced: Mutex::default(),
            forwarding: Mutex::default(),
            open_dialogs: AtomicUsize::new(0),
            shutdown_requested: AtomicBool::new(false),
            shutdown_notify: tokio::sync::Notify::new(),
            next_turn: Mutex::default(),
            after_agent_end: Mutex::default(),
            terminal: Mutex::new(config.terminal),
            themes: Mutex::default(),
            config,
        });
        // Answers come through the loop (after what the host did before answering), so it runs
        // before the first request.
        actions::spawn_loop(Arc::downgrade(&this), incoming_rx);
        let registrations = match this.spawn_host(session).await {
            Ok(registrations) => registrations,
            // Extension code ended the host while it loaded: the session goes on without
            // extensions, and says why.
            Err(StartError::Host(HostError::Exited(reason))) => {
                let error = format!("the extension host exited while loading the extensions ({reason})");
                return Ok((this, Started { load_errors: vec![("<extension host>".to_owned(), error)] }));
            }
            Err(e) => return Err(e),
        };
        let errors: Vec<String> =
            registrations.diagnostics.iter().filter(|d| d.kind == "error").map(|d| d.message.clone()).collect();
        if !errors.is_empty() {
            this.kill();
            return Err(StartError::Flags(errors.join("\n")));
        }
        let started =
            Started { load_errors: registrations.errors.iter().map(|e| (e.path.clone(), e.error.clone())).collect() };
        Ok((this, started))
    }

    /// The host's environment: pi's agent dir; with a terminal, colours on (its output is a log
    /// file, and pi's text styles would otherwise see no colour support).
    fn host_env(&self, agent_dir: &std::path::Path) -> Vec<(String, String)> {
        let mut env = vec![("PI_CODING_AGENT_DIR".to_owned(), agent_dir.display().to_string())];
        if self.config.terminal.is_some() {
            env.push(("FORCE_COLOR".to_owned(), "3".to_owned()));
        }
        // The host, and what extensions start, end with rho.
        if let Some((var, token)) = rho_tools::guardian::owner_env() {
            env.push((var.to_owned(), token.to_owned()));
        }
        env
    }

    /// Starts a host process, initialises it with the session as it is now and takes its
    /// registrations.
    async fn spawn_host(self: &Arc<Self>, session: &AgentSession) -> Result<Arc<Registrations>, StartError> {
        let agent_dir = session.paths().agent_dir.clone();
        let command = HostCommand {
            node: self.runtime.node.clone(),
            script: self.runtime.script.clone(),
            cwd: session.cwd().to_path_buf(),
            env: self.host_env(&agent_dir),
            output: match &self.config.output {
                Output::Stderr => HostOutput::Stderr,
                Output::File(path) => HostOutput::File(path.clone()),
            },
        };
        let host = ExtensionHost::spawn(command, self.incoming_tx.clone()).await?;
        // The providers the extensions register come again as they load.
        session.clear_extension_providers();
        let (session_sync, state) = {
            let mut synced = self.synced.lock();
            *synced = sync::Synced::default();
            (synced.full(session), synced.state_changes(session))
        };
        let init = Init {
            cwd: session.cwd().display().to_string(),
            agent_dir: agent_dir.display().to_string(),
            cli: self.config.cli.clone(),
            no_extensions: self.config.no_extensions,
            trusted_project: self.config.trusted_project,
            extensions: self.config.rho_only.iter().map(|p| p.display().to_string()).collect(),
            flag_values: self.config.flag_values.clone(),
            has_ui: self.config.has_ui,
            mode: self.config.mode,
            hook_timeout_ms: u64::try_from(self.config.hook_timeout.as_millis()).unwrap_or(u64::MAX),
            terminal: *self.terminal.lock(),
            theme: session.settings().get("theme").and_then(Value::as_str).map(str::to_owned),
            session: session_sync,
            state: state.unwrap_or(Value::Null),
            spoken_apis: rho_types::model::api::SPOKEN,
        };
        let (_, answer) = host.request(&ToHost::Init(Box::new(init)));
        let value = answer.await.map_err(|_| HostError::Exited("it closed before loading the extensions".into()))??;
        let registrations: Registrations = serde_json::from_value(value)
            .map_err(|e| HostError::Failed(format!("unreadable registrations from the host: {e}")))?;
        let registrations = Arc::new(registrations);
        *self.host.lock() = Some(host);
        self.set_registrations(session, registrations.clone());
        Ok(registrations)
    }

    /// Takes what the extensions registered: their tools join the session's, their events are
    /// listened to.
    fn set_registrations(self: &Arc<Self>, session: &AgentSession, registrations: Arc<Registrations>) {
        *self.subscribed.lock() = Arc::new(registrations.handlers.iter().cloned().collect());
        *self.registrations.lock() = registrations.clone();
        session.set_extension_tools(tools::extension_tools(&registrations, self.clone()));
    }

    pub(crate) fn registrations(&self) -> Arc<Registrations> {
        self.registrations.lock().clone()
    }

    /// Whether some handler listens to `event`.
    pub(crate) fn listens(&self, event: &str) -> bool {
        self.subscribed.lock().contains(event)
    }

    pub(crate) fn session(&self) -> Option<AgentSession> {
        self.session.upgrade().map(|inner| AgentSession { inner })
    }

    /// The running host, started again if it exited.
    async fn host(self: &Arc<Self>) -> Result<ExtensionHost, HostError> {
        if let Some(host) = self.host.lock().clone().filter(ExtensionHost::is_alive) {
            return Ok(host);
        }
        let _one_at_a_time = self.restarting.lock().await;
        if let Some(host) = self.host.lock().clone().filter(ExtensionHost::is_alive) {
            return Ok(host);
        }
        let session = self.session().ok_or_else(|| HostError::Exited("the session is gone".into()))?;
        match self.spawn_host(&session).await {
            Ok(_) => {}
            Err(StartError::Host(e)) => return Err(e),
            Err(e) => return Err(HostError::Start(e.to_string())),
        }
        let host = self.host.lock().clone().ok_or_else(|| HostError::Exited("it did not start".into()))?;
        // The extensions start from scratch, as after pi's reload.
        let event = serde_json::json!({"type": "session_start", "reason": "reload"});
        self.sync_to(&host, &session, true);
        let (_, answer) = host.request(&ToHost::Event { kind: "emit".into(), event });
        let _ = answer.await;
        Ok(host)
    }

    /// Brings the host's copy of the session (and, with `state`, what it knows of the agent) up
    /// to date.
    fn sync_to(&self, host: &ExtensionHost, session: &AgentSession, state: bool) {
        let (entries, state) = {
            let mut synced = self.synced.lock();
            (synced.changes(session), if state { synced.state_changes(session) } else { None })
        };
        if let Some(entries) = entries {
            host.send(&ToHost::Sync(entries));
        }
        if let Some(state) = state {
            host.send(&ToHost::State { state });
        }
    }

    /// Sends a request after a sync and waits for its answer: at most the hook timeout
    /// (extended while a dialog is open) when `bounded`, else until it ends.
    async fn call(self: &Arc<Self>, message: ToHost, bounded: bool) -> Result<Value, HostError> {
        let host = self.host().await?;
        if let Some(session) = self.session() {
            self.sync_to(&host, &session, true);
        }
        let (_, answer) = host.request(&message);
        self.wait(answer, bounded).await
    }

    async fn wait(
        &self,
        answer: tokio::sync::oneshot::Receiver<Result<Value, HostError>>,
        bounded: bool,
    ) -> Result<Value, HostError> {
        let closed = || HostError::Exited("it closed the channel".into());
        if !bounded {
            return answer.await.map_err(|_| closed())?;
        }
        let timeout = self.config.hook_timeout;
        tokio::pin!(answer);
        loop {
            tokio::select! {
                result = &mut answer => return result.map_err(|_| closed())?,
                () = tokio::time::sleep(timeout) => {
                    if self.open_dialogs.load(Ordering::Acquire) == 0 {
                        self.stop_if_unresponsive().await;
                        return Err(HostError::Failed(format!(
                            "no answer within {} s", timeout.as_secs_f32()
                        )));
                    }
                }
            }
        }
    }

    /// After a hook went unanswered (or an aborted tool did not end): a host whose event loop no
    /// longer runs (extension code stuck in a loop) does not answer a ping within
    /// [`PING_TIMEOUT`], and is killed, to be started again when an extension is next needed;
    /// one merely waiting on a promise answers, and goes on.
    async fn stop_if_unresponsive(&self) {
        let Some(host) = self.host.lock().clone().filter(ExtensionHost::is_alive) else {
            return;
        };
        let (_, pong) = host.request(&ToHost::Ping);
        if tokio::time::timeout(PING_TIMEOUT, pong).await.is_ok() {
            return;
        }
        {
            let mut current = self.host.lock();
            if current.as_ref().is_some_and(|h| h.same_process(&host)) {
                *current = None;
            }
        }
        host.kill();
        self.report(
            "<extension host>",
            "timeout",
            &format!(
                "the extension host stopped answering (extension code busy for over {} s); it was stopped, and is \
                 started again when an extension is next needed",
                self.config.hook_timeout.as_secs_f32()
            ),
        );
    }

    /// Sends a message that wants no answer, after a sync; nothing when the host is down
    /// (notifications do not restart it).
    fn notify(&self, message: &ToHost, with_state: bool) {
        let Some(host) = self.host.lock().clone().filter(ExtensionHost::is_alive) else {
            return;
        };
        if let Some(session) = self.session() {
            self.sync_to(&host, &session, with_state);
        }
        host.send(message);
    }

    /// The session was replaced or reloaded: the host runs `session_shutdown`, loads the
    /// extensions again and runs `session_start`; their new registrations take the old ones'
    /// place.
    pub(crate) async fn replace(
        self: &Arc<Self>,
        session: &AgentSession,
        reason: &str,
        previous: Option<PathBuf>,
        target: Option<PathBuf>,
    ) {
        let host = match self.host().await {
            Ok(host) => host,
            Err(e) => return self.report("<extension host>", "session_start", &e.to_string()),
        };
        // Their providers go too; the new instances register theirs as they load.
        session.clear_extension_providers();
        // What the old instances put on screen goes with them (pi's resetExtensionUI).
        if let Some(ui) = session.ui() {
            ui.reset_extensions();
        }
        // The old instances still read the old session in `session_shutdown`: the new one
        // travels with the message and is applied after it.
        let sync = self.synced.lock().changes(session);
        let message = ToHost::Replace {
            reason: reason.to_owned(),
            previous_session_file: previous.map(|p| p.display().to_string()),
            target_session_file: target.map(|p| p.display().to_string()),
            sync,
        };
        let (_, answer) = host.request(&message);
        match self.wait(answer, true).await {
            Ok(value) => match serde_json::from_value::<Registrations>(value) {
                Ok(registrations) => self.set_registrations(session, Arc::new(registrations)),
                Err(e) => self.report("<extension host>", "session_start", &format!("unreadable registrations: {e}")),
            },
            Err(e) => self.report("<extension host>", "session_start", &e.to_string()),
        }
    }

    /// Tells the session an extension failed (pi's `extension_error`).
    fn report(&self, extension_path: &str, event: &str, error: &str) {
        if let Some(session) = self.session() {
            session.report_extension_error(extension_path, event, error);
        }
    }

    /// `ctx.shutdown()` was called.
    pub(crate) fn shutdown_requested(&self) -> bool {
        self.shutdown_requested.load(Ordering::Acquire)
    }

    /// Marks `ctx.shutdown()` as called.
    pub(crate) fn request_shutdown(&self) {
        self.shutdown_requested.store(true, Ordering::Release);
        self.shutdown_notify.notify_waiters();
    }

    /// Resolves once `ctx.shutdown()` was called.
    pub(crate) async fn shutdown_wanted(&self) {
        loop {
            let notified = self.shutdown_notify.notified();
            if self.shutdown_requested() {
                return;
            }
            notified.await;
        }
    }

    /// Brings the host's copy of the session up to date now (before the session is replaced,
    /// so `session_shutdown` handlers read it as it ended).
    pub(crate) fn sync_now(&self, session: &AgentSession) {
        if let Some(host) = self.host.lock().clone().filter(ExtensionHost::is_alive) {
            self.sync_to(&host, session, true);
        }
    }

    /// Runs `session_shutdown` (bounded by the hook timeout) and stops the host.
    pub(crate) async fn shutdown(&self) {
        let host = self.host.lock().clone().filter(ExtensionHost::is_alive);
        if let Some(host) = host {
            if let Some(session) = self.session() {
                self.sync_to(&host, &session, true);
            }
            let (_, answer) = host.request(&ToHost::Shutdown);
            let _ = tokio::time::timeout(self.config.hook_timeout, answer).await;
        }
        self.kill();
    }

    fn kill(&self) {
        if let Some(host) = self.host.lock().take() {
            host.kill();
        }
    }

    /// A key for the terminal component `target` (nothing when the host is down: its
    /// components went with it).
    pub(crate) fn component_input(&self, target: String, data: String) {
        if let Some(host) = self.host.lock().clone().filter(ExtensionHost::is_alive) {
            host.send(&ToHost::ComponentInput { target, data });
        }
    }

    /// Theme files and folders the extensions brought.
    pub(crate) fn add_themes(&self, paths: Vec<String>) {
        let mut themes = self.themes.lock();
        for path in paths.into_iter().map(PathBuf::from) {
            if !themes.contains(&path) {
                themes.push(path);
            }
        }
    }

    pub(crate) fn themes(&self) -> Vec<PathBuf> {
        self.themes.lock().clone()
    }

    /// Sets the text of the extension's editor.
    pub(crate) fn set_editor_text(&self, text: String) {
        if let Some(host) = self.host.lock().clone().filter(ExtensionHost::is_alive) {
            host.send(&ToHost::EditorText { text });
        }
    }

    /// The terminal was resized: components render again at the new size.
    pub(crate) fn resize(&self, size: TerminalSize) {
        let mut terminal = self.terminal.lock();
        if terminal.is_none() || *terminal == Some(size) {
            return;
        }
        *terminal = Some(size);
        drop(terminal);
        if let Some(host) = self.host.lock().clone().filter(ExtensionHost::is_alive) {
            host.send(&ToHost::Resize(size));
        }
    }

    /// Takes the messages `sendMessage` left for the next prompt.
    pub(crate) fn take_next_turn(&self) -> Vec<rho_types::AgentMessage> {
        std::mem::take(&mut *self.next_turn.lock())
    }
}
