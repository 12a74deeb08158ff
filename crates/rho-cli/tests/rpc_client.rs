//! The rho-rpc client against the real binary: the `ready` handshake, typed requests, a prompt
//! collected to `agent_end`, a host tool served by a callback, a UI dialog answered by a
//! handler, and a clean close.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Env;
use futures::future::BoxFuture;
use rho_mock_llm::Turn;
use rho_rpc::client::{ClientConfig, HostTool, HostToolContext, ReadyPolicy, RpcClient, UiAnswer, UiHandler};
use rho_rpc::{
    AgentFrameEvent, Event, HostToolCall, RpcCommand, RpcHostToolDefinition, RpcSessionState, UiMethod, UiRequest,
};
use rho_types::AgentToolResult;
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct PickSecond;

impl UiHandler for PickSecond {
    fn dialog(&self, request: UiRequest, _cancel: CancellationToken) -> BoxFuture<'static, UiAnswer> {
        let answer = match request.method {
            UiMethod::Select { options, .. } => UiAnswer::Value(options[1].clone()),
            _ => UiAnswer::Cancelled,
        };
        Box::pin(async move { answer })
    }
}

fn client_for(env: &Env) -> ClientConfig {
    ClientConfig::new()
        .program(env!("CARGO_BIN_EXE_rho"))
        .args(["--mode", "rpc", "--no-session", "--model", "mock/mock-model", "--tools", "+ask"])
        .env("RHO_CODING_AGENT_DIR", &env.agent_dir)
        .env("HOME", env.dir.path())
        .current_dir(&env.cwd)
        .ready(ReadyPolicy::Wait(std::time::Duration::from_secs(10)))
        .ui_handler(PickSecond)
}

fn final_text(events: &[Event]) -> String {
    let Some(Event::Agent(AgentFrameEvent::AgentEnd { messages, .. })) = events.last() else {
        panic!("the run ends with agent_end")
    };
    let last = messages.last().and_then(|m| m.as_assistant()).expect("an assistant answer");
    last.text()
}

#[tokio::test]
async fn a_rust_host_drives_rho_through_the_client() {
    let env = Env::new(vec![
        Turn::tool_call("echo_host", json!({"message": "ping"})),
        Turn::text("The host said pong."),
        Turn::tool_call("ask", json!({"question": "Which?", "options": ["left", "right"]})),
        Turn::text("Going right."),
    ])
    .await;
    let mut client = RpcClient::spawn(client_for(&env)).await.unwrap();
    assert_eq!(client.ready().unwrap().version, env!("CARGO_PKG_VERSION"));
    let state: RpcSessionState = client.request_data(RpcCommand::GetState).await.unwrap();
    assert_eq!(state.model.unwrap().id, "mock-model");

    let definition = RpcHostToolDefinition {
        name: "echo_host".into(),
        label: None,
        description: "Echo a message back".into(),
        parameters: json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        hidden: None,
    };
    let tool = HostTool::new(definition, |call: HostToolCall, context: HostToolContext| async move {
        context.update(AgentToolResult::text("thinking about it")).await.map_err(|e| e.to_string())?;
        let message = call.arguments["message"].as_str().unwrap_or_default();
        Ok(AgentToolResult::text(format!("{message} -> pong")))
    });
    assert_eq!(client.set_host_tools(vec![tool]).await.unwrap(), ["echo_host"]);

    let events = client.prompt_and_wait("use the host tool").await.unwrap();
    let end = events
        .iter()
        .find_map(|e| match e {
            Event::Agent(AgentFrameEvent::ToolExecutionEnd { result, is_error, .. }) => {
                Some((result.clone(), *is_error))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!((end.0.text_content().as_str(), end.1), ("ping -> pong", false));
    assert!(events.iter().any(|e| matches!(e, Event::Agent(AgentFrameEvent::ToolExecutionUpdate { .. }))));
    assert_eq!(final_text(&events), "The host said pong.");

    let events = client.prompt_and_wait("ask me").await.unwrap();
    assert_eq!(final_text(&events), "Going right.");
    let sent = env.request_bodies();
    assert!(sent[3].to_string().contains("User answered: right"));

    let status = client.close().await.unwrap();
    assert!(status.success());
}
