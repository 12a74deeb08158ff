//! Opening one connection: the transport a [`Transport`] config asks for, then MCP's
//! `initialize` handshake through rmcp.
//!
//! stdio servers run in a process group of their own, so closing the connection (or dropping
//! it half-way) ends the whole group: `npx some-server` leaves no `node` behind. What they
//! write is read through [`crate::child`], which closes the connection on a message too large. Their stderr
//! goes to a log file or nowhere, never to rho's stdout (the protocol channel) or stderr.
//!
//! HTTP servers use rmcp's streamable HTTP transport over rho's own client ([`crate::http`]).

use std::collections::{BTreeMap, HashMap};
use std::fs::OpenOptions;
use std::process::Stdio;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::{StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig};

use crate::child::{ChildTransport, Oversized};
use crate::config::{StdioServer, Transport};
use crate::handler::ClientEvents;
use crate::name::sanitize;
use crate::options::McpOptions;
use crate::sse::SseTransport;

pub(crate) type Running = RunningService<RoleClient, ClientEvents>;

/// Whether a server's log file is started afresh (its first start in this manager) or continued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogMode {
    Truncate,
    Append,
}

/// How one connection is made: where its server logs, its sandbox, and the mark a stdio
/// connection sets when the server sends a message too large (with the connection's number).
pub(crate) struct Attempt<'a> {
    pub log: LogMode,
    pub sandbox: Option<&'a rho_sandbox::Sandbox>,
    pub oversized: (&'a Arc<Oversized>, u64),
}

/// Connects and initializes; the error is the reason to show.
pub(crate) async fn connect(
    name: &str,
    transport: &Transport,
    handler: ClientEvents,
    options: &McpOptions,
    attempt: Attempt<'_>,
) -> Result<Running, String> {
    match transport {
        Transport::Stdio(stdio) => {
            let child = spawn(name, stdio, options, &attempt)?;
            handler.serve(child).await.map_err(|e| e.to_string())
        }
        Transport::Http(remote) => {
            let config = StreamableHttpClientTransportConfig::with_uri(remote.url.as_str())
                .custom_headers(headers(&remote.headers)?);
            let transport = StreamableHttpClientTransport::with_client(crate::http::client()?, config);
            handler.serve(transport).await.map_err(|e| rho_ai::redact::url_in(&e.to_string(), &remote.url))
        }
        Transport::Sse(remote) => {
            let transport = SseTransport::connect(&remote.url, &remote.headers).await?;
            handler.serve(transport).await.map_err(|e| rho_ai::redact::url_in(&e.to_string(), &remote.url))
        }
    }
}

fn spawn(
    name: &str,
    stdio: &StdioServer,
    options: &McpOptions,
    attempt: &Attempt<'_>,
) -> Result<ChildTransport, String> {
    let mut command = tokio::process::Command::from(rho_sandbox::command(attempt.sandbox, stdio.command.as_ref()));
    if let Some((var, token)) = rho_tools::guardian::owner_env() {
        command.env(var, token);
    }
    command.args(&stdio.args).envs(&stdio.env).current_dir(stdio.cwd.as_deref().unwrap_or(&options.cwd));
    let mut wrapped = CommandWrap::from(command);
    wrapped.wrap(ProcessGroup::leader());
    let (mark, generation) = attempt.oversized;
    ChildTransport::spawn(wrapped, stderr_target(name, options, attempt.log), mark.clone(), generation)
        .map_err(|e| format!("cannot run `{}`: {e}", stdio.command))
}

/// The log file path of server `name`, if logs are kept.
pub(crate) fn log_path(name: &str, options: &McpOptions) -> Option<std::path::PathBuf> {
    options.log_dir.as_ref().map(|dir| dir.join(format!("mcp-{}.log", sanitize(name))))
}

fn stderr_target(name: &str, options: &McpOptions, log: LogMode) -> Stdio {
    let Some(path) = log_path(name, options) else { return Stdio::null() };
    if let Some(dir) = path.parent()
        && let Err(e) =
            std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700).create(dir)
    {
        tracing::warn!("MCP server {name}: cannot create log directory {}: {e}", dir.display());
        return Stdio::null();
    }
    let mut open = OpenOptions::new();
    // What a server writes may hold secrets: the user's alone.
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    match log {
        LogMode::Truncate => open.write(true).create(true).truncate(true),
        LogMode::Append => open.append(true).create(true),
    };
    match open.open(&path) {
        Ok(file) => Stdio::from(file),
        Err(e) => {
            tracing::warn!("MCP server {name}: cannot open log file {}: {e}", path.display());
            Stdio::null()
        }
    }
}

pub(crate) fn headers(headers: &BTreeMap<String, String>) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let header =
                HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("invalid header name \"{name}\""))?;
            let value = HeaderValue::from_str(value).map_err(|_| format!("invalid value for header \"{name}\""))?;
            Ok((header, value))
        })
        .collect()
}
