//! The client side of the ACP tests: the real `rho --mode acp` driven by the official SDK's
//! client (`agent_client_protocol::Client`) over piped stdio. The client is an editor: it answers
//! `fs/read_text_file` / `fs/write_text_file` from buffers of its own when a test offers them,
//! answers `session/request_permission` with the options a test queued, runs `terminal/*`
//! requests as local processes when a test offers terminals, and collects every
//! `session/update`.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

mod terminals;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, CreateTerminalRequest, CreateTerminalResponse, FileSystemCapabilities,
    InitializeRequest, InitializeResponse, KillTerminalRequest, KillTerminalResponse, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, ReadTextFileRequest, ReadTextFileResponse,
    ReleaseTerminalRequest, ReleaseTerminalResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionNotification, SessionUpdate,
    TerminalOutputRequest, TerminalOutputResponse, TextContent, WaitForTerminalExitRequest,
    WaitForTerminalExitResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Lines};
use futures::channel::oneshot;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Child;
use tokio::sync::mpsc;

use crate::common::Env;
pub use terminals::Terminals;

pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The editor's side: buffers it serves, the permission answers a test queued, its terminals,
/// and the requests it got (`read <path>`, `write <path>`, `terminal/<method>`).
#[derive(Default)]
pub struct Editor {
    pub buffers: Mutex<HashMap<PathBuf, String>>,
    pub requests: Mutex<Vec<String>>,
    /// Option ids to answer `session/request_permission` with, in order; when none is left the
    /// request is answered `cancelled`.
    pub permission_answers: Mutex<VecDeque<&'static str>>,
    pub permission_requests: Mutex<Vec<RequestPermissionRequest>>,
    pub terminals: Terminals,
    /// The environment each `terminal/create` asked for, in order.
    pub terminal_env: Mutex<Vec<Vec<(String, String)>>>,
}

impl Editor {
    fn log(&self, request: String) {
        self.requests.lock().unwrap().push(request);
    }
}

/// A running `rho --mode acp` and the SDK client connected to it.
pub struct Acp {
    pub child: Child,
    pub cx: ConnectionTo<Agent>,
    pub updates: mpsc::UnboundedReceiver<SessionNotification>,
    pub done: Option<oneshot::Sender<()>>,
    pub driver: tokio::task::JoinHandle<Result<(), agent_client_protocol::Error>>,
    pub editor: Arc<Editor>,
}

