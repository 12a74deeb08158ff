//! The four compact command flows of omp's RPC reference ("Compact Command Flows"), run
//! through the real binary as written there: a prompt that streams, a prompt queued as a
//! follow-up while streaming, inspecting and tuning the queues, and an extension UI round trip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, redact, types};
use rho_mock_llm::Turn;
use serde_json::json;

#[tokio::test]
async fn the_four_compact_flows() {
    let env = Env::new(vec![
        Turn::text("This repo is a coding agent.").with_chunk_size(4).with_chunk_delay_ms(20),
        Turn::text("Risks: none found."),
        Turn::tool_call("ask", json!({"question": "Branch name"})),
        Turn::text("Created feature/rpc-host."),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+ask"]).await;

    // 1) Prompt and stream; 2) a prompt during streaming with an explicit queue policy.
    rho.send(json!({"id": "req_1", "type": "prompt", "message": "Summarize this repo"})).await;
    let ack = rho.next().await;
    assert_eq!(
        ack,
        json!({"id": "req_1", "type": "response", "command": "prompt", "success": true,
        "data": {"disposition": "started"}})
    );
    rho.until(|f| f["type"] == "message_update" && f["assistantMessageEvent"]["type"] == "text_delta").await;
    rho.send(
        json!({"id": "req_2", "type": "prompt", "message": "Also include risks", "streamingBehavior": "followUp"}),
    )
    .await;
    let frames = rho.until_agent_end().await;
    assert!(frames.iter().any(|f| f
        == &json!({"id": "req_2", "type": "response", "command": "prompt", "success": true,
            "data": {"disposition": "queued"}})));
    let end = frames.last().unwrap();
    let texts: Vec<String> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"][0]["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        texts,
        ["", "Summarize this repo", "This repo is a coding agent.", "Also include risks", "Risks: none found."]
    );

    // 3) Inspect and tune queue behaviour.
    let state = rho.request(json!({"id": "q1", "type": "get_state"})).await;
    assert_eq!(state["data"]["steeringMode"], "one-at-a-time");
    assert_eq!(rho.request(json!({"type": "set_steering_mode", "mode": "all"})).await["success"], true);
    assert_eq!(rho.request(json!({"type": "set_interrupt_mode", "mode": "wait"})).await["success"], true);
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((state["steeringMode"].as_str(), state["interruptMode"].as_str()), (Some("all"), Some("wait")));

    // 4) Extension UI round trip.
    rho.send(json!({"type": "prompt", "message": "make a branch"})).await;
    let request = rho.until(|f| f["type"] == "extension_ui_request").await.pop().unwrap();
    assert_eq!(
        redact(&request),
        json!({"type": "extension_ui_request", "id": "[id]", "method": "input", "title": "Branch name", "timeout": 600000})
    );
    rho.send(json!({"type": "extension_ui_response", "id": request["id"], "value": "feature/rpc-host"})).await;
    let frames = rho.until_agent_end().await;
    let kinds: Vec<String> = types(&frames).into_iter().filter(|t| t.starts_with("tool_execution")).collect();
    assert_eq!(kinds, ["tool_execution_end"]);
    let result = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "User answered: feature/rpc-host");
    assert_eq!(frames.last().unwrap()["messages"][3]["content"][0]["text"], "Created feature/rpc-host.");
}
