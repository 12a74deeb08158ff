//! ACP mode end to end: the real `rho --mode acp` driven by the official SDK's client side
//! (`agent_client_protocol::Client`) over piped stdio, against rho-mock-llm on loopback. The
//! client answers `fs/read_text_file` / `fs/write_text_file` from buffers of its own when a test
//! offers them, and collects every `session/update`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, EmbeddedResource, EmbeddedResourceResource,
    FileSystemCapabilities, ImageContent, InitializeRequest, InitializeResponse, LoadSessionRequest, NewSessionRequest,
    NewSessionResponse, PlanEntryStatus, PromptRequest, PromptResponse, ReadTextFileRequest, ReadTextFileResponse,
    SessionConfigKind, SessionConfigOptionValue, SessionId, SessionNotification, SessionUpdate,
    SetSessionConfigOptionRequest, StopReason, TextContent, TextResourceContents, ToolCallContent, ToolCallStatus,
    ToolKind, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Lines};
use common::Env;
use futures::channel::oneshot;
use pretty_assertions::assert_eq;
use rho_mock_llm::Turn;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Child;
use tokio::sync::mpsc;

const TIMEOUT: Duration = Duration::from_secs(30);

/// The editor's side: buffers it serves and the file requests it got.
#[derive(Default)]
struct Editor {
    buffers: Mutex<HashMap<PathBuf, String>>,
    requests: Mutex<Vec<String>>,
}

/// A running `rho --mode acp` and the SDK client connected to it.
struct Acp {
    child: Child,
    cx: ConnectionTo<Agent>,
    updates: mpsc::UnboundedReceiver<SessionNotification>,
    done: Option<oneshot::Sender<()>>,
    driver: tokio::task::JoinHandle<Result<(), agent_client_protocol::Error>>,
    editor: Arc<Editor>,
}

impl Acp {
    async fn start(env: &Env, args: &[&str]) -> Acp {
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
        let (reads, writes) = (editor.clone(), editor.clone());
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

    async fn initialize(&self, fs: bool) -> InitializeResponse {
        let files = FileSystemCapabilities::new().read_text_file(fs).write_text_file(fs);
        let request =
            InitializeRequest::new(ProtocolVersion::V1).client_capabilities(ClientCapabilities::new().fs(files));
        self.request(request).await.unwrap()
    }

    async fn new_session(&self, cwd: &Path) -> NewSessionResponse {
        self.request(NewSessionRequest::new(cwd)).await.unwrap()
    }

    async fn prompt(
        &self,
        session: &SessionId,
        blocks: Vec<ContentBlock>,
    ) -> Result<PromptResponse, agent_client_protocol::Error> {
        self.request(PromptRequest::new(session.clone(), blocks)).await
    }

    async fn request<R: agent_client_protocol::JsonRpcRequest>(
        &self,
        request: R,
    ) -> Result<R::Response, agent_client_protocol::Error> {
        tokio::time::timeout(TIMEOUT, self.cx.send_request(request).block_task()).await.expect("no answer in time")
    }

    /// Every update received so far (all of a request's arrive before its answer).
    fn updates(&mut self) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        while let Ok(n) = self.updates.try_recv() {
            out.push(n.update);
        }
        out
    }

    /// Closes the connection (stdin EOF) and waits for rho to exit.
    async fn close(mut self) -> std::process::ExitStatus {
        if let Some(done) = self.done.take() {
            let _ = done.send(());
        }
        let _ = tokio::time::timeout(TIMEOUT, &mut self.driver).await;
        tokio::time::timeout(TIMEOUT, self.child.wait()).await.unwrap().unwrap()
    }
}

fn text(s: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(s))
}

