//! The extension UI and host tool sub-protocols through the real binary, plus the xcsh commands
//! hosts use to seed a session (set_todos, get_commands, get_integrations).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, redact};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

fn echo_tool() -> Value {
    json!({"name": "echo_host", "label": "Echo Host", "description": "Echo a value from the embedding host",
           "parameters": {"type": "object", "properties": {"message": {"type": "string"}},
                          "required": ["message"], "additionalProperties": false}})
}

#[tokio::test]
async fn the_ask_tool_opens_a_dialog_and_the_answer_reaches_the_model() {
    let env = Env::new(vec![
        Turn::tool_call("ask", json!({"question": "Which branch?", "options": ["main", "dev"]})),
        Turn::text("Using dev."),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+ask"]).await;
    rho.send(json!({"type": "prompt", "message": "pick one"})).await;
    let frames = rho.until(|f| f["type"] == "extension_ui_request").await;
    let request = frames.last().unwrap().clone();
    assert_eq!(
        redact(&request),
        json!({"type": "extension_ui_request", "id": "[id]", "method": "select", "title": "Which branch?",
               "options": ["main", "dev"], "timeout": 600000})
    );
    // An unknown id is ignored; the real answer resolves the dialog.
    rho.send(json!({"type": "extension_ui_response", "id": "nope", "value": "main"})).await;
    rho.send(json!({"type": "extension_ui_response", "id": request["id"], "value": "dev"})).await;
    let frames = rho.until_agent_end().await;
    let result = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(result["result"]["content"][0]["text"], "User answered: dev");
    assert_eq!(frames.last().unwrap()["messages"][4]["content"][0]["text"], "Using dev.");
}

#[tokio::test]
async fn an_abort_withdraws_an_open_dialog() {
    let env = Env::new(vec![Turn::tool_call("ask", json!({"question": "Name?"})), Turn::text("unused")]).await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+ask"]).await;
    rho.send(json!({"type": "prompt", "message": "ask me"})).await;
    let frames = rho.until(|f| f["type"] == "extension_ui_request").await;
    assert_eq!(frames.last().unwrap()["method"], "input");
    rho.send(json!({"id": "a", "type": "abort"})).await;
    let frames = rho.until(|f| f["id"] == "a").await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["isError"], true);
    assert_eq!(end["result"]["content"][0]["text"], "Operation aborted");
}

#[tokio::test]
async fn host_tools_are_registered_called_updated_and_completed() {
    let env = Env::new(vec![
        Turn::tool_call("echo_host", json!({"message": "hello"})),
        Turn::tool_call("echo_host", json!({"message": "fail please"})),
        Turn::text("All done."),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let registered = rho.data(json!({"type": "set_host_tools", "tools": [echo_tool()]})).await;
    assert_eq!(registered, json!({"toolNames": ["echo_host"]}));
    assert!(
        rho.data(json!({"type": "get_state"})).await["dumpTools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "echo_host")
    );

    rho.send(json!({"type": "prompt", "message": "echo"})).await;
    let frames = rho.until(|f| f["type"] == "host_tool_call").await;
    let call = frames.last().unwrap().clone();
    assert_eq!(
        redact(&call),
        json!({"type": "host_tool_call", "id": "[id]", "toolCallId": "[id]", "toolName": "echo_host", "arguments": {"message": "hello"}})
    );
    rho.send(json!({"type": "host_tool_update", "id": call["id"], "partialResult": {"content": [{"type": "text", "text": "working"}]}})).await;
    let update = rho.until(|f| f["type"] == "tool_execution_update").await.pop().unwrap();
    assert_eq!(update["partialResult"]["content"][0]["text"], "working");
    // A result for an unknown id is ignored; a malformed one is an unknown command.
    rho.send(json!({"type": "host_tool_result", "id": "nope", "result": {"content": []}})).await;
    rho.send(json!({"type": "host_tool_result", "id": call["id"], "result": {"content": "not an array"}})).await;
    let unknown = rho.until(|f| f["type"] == "response").await.pop().unwrap();
    assert_eq!(unknown["error"], "Unknown command: host_tool_result");
    rho.send(json!({"type": "host_tool_result", "id": call["id"], "result": {"content": [{"type": "text", "text": "hello back"}], "details": {"n": 1}}})).await;

    let frames = rho.until(|f| f["type"] == "host_tool_call").await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"], json!({"content": [{"type": "text", "text": "hello back"}], "details": {"n": 1}}));
    assert_eq!(end["isError"], false);
    let second = frames.last().unwrap().clone();
    rho.send(json!({"type": "host_tool_result", "id": second["id"], "isError": true, "result": {"content": [{"type": "text", "text": " it broke "}]}})).await;
    let frames = rho.until_agent_end().await;
    let failed = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(failed["isError"], true);
    assert_eq!(failed["result"]["content"][0]["text"], "it broke");
    let sent = env.request_bodies();
    assert!(sent[0]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo_host"));
}

#[tokio::test]
async fn an_abort_cancels_a_host_call_the_host_never_answers() {
    let env = Env::new(vec![Turn::tool_call("echo_host", json!({"message": "x"})), Turn::text("unused")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.data(json!({"type": "set_host_tools", "tools": [echo_tool()]})).await;
    rho.send(json!({"type": "prompt", "message": "go"})).await;
    let call = rho.until(|f| f["type"] == "host_tool_call").await.pop().unwrap();
    rho.send(json!({"id": "a", "type": "abort"})).await;
    let frames = rho.until(|f| f["id"] == "a").await;
    let cancel = frames.iter().find(|f| f["type"] == "host_tool_cancel").unwrap();
    assert_eq!(cancel["targetId"], call["id"]);
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "Host tool \"echo_host\" was aborted");
    // A late answer is ignored.
    rho.send(json!({"type": "host_tool_result", "id": call["id"], "result": {"content": []}})).await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], false);
}

#[tokio::test]
async fn set_host_tools_validates_with_the_reference_texts() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let cases = [
        (
            json!([{"name": " ", "description": "d", "parameters": {}}]),
            "Host tool at index 0 must provide a non-empty name",
        ),
        (
            json!([{"name": "x", "description": "", "parameters": {}}]),
            "Host tool \"x\" must provide a non-empty description",
        ),
        (
            json!([{"name": "x", "description": "d", "parameters": []}]),
            "Host tool \"x\" must provide a JSON Schema object",
        ),
        (json!([echo_tool(), echo_tool()]), "RPC host tool names must be unique"),
        (
            json!([{"name": "read", "description": "d", "parameters": {}}]),
            "RPC host tool \"read\" conflicts with an existing tool",
        ),
    ];
    for (tools, error) in cases {
        let response = rho.request(json!({"type": "set_host_tools", "tools": tools})).await;
        assert_eq!(response["error"], error);
    }
    assert_eq!(rho.data(json!({"type": "set_host_tools", "tools": []})).await, json!({"toolNames": []}));
}

#[tokio::test]
async fn set_todos_normalizes_and_get_state_reports_them() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let phases = json!([{"name": "Evaluation", "tasks": [
        {"content": "Map the read tool surface", "status": "in_progress", "details": "dropped"},
        {"id": "t9", "content": "Exercise edit operations"}]}]);
    let data = rho.data(json!({"type": "set_todos", "phases": phases})).await;
    let expected = json!([{"id": "phase-1", "name": "Evaluation", "tasks": [
        {"id": "task-1", "content": "Map the read tool surface", "status": "in_progress"},
        {"id": "t9", "content": "Exercise edit operations", "status": "pending"}]}]);
    assert_eq!(data, json!({"todoPhases": expected}));
    assert_eq!(rho.data(json!({"type": "get_state"})).await["todoPhases"], expected);
    let bad = rho
        .request(json!({"type": "set_todos", "phases": [{"name": "P", "tasks": [{"content": "x", "status": "done"}]}]}))
        .await;
    assert_eq!(bad["success"], false);
    assert!(bad["error"].as_str().unwrap().contains("status"), "{bad}");
    assert_eq!(rho.data(json!({"type": "get_state"})).await["todoPhases"], expected);
}

#[tokio::test]
async fn get_commands_lists_templates_and_get_integrations_answers() {
    let env = Env::new(vec![]).await;
    let prompts = env.cwd.join(".rho/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(prompts.join("review.md"), "---\ndescription: Review a file\n---\nReview $1").unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let commands = rho.data(json!({"type": "get_commands"})).await;
    assert_eq!(
        redact(&commands),
        json!({"commands": [{"name": "review", "description": "Review a file", "source": "prompt",
            "sourceInfo": {"path": "[path]", "source": "auto", "scope": "project", "origin": "top-level", "baseDir": "[path]"},
            "location": "project", "path": "[path]"}]})
    );
    let integrations = rho.data(json!({"type": "get_integrations"})).await;
    assert_eq!(integrations["model"], json!({"state": "connected", "provider": "mock"}));
    assert_eq!(integrations["services"], json!([]));
}
