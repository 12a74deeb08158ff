//! The OpenAI Chat Completions wire format, as a plain HTTP client sees it.

mod common;

use common::{COMPLETIONS, body_for, one, post, serve};
use pretty_assertions::assert_eq;
use rho_mock_llm::{StopReason, Turn, Usage};
use serde_json::{Value, json};

/// The chunks (everything but `[DONE]`).
fn chunks(reply: &common::Reply) -> Vec<Value> {
    reply.events.iter().filter(|e| e.data != "[DONE]").map(common::Ev::json).collect()
}

fn delta_text(chunks: &[Value], field: &str) -> String {
    chunks.iter().filter_map(|c| c["choices"][0]["delta"][field].as_str()).collect()
}

#[tokio::test]
async fn text_reply_is_chunks_then_finish_then_usage_then_done() {
    let reply = one(COMPLETIONS, Turn::text("Hello, world!")).await;
    assert_eq!(reply.status, 200);
    assert!(reply.names().iter().all(|n| *n == "message"), "no event names");
    assert_eq!(reply.events.last().unwrap().data, "[DONE]");
    let chunks = chunks(&reply);
    // role, two text deltas, finish, usage
    assert_eq!(chunks.len(), 5);
    for c in &chunks {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["model"], "gpt-test");
        assert!(c["id"].as_str().unwrap().starts_with("chatcmpl-"));
    }
    assert_eq!(chunks[0]["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
    assert_eq!(chunks[1]["choices"][0]["delta"], json!({"content": "Hello, w"}));
    assert_eq!(delta_text(&chunks, "content"), "Hello, world!");
    assert_eq!(chunks[3]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[3]["usage"], Value::Null);
    assert_eq!(chunks[4]["choices"], json!([]));
    assert_eq!(chunks[4]["usage"]["prompt_tokens"], 100);
}

#[tokio::test]
async fn usage_is_sent_only_when_asked() {
    let server = serve(vec![Turn::text("hi")]).await;
    let mut body = body_for(COMPLETIONS, "x");
    body.as_object_mut().unwrap().remove("stream_options");
    let reply = post(&server, COMPLETIONS, &body).await;
    let chunks = chunks(&reply);
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert_eq!(chunks.last().unwrap()["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn usage_fields_count_cached_tokens_inside_the_prompt() {
    let usage = Usage { input: 10, output: 20, cache_read: 30, cache_write: 40, reasoning: 5 };
    let turn = Turn::text("x").with_usage(usage).with_stop_reason(StopReason::Length);
    let chunks = chunks(&one(COMPLETIONS, turn).await);
    let last = chunks.last().unwrap();
    assert_eq!(last["usage"]["prompt_tokens"], 40);
    assert_eq!(last["usage"]["completion_tokens"], 20);
    assert_eq!(last["usage"]["total_tokens"], 60);
    assert_eq!(last["usage"]["prompt_tokens_details"]["cached_tokens"], 30);
    assert_eq!(last["usage"]["completion_tokens_details"]["reasoning_tokens"], 5);
    assert_eq!(chunks[chunks.len() - 2]["choices"][0]["finish_reason"], "length");
}

#[tokio::test]
async fn thinking_streams_as_reasoning_content_before_text() {
    let turn = Turn::text("Answer.").with_thinking("Thinking it over.");
    let chunks = chunks(&one(COMPLETIONS, turn).await);
    assert_eq!(delta_text(&chunks, "reasoning_content"), "Thinking it over.");
    assert_eq!(delta_text(&chunks, "content"), "Answer.");
    let first_text = chunks
        .iter()
        .position(|c| c["choices"][0]["delta"]["content"].as_str().is_some_and(|t| !t.is_empty()))
        .unwrap();
    let last_thinking =
        chunks.iter().rposition(|c| c["choices"][0]["delta"].get("reasoning_content").is_some()).unwrap();
    assert!(last_thinking < first_text);
}

#[tokio::test]
async fn tool_calls_stream_id_and_name_then_argument_pieces() {
    let a = json!({"command": "ls -la", "timeout": 30});
    let b = json!({"path": "README.md"});
    let turn = Turn::tool_call("bash", a.clone()).with_tool_call_id("call_given", "read", b.clone()).with_chunk_size(5);
    let chunks = chunks(&one(COMPLETIONS, turn).await);
    let calls: Vec<&Value> = chunks.iter().filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0)).collect();
    let heads: Vec<&&Value> = calls.iter().filter(|c| c.get("id").is_some()).collect();
    assert_eq!(heads.len(), 2);
    assert_eq!(heads[0]["id"], "call_mock_1");
    assert_eq!(heads[0]["type"], "function");
    assert_eq!(heads[0]["function"]["name"], "bash");
    assert_eq!(heads[1]["id"], "call_given");
    assert_eq!(heads[1]["index"], 1);
    for (index, expected) in [(0, &a), (1, &b)] {
        let pieces: Vec<&str> = calls
            .iter()
            .filter(|c| c["index"] == index)
            .filter_map(|c| c["function"]["arguments"].as_str())
            .filter(|s| !s.is_empty())
            .collect();
        assert!(pieces.len() > 1);
        let text: String = pieces.concat();
        assert_eq!(&serde_json::from_str::<Value>(&text).unwrap(), expected);
    }
    let finish = chunks.iter().find_map(|c| c["choices"][0]["finish_reason"].as_str());
    assert_eq!(finish, Some("tool_calls"));
}

#[tokio::test]
async fn bare_path_without_v1_is_served_too() {
    let reply = one("/chat/completions", Turn::text("hi")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.events.last().unwrap().data, "[DONE]");
}

#[tokio::test]
async fn http_errors_carry_the_openai_error_json_and_retry_headers() {
    let reply = one(COMPLETIONS, Turn::error(429, "Rate limit reached").with_retry_after(7.0)).await;
    assert_eq!(reply.status, 429);
    assert_eq!(reply.header("retry-after"), Some("7"));
    let body = reply.error_json();
    assert_eq!(body["error"]["message"], "Rate limit reached");
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    let server_error = one(COMPLETIONS, Turn::error(503, "busy")).await;
    assert_eq!(server_error.status, 503);
    assert_eq!(server_error.error_json()["error"]["type"], "server_error");
    let auth = one(COMPLETIONS, Turn::error(401, "bad key")).await;
    assert_eq!(auth.error_json()["error"]["code"], "invalid_api_key");
}

#[tokio::test]
async fn stream_error_is_a_chunk_with_error_and_no_done() {
    let turn = Turn::text("partial").with_stream_error("server_error", "The server had an error");
    let reply = one(COMPLETIONS, turn).await;
    assert!(reply.events.iter().all(|e| e.data != "[DONE]"));
    let last = reply.events.last().unwrap().json();
    assert_eq!(last["error"]["message"], "The server had an error");
    assert_eq!(last["error"]["type"], "server_error");
    assert!(reply.transport_error.is_none());
}

#[tokio::test]
async fn an_unframed_stream_error_is_json_without_data() {
    let turn = Turn::text("partial").with_stream_error("server_error", "Upstream failed").unframed();
    let body = common::one_raw(COMPLETIONS, turn).await;
    let (events, rest) = body.rsplit_once("\n\n").unwrap();
    assert!(!events.contains("[DONE]"));
    assert!(rest.starts_with("{\n"), "{rest:?}");
    let error: Value = serde_json::from_str(rest).unwrap();
    assert_eq!(error["error"]["message"], "Upstream failed");
}

#[tokio::test]
async fn disconnect_after_cuts_the_body() {
    let reply = one(COMPLETIONS, Turn::text("a long reply that goes on").disconnect_after(2)).await;
    assert_eq!(reply.events.len(), 2);
    assert!(reply.transport_error.is_some());
}

#[tokio::test]
async fn malformed_sends_an_event_that_is_not_json() {
    let reply = one(COMPLETIONS, Turn::text("a long reply that goes on").malformed_after(2)).await;
    assert_eq!(reply.events.len(), 3);
    assert!(serde_json::from_str::<Value>(&reply.events[2].data).is_err());
}
