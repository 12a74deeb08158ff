//! The protocol's example sessions through the real binary: the `ready` handshake, a prompt whose
//! reply calls a tool and then answers (docs/protocol.md, "Event order"), and the state
//! a host reads before and after.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, redact, types};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

fn tool_then_answer() -> Vec<Turn> {
    vec![
        Turn::text("Reading it.").with_tool_call("read", json!({"path": "README.md"})).with_chunk_size(0),
        Turn::text("It says hello.").with_chunk_size(0),
    ]
}

#[tokio::test]
async fn ready_comes_first_and_get_state_reports_every_field() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::spawn(&env, &["--no-session"]).await;
    let ready = rho.next().await;
    assert_eq!(
        ready,
        json!({"type": "ready", "version": env!("CARGO_PKG_VERSION"), "protocolVersion": 1,
               "supportedProtocolVersions": [1, 2], "maxFrameBytes": 1_048_576, "maxReassembledFrameBytes": 67_108_864})
    );
    let response = rho.request(json!({"type": "get_state"})).await;
    let mut data = response["data"].clone();
    let tools = data["dumpTools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect::<Vec<_>>();
    // pi's four: rho's own tools are one setting away (`--tools +task`, `defaultTools`).
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    assert!(data["systemPrompt"].as_str().unwrap().contains("Current working directory"));
    data.as_object_mut().unwrap().remove("dumpTools");
    insta::assert_json_snapshot!(redact(&json!({"id": response["id"], "data": data})));
}

#[tokio::test]
async fn a_prompt_with_a_tool_call_streams_the_reference_sequence() {
    let env = Env::new(tool_then_answer()).await;
    std::fs::write(env.cwd.join("README.md"), "hello\n").unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"id": "req_1", "type": "prompt", "message": "What does the README say?"})).await;
    let frames = rho.until_agent_end().await;
    insta::assert_snapshot!(types(&frames).join("\n"));
    insta::assert_json_snapshot!(redact(&Value::Array(frames)));

    let requests = env.request_bodies();
    assert_eq!(requests.len(), 2);
    let second = &requests[1];
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "user, assistant tool_use, user tool_result: {second}");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["content"], "hello\n");
    assert!(second["tools"].as_array().unwrap().iter().any(|t| t["name"] == "read"));
}

/// xcsh's client starts rho with `--no-title` (and omp's negotiates protocol 2): their hosts read
/// the seed protocol's updates, each with the message so far (docs/decisions.md D19).
#[tokio::test]
async fn a_seed_protocol_host_reads_cumulative_updates() {
    for args in [&["--no-session", "--no-title"][..], &["--no-session", "--rpc-message-update", "cumulative"]] {
        let env = Env::new(tool_then_answer()).await;
        std::fs::write(env.cwd.join("README.md"), "hello\n").unwrap();
        let mut rho = Rho::start(&env, args).await;
        rho.send(json!({"type": "prompt", "message": "What does the README say?"})).await;
        let updates: Vec<Value> =
            rho.until_agent_end().await.into_iter().filter(|f| f["type"] == "message_update").collect();
        insta::assert_json_snapshot!("seed_shape_updates", redact(&Value::Array(updates)));
    }
    let env = Env::new(tool_then_answer()).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.data(json!({"type": "negotiate_protocol", "protocolVersion": 2})).await;
    rho.send(json!({"type": "prompt", "message": "What does the README say?"})).await;
    let update = rho.until(|f| f["type"] == "message_update").await.pop().unwrap();
    assert_eq!(update["assistantMessageEvent"]["partial"], update["message"]);
}

#[tokio::test]
async fn the_last_answer_and_messages_are_readable_after_the_run() {
    let env = Env::new(tool_then_answer()).await;
    std::fs::write(env.cwd.join("README.md"), "hello\n").unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    assert_eq!(rho.data(json!({"type": "get_last_assistant_text"})).await, json!({}));
    rho.send(json!({"type": "prompt", "message": "Read it"})).await;
    rho.until_agent_end().await;
    assert_eq!(rho.data(json!({"type": "get_last_assistant_text"})).await, json!({"text": "It says hello."}));
    let messages = rho.data(json!({"type": "get_messages"})).await;
    let roles: Vec<&str> =
        messages["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "toolResult", "assistant"]);
    let stats = rho.data(json!({"type": "get_session_stats"})).await;
    insta::assert_json_snapshot!(redact(&stats));
}