/// The text of the chunks of one kind, joined.
fn chunks(updates: &[SessionUpdate], pick: fn(&SessionUpdate) -> Option<&ContentBlock>) -> String {
    updates
        .iter()
        .filter_map(pick)
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

fn agent_text(u: &SessionUpdate) -> Option<&ContentBlock> {
    match u {
        SessionUpdate::AgentMessageChunk(c) => Some(&c.content),
        _ => None,
    }
}

fn thought(u: &SessionUpdate) -> Option<&ContentBlock> {
    match u {
        SessionUpdate::AgentThoughtChunk(c) => Some(&c.content),
        _ => None,
    }
}

fn user_text(u: &SessionUpdate) -> Option<&ContentBlock> {
    match u {
        SessionUpdate::UserMessageChunk(c) => Some(&c.content),
        _ => None,
    }
}

#[tokio::test]
async fn initialize_new_session_and_a_prompt_that_streams_text_and_thinking() {
    let env =
        Env::with_api(vec![Turn::text("Hello there, friend.").with_thinking("Pondering.")], "anthropic-messages", true)
            .await;
    let mut acp = Acp::start(&env, &[]).await;
    let init = acp.initialize(false).await;
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert!(init.agent_capabilities.load_session);
    assert!(init.agent_capabilities.prompt_capabilities.image);
    assert!(init.agent_capabilities.prompt_capabilities.embedded_context);
    assert!(init.auth_methods.is_empty());

    let session = acp.new_session(&env.cwd).await;
    let options = session.config_options.clone().unwrap();
    let ids: Vec<&str> = options.iter().map(|o| &*o.id.0).collect();
    assert_eq!(ids, ["model", "thinking"]);
    let SessionConfigKind::Select(model) = &options[0].kind else { panic!("{options:?}") };
    assert_eq!(&*model.current_value.0, "mock/mock-model");

    let response = acp.prompt(&session.session_id, vec![text("Say hello")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let updates = acp.updates();
    assert!(matches!(updates[0], SessionUpdate::AvailableCommandsUpdate(_)), "{:?}", updates[0]);
    assert_eq!(chunks(&updates, thought), "Pondering.");
    assert_eq!(chunks(&updates, agent_text), "Hello there, friend.");

    // The thinking level is a config option; the answer carries the options as they are now.
    let set = SetSessionConfigOptionRequest::new(
        session.session_id.clone(),
        "thinking",
        SessionConfigOptionValue::value_id("high"),
    );
    let options = acp.request(set).await.unwrap().config_options;
    let SessionConfigKind::Select(level) = &options[1].kind else { panic!("{options:?}") };
    assert_eq!(&*level.current_value.0, "high");
    let bad = SetSessionConfigOptionRequest::new(
        session.session_id.clone(),
        "model",
        SessionConfigOptionValue::value_id("nope/x"),
    );
    assert!(acp.request(bad).await.is_err());
    assert!(acp.close().await.success());
}

#[tokio::test]
async fn tool_calls_are_announced_run_and_finished_with_diffs_and_the_plan() {
    let todo = json!({"ops": [{"op": "replace", "phases": [{"name": "Work", "tasks": [
        {"content": "Fix the greeting", "status": "in_progress"}]}]}]});
    let edit = json!({"path": "a.txt", "edits": [{"oldText": "hello", "newText": "goodbye"}]});
    let env = Env::new(vec![
        Turn::tool_call("todo_write", todo),
        Turn::tool_call("edit", edit),
        Turn::tool_call("bash", json!({"command": "exit 3"})),
        Turn::text("Done."),
    ])
    .await;
    std::fs::write(env.cwd.join("a.txt"), "hello world\n").unwrap();
    // The task stays open: no reminder turn after "Done.".
    let mut acp = Acp::start(&env, &["--setting", "todo.reminders=false"]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let response = acp.prompt(&session.session_id, vec![text("Fix it")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(std::fs::read_to_string(env.cwd.join("a.txt")).unwrap(), "goodbye world\n");

    let updates = acp.updates();
    let plan = updates.iter().find_map(|u| match u {
        SessionUpdate::Plan(p) => Some(p),
        _ => None,
    });
    let plan = plan.expect("a plan");
    assert_eq!(plan.entries[0].content, "Fix the greeting");
    assert_eq!(plan.entries[0].status, PlanEntryStatus::InProgress);

    let calls: Vec<_> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    let kinds: Vec<(ToolKind, &str)> = calls.iter().map(|c| (c.kind, c.title.as_str())).collect();
    assert_eq!(
        kinds,
        [(ToolKind::Think, "Update the todo list"), (ToolKind::Edit, "Edit a.txt"), (ToolKind::Execute, "`exit 3`")]
    );
    let edit_call = calls[1];
    assert_eq!(edit_call.status, ToolCallStatus::Pending);
    assert_eq!(edit_call.locations[0].path, env.cwd.join("a.txt"));

    let statuses = |id: &str| -> Vec<ToolCallStatus> {
        updates
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::ToolCallUpdate(t) if &*t.tool_call_id.0 == id => t.fields.status,
                _ => None,
            })
            .collect()
    };
    assert_eq!(statuses(&edit_call.tool_call_id.0), [ToolCallStatus::InProgress, ToolCallStatus::Completed]);
    assert_eq!(statuses(&calls[2].tool_call_id.0), [ToolCallStatus::InProgress, ToolCallStatus::Failed]);
    let diff = updates.iter().find_map(|u| match u {
        SessionUpdate::ToolCallUpdate(t) => t.fields.content.as_ref()?.iter().find_map(|c| match c {
            ToolCallContent::Diff(d) => Some(d.clone()),
            _ => None,
        }),
        _ => None,
    });
    let diff = diff.expect("the edit's diff");
    assert_eq!((diff.old_text.as_deref(), diff.new_text.as_str()), (Some("hello"), "goodbye"));
    assert_eq!(diff.path, env.cwd.join("a.txt"));
    assert_eq!(chunks(&updates, agent_text), "Done.");
    acp.close().await;
}

#[tokio::test]
async fn the_file_tools_use_the_editors_buffers_when_it_offers_them() {
    let env = Env::new(vec![
        Turn::tool_call("read", json!({"path": "a.txt"})),
        Turn::tool_call("edit", json!({"path": "a.txt", "edits": [{"oldText": "unsaved", "newText": "edited"}]})),
        Turn::tool_call("write", json!({"path": "new.txt", "content": "fresh"})),
        Turn::text("Done."),
    ])
    .await;
    let a = env.cwd.join("a.txt");
    std::fs::write(&a, "on disk\n").unwrap();
    let mut acp = Acp::start(&env, &[]).await;
    acp.editor.buffers.lock().unwrap().insert(a.clone(), "unsaved buffer\n".into());
    acp.initialize(true).await;
    let session = acp.new_session(&env.cwd).await;
    acp.prompt(&session.session_id, vec![text("Edit a.txt")]).await.unwrap();

    let requests = acp.editor.requests.lock().unwrap().clone();
    let new = env.cwd.join("new.txt");
    let expected = [
        format!("read {}", a.display()),
        format!("read {}", a.display()),
        format!("write {}", a.display()),
        format!("write {}", new.display()),
    ];
    assert_eq!(requests, expected);
    assert_eq!(acp.editor.buffers.lock().unwrap()[&a], "edited buffer\n");
    assert_eq!(acp.editor.buffers.lock().unwrap()[&new], "fresh");
    // The model saw the buffer, and the disk is the editor's to save.
    let bodies = env.request_bodies();
    assert!(bodies[1].to_string().contains("unsaved buffer"), "{}", bodies[1]);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "on disk\n");
    assert!(!new.exists());
    acp.updates();
    acp.close().await;
}

#[tokio::test]
async fn a_prompt_inlines_embedded_files_and_carries_images() {
    let env = Env::new(vec![Turn::text("Seen.")]).await;
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let file = EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
        "fn main() {}",
        format!("file://{}", env.cwd.join("main.rs").display()),
    )));
    let blocks = vec![
        text("Explain "),
        ContentBlock::Resource(file),
        ContentBlock::Image(ImageContent::new("iVBORw0KGgo=", "image/png")),
    ];
    acp.prompt(&session.session_id, blocks).await.unwrap();
    let body = env.request_bodies()[0].to_string();
    let block = format!("<file name=\\\"{}\\\">\\nfn main() {{}}\\n</file>", env.cwd.join("main.rs").display());
    assert!(body.contains(&block), "{body}");
    assert!(body.contains("iVBORw0KGgo="), "{body}");
    acp.updates();
    acp.close().await;
}

