//! `pi-messages` (pi's own protocol, the Radius gateway's) against the mock's rendering of it:
//! the conversation goes as pi serializes it, and pi's events come back.

use pretty_assertions::assert_eq;
use rho_types::ThinkingLevel;
use rho_types::types::AssistantContent;
use serde_json::json;

use crate::common::*;

const WIRE: Wire = Wire {
    api: "pi-messages",
    provider: "radius",
    model_id: "balanced",
    base_path: "",
    streams_arguments: true,
    reports_cache_write: true,
};

shared_tests!(WIRE);

#[tokio::test]
async fn thinking_keeps_its_signature() {
    let message = thinking_then_text(WIRE, "sig-123").await;
    let AssistantContent::Thinking(t) = &message.content[0] else { unreachable!() };
    assert_eq!(t.thinking_signature.as_deref(), Some("sig-123"));
}

#[tokio::test]
async fn the_request_is_the_model_the_context_and_the_options() {
    let (first, request) = round_trip(WIRE, "sig-9", ThinkingLevel::High).await;
    assert_eq!(request.path, "/messages");
    assert_eq!(request.api, "pi-messages");
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_extra_headers(&request);
    let call_id = first.tool_calls().next().unwrap().id.clone();
    let context = continuation(&first, &call_id);
    // The messages exactly as pi writes them (the session format; the test's own messages are
    // made again, so their times are left out), the tools as pi's `Tool`s.
    let untimed = |mut v: serde_json::Value| {
        v.as_object_mut().unwrap().remove("timestamp");
        v
    };
    let messages: Vec<serde_json::Value> =
        context.messages.iter().map(|m| untimed(serde_json::to_value(m).unwrap())).collect();
    let mut body = request.body.clone();
    for message in body["context"]["messages"].as_array_mut().unwrap() {
        *message = untimed(message.take());
    }
    assert_eq!(
        body,
        json!({
            "model": "balanced",
            "context": {
                "systemPrompt": "You are terse.",
                "messages": messages,
                "tools": [{"name": "read", "description": "Read a file", "parameters": read_tool().parameters}]
            },
            "options": {"reasoning": "high", "sessionId": "session-1"}
        })
    );
    assert_eq!(request.body["context"]["messages"][1]["role"], "assistant");
    assert_eq!(request.body["context"]["messages"][1]["content"][0]["thinkingSignature"], "sig-9");
}
