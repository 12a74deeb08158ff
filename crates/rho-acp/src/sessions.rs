//! Making the `AgentSession` behind an ACP session: `session/new` starts a new session file for
//! the request's working directory, `session/load` opens one of rho's sessions by its file path
//! or its id (a prefix will do, as `--session` takes it). Each is built the way every mode
//! builds its session ([`startup::session_options`] from the command line and the settings of
//! that directory), with this mode's event sink, the client's MCP servers ([`super::mcp`]) and,
//! when the client offers them, its files and terminals.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{FileSystemCapabilities, McpServer, SessionId};

use super::files::ClientFiles;
use super::permissions::Permissions;
use super::terminals::ClientTerminals;
use super::updates::UpdateSink;
use rho_coding_agent::agent_session::AgentSession;
use rho_coding_agent::cli::Cli;
use rho_coding_agent::startup;

/// One ACP session.
pub(super) struct AcpSession {
    pub session: AgentSession,
    pub updates: Arc<UpdateSink>,
    /// The session's mode, and its tool gate.
    pub permissions: Arc<Permissions>,
    /// `session/cancel` arrived for the prompt in flight: it ends `cancelled`.
    pub cancelled: AtomicBool,
    /// The project trust question its first prompt asks, when there is one.
    pub trust_question: parking_lot::Mutex<Option<super::trust::Question>>,
}

/// Which session to open.
pub(super) enum Open<'a> {
    New,
    /// A session file path or a session id (prefix).
    Load(&'a str),
}

/// What the client offers that the session uses.
pub(super) struct ClientSide<'a> {
    pub connection: &'a ConnectionTo<Client>,
    pub fs: &'a FileSystemCapabilities,
    /// The client offers `terminal/*`.
    pub terminal: bool,
    /// The request's `mcpServers`.
    pub mcp_servers: &'a [McpServer],
}

/// Builds the session for `cwd`; the error is the reason, for the client.
pub(super) fn open(
    cli: &Cli,
    cwd: &Path,
    how: &Open<'_>,
    client: &ClientSide<'_>,
) -> Result<(SessionId, AcpSession), String> {
    if !cwd.is_absolute() || !cwd.is_dir() {
        return Err(format!("cwd must be an absolute path to a directory: {}", cwd.display()));
    }
    let mut cli = cli.clone();
    cli.continue_session = false;
    cli.resume = false;
    cli.fork = None;
    cli.session = match how {
        Open::New => None,
        Open::Load(id) => {
            let looks_like_path = id.contains('/') || id.contains('\\') || id.ends_with(".jsonl");
            if looks_like_path && !Path::new(id).is_file() {
                return Err(format!("Session not found: {id}"));
            }
            Some((*id).to_owned())
        }
    };
    let prepared = startup::prepare_in(&cli, cwd.to_path_buf(), false).map_err(|e| e.message.trim().to_owned())?;
    let trust_question = super::trust::Question::for_session(
        &prepared.paths.agent_dir,
        cwd,
        startup::trust::project_trusted(&cli, &prepared.paths),
    );
    let id_cell = Arc::new(OnceLock::new());
    let updates = Arc::new(UpdateSink::new(client.connection.clone(), id_cell.clone(), cwd.to_path_buf()));
    let mut options =
        startup::session_options(&cli, prepared, updates.clone(), None).map_err(|e| e.message.trim().to_owned())?;
    if let Some(config) = options.mcp.take() {
        options.mcp = Some(super::mcp::merge(config, client.mcp_servers)?);
    }
    options.file_access = ClientFiles::offered(client.connection.clone(), id_cell.clone(), client.fs);
    options.terminals = ClientTerminals::offered(client.connection.clone(), id_cell.clone(), client.terminal);
    let session = AgentSession::new(options);
    session.offer_builtin_commands(vec![super::rewind::listed()]);
    let permissions = Arc::new(Permissions::new(client.connection.clone(), id_cell.clone(), cwd.to_path_buf()));
    // The permission rules first; what they leave open, the session's mode decides, and both
    // ask through session/request_permission.
    let gate = rho_coding_agent::agent_session::permission_gate(
        &session,
        None,
        Some((permissions.clone(), permissions.clone())),
    );
    session.set_tool_gate(gate);
    let id = match how {
        Open::New => SessionId::new(session.session_id()),
        Open::Load(id) => SessionId::new(*id),
    };
    let _ = id_cell.set(id.clone());
    let acp = AcpSession {
        session,
        updates,
        permissions,
        cancelled: AtomicBool::new(false),
        trust_question: parking_lot::Mutex::new(trust_question),
    };
    Ok((id, acp))
}
