//! The Gemini `streamGenerateContent?alt=sse` wire format (and `generateContent`), as a plain
//! HTTP client sees it.

mod common;

use common::{GEMINI, body_for, one, serve};
use pretty_assertions::assert_eq;
use rho_mock_llm::{DEFAULT_THINKING_SIGNATURE, StopReason, Turn, Usage};
use serde_json::{Value, json};

fn parts(events: &[Value]) -> Vec<Value> {
    events.iter().flat_map(|e| e["candidates"][0]["content"]["parts"].as_array().cloned().unwrap_or_default()).collect()
}

fn text_of(parts: &[Value], thought: bool) -> String {
    parts.iter().filter(|p| p.get("thought").is_some() == thought).filter_map(|p| p["text"].as_str()).collect()
}

#[tokio::test]
async fn text_reply_is_chunks_with_the_finish_reason_on_the_last() {
    let reply = one(GEMINI, Turn::text("Hello, world!")).await;
    assert_eq!(reply.status, 200);
    let events = reply.jsons();
    assert_eq!(events.len(), 2);
    for e in &events {
        assert_eq!(e["modelVersion"], "gemini-test");
        assert_eq!(e["candidates"][0]["content"]["role"], "model");
        assert!(e["responseId"].is_string());
    }
    assert_eq!(events[0]["candidates"][0]["content"]["parts"], json!([{"text": "Hello, w"}]));
    assert!(events[0]["candidates"][0].get("finishReason").is_none());
    assert_eq!(events[1]["candidates"][0]["finishReason"], "STOP");
    assert_eq!(text_of(&parts(&events), false), "Hello, world!");
}

#[tokio::test]
async fn events_are_separated_by_crlf_as_google_sends_them() {
    let server = serve(vec![Turn::text("hi")]).await;
    let text = common::client()
        .post(format!("{}{GEMINI}", server.url()))
        .body(body_for(GEMINI, "x").to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.starts_with("data: {"));
    assert!(text.ends_with("}\r\n\r\n"));
}

#[tokio::test]
async fn thinking_parts_are_thoughts_and_the_last_is_signed() {
    let turn = Turn::text("Answer.").with_thinking("Thinking it over.");
    let events = one(GEMINI, turn).await.jsons();
    let parts = parts(&events);
    assert_eq!(text_of(&parts, true), "Thinking it over.");
    assert_eq!(text_of(&parts, false), "Answer.");
    let signed: Vec<&Value> = parts.iter().filter(|p| p.get("thoughtSignature").is_some()).collect();
    assert_eq!(signed.len(), 1);
    assert_eq!(signed[0]["thought"], true);
    assert_eq!(signed[0]["thoughtSignature"], DEFAULT_THINKING_SIGNATURE);
    let last_thought = parts.iter().rposition(|p| p.get("thought").is_some()).unwrap();
    assert!(parts[last_thought].get("thoughtSignature").is_some());
}

#[tokio::test]
async fn function_calls_come_whole_in_one_chunk_without_ids() {
    let a = json!({"path": "a.txt"});
    let b = json!({"pattern": "*.rs"});
    let turn = Turn::text("Looking.").with_tool_call("read", a.clone()).with_tool_call("find", b.clone());
    let events = one(GEMINI, turn).await.jsons();
    let last = events.last().unwrap();
    assert_eq!(
        last["candidates"][0]["content"]["parts"],
        json!([{"functionCall": {"name": "read", "args": a}}, {"functionCall": {"name": "find", "args": b}}])
    );
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
}

#[tokio::test]
async fn usage_metadata_is_complete_on_the_last_chunk() {
    let usage = Usage { input: 10, output: 20, cache_read: 30, cache_write: 0, reasoning: 5 };
    let turn = Turn::text("some text here").with_usage(usage).with_stop_reason(StopReason::Length);
    let events = one(GEMINI, turn).await.jsons();
    assert_eq!(events[0]["usageMetadata"], json!({"promptTokenCount": 40, "totalTokenCount": 40}));
    let last = events.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "MAX_TOKENS");
    assert_eq!(
        last["usageMetadata"],
        json!({"promptTokenCount": 40, "candidatesTokenCount": 15, "totalTokenCount": 60,
               "cachedContentTokenCount": 30, "thoughtsTokenCount": 5})
    );
}

#[tokio::test]
async fn an_empty_reply_still_finishes() {
    let events = one(GEMINI, Turn::default()).await.jsons();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["candidates"][0]["finishReason"], "STOP");
}

