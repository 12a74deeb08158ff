//! The MCP servers an editor passes in ACP's `session/new` and `session/load` (`mcpServers`),
//! through the real `rho --mode acp` driven by the SDK's client side (see `acp_client`):
//! rho-mcp's fixture server (a real MCP server over stdio) passed by the editor overrides the
//! project's `.mcp.json` entry of the same name, the model (rho-mock-llm) calls its tool, and
//! the result reaches the next request. An entry rho cannot run is a precise error.
//!
//! The fixture binary belongs to rho-mcp, so Cargo gives this crate no `CARGO_BIN_EXE_` for it:
//! it is found beside `rho` in the target directory, and built here first when it is missing
//! (as `rpc_mcp.rs` does).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::acp_client;
use crate::common;

use acp_client::*;
use agent_client_protocol::v1::schema::{
    AvailableCommand, EnvVariable, LoadSessionRequest, McpServer, McpServerHttp, McpServerStdio, NewSessionRequest,
    NewSessionResponse, SessionId, SessionUpdate, StopReason, ToolCallStatus,
};
use common::Env;
use common::mcp::{fixture_server, marker_dir};
use pretty_assertions::assert_eq;
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// The editor's `fixture` entry: the fixture server, told where to leave its markers.
fn editor_fixture(env: &Env) -> McpServer {
    let dir = marker_dir(env).to_string_lossy().into_owned();
    McpServer::Stdio(McpServerStdio::new("fixture", fixture_server()).env(vec![EnvVariable::new("FIXTURE_DIR", dir)]))
}

/// A project `.mcp.json` whose `fixture` entry fails at start: only the editor's entry works.
fn write_broken_project_fixture(env: &Env) {
    let servers = json!({"fixture": {"command": fixture_server(), "args": ["--fail-start"]}});
    std::fs::write(env.cwd.join(".mcp.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
}

/// Updates up to the `available_commands_update` that lists `command`: the server offering it is
/// ready, and its tools go with the next prompt.
async fn until_command(acp: &mut Acp, command: &str) -> Vec<SessionUpdate> {
    let mut seen = Vec::new();
    loop {
        let next = tokio::time::timeout(TIMEOUT, acp.updates.recv()).await;
        let update = next.unwrap_or_else(|_| panic!("no {command} in time; got {seen:?}")).expect("updates end").update;
        let found = matches!(&update, SessionUpdate::AvailableCommandsUpdate(u)
            if u.available_commands.iter().any(|c: &AvailableCommand| c.name == command));
        seen.push(update);
        if found {
            return seen;
        }
    }
}

/// Prompts, expects the echo call to complete, and checks the result in the next request.
async fn echo_reaches_the_next_request(env: &Env, acp: &mut Acp, session: &SessionId, first_body: usize) {
    let response = acp.prompt(session, vec![text("Echo something.")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let completed = acp
        .updates()
        .into_iter()
        .any(|u| matches!(u, SessionUpdate::ToolCallUpdate(t) if t.fields.status == Some(ToolCallStatus::Completed)));
    assert!(completed, "the MCP call is not reported completed");
    let bodies = env.request_bodies();
    let tools: Vec<&str> = bodies[first_body]["tools"].as_array().unwrap().iter().map(tool_name).collect();
    assert!(tools.contains(&"mcp__fixture__echo"), "{tools:?}");
    let messages = bodies[first_body + 1]["messages"].as_array().unwrap();
    let result = &messages.last().unwrap()["content"][0];
    assert_eq!(result["type"], "tool_result", "{}", bodies[first_body + 1]);
    assert_eq!(result["content"], "from the editor's server", "{result}");
}

fn tool_name(tool: &Value) -> &str {
    tool["name"].as_str().unwrap()
}

fn echo_turns() -> Vec<Turn> {
    vec![Turn::tool_call("mcp__fixture__echo", json!({"text": "from the editor's server"})), Turn::text("Done.")]
}

#[tokio::test]
async fn a_server_passed_in_session_new_overrides_the_projects_and_its_tool_result_reaches_the_model() {
    let env = Env::new(echo_turns()).await;
    write_broken_project_fixture(&env);
    let mut acp = Acp::start(&env, &[]).await;
    let init = acp.initialize(false).await;
    let mcp = &init.agent_capabilities.mcp_capabilities;
    assert!(mcp.http && mcp.sse, "{mcp:?}");

    let request = NewSessionRequest::new(&env.cwd).mcp_servers(vec![editor_fixture(&env)]);
    let session: NewSessionResponse = acp.request(request).await.unwrap();
    until_command(&mut acp, "mcp__fixture__greet").await;
    // The editor's env reached the server it started.
    let starts = std::fs::read_to_string(marker_dir(&env).join("starts")).unwrap();
    assert_eq!(starts.lines().count(), 1, "{starts}");

    echo_reaches_the_next_request(&env, &mut acp, &session.session_id, 0).await;
    assert!(acp.close().await.success());
}

#[tokio::test]
async fn a_server_passed_in_session_load_serves_the_loaded_session() {
    let env = Env::new([vec![Turn::text("First.")], echo_turns()].concat()).await;
    let acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    acp.prompt(&session.session_id, vec![text("Hello.")]).await.unwrap();
    assert!(acp.close().await.success());

    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let load = LoadSessionRequest::new(session.session_id.clone(), &env.cwd).mcp_servers(vec![editor_fixture(&env)]);
    acp.request(load).await.unwrap();
    until_command(&mut acp, "mcp__fixture__greet").await;
    echo_reaches_the_next_request(&env, &mut acp, &session.session_id, 1).await;
    assert!(acp.close().await.success());
}

#[tokio::test]
async fn an_entry_rho_cannot_run_is_a_precise_error_and_rho_stays_up() {
    let env = Env::new(vec![Turn::text("Still here.")]).await;
    let acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let bad = McpServer::Http(McpServerHttp::new("remote", "ftp://example.invalid/mcp"));
    let request = NewSessionRequest::new(&env.cwd).mcp_servers(vec![editor_fixture(&env), bad]);
    let error = acp.request(request).await.unwrap_err();
    assert_eq!(error.message, "mcpServers[1]: url must be http:// or https://: \"ftp://example.invalid/mcp\"");

    let session = acp.new_session(&env.cwd).await;
    let response = acp.prompt(&session.session_id, vec![text("Hello?")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert!(acp.close().await.success());
}
