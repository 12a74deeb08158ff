//! The client against `fake_rpc_server` (src/bin/fake_rpc_server.rs): handshake, correlation,
//! host tools, UI dialogs, late and id-less errors, protocol errors, exits and close.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rho_rpc::client::{
    ClientConfig, ClientError, HostTool, HostToolContext, Notification, ReadyPolicy, RpcClient, UiAnswer, UiHandler,
};
use rho_rpc::{AgentFrameEvent, Event, HostToolCall, RpcCommand, RpcHostToolDefinition, UiMethod, UiRequest};
use rho_types::AgentToolResult;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(20);

fn config() -> ClientConfig {
    ClientConfig::new().program(env!("CARGO_BIN_EXE_fake_rpc_server"))
}

async fn client() -> RpcClient {
    RpcClient::spawn(config()).await.unwrap()
}

fn prompt(message: &str) -> RpcCommand {
    RpcCommand::Prompt { message: message.into(), images: None, streaming_behavior: None, locale: None }
}

fn bash(command: &str) -> RpcCommand {
    RpcCommand::Bash { command: command.into(), exclude_from_context: None }
}

fn definition(name: &str) -> RpcHostToolDefinition {
    RpcHostToolDefinition {
        name: name.into(),
        label: None,
        description: format!("{name} tool"),
        parameters: json!({"type": "object"}),
        hidden: None,
    }
}

/// Every line the fake server has read so far.
async fn received(client: &RpcClient) -> Vec<Value> {
    let data: Value = client.request_data(RpcCommand::GetMessages).await.unwrap();
    data["received"].as_array().unwrap().clone()
}

async fn next(client: &mut RpcClient) -> Notification {
    tokio::time::timeout(WAIT, client.next_event()).await.expect("a notification in time").expect("stream open")
}

fn tool_end(events: &[Event]) -> (Value, bool) {
    events
        .iter()
        .find_map(|e| match e {
            Event::Agent(AgentFrameEvent::ToolExecutionEnd { result, is_error, .. }) => {
                Some((serde_json::to_value(result).unwrap(), *is_error))
            }
            _ => None,
        })
        .expect("a tool_execution_end")
}

#[tokio::test]
async fn handshake_and_correlated_requests() {
    let client = client().await;
    assert_eq!(client.ready().unwrap().version, "fake-1");
    let (a, b) = tokio::join!(client.request(RpcCommand::GetState), client.request(RpcCommand::Abort));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!((a.id, a.command.as_deref(), a.success), (Some(json!("req_1")), Some("get_state"), true));
    assert_eq!((b.id, b.command.as_deref()), (Some(json!("req_2")), Some("abort")));
    let data: Value = client.request_data(RpcCommand::GetState).await.unwrap();
    assert_eq!(data, json!({"sessionId": "fake-session"}));
    // What went over the wire: the id first, then the command's own fields.
    let lines = received(&client).await;
    assert_eq!(serde_json::to_string(&lines[0]).unwrap(), r#"{"id":"req_1","type":"get_state"}"#);
    assert!(client.close().await.unwrap().success());
}

#[tokio::test]
async fn prompt_and_wait_collects_the_run() {
    let mut client = client().await;
    let events = client.prompt_and_wait("hello").await.unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Event::Agent(AgentFrameEvent::AgentStart) => "agent_start",
            Event::Agent(AgentFrameEvent::MessageStart { .. }) => "message_start",
            Event::Agent(AgentFrameEvent::AgentEnd { .. }) => "agent_end",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["agent_start", "message_start", "agent_end"]);
}

#[tokio::test]
async fn host_tools_are_served_with_updates_and_results() {
    let mut client = client().await;
    let echo = |call: HostToolCall, ctx: HostToolContext| async move {
        ctx.update(AgentToolResult::text("working")).await.map_err(|e| e.to_string())?;
        Ok(AgentToolResult::text(format!("echo: {}", call.arguments["message"].as_str().unwrap_or_default())))
    };
    let names = client.set_host_tools(vec![HostTool::new(definition(" echo "), echo)]).await.unwrap();
    assert_eq!(names, [" echo "]);

    let events = client.prompt_and_wait("tool").await.unwrap();
    let update = events.iter().find_map(|e| match e {
        Event::Agent(AgentFrameEvent::ToolExecutionUpdate { partial_result, .. }) => Some(partial_result.clone()),
        _ => None,
    });
    assert_eq!(update, Some(AgentToolResult::text("working")));
    assert_eq!(tool_end(&events), (json!({"content": [{"type": "text", "text": "echo: hi"}]}), false));
    let lines = received(&client).await;
    let result = lines.iter().find(|l| l["type"] == "host_tool_result").unwrap();
    assert_eq!(
        serde_json::to_string(result).unwrap(),
        r#"{"type":"host_tool_result","id":"host_1","result":{"content":[{"type":"text","text":"echo: hi"}]}}"#
    );
}

