//! Which MCP servers to run: the `mcpServers` maps of four files, in the format pi 1.6 and
//! Claude Code share.
//!
//! Files, from lowest to highest precedence:
//!
//! 1. `<agent dir>/mcp.json`: the user's servers, for every project;
//! 2. `<cwd>/.mcp.json`: the project's servers, the file Claude Code reads (usually committed);
//! 3. `<cwd>/.pi/mcp.json`: the project's servers, the file pi 1.6 reads;
//! 4. `<cwd>/.rho/mcp.json`: the project's servers for rho only (usually not committed).
//!
//! A server name defined in several files takes the **whole** entry of the highest-precedence one
//! (the project overrides the user, rho's own project file overrides the shared ones). An entry
//! without `command`, `url` or `type` only overrides `enabled`, `exposure` and `toolExposure` of
//! the entry of that name below it and keeps the rest (pi 1.6's rule): so
//! `{"mcpServers": {"github": {"enabled": false}}}` in a project file turns a user's `github`
//! server off there. `timeout` is in seconds (pi 1.6's unit).
//!
//! A bad file (unreadable, not JSON, no object) or a bad entry yields a [`Diagnostic`] naming the
//! file and field; the rest still loads. An entry that fails does not override a valid one of the
//! same name in a lower file: it is skipped, as if absent, so the diagnostic is the only change.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config_parse::{parse_entry, parse_file};
use crate::diagnostic::Diagnostic;

/// The servers to run, one entry per name, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    servers: Vec<ServerConfig>,
}

/// One server entry, as it stood in the file that won for its name (strings expanded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    /// How to reach it; always `Some` for an enabled server. `None` for a bare
    /// `{"enabled": false}` that only turns a lower file's server off.
    pub transport: Option<Transport>,
    /// `enabled: false` keeps the server listed (state `disabled`) without starting it.
    pub enabled: bool,
    /// `timeout` (seconds in the file): this server's per-call timeout, instead of
    /// [`McpOptions::call_timeout`](crate::McpOptions::call_timeout).
    pub timeout: Option<Duration>,
    /// `exposure`: how the server's tools reach the model (`None`: not said).
    pub exposure: Option<Exposure>,
    /// `toolExposure`: the exposure of single tools, by the server's tool name.
    pub tool_exposure: BTreeMap<String, Exposure>,
    /// The file the entry came from.
    pub source: PathBuf,
}

/// How a server's tools reach the model (pi 1.6's `exposure`). rho has no codemode: `codemode`
/// (and no exposure said) declares the tools directly, as `direct` does; `deferred` tools are
/// declared once `tool_search` loads them; `hidden` ones never are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    Codemode,
    Deferred,
    Direct,
    /// Registered but never offered.
    Hidden,
}

impl Exposure {
    pub const NAMES: [&'static str; 4] = ["codemode", "deferred", "direct", "hidden"];

    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "codemode" => Self::Codemode,
            "deferred" => Self::Deferred,
            "direct" => Self::Direct,
            "hidden" => Self::Hidden,
            _ => return None,
        })
    }
}

impl ServerConfig {
    /// Whether the server's tool `tool` (its own name) is offered to the model.
    pub fn offers(&self, tool: &str) -> bool {
        self.tool_exposure.get(tool).copied().or(self.exposure) != Some(Exposure::Hidden)
    }

    /// Whether the server's tool `tool` waits for `tool_search` to be declared.
    pub fn defers(&self, tool: &str) -> bool {
        self.tool_exposure.get(tool).copied().or(self.exposure) == Some(Exposure::Deferred)
    }
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC lines on stdin/stdout (`command`, no `type` or
    /// `type: "stdio"`).
    Stdio(StdioServer),
    /// Streamable HTTP (`url`, no `type` or `type: "http"`).
    Http(RemoteServer),
    /// The older HTTP+SSE transport (`type: "sse"`).
    Sse(RemoteServer),
}

/// A stdio server's process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioServer {
    pub command: String,
    pub args: Vec<String>,
    /// Added to (and overriding) rho's own environment.
    pub env: BTreeMap<String, String>,
    /// The working directory; relative paths are resolved against the session's cwd, which is
    /// also the default.
    pub cwd: Option<PathBuf>,
}

