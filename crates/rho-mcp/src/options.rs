//! How the manager runs servers: where, how long it waits, where their stderr goes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The default per-call timeout.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// The default time a server gets to start, initialize and list its tools.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The session's working directory: a stdio server's default `cwd`.
    pub cwd: PathBuf,
    /// Where a stdio server's stderr goes: `<log_dir>/mcp-<server>.log`, truncated when the
    /// manager first starts the server and appended to on restarts. `None` discards it. Never
    /// rho's own stdout or stderr: stdout is the protocol channel, and a chatty server on stderr
    /// would drown rho's diagnostics.
    pub log_dir: Option<PathBuf>,
    /// How long a tool call may take (a server's `timeout` overrides it).
    pub call_timeout: Duration,
    /// How long a server may take to start, answer `initialize` and list its tools.
    pub startup_timeout: Duration,
    /// The `clientInfo.version` sent to servers (the name is `rho`).
    pub client_version: String,
    /// The sandbox stdio servers run in, and the config file whose servers run outside it (the
    /// user's own): a project's servers are confined as the model's commands are.
    pub sandbox: Option<(Arc<rho_sandbox::Sandbox>, PathBuf)>,
}

impl McpOptions {
    /// Defaults for a session in `cwd`: stderr discarded, 120 s per call, 30 s to start.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            log_dir: None,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            client_version: env!("CARGO_PKG_VERSION").to_owned(),
            sandbox: None,
        }
    }

    /// Servers from any config file but `unconfined` (the user's own) start in `sandbox`.
    pub fn with_sandbox(mut self, sandbox: Arc<rho_sandbox::Sandbox>, unconfined: PathBuf) -> Self {
        self.sandbox = Some((sandbox, unconfined));
        self
    }

    /// The sandbox the servers of `source` start in, if any.
    pub(crate) fn sandbox_for(&self, source: &std::path::Path) -> Option<&rho_sandbox::Sandbox> {
        self.sandbox.as_ref().filter(|(_, unconfined)| source != unconfined).map(|(sandbox, _)| sandbox.as_ref())
    }

    /// Server stderr into `<dir>/mcp-<server>.log` (rho's convention: `<agent dir>/logs`).
    pub fn with_log_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.log_dir = Some(dir.into());
        self
    }

    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    pub fn with_startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }
}
