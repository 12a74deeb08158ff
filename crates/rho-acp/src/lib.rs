//! ACP mode (`rho --mode acp`): the Agent Client Protocol, the JSON-RPC protocol Zed and other
//! editors speak to a coding agent over stdio, through the official `agent-client-protocol`
//! SDK (protocol v1).
//!
//! A thin driver, like every mode: each ACP session is one [`AgentSession`](rho_coding_agent::AgentSession)
//! built as the other modes build theirs, with this mode's event sink. The parts:
//! - [`transport`]: stdin on a thread of its own, the one stdout writer;
//! - [`agent`]: the client's requests and notifications as session calls;
//! - [`sessions`]: building the session of `session/new` and `session/load`;
//! - [`prompt`]: a prompt's content blocks as rho's text and images;
//! - [`updates`], [`tool_calls`], [`replay`]: the session's events (and a loaded session's
//!   history) as `session/update` notifications;
//! - [`config`]: the model and the thinking level as session config options;
//! - [`files`]: the client's `fs/*` methods behind the file tools' hook;
//! - [`terminals`]: the client's `terminal/*` methods behind the `bash` tool's hook (without
//!   them bash runs locally and its output is streamed as the tool call's content);
//! - [`permissions`]: the session modes, and `session/request_permission` in `ask` mode;
//! - [`mcp`]: the MCP servers the client passes, merged over rho's config files.
//!
//! stdin EOF, SIGTERM, SIGINT and SIGHUP end the process: every run is stopped and the session
//! files are complete; the exit code is 0 at EOF, 128 + the signal's number after a signal.

mod agent;
mod config;
mod files;
mod mcp;
mod permissions;
mod prompt;
mod replay;
mod rewind;
mod sessions;
mod terminals;
mod tool_calls;
mod transport;
mod trust;
mod updates;

use std::sync::Arc;

use agent_client_protocol::v1::schema::{ClientNotification, ClientRequest};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Lines};

use agent::AcpAgent;
use rho_coding_agent::cli::Cli;

/// Serves ACP on stdio until the client closes it or a termination signal arrives; returns the
/// exit code.
pub async fn run(cli: Cli) -> i32 {
    if !cli.file_args().is_empty() || !cli.messages().is_empty() {
        eprintln!("Error: messages and @file arguments are not supported in ACP mode");
        return 1;
    }
    let (outgoing, incoming) = match transport::stdio() {
        Ok(io) => io,
        Err(e) => {
            eprintln!("Error: cannot read stdin: {e}");
            return 1;
        }
    };
    let agent = Arc::new(AcpAgent::new(cli));
    let requests = agent.clone();
    let notifications = agent.clone();
    let serve = Agent
        .v1()
        .name("rho")
        .on_receive_request(
            async move |request: ClientRequest, responder: Responder, cx: ConnectionTo<Client>| {
                requests.request(request, responder, &cx)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: ClientNotification, _cx: ConnectionTo<Client>| {
                notifications.notification(notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Lines::new(outgoing, incoming));
    let mut signalled = None;
    let result = tokio::select! {
        result = serve => result,
        code = rho_coding_agent::modes::signals::termination() => {
            signalled = Some(code);
            Ok(())
        }
    };
    agent.shutdown().await;
    match result {
        Ok(()) => signalled.unwrap_or(0),
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}