/// An HTTP or SSE server's endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteServer {
    pub url: String,
    /// Sent with every request (`Authorization: Bearer ${TOKEN}` is the usual one).
    pub headers: BTreeMap<String, String>,
}

impl McpConfig {
    /// The config files rho reads, lowest precedence first.
    pub fn paths(cwd: &Path, agent_dir: &Path) -> [PathBuf; 4] {
        [
            agent_dir.join("mcp.json"),
            cwd.join(".mcp.json"),
            cwd.join(".pi").join("mcp.json"),
            cwd.join(".rho").join("mcp.json"),
        ]
    }

    /// Loads [`paths`](Self::paths), expanding `${VAR}` from the process environment. Missing
    /// files are not a problem; every other problem is one diagnostic.
    pub fn load(cwd: &Path, agent_dir: &Path) -> (Self, Vec<Diagnostic>) {
        Self::load_with_env(cwd, agent_dir, &|name| std::env::var(name).ok())
    }

    /// [`load`](Self::load) with variables looked up by `env` (a host may add its own).
    pub fn load_with_env(
        cwd: &Path,
        agent_dir: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> (Self, Vec<Diagnostic>) {
        Self::from_files(&Self::paths(cwd, agent_dir), cwd, env)
    }

    /// Loads the given files, lowest precedence first; relative `cwd`s are resolved against `cwd`.
    pub fn from_files(files: &[PathBuf], cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> (Self, Vec<Diagnostic>) {
        let mut by_name: BTreeMap<String, ServerConfig> = BTreeMap::new();
        let mut diagnostics = Vec::new();
        for path in files {
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    diagnostics
                        .push(Diagnostic::file(path, format!("cannot be read ({e}); its servers are not loaded")));
                    continue;
                }
            };
            let (servers, problems) = parse_file(&text, path, cwd, env);
            diagnostics.extend(problems);
            for server in servers {
                let server = match (server.transport.is_none(), by_name.remove(&server.name)) {
                    // Only `enabled` and the exposures: over the entry below, which keeps the rest.
                    (true, Some(below)) => ServerConfig {
                        enabled: server.enabled,
                        exposure: server.exposure.or(below.exposure),
                        tool_exposure: below.tool_exposure.into_iter().chain(server.tool_exposure).collect(),
                        source: server.source,
                        ..below
                    },
                    _ => server,
                };
                by_name.insert(server.name.clone(), server);
            }
        }
        // An override with nothing below it to override: an enabled one has nothing to start.
        by_name.retain(|name, server| {
            let orphan = server.enabled && server.transport.is_none();
            if orphan {
                diagnostics.push(Diagnostic::field(
                    &server.source,
                    name,
                    format!("mcpServers.{name}"),
                    format!(
                        "needs command (a stdio server) or url (an http or sse server), or a server of that name in a \
                         file below it to override; server \"{name}\" is not loaded"
                    ),
                ));
            }
            !orphan
        });
        (Self { servers: by_name.into_values().collect() }, diagnostics)
    }

    /// A config holding these servers (for hosts that build it themselves); of two entries with
    /// one name the later wins, as between files.
    pub fn from_servers(servers: Vec<ServerConfig>) -> Self {
        let by_name: BTreeMap<String, ServerConfig> = servers.into_iter().map(|s| (s.name.clone(), s)).collect();
        Self { servers: by_name.into_values().collect() }
    }

    /// Every entry, enabled or not, sorted by name.
    /// One server entry of `mcpServers`'s shape given by `source` rather than a file (an
    /// extension registering a server), its strings expanded with `env`.
    pub fn parse_entry(
        name: &str,
        entry: &serde_json::Value,
        source: &Path,
        cwd: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ServerConfig, Diagnostic> {
        parse_entry(name, entry, source, cwd, env)
    }

    pub fn servers(&self) -> &[ServerConfig] {
        &self.servers
    }

    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}
