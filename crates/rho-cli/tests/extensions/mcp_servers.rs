//! MCP servers an extension registers (pi 1.6's `registerMcpServer`), through the fixture
//! `mcp-server.ts`: rho starts the server with the session's own, offers its tools and prompts,
//! and closes it (its tools gone, its process ended) when the extension unregisters it.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{fixture, pi_host};
use crate::common::mcp::{fixture_server, marker_dir};
use crate::common::{Env, Rho, alive, eventually};

fn server_names(state: &Value) -> Vec<String> {
    state["mcpServers"].as_array().map_or(Vec::new(), |servers| {
        servers.iter().map(|s| format!("{} {}", s["name"].as_str().unwrap(), s["status"].as_str().unwrap())).collect()
    })
}

#[tokio::test]
async fn an_mcp_server_an_extension_registers_runs_until_it_is_unregistered() {
    let Some(host) = pi_host("an_mcp_server_an_extension_registers_runs_until_it_is_unregistered") else { return };
    let turns = vec![Turn::tool_call("mcp__fixture__echo", json!({"text": "from the server"})), Turn::text("Done.")];
    let env = Env::new(turns).await.with_extension_host(host);
    let entry = json!({"command": fixture_server(), "env": {"FIXTURE_DIR": marker_dir(&env)}});
    let mut command = env.command(&["--mode", "rpc", "--model", "mock/mock-model", "-e", &fixture("mcp-server.ts")]);
    command.env("RHO_TEST_MCP_SERVER", entry.to_string());
    let mut rho = Rho::start_command(command).await;

    // Ready: its prompt is a command, its tools are offered and answer.
    rho.until(|f| {
        f["type"] == "available_commands_update"
            && f["commands"].as_array().unwrap().iter().any(|c| c["name"] == "mcp__fixture__greet")
    })
    .await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(server_names(&state), ["fixture ready"]);
    rho.send(json!({"type": "prompt", "message": "Echo something."})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!((&end["isError"], &end["result"]["content"][0]["text"]), (&json!(false), &json!("from the server")));

    // Unregistered: closed, its tools gone from the next request.
    let pids: Vec<u32> = std::fs::read_to_string(marker_dir(&env).join("starts"))
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert_eq!(pids.len(), 1, "{pids:?}");
    rho.send(json!({"type": "prompt", "id": "d", "message": "/drop-mcp"})).await;
    rho.until(|f| f["type"] == "response" && f["id"] == "d").await;
    assert!(eventually(|| !alive(pids[0])).await, "the server's process still runs");
    let state = rho.data(json!({"type": "get_state"})).await;
    assert!(server_names(&state).is_empty(), "{state}");
    let tools: Vec<&str> = state["dumpTools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!tools.iter().any(|t| t.starts_with("mcp__")), "{tools:?}");
}
