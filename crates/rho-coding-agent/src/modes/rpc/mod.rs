//! RPC mode (`rho --mode rpc`): newline-delimited JSON commands on stdin, responses and events
//! on stdout, as the pi family speaks it (docs/protocol.md, with docs/decisions.md).
//!
//! Three parts: the stdin reader, which classifies each line and acts at once on the frames that
//! interrupt or complete work (abort, abort_bash, abort_retry, UI and host-tool replies); the
//! dispatcher, which runs every other command one at a time in arrival order; and the one stdout
//! writer. `ready` is the first line. stdin EOF, SIGTERM, SIGINT and SIGHUP end the process
//! cleanly: the commands already read are answered, the run and every child (MCP servers
//! included) are stopped, the session file is complete; the exit code is 0 at EOF, and 128 + the
//! signal's number after a signal (SIGTERM 143, as pi's). EOF and a signal together are one
//! shutdown; a second signal during it exits at once.

mod builtins;
mod dispatch;
mod host_tools;
mod host_uris;
mod ids;
mod login;
mod messages_page;
mod omp_commands;
mod reader;
mod subagents;
mod ui;

use std::sync::Arc;
use std::time::Duration;

use rho_rpc::{Inbound, Ready, RpcCommand};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::agent_session::{AbortEpoch, AgentSession, PromptTicket, SessionEventSink, Ui};
use crate::modes::encoder::{FrameLimits, OutItem};
use crate::modes::frames::{MAX_REASSEMBLED_BYTES, SUPPORTED_PROTOCOLS, UpdateShape};
use crate::modes::out_queue::{OutQueue, spawn_writer};
use crate::modes::signals::{Signals, shutdown_unless_signalled_again};
use dispatch::Dispatcher;
pub use host_tools::{DISCONNECTED, HostToolBridge};
pub use host_uris::HostUriBridge;
use subagents::SubagentTracker;
pub use ui::RpcUi;

/// How long shutdown may take before the process exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(800);

/// What the dispatcher works through, in arrival order.
enum Work {
    Command(Queued),
    Response(rho_rpc::RpcResponse),
}

/// A command waiting its turn, with what it was read after: the abort epoch of its reading,
/// and for a prompt the ticket that lets a later abort reach the run it will start.
pub(super) struct Queued {
    pub id: Option<Value>,
    pub command: RpcCommand,
    pub epoch: AbortEpoch,
    pub ticket: Option<PromptTicket>,
    /// The `abort_bash` count when it was read (a `bash` read before an `abort_bash` never runs).
    pub bash_epoch: u64,
}

/// Runs RPC mode until stdin closes or a termination signal arrives. `build` makes the session
/// with the event sink, UI and host URI schemes RPC mode provides. Returns the exit code.
pub async fn run<F>(build: F, cli: &crate::cli::Cli) -> anyhow::Result<i32>
where
    F: FnOnce(Arc<dyn SessionEventSink>, Arc<dyn Ui>, Arc<dyn rho_tools::HostUris>) -> anyhow::Result<AgentSession>,
{
    let (limits, updates_after_negotiation) = frame_format(cli);
    let out = OutQueue::new(limits);
    let writer = spawn_writer(out.clone(), std::io::stdout())?;
    let ui = RpcUi::new(out.clone());
    let host = HostToolBridge::new(out.clone());
    let host_uris = HostUriBridge::new(out.clone());
    let subagents = SubagentTracker::new(out.clone());
    let session = match build(subagents.clone(), ui.clone(), host_uris.clone()) {
        Ok(session) => session,
        Err(e) => {
            out.close();
            let _ = writer.join();
            return Err(e);
        }
    };
    // The extensions are loaded before `ready`: a host's first command finds their tools and
    // commands (pi loads them before it reads stdin).
    let problems = match crate::modes::extensions::start_quietly(cli, &session, crate::startup::ExtensionUi::Rpc).await
    {
        Ok(problems) => problems,
        Err(e) => {
            session.shutdown().await;
            out.close();
            let _ = writer.join();
            return Err(e.into());
        }
    };
    out.push(OutItem::Raw(ready_line(&out.limits())));
    // omp's hosts learn the slash commands from this first update, built-ins first.
    session.offer_builtin_commands(builtins::listed());
    session.announce_commands();
    // An extension that did not load is an `extension_error` the host can show (and on stderr,
    // as pi writes it), not only a tool the model later finds missing.
    for problem in problems {
        eprintln!("{problem}");
        session.report_extension_error(&problem.path, "load", &problem.error);
    }

    let dispatcher = Arc::new(Dispatcher {
        session: session.clone(),
        updates_after_negotiation,
        out: out.clone(),
        host: host.clone(),
        host_uris: host_uris.clone(),
        subagents,
    });
    let (work_tx, mut work_rx) = mpsc::unbounded_channel::<Work>();
    let worker = {
        let dispatcher = dispatcher.clone();
        tokio::spawn(async move {
            while let Some(work) = work_rx.recv().await {
                match work {
                    Work::Command(queued) => {
                        // A command read after an abort waits for what the abort stopped.
                        dispatcher.session.settled(queued.epoch).await;
                        dispatcher.handle(queued).await;
                        // The MCP servers start once the host has its first answer.
                        dispatcher.session.start_mcp_now();
                    }
                    Work::Response(response) => dispatcher.out.push(OutItem::Response(response)),
                }
            }
        })
    };

    let mut lines = reader::lines(std::io::stdin())?;
    let mut signals = Signals::watch();
    let mut exit_code = 0;
    let extension_shutdown = session.extension_shutdown();
    tokio::pin!(extension_shutdown);
    loop {
        let line = tokio::select! {
            line = lines.next_line() => line,
            code = async { match signals.as_mut() {
                Some(signals) => signals.next().await,
                None => std::future::pending().await,
            } } => {
                exit_code = code;
                None
            }
            // An extension's ctx.shutdown(): once the session is idle, as pi waits for it.
            () = &mut extension_shutdown => None,
        };
        let Some(line) = line else { break };
        match rho_rpc::parse_line(&line) {
            Inbound::Blank => {}
            Inbound::UiResponse(response) => ui.resolve(response),
            Inbound::HostToolResult(result) => host.complete(result),
            Inbound::HostToolUpdate(update) => host.update(update),
            Inbound::HostUriResult(result) => host_uris.complete(result),
            Inbound::Invalid(response) => {
                let _ = work_tx.send(Work::Response(response));
            }
            Inbound::Command { id, command } => {
                // Aborts act now, on everything read before them.
                match command {
                    RpcCommand::Abort | RpcCommand::AbortAndPrompt { .. } => {
                        session.interrupt();
                    }
                    RpcCommand::AbortBash => session.abort_bash(),
                    _ => {}
                }
                let epoch = session.abort_epoch();
                let ticket = matches!(command, RpcCommand::Prompt { .. } | RpcCommand::AbortAndPrompt { .. })
                    .then(|| session.prompt_ticket());
                let queued = Queued { id, command, epoch, ticket, bash_epoch: session.bash_epoch() };
                if queued.command.is_immediate() {
                    let dispatcher = dispatcher.clone();
                    tokio::spawn(async move { dispatcher.handle(queued).await });
                    continue;
                }
                let _ = work_tx.send(Work::Command(queued));
            }
        }
    }

    // One orderly shutdown, whatever began it; a second signal ends the process at once.
    let orderly = async {
        host_uris.disconnect();
        shutdown(&session, &host, &ui, work_tx, worker).await;
        session.shutdown().await;
    };
    shutdown_unless_signalled_again(signals.as_mut(), orderly).await;
    out.close();
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    Ok(exit_code)
}

