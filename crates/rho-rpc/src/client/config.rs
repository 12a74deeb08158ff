//! How to start the server and how the client behaves: program and arguments (by default
//! `rho --mode rpc`), environment, the `ready` handshake, buffer sizes and timeouts, and the
//! extension UI handler.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::ui::UiHandler;

/// Whether to wait for the server's `ready` frame before [`RpcClient::spawn`] returns.
///
/// [`RpcClient::spawn`]: super::RpcClient::spawn
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadyPolicy {
    /// Wait this long for `{"type":"ready"}` (rho and xcsh write it first), then fail with
    /// `Timed out waiting for RPC ready signal`.
    Wait(Duration),
    /// Do not wait: pi and omp never write `ready`. A `ready` frame that comes anyway is
    /// delivered on the event stream.
    Skip,
}

/// Everything [`RpcClient::spawn`] needs. Build it with [`ClientConfig::new`] and the setters.
///
/// [`RpcClient::spawn`]: super::RpcClient::spawn
#[derive(Clone)]
pub struct ClientConfig {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) current_dir: Option<PathBuf>,
    pub(crate) ready: ReadyPolicy,
    pub(crate) event_capacity: usize,
    pub(crate) close_timeout: Duration,
    pub(crate) max_line_bytes: usize,
    pub(crate) stderr_bytes: usize,
    pub(crate) ui: Option<Arc<dyn UiHandler>>,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("current_dir", &self.current_dir)
            .field("ready", &self.ready)
            .field("event_capacity", &self.event_capacity)
            .field("close_timeout", &self.close_timeout)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("stderr_bytes", &self.stderr_bytes)
            .field("ui", &self.ui.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientConfig {
    /// `rho --mode rpc` from `PATH`, waiting 30 s for `ready` (as xcsh's clients do).
    pub fn new() -> Self {
        Self {
            program: PathBuf::from("rho"),
            args: vec!["--mode".into(), "rpc".into()],
            env: Vec::new(),
            current_dir: None,
            ready: ReadyPolicy::Wait(Duration::from_secs(30)),
            event_capacity: 1024,
            close_timeout: Duration::from_secs(3),
            max_line_bytes: 64 << 20,
            stderr_bytes: 64 << 10,
            ui: None,
        }
    }

    /// The program to run (a path, or a name looked up in `PATH`).
    pub fn program(mut self, program: impl Into<PathBuf>) -> Self {
        self.program = program.into();
        self
    }

    /// Replaces the whole argument list (the default is `--mode rpc`).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args = args.into_iter().map(|a| a.as_ref().to_os_string()).collect();
        self
    }

    /// Appends one argument (e.g. `--no-session`, `--provider`, `anthropic`).
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Sets an environment variable for the server.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    /// The server's working directory (the client's own by default).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// The `ready` handshake (default: wait 30 s).
    pub fn ready(mut self, policy: ReadyPolicy) -> Self {
        self.ready = policy;
        self
    }

    /// How many notifications the event stream holds before the reader waits (default 1024,
    /// at least 1). See the event policy in the [module docs](super).
    pub fn event_capacity(mut self, capacity: usize) -> Self {
        self.event_capacity = capacity.max(1);
        self
    }

    /// How long `close` waits for the server to exit after closing its stdin before killing
    /// it (default 3 s).
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }

    /// The longest stdout line accepted (default 64 MiB; rho's own bound is 1 MiB). A longer
    /// line is skipped and reported as a protocol error.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes.max(1);
        self
    }

    /// How much of the server's stderr is kept for error messages (the last 64 KiB by default).
    pub fn stderr_bytes(mut self, bytes: usize) -> Self {
        self.stderr_bytes = bytes;
        self
    }

    /// Serves `extension_ui_request` frames. Without a handler every dialog is answered
    /// `{"cancelled":true}` at once, so the server never waits on a host that cannot ask.
    pub fn ui_handler(mut self, handler: impl UiHandler) -> Self {
        self.ui = Some(Arc::new(handler));
        self
    }

    pub(crate) fn program_name(&self) -> String {
        self.program.display().to_string()
    }
}