#[tokio::test]
async fn unregistered_tools_and_bad_arguments_are_tool_errors() {
    let mut client = client().await;
    let fail = |_: HostToolCall, _: HostToolContext| async { Err::<AgentToolResult, _>("unreachable".to_string()) };
    client.set_host_tools(vec![HostTool::new(definition("echo"), fail)]).await.unwrap();
    let error = |text: &str| (json!({"content": [{"type": "text", "text": text}]}), true);

    let events = client.prompt_and_wait("unknown tool").await.unwrap();
    assert_eq!(tool_end(&events), error(r#"Host tool "missing" is not registered"#));
    let events = client.prompt_and_wait("bad args").await.unwrap();
    assert_eq!(tool_end(&events), error("Host tool arguments must be an object"));
}

#[tokio::test]
async fn host_tool_cancel_fires_the_token_and_nothing_more_is_sent() {
    let mut client = client().await;
    let (fired_tx, fired_rx) = tokio::sync::oneshot::channel::<()>();
    let fired_tx = Arc::new(Mutex::new(Some(fired_tx)));
    let slow = move |_: HostToolCall, ctx: HostToolContext| {
        let fired_tx = Arc::clone(&fired_tx);
        async move {
            let token = ctx.cancellation().clone();
            tokio::spawn(async move {
                token.cancelled().await;
                if let Some(tx) = fired_tx.lock().unwrap().take() {
                    let _ = tx.send(());
                }
            });
            ctx.update(AgentToolResult::text("started")).await.map_err(|e| e.to_string())?;
            std::future::pending::<()>().await;
            Ok(AgentToolResult::text("never"))
        }
    };
    client.set_host_tools(vec![HostTool::new(definition("slow"), slow)]).await.unwrap();
    client.prompt_and_wait("cancel").await.unwrap();
    tokio::time::timeout(WAIT, fired_rx).await.unwrap().unwrap();
    let lines = received(&client).await;
    assert!(lines.iter().all(|l| l["type"] != "host_tool_result"), "{lines:?}");
}

#[derive(Default)]
struct Ui {
    shown: Mutex<Vec<String>>,
}

struct SharedUi(Arc<Ui>);

impl UiHandler for SharedUi {
    fn dialog(&self, request: UiRequest, cancel: CancellationToken) -> BoxFuture<'static, UiAnswer> {
        Box::pin(async move {
            match request.method {
                UiMethod::Confirm { .. } => UiAnswer::Confirmed(true),
                // Waits until the server withdraws it.
                _ => {
                    cancel.cancelled().await;
                    UiAnswer::Value("too late".into())
                }
            }
        })
    }

    fn notify(&self, request: UiRequest) {
        self.0.shown.lock().unwrap().push(request.id);
    }
}

async fn run_until_agent_end(client: &mut RpcClient, message: &str) -> Vec<Notification> {
    assert!(client.request(prompt(message)).await.unwrap().success);
    let mut seen = Vec::new();
    loop {
        let n = next(client).await;
        let end = matches!(n.as_event(), Some(Event::Agent(AgentFrameEvent::AgentEnd { .. })));
        seen.push(n);
        if end {
            return seen;
        }
    }
}

#[tokio::test]
async fn ui_dialogs_are_answered_and_withdrawn_ones_are_not() {
    let ui = Arc::new(Ui::default());
    let mut client = RpcClient::spawn(config().ui_handler(SharedUi(Arc::clone(&ui)))).await.unwrap();
    let seen = run_until_agent_end(&mut client, "ui").await;
    let requests: Vec<&str> = seen
        .iter()
        .filter_map(|n| match n {
            Notification::UiRequest(r) => Some(r.id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(requests, ["ui_1", "ui_2", "ui_3", "ui_4"]);
    assert_eq!(*ui.shown.lock().unwrap(), ["ui_2", "ui_4"]);
    let lines = received(&client).await;
    let answers: Vec<String> =
        lines.iter().filter(|l| l["type"] == "extension_ui_response").map(|l| l.to_string()).collect();
    assert_eq!(answers, [r#"{"type":"extension_ui_response","id":"ui_1","confirmed":true}"#]);
}

#[tokio::test]
async fn without_a_ui_handler_dialogs_are_cancelled() {
    let mut client = client().await;
    run_until_agent_end(&mut client, "ui").await;
    let lines = received(&client).await;
    let first = lines.iter().find(|l| l["type"] == "extension_ui_response").unwrap();
    assert_eq!(first.to_string(), r#"{"type":"extension_ui_response","id":"ui_1","cancelled":true}"#);
}

#[tokio::test]
async fn a_late_prompt_error_is_surfaced() {
    let mut client = client().await;
    match client.prompt_and_wait("late").await {
        Err(ClientError::Rejected { command, error }) => {
            assert_eq!(command, "prompt");
            assert!(error.starts_with("Agent is already processing."), "{error}");
        }
        other => panic!("expected a late rejection, got {other:?}"),
    }
    let ack = client.request(prompt("late")).await.unwrap();
    assert!(ack.success);
    match next(&mut client).await {
        Notification::LateResponse(late) => assert_eq!((late.id, late.success), (ack.id, false)),
        other => panic!("expected a late response, got {other:?}"),
    }
}

#[tokio::test]
async fn idless_and_unknown_command_errors_reach_their_request() {
    let mut client = client().await;
    let compact = client.request(RpcCommand::Compact { custom_instructions: None }).await.unwrap();
    assert_eq!(compact.id, None);
    assert_eq!(compact.command.as_deref(), Some("parse"));
    assert_eq!(compact.error.as_deref(), Some("Failed to parse command: Nothing to compact (session too small)"));

    let clone = client.request_ok(RpcCommand::Clone).await.unwrap_err();
    assert_eq!(clone.to_string(), "clone failed: Unknown command: clone");

    let mut raw = Map::new();
    raw.insert("type".into(), json!("frobnicate"));
    let unknown = client.request_raw(raw).await.unwrap();
    assert_eq!(unknown.id, Some(json!("req_3")));
    assert_eq!(unknown.error.as_deref(), Some("Unknown command: frobnicate"));

    client.send_line("{not json").await.unwrap();
    match next(&mut client).await {
        Notification::UnsolicitedResponse(r) => {
            assert_eq!(r.command.as_deref(), Some("parse"));
            assert!(r.error.unwrap().starts_with("Failed to parse command: "));
        }
        other => panic!("expected an unsolicited parse error, got {other:?}"),
    }
    assert!(matches!(client.send_line("a\nb").await, Err(ClientError::LineBreak)));
}

#[tokio::test]
async fn lines_that_are_not_frames_are_protocol_errors() {
    let mut client = client().await;
    let seen = run_until_agent_end(&mut client, "garbage").await;
    let errors: Vec<(String, String)> = seen
        .iter()
        .filter_map(|n| match n {
            Notification::ProtocolError(e) => Some((e.line.clone(), e.message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].0, "this is not json");
    assert!(errors[0].1.starts_with("not a JSON frame"), "{}", errors[0].1);
    assert!(errors[1].1.contains("unknown frame type \"mystery\""), "{}", errors[1].1);
    assert!(client.request(RpcCommand::GetState).await.unwrap().success);
}

#[tokio::test]
async fn a_server_exit_fails_every_pending_request_with_its_stderr() {
    let client = client().await;
    let (hang, exit) = tokio::join!(client.request(bash("hang")), client.request(bash("exit")));
    for result in [hang, exit] {
        match result {
            Err(ClientError::Exited(report)) => {
                assert_eq!(report.status.and_then(|s| s.code()), Some(3));
                assert!(report.stderr.contains("out of cheese"), "{report:?}");
            }
            other => panic!("expected an exit error, got {other:?}"),
        }
    }
    let later = client.request(RpcCommand::GetState).await.unwrap_err();
    assert!(later.to_string().contains("fatal: out of cheese"), "{later}");
    assert!(client.exit_report().is_some());
}

#[tokio::test]
async fn servers_without_ready_work_when_told_and_time_out_otherwise() {
    let skip = config().arg("--no-ready").ready(ReadyPolicy::Skip);
    let client = RpcClient::spawn(skip).await.unwrap();
    assert!(client.ready().is_none());
    assert!(client.request(RpcCommand::GetState).await.unwrap().success);

    let wait = config().arg("--no-ready").ready(ReadyPolicy::Wait(Duration::from_millis(200)));
    let error = RpcClient::spawn(wait).await.unwrap_err();
    assert!(matches!(error, ClientError::ReadyTimeout { .. }));
    assert_eq!(error.to_string(), "Timed out waiting for RPC ready signal");
}

#[tokio::test]
async fn exiting_before_ready_reports_stderr() {
    let error = RpcClient::spawn(config().arg("--exit-before-ready")).await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("exit status: 1") && text.contains("Unknown provider: nowhere"), "{text}");
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let error = RpcClient::spawn(ClientConfig::new().program("/nonexistent/rho")).await.unwrap_err();
    assert!(matches!(error, ClientError::Spawn { .. }), "{error}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn close_kills_a_server_that_ignores_eof_and_its_process_group() {
    let config = config().arg("--ignore-eof").close_timeout(Duration::from_millis(300));
    let client = RpcClient::spawn(config).await.unwrap();
    let sleeper = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(pid) = client.stderr().strip_prefix("sleeper pid ").and_then(|s| s.trim().parse::<u32>().ok()) {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    let status = client.close().await.unwrap();
    assert!(!status.success());
    let gone = || match std::fs::read_to_string(format!("/proc/{sleeper}/stat")) {
        // Dead, or a zombie waiting for whoever adopted it.
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    };
    tokio::time::timeout(WAIT, async {
        while !gone() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server's child was killed with its group");
}