#[tokio::test]
async fn cancel_ends_the_prompt_cancelled_and_a_failed_reply_is_an_error() {
    let env = Env::new(vec![
        Turn::text("A very slow answer that never finishes in time.").with_chunk_size(4).with_chunk_delay_ms(400),
        Turn::error(401, "invalid x-api-key"),
    ])
    .await;
    let mut acp = Acp::start(&env, &["--setting", "retry.enabled=false"]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let cx = acp.cx.clone();
    let id = session.session_id.clone();
    let pending =
        tokio::spawn(async move { cx.send_request(PromptRequest::new(id, vec![text("Go")])).block_task().await });
    // Cancel once the answer has started to stream.
    while acp.updates.recv().await.is_some_and(|n| agent_text(&n.update).is_none()) {}
    acp.cx.send_notification(CancelNotification::new(session.session_id.clone())).unwrap();
    let response = tokio::time::timeout(TIMEOUT, pending).await.unwrap().unwrap().unwrap();
    assert_eq!(response.stop_reason, StopReason::Cancelled);

    let failed = acp.prompt(&session.session_id, vec![text("Again")]).await.unwrap_err();
    assert!(failed.message.contains("invalid x-api-key"), "{failed:?}");
    let unknown = acp.prompt(&SessionId::new("no-such-session"), vec![text("x")]).await.unwrap_err();
    assert!(unknown.message.contains("Unknown session"), "{unknown:?}");
    acp.close().await;
}

#[tokio::test]
async fn load_replays_a_session_before_answering_and_the_session_goes_on() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "echo replayed"})),
        Turn::text("First answer."),
        Turn::text("Second answer."),
    ])
    .await;
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    acp.prompt(&session.session_id, vec![text("First question")]).await.unwrap();
    acp.updates();
    assert!(acp.close().await.success());

    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    acp.request(LoadSessionRequest::new(session.session_id.clone(), env.cwd.clone())).await.unwrap();
    let replayed = acp.updates();
    assert_eq!(chunks(&replayed, user_text), "First question");
    assert_eq!(chunks(&replayed, agent_text), "First answer.");
    let finished = replayed.iter().any(|u| {
        matches!(u, SessionUpdate::ToolCallUpdate(t) if t.fields.status == Some(ToolCallStatus::Completed)
            && format!("{:?}", t.fields.content).contains("replayed"))
    });
    assert!(finished, "{replayed:?}");

    acp.prompt(&session.session_id, vec![text("Second question")]).await.unwrap();
    let body = env.request_bodies()[2].to_string();
    assert!(body.contains("First question") && body.contains("Second question"), "{body}");
    let missing = LoadSessionRequest::new(SessionId::new("/no/such/session.jsonl"), env.cwd.clone());
    assert!(acp.request(missing).await.is_err());
    acp.close().await;
}
