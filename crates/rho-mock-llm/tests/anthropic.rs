//! The Anthropic Messages wire format, as a plain HTTP client sees it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ANTHROPIC, one};
use pretty_assertions::assert_eq;
use rho_mock_llm::{DEFAULT_THINKING_SIGNATURE, StopReason, Turn, Usage};
use serde_json::{Value, json};

fn deltas(events: &[Value], kind: &str, field: &str) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "content_block_delta" && e["delta"]["type"] == kind)
        .map(|e| e["delta"][field].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn text_reply_is_the_documented_event_sequence() {
    let reply = one(ANTHROPIC, Turn::text("Hello, world!")).await;
    assert_eq!(reply.status, 200);
    assert!(reply.header("content-type").unwrap().starts_with("text/event-stream"));
    assert_eq!(
        reply.names(),
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    let events = reply.jsons();
    for (event, name) in events.iter().zip(reply.names()) {
        assert_eq!(event["type"], name);
    }
    let message = &events[0]["message"];
    assert_eq!(message["model"], "claude-test");
    assert_eq!(message["role"], "assistant");
    assert!(message["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(events[1]["content_block"], json!({"type": "text", "text": ""}));
    assert_eq!(events[3]["delta"], json!({"type": "text_delta", "text": "Hello, w"}));
    assert_eq!(deltas(&events, "text_delta", "text"), "Hello, world!");
    assert_eq!(events[6]["delta"]["stop_reason"], "end_turn");
    assert!(reply.transport_error.is_none());
}

#[tokio::test]
async fn thinking_then_text_with_signature() {
    let turn = Turn::text("Answer.").with_thinking("Let me think about it.");
    let reply = one(ANTHROPIC, turn).await;
    let events = reply.jsons();
    assert_eq!(events[1]["content_block"]["type"], "thinking");
    assert_eq!(events[1]["index"], 0);
    assert_eq!(deltas(&events, "thinking_delta", "thinking"), "Let me think about it.");
    assert_eq!(deltas(&events, "signature_delta", "signature"), DEFAULT_THINKING_SIGNATURE);
    let starts: Vec<&Value> = events.iter().filter(|e| e["type"] == "content_block_start").collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[1]["index"], 1);
    assert_eq!(starts[1]["content_block"]["type"], "text");
    assert_eq!(deltas(&events, "text_delta", "text"), "Answer.");

    let signed = Turn::thinking("hm").with_thinking_signature("c2ln");
    let events = one(ANTHROPIC, signed).await.jsons();
    assert_eq!(deltas(&events, "signature_delta", "signature"), "c2ln");
}

#[tokio::test]
async fn tool_call_arguments_stream_in_several_deltas() {
    let args = json!({"path": "src/main.rs", "offset": 10, "limit": 20});
    let turn = Turn::text("Reading.").with_tool_call("read", args.clone()).with_chunk_size(6);
    let events = one(ANTHROPIC, turn).await.jsons();
    let start = events.iter().find(|e| e["content_block"]["type"] == "tool_use").unwrap();
    assert_eq!(start["content_block"]["id"], "toolu_mock_1");
    assert_eq!(start["content_block"]["name"], "read");
    assert_eq!(start["content_block"]["input"], json!({}));
    let pieces = events.iter().filter(|e| e["delta"]["type"] == "input_json_delta").count();
    assert!(pieces > 3, "{pieces} deltas");
    let text = deltas(&events, "input_json_delta", "partial_json");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), args);
    let end = events.iter().find(|e| e["type"] == "message_delta").unwrap();
    assert_eq!(end["delta"]["stop_reason"], "tool_use");
}

#[tokio::test]
async fn usage_and_stop_reason_use_the_api_fields() {
    let usage = Usage { input: 11, output: 22, cache_read: 33, cache_write: 44, reasoning: 0 };
    let turn = Turn::text("x").with_usage(usage).with_stop_reason(StopReason::Length);
    let events = one(ANTHROPIC, turn).await.jsons();
    let start = &events[0]["message"]["usage"];
    assert_eq!(start["input_tokens"], 11);
    assert_eq!(start["cache_read_input_tokens"], 33);
    assert_eq!(start["cache_creation_input_tokens"], 44);
    let delta = events.iter().find(|e| e["type"] == "message_delta").unwrap();
    assert_eq!(delta["usage"]["output_tokens"], 22);
    assert_eq!(delta["delta"]["stop_reason"], "max_tokens");

    let default = one(ANTHROPIC, Turn::text("x")).await.jsons();
    assert_eq!(default[0]["message"]["usage"]["input_tokens"], 100);
    assert_eq!(default[0]["message"]["usage"]["cache_read_input_tokens"], 0);
    assert_eq!(default.iter().rev().nth(1).unwrap()["usage"]["output_tokens"], 50);
}

#[tokio::test]
async fn http_errors_carry_the_api_error_json_and_retry_headers() {
    let turn = Turn::error(429, "slow down").with_retry_after(2.0).with_retry_after_ms(1500);
    let reply = one(ANTHROPIC, turn).await;
    assert_eq!(reply.status, 429);
    assert_eq!(reply.header("retry-after"), Some("2"));
    assert_eq!(reply.header("retry-after-ms"), Some("1500"));
    assert_eq!(
        reply.error_json(),
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    );
    for (status, kind) in
        [(529, "overloaded_error"), (500, "api_error"), (401, "authentication_error"), (400, "invalid_request_error")]
    {
        let reply = one(ANTHROPIC, Turn::error(status, "m")).await;
        assert_eq!(reply.status, status);
        assert_eq!(reply.error_json()["error"]["type"], kind);
        assert!(reply.header("retry-after").is_none());
    }
    let mut verbatim = Turn::error(400, "ignored");
    verbatim.error.as_mut().unwrap().body = Some(json!("plain words"));
    assert_eq!(one(ANTHROPIC, verbatim).await.error_body.as_deref(), Some("plain words"));
}

#[tokio::test]
async fn stream_error_follows_the_content_and_ends_the_stream() {
    let turn = Turn::text("partial").with_stream_error("overloaded_error", "Overloaded");
    let reply = one(ANTHROPIC, turn).await;
    let names = reply.names();
    assert_eq!(names.last(), Some(&"error"));
    assert!(!names.contains(&"message_stop") && !names.contains(&"message_delta"));
    assert_eq!(
        reply.jsons().last().unwrap(),
        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    assert!(reply.transport_error.is_none());
}

#[tokio::test]
async fn disconnect_after_cuts_the_body() {
    let reply = one(ANTHROPIC, Turn::text("a long reply that goes on").disconnect_after(4)).await;
    assert_eq!(reply.events.len(), 4);
    assert!(reply.transport_error.is_some());
}

#[tokio::test]
async fn malformed_sends_an_event_that_is_not_json() {
    let reply = one(ANTHROPIC, Turn::text("a long reply that goes on").malformed()).await;
    assert_eq!(reply.events.len(), 4);
    assert!(reply.events[..3].iter().all(|e| serde_json::from_str::<Value>(&e.data).is_ok()));
    assert!(serde_json::from_str::<Value>(&reply.events[3].data).is_err());
    assert!(reply.transport_error.is_none());
}