/// Stops everything in flight, answers the commands already read, and waits (briefly) for the
/// run to end so its last messages are written.
async fn shutdown(
    session: &AgentSession,
    host: &HostToolBridge,
    ui: &RpcUi,
    work_tx: mpsc::UnboundedSender<Work>,
    worker: tokio::task::JoinHandle<()>,
) {
    let stop = |session: &AgentSession| {
        session.interrupt();
        session.abort_bash();
        host.disconnect();
        ui.cancel_all();
    };
    stop(session);
    drop(work_tx);
    let drained = async {
        let _ = worker.await;
        stop(session);
        session.abort().await;
    };
    if tokio::time::timeout(SHUTDOWN_GRACE, drained).await.is_err() {
        tracing::warn!("shutdown: the run did not stop in time");
    }
}

/// How frames are written from the start, and the update shape once protocol 2 is negotiated
/// (docs/decisions.md D17, D19): lines unbounded unless the host set a bound; updates as the
/// host chose, else cumulative for the seed protocol's hosts — xcsh's client starts rho with
/// `--no-title` (no pi has that flag), omp's negotiates protocol 2 — and pi 1.6's deltas for
/// everyone else.
fn frame_format(cli: &crate::cli::Cli) -> (FrameLimits, UpdateShape) {
    use crate::cli::MessageUpdate;
    let limits = cli.rpc_max_frame_bytes.map_or_else(FrameLimits::unbounded, FrameLimits::new);
    let shape = |chosen: MessageUpdate| match chosen {
        MessageUpdate::Delta => UpdateShape::Delta,
        MessageUpdate::Cumulative => UpdateShape::Cumulative,
    };
    let now = match cli.rpc_message_update {
        Some(chosen) => shape(chosen),
        None if cli.no_title => UpdateShape::Cumulative,
        None => UpdateShape::Delta,
    };
    let after_negotiation = cli.rpc_message_update.map_or(UpdateShape::Cumulative, shape);
    (limits.with_updates(now), after_negotiation)
}

/// `{"type":"ready","version":"<rho version>",…}` (docs/decisions.md D2), with the protocol
/// versions omp's client negotiates from (protocol 2 only where the bound is omp's own).
fn ready_line(limits: &FrameLimits) -> Vec<u8> {
    let chunking = limits.offers_chunking();
    let ready = Ready {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        protocol_version: Some(1),
        supported_protocol_versions: Some(if chunking { SUPPORTED_PROTOCOLS.to_vec() } else { vec![1] }),
        max_frame_bytes: Some(limits.advertised_bound() as u64),
        max_reassembled_frame_bytes: chunking.then_some(MAX_REASSEMBLED_BYTES as u64),
    };
    rho_types::json::to_vec(&ready).unwrap_or_default()
}