#[tokio::test]
async fn http_errors_use_the_google_error_json() {
    let reply = one(GEMINI, Turn::error(429, "Resource exhausted").with_retry_after(3.0)).await;
    assert_eq!(reply.status, 429);
    assert_eq!(reply.header("retry-after"), Some("3"));
    assert_eq!(
        reply.error_json(),
        json!({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}})
    );
    let unavailable = one(GEMINI, Turn::error(503, "down")).await;
    assert_eq!(unavailable.error_json()["error"]["status"], "UNAVAILABLE");
}

#[tokio::test]
async fn stream_error_is_an_error_chunk_after_the_content() {
    let turn = Turn::text("partial").with_stream_error("overloaded_error", "The model is overloaded");
    let reply = one(GEMINI, turn).await;
    let events = reply.jsons();
    assert!(events.iter().all(|e| e["candidates"][0].get("finishReason").is_none()));
    assert_eq!(
        events.last().unwrap(),
        &json!({"error": {"code": 503, "message": "The model is overloaded", "status": "UNAVAILABLE"}})
    );
}

/// Google aborts a started stream by writing its error JSON, pretty-printed, into the body
/// without `data:`.
#[tokio::test]
async fn an_unframed_stream_error_is_pretty_json_without_data() {
    let turn = Turn::text("partial").with_stream_error("rate_limit_error", "Resource exhausted").unframed();
    let body = common::one_raw(GEMINI, turn).await;
    let (events, rest) = body.rsplit_once("\r\n\r\n").unwrap();
    assert!(events.starts_with("data: "));
    assert!(rest.starts_with("{\r\n  \"error\": {\r\n"), "{rest:?}");
    assert!(!rest.contains("data:"));
    let error: Value = serde_json::from_str(rest).unwrap();
    assert_eq!(error, json!({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}));
}

/// A refused prompt is one chunk with the block reason and the prompt's usage, no candidate.
#[tokio::test]
async fn a_blocked_prompt_is_prompt_feedback_without_candidates() {
    let reply = one(GEMINI, Turn::blocked("PROHIBITED_CONTENT").with_text("never sent")).await;
    let events = reply.jsons();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["promptFeedback"], json!({"blockReason": "PROHIBITED_CONTENT"}));
    assert_eq!(events[0]["usageMetadata"]["promptTokenCount"], 100);
    assert_eq!(events[0].get("candidates"), None);
}

/// A call's own signature is on its `functionCall` part.
#[tokio::test]
async fn a_signed_call_carries_its_thought_signature() {
    let turn =
        Turn::tool_call("read", json!({"path": "a"})).with_call_signature("c2ln").with_tool_call("ls", json!({}));
    let events = one(GEMINI, turn).await.jsons();
    let parts = &events.last().unwrap()["candidates"][0]["content"]["parts"];
    assert_eq!(
        parts,
        &json!([{"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "ls", "args": {}}}])
    );
}

#[tokio::test]
async fn disconnect_after_cuts_the_body() {
    let reply = one(GEMINI, Turn::text("a long reply that goes on").disconnect_after(2)).await;
    assert_eq!(reply.events.len(), 2);
    assert!(reply.transport_error.is_some());
}

#[tokio::test]
async fn malformed_sends_an_event_that_is_not_json() {
    let reply = one(GEMINI, Turn::text("a long reply that goes on").malformed()).await;
    assert_eq!(reply.events.len(), 4);
    assert!(serde_json::from_str::<Value>(&reply.events[3].data).is_err());
}

#[tokio::test]
async fn generate_content_answers_one_json_object() {
    let server = serve(vec![
        Turn::text("Whole answer.").with_thinking("hm").with_tool_call("ls", json!({})),
        Turn::text("cut").with_stream_error("rate_limit_error", "slow"),
    ])
    .await;
    let url = format!("{}/v1beta/models/gemini-test:generateContent", server.url());
    let response = common::client().post(&url).body("{}").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(
        body["candidates"][0]["content"]["parts"],
        json!([{"text": "hm", "thought": true, "thoughtSignature": DEFAULT_THINKING_SIGNATURE},
               {"text": "Whole answer."},
               {"functionCall": {"name": "ls", "args": {}}}])
    );
    assert_eq!(body["candidates"][0]["finishReason"], "STOP");
    let failed = common::client().post(&url).body("{}").send().await.unwrap();
    assert_eq!(failed.status(), 429);
    assert_eq!(server.requests()[0].api, "google-generative-ai");
}
