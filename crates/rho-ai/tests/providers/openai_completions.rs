//! `openai-completions` against the mock's Chat Completions wire format. The mock listens on
//! loopback; a local server gets OpenAI's own dialect (`developer`, `max_completion_tokens`,
//! `store: false`) as the reference sends it, unless the model's `compat` says otherwise.

use pretty_assertions::assert_eq;
use rho_types::ThinkingLevel;
use rho_types::types::AssistantContent;
use serde_json::json;

use crate::common::*;

const WIRE: Wire = Wire {
    api: "openai-completions",
    provider: "local",
    model_id: "gpt-5-mini",
    base_path: "/v1",
    streams_arguments: true,
    reports_cache_write: false,
};

shared_tests!(WIRE);

#[tokio::test]
async fn reasoning_content_streams_as_thinking() {
    let message = thinking_then_text(WIRE, "unused").await;
    let AssistantContent::Thinking(t) = &message.content[0] else { unreachable!() };
    // The field it came in, so it can be replayed in the same field.
    assert_eq!(t.thinking_signature.as_deref(), Some("reasoning_content"));
}

#[tokio::test]
async fn the_request_carries_system_tools_thinking_and_history() {
    let (_, request) = round_trip(WIRE, "unused", ThinkingLevel::High).await;
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.api, "openai-completions");
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    assert_extra_headers(&request);
    assert_eq!(
        request.body,
        json!({
            "model": "gpt-5-mini",
            "messages": [
                // A server that is not OpenAI's gets `system`, reasoning model or not (pi 1.6).
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Read a.txt"},
                {"role": "assistant", "content": null, "reasoning_content": "I need the file.",
                 "tool_calls": [{"id": "call_7", "type": "function",
                                 "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}]},
                {"role": "tool", "content": "file contents", "tool_call_id": "call_7"}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "store": false,
            "max_completion_tokens": 32000,
            "tools": [{"type": "function", "function": {
                "name": "read", "description": "Read a file",
                "parameters": read_tool().parameters
            }}],
            "reasoning_effort": "high"
        })
    );
}

#[tokio::test]
async fn compat_flags_choose_the_dialect_and_no_key_sends_no_bearer() {
    let server = serve(json!([{"text": "ok"}, {"text": "ok"}])).await;
    let mut m = model(WIRE, &server);
    m.compat = Some(json!({
        "supportsDeveloperRole": false,
        "supportsStore": false,
        "maxTokensField": "max_tokens",
        "supportsUsageInStreaming": false,
        "sendSessionAffinityHeaders": true
    }));
    let mut opts = options();
    opts.api_key = None;
    let events = collect(&m, &prompt("hi"), opts).await;
    // No usage chunk was asked for, so none came: the reply still completes.
    assert_eq!(final_message(&events).text(), "ok");
    let request = server.last_request().unwrap();
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.body["messages"][0]["role"], json!("system"));
    assert_eq!(request.body.get("store"), None);
    assert_eq!(request.body["max_tokens"], json!(32000));
    assert_eq!(request.body.get("max_completion_tokens"), None);
    assert_eq!(request.body.get("stream_options"), None);
    assert_eq!(request.body.get("reasoning_effort"), None);
    // The session pins to one replica by pi's three headers; no cache key off OpenAI's servers.
    for header in ["session_id", "x-client-request-id", "x-session-affinity"] {
        assert_eq!(request.header(header), Some("session-1"), "{header}");
    }
    assert_eq!(request.body.get("prompt_cache_key"), None);
}

/// A provider the reference knows to take `max_tokens` and no `store` (Moonshot) gets them
/// without any `compat`.
#[tokio::test]
async fn a_known_provider_gets_its_own_dialect() {
    let server = serve(json!([{"text": "ok"}])).await;
    let mut m = model(WIRE, &server);
    m.provider = "moonshotai".into();
    collect(&m, &prompt("hi"), options()).await;
    let body = server.last_request().unwrap().body;
    assert_eq!((body.get("store"), &body["max_tokens"]), (None, &json!(32000)));
    assert_eq!(body["messages"][0]["role"], json!("system"));
}

/// OpenRouter keeps a session on one upstream by `x-session-id` alone.
#[tokio::test]
async fn openrouter_pins_the_session_by_its_own_header() {
    let server = serve(json!([{"text": "ok"}])).await;
    let mut m = model(WIRE, &server);
    m.provider = "openrouter".into();
    collect(&m, &prompt("hi"), options()).await;
    let request = server.last_request().unwrap();
    assert_eq!(request.header("x-session-id"), Some("session-1"));
    for header in ["session_id", "x-client-request-id", "x-session-affinity"] {
        assert_eq!(request.header(header), None, "{header}");
    }
}

/// An error a server writes into the stream without SSE framing fails the reply with its
/// message, instead of reading as a stream cut short.
#[tokio::test]
async fn an_unframed_error_shows_its_message() {
    let server = serve(json!([{"text": "partial",
        "streamError": {"type": "server_error", "message": "Upstream model failed", "unframed": true}}]))
    .await;
    let events = collect(&model(WIRE, &server), &prompt("hi"), options()).await;
    let message = final_message(&events);
    assert_eq!(message.error_message.as_deref(), Some("Upstream model failed"));
    assert_eq!(message.text(), "partial");
    assert_eq!(failure(&events).kind(), rho_ai::ErrorKind::Retryable);
}