impl Acp {
    pub async fn start(env: &Env, args: &[&str]) -> Acp {
        let mut all = vec!["--mode", "acp", "--model", "mock/mock-model"];
        all.extend_from_slice(args);
        let mut child = env.command(&all).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let outgoing = Box::pin(futures::sink::unfold(stdin, |mut stdin, line: String| async move {
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await?;
            Ok::<_, std::io::Error>(stdin)
        }));
        let incoming = Box::pin(futures::stream::unfold(BufReader::new(stdout).lines(), |mut lines| async move {
            match lines.next_line().await {
                Ok(Some(line)) => Some((Ok(line), lines)),
                Ok(None) => None,
                Err(e) => Some((Err(e), lines)),
            }
        }));
        let editor = Arc::new(Editor::default());
        let (updates_tx, updates) = mpsc::unbounded_channel();
        let (cx_tx, cx_rx) = oneshot::channel();
        let (done, done_rx) = oneshot::channel::<()>();
        let (reads, writes, asks) = (editor.clone(), editor.clone(), editor.clone());
        let (creates, outputs, waits, kills, releases) =
            (editor.clone(), editor.clone(), editor.clone(), editor.clone(), editor.clone());
        let client = Client
            .v1()
            .name("rho-acp-test")
            .on_receive_notification(
                async move |n: SessionNotification, _cx: ConnectionTo<Agent>| {
                    let _ = updates_tx.send(n);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |r: ReadTextFileRequest,
                            responder: Responder<ReadTextFileResponse>,
                            _cx: ConnectionTo<Agent>| {
                    reads.requests.lock().unwrap().push(format!("read {}", r.path.display()));
                    let found = reads.buffers.lock().unwrap().get(&r.path).cloned();
                    match found {
                        Some(text) => responder.respond(ReadTextFileResponse::new(text)),
                        None => responder.respond_with_internal_error("no such buffer"),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |r: WriteTextFileRequest,
                            responder: Responder<WriteTextFileResponse>,
                            _cx: ConnectionTo<Agent>| {
                    writes.requests.lock().unwrap().push(format!("write {}", r.path.display()));
                    writes.buffers.lock().unwrap().insert(r.path, r.content);
                    responder.respond(WriteTextFileResponse::new())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |r: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse>,
                            _cx: ConnectionTo<Agent>| {
                    asks.permission_requests.lock().unwrap().push(r);
                    let outcome = match asks.permission_answers.lock().unwrap().pop_front() {
                        Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
                        None => RequestPermissionOutcome::Cancelled,
                    };
                    responder.respond(RequestPermissionResponse::new(outcome))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |r: CreateTerminalRequest,
                            responder: Responder<CreateTerminalResponse>,
                            _cx: ConnectionTo<Agent>| {
                    creates.log(format!("terminal/create {} {}", r.command, r.args.join(" ")));
                    let env = r.env.iter().map(|v| (v.name.clone(), v.value.clone())).collect();
                    creates.terminal_env.lock().unwrap().push(env);
                    match creates.terminals.create(&r) {
                        Ok(id) => responder.respond(CreateTerminalResponse::new(id)),
                        Err(e) => responder.respond_with_internal_error(e.to_string()),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |r: TerminalOutputRequest,
                            responder: Responder<TerminalOutputResponse>,
                            _cx: ConnectionTo<Agent>| {
                    outputs.log("terminal/output".into());
                    responder.respond(outputs.terminals.output(&r.terminal_id.0))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |r: WaitForTerminalExitRequest,
                            responder: Responder<WaitForTerminalExitResponse>,
                            _cx: ConnectionTo<Agent>| {
                    waits.log("terminal/wait_for_exit".into());
                    // Answered when the command ends, off the dispatch loop.
                    let exit = waits.terminals.exited(&r.terminal_id.0);
                    tokio::spawn(async move { responder.respond(WaitForTerminalExitResponse::new(exit.await)) });
                    Ok(())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |r: KillTerminalRequest,
                            responder: Responder<KillTerminalResponse>,
                            _cx: ConnectionTo<Agent>| {
                    kills.log("terminal/kill".into());
                    kills.terminals.kill(&r.terminal_id.0);
                    responder.respond(KillTerminalResponse::new())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |r: ReleaseTerminalRequest,
                            responder: Responder<ReleaseTerminalResponse>,
                            _cx: ConnectionTo<Agent>| {
                    releases.log("terminal/release".into());
                    releases.terminals.release(&r.terminal_id.0);
                    responder.respond(ReleaseTerminalResponse::new())
                },
                agent_client_protocol::on_receive_request!(),
            );
        let driver =
            tokio::spawn(client.connect_with(Lines::new(outgoing, incoming), async move |cx: ConnectionTo<Agent>| {
                let _ = cx_tx.send(cx.clone());
                let _ = done_rx.await;
                Ok(())
            }));
        let cx = tokio::time::timeout(TIMEOUT, cx_rx).await.unwrap().unwrap();
        Acp { child, cx, updates, done: Some(done), driver, editor }
    }

    pub async fn initialize(&self, fs: bool) -> InitializeResponse {
        let files = FileSystemCapabilities::new().read_text_file(fs).write_text_file(fs);
        self.initialize_with(ClientCapabilities::new().fs(files)).await
    }

    pub async fn initialize_with(&self, capabilities: ClientCapabilities) -> InitializeResponse {
        let request = InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities);
        self.request(request).await.unwrap()
    }

    pub async fn new_session(&self, cwd: &Path) -> NewSessionResponse {
        self.request(NewSessionRequest::new(cwd)).await.unwrap()
    }

    pub async fn prompt(
        &self,
        session: &SessionId,
        blocks: Vec<ContentBlock>,
    ) -> Result<PromptResponse, agent_client_protocol::Error> {
        self.request(PromptRequest::new(session.clone(), blocks)).await
    }

    pub async fn request<R: agent_client_protocol::JsonRpcRequest>(
        &self,
        request: R,
    ) -> Result<R::Response, agent_client_protocol::Error> {
        tokio::time::timeout(TIMEOUT, self.cx.send_request(request).block_task()).await.expect("no answer in time")
    }

    /// Every update received so far (all of a request's arrive before its answer).
    pub fn updates(&mut self) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        while let Ok(n) = self.updates.try_recv() {
            out.push(n.update);
        }
        out
    }

    /// Closes the connection (stdin EOF) and waits for rho to exit.
    pub async fn close(mut self) -> std::process::ExitStatus {
        if let Some(done) = self.done.take() {
            let _ = done.send(());
        }
        let _ = tokio::time::timeout(TIMEOUT, &mut self.driver).await;
        tokio::time::timeout(TIMEOUT, self.child.wait()).await.unwrap().unwrap()
    }
}

pub fn text(s: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(s))
}

/// The text of the chunks of one kind, joined.
pub fn chunks(updates: &[SessionUpdate], pick: fn(&SessionUpdate) -> Option<&ContentBlock>) -> String {
    updates
        .iter()
        .filter_map(pick)
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

pub fn agent_text(u: &SessionUpdate) -> Option<&ContentBlock> {
    match u {
        SessionUpdate::AgentMessageChunk(c) => Some(&c.content),
        _ => None,
    }
}

pub fn thought(u: &SessionUpdate) -> Option<&ContentBlock> {
    match u {
        SessionUpdate::AgentThoughtChunk(c) => Some(&c.content),
        _ => None,
    }
}

pub fn user_text(u: &SessionUpdate) -> Option<&ContentBlock> {
    match u {
        SessionUpdate::UserMessageChunk(c) => Some(&c.content),
        _ => None,
    }
}
