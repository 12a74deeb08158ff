//! `tool_search` with MCP tools of `deferred` exposure, through the real binary: the deferred
//! tools are not declared until a search loads them, the server's direct tools are; the loaded
//! tool is declared from the next request and callable; a resumed session declares it again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::mcp::{fixture_server, marker_dir};
use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// The names of the tools a request declared.
fn declared(body: &Value) -> Vec<String> {
    body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

async fn ready(rho: &mut Rho) {
    rho.until(|f| {
        f["type"] == "available_commands_update"
            && f["commands"].as_array().unwrap().iter().any(|c| c["name"] == "mcp__fixture__greet")
    })
    .await;
}

#[tokio::test]
async fn a_search_loads_a_deferred_tool_for_the_next_request_and_a_resume_keeps_it() {
    let env = Env::new(vec![
        Turn::tool_call("tool_search", json!({"query": "add two numbers", "limit": 1})),
        Turn::tool_call("mcp__fixture__add", json!({"a": 2, "b": 3})),
        Turn::text("It is 5."),
        Turn::text("Still here."),
    ])
    .await;
    let server = json!({"command": fixture_server(), "env": {"FIXTURE_DIR": marker_dir(&env)},
                        "exposure": "deferred", "toolExposure": {"echo": "direct"}});
    std::fs::write(env.cwd.join(".mcp.json"), json!({"mcpServers": {"fixture": server}}).to_string()).unwrap();
    env.trust_project();
    let mut rho = Rho::start(&env, &[]).await;
    ready(&mut rho).await;
    rho.send(json!({"type": "prompt", "message": "add 2 and 3"})).await;
    let frames = rho.until_agent_end().await;
    let results: Vec<&str> = frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .map(|f| f["result"]["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        results,
        [
            "Loaded 1 tool. They are available from your next call:\n- mcp__fixture__add: Adds two numbers; the sum as text and as structured content.",
            "5"
        ]
    );
    let bodies = env.request_bodies();
    let first = declared(&bodies[0]);
    assert!(first.contains(&"tool_search".to_owned()) && first.contains(&"mcp__fixture__echo".to_owned()), "{first:?}");
    assert!(!first.iter().any(|n| n == "mcp__fixture__add" || n == "mcp__fixture__fail"), "{first:?}");
    assert!(declared(&bodies[1]).contains(&"mcp__fixture__add".to_owned()));
    assert!(!declared(&bodies[1]).contains(&"mcp__fixture__fail".to_owned()));
    rho.close_stdin();
    rho.wait().await;

    let mut resumed = Rho::start(&env, &["--continue"]).await;
    ready(&mut resumed).await;
    resumed.send(json!({"type": "prompt", "message": "again"})).await;
    resumed.until_agent_end().await;
    let last = env.request_bodies().pop().unwrap();
    assert!(declared(&last).contains(&"mcp__fixture__add".to_owned()), "{:?}", declared(&last));
}

/// `--tools +tool_search` offers it with no deferred tools: a search finds nothing to load.
#[tokio::test]
async fn with_nothing_deferred_a_search_loads_nothing() {
    let env = Env::new(vec![Turn::tool_call("tool_search", json!({"query": "anything"})), Turn::text("ok")]).await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+tool_search"]).await;
    rho.send(json!({"type": "prompt", "message": "look"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "No matching tools found.");
    assert_eq!(end["result"]["details"], json!({"loaded": []}));
}
