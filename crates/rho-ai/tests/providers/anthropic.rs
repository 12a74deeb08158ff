//! `anthropic-messages` against the mock's Anthropic wire format.

use pretty_assertions::assert_eq;
use rho_types::ThinkingLevel;
use rho_types::types::AssistantContent;
use serde_json::json;

use crate::common::*;

const WIRE: Wire = Wire {
    api: "anthropic-messages",
    provider: "anthropic",
    model_id: "claude-sonnet-4-5",
    base_path: "",
    streams_arguments: true,
    reports_cache_write: true,
};

shared_tests!(WIRE);

#[tokio::test]
async fn thinking_keeps_its_signature() {
    let message = thinking_then_text(WIRE, "c2lnbmF0dXJlLTE=").await;
    let AssistantContent::Thinking(t) = &message.content[0] else { unreachable!() };
    assert_eq!(t.thinking_signature.as_deref(), Some("c2lnbmF0dXJlLTE="));
}

#[tokio::test]
async fn the_request_carries_system_tools_thinking_and_history() {
    let (_, request) = round_trip(WIRE, "sig-anthropic", ThinkingLevel::High).await;
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(request.api, "anthropic-messages");
    assert_eq!(request.header("x-api-key"), Some("test-key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("anthropic-beta"), Some("interleaved-thinking-2025-05-14"));
    assert_extra_headers(&request);
    assert_eq!(
        request.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 32000 + 16384,
            "stream": true,
            "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Read a.txt"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "I need the file.", "signature": "sig-anthropic"},
                    {"type": "tool_use", "id": "call_7", "name": "read", "input": {"path": "a.txt"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_7", "content": "file contents",
                     "is_error": false, "cache_control": {"type": "ephemeral"}}
                ]}
            ],
            "tools": [{"name": "read", "description": "Read a file", "input_schema": read_tool().parameters}],
            "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}
        })
    );
}

#[tokio::test]
async fn adaptive_models_send_an_effort_and_no_beta() {
    let server = serve(json!([{"text": "ok"}])).await;
    let mut m = model(WIRE, &server);
    m.id = "claude-opus-4-6".into();
    let mut opts = options();
    opts.thinking = ThinkingLevel::Xhigh;
    collect(&m, &prompt("hi"), opts).await;
    let request = server.last_request().unwrap();
    assert_eq!(request.header("anthropic-beta"), None);
    assert_eq!(request.body["thinking"], json!({"type": "adaptive", "display": "summarized"}));
    assert_eq!(request.body["output_config"], json!({"effort": "max"}));
    assert_eq!(request.body["max_tokens"], json!(32000));
}
