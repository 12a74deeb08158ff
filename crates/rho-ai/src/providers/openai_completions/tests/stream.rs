//! The stream half over recorded chunk bodies: blocks, usage, endings and failures.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::gpt;
use crate::error::ErrorKind;
use crate::providers::test_fixtures::*;
use crate::types::{AssistantContent, StopReason, ThinkingContent};

fn chunk(delta: Value, finish: Option<&str>) -> (Option<&'static str>, Value) {
    (
        None,
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
    )
}

fn done() -> String {
    "data: [DONE]\n\n".into()
}

#[tokio::test]
async fn reasoning_text_and_parallel_tool_calls() {
    let m = gpt("gpt-5-mini", "https://api.openai.com/v1");
    let mut body = sse_body(&[
        chunk(json!({"role": "assistant", "reasoning_content": "Let me"}), None),
        chunk(json!({"reasoning_content": " think"}), None),
        chunk(json!({"content": "Sure."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
            "function": {"name": "read", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
            "function": {"name": "ls", "arguments": "{\"pa"}}]}),
            None,
        ),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a\"}"}}]}), None),
        chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": "th\":\".\"}"}}]}), None),
        chunk(json!({}), Some("tool_calls")),
        (
            None,
            json!({"id": "chatcmpl-1", "choices": [], "usage": {
            "prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 100},
            "completion_tokens_details": {"reasoning_tokens": 10}}}),
        ),
    ]);
    body.push_str(&done());
    let events = decode(&m, &body).await;
    assert_eq!(
        types(&events),
        [
            // Every block stays open until the stream ends, then they close in content order
            // (pi 0.73's Chat Completions provider).
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "text_start",
            "text_delta",
            "toolcall_start",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "thinking_end",
            "text_end",
            "toolcall_end",
            "toolcall_end",
            "done"
        ]
    );
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.response_id.as_deref(), Some("chatcmpl-1"));
    assert_eq!(
        message.content,
        vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "Let me think".into(),
                thinking_signature: Some("reasoning_content".into()),
                redacted: None,
            }),
            text("Sure."),
            call("call_a", "read", json!({"path": "a"})),
            call("call_b", "ls", json!({"path": "."})),
        ]
    );
    // `completion_tokens` already counts the 10 reasoning tokens.
    assert_eq!((message.usage.input, message.usage.cache_read, message.usage.output), (20, 100, 30));
    assert_eq!(message.usage.reasoning, Some(10));
}

#[tokio::test]
async fn cache_hits_and_writes_are_read_wherever_the_server_puts_them() {
    let m = gpt("deepseek-v4-pro", "https://api.deepseek.com");
    let usage = |usage: serde_json::Value| {
        let mut body = sse_body(&[
            chunk(json!({"content": "ok"}), Some("stop")),
            (None, json!({"id": "c", "choices": [], "usage": usage})),
        ]);
        body.push_str(&done());
        body
    };
    let read = |events: &[crate::AssistantMessageEvent]| {
        let u = &final_message(events).usage;
        (u.input, u.cache_read, u.cache_write, u.output)
    };
    // DeepSeek: `prompt_cache_hit_tokens`.
    let events =
        decode(&m, &usage(json!({"prompt_tokens": 100, "completion_tokens": 5, "prompt_cache_hit_tokens": 60}))).await;
    assert_eq!(read(&events), (40, 60, 0, 5));
    // Kimi: a top-level `cached_tokens`.
    let events = decode(&m, &usage(json!({"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 30}))).await;
    assert_eq!(read(&events), (70, 30, 0, 5));
    // OpenRouter-compatible: writes counted apart from hits.
    let events = decode(
        &m,
        &usage(json!({"prompt_tokens": 100, "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 20, "cache_write_tokens": 50}})),
    )
    .await;
    assert_eq!(read(&events), (30, 20, 50, 5));
}

#[tokio::test]
async fn endings_and_failures() {
    let m = gpt("llama", "http://127.0.0.1:1/v1");
    // A finish reason without [DONE] is a complete reply.
    let body = sse_body(&[chunk(json!({"content": "ok"}), Some("stop"))]);
    assert_eq!(final_message(&decode(&m, &body).await).stop_reason, StopReason::Stop);
    // Neither: cut short.
    let body = sse_body(&[chunk(json!({"content": "o"}), None)]);
    let cut = failure(&decode(&m, &body).await);
    assert!(matches!(cut, crate::ProviderError::StreamEnded(_)));
    assert_eq!(cut.kind(), ErrorKind::Retryable);
    // An error object inside a chunk keeps the provider's words.
    let body = sse_body(&[(None, json!({"error": {"message": "Rate limit exceeded", "code": 429}}))]);
    let events = decode(&m, &body).await;
    assert_eq!(failure(&events).kind(), ErrorKind::Retryable);
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Rate limit exceeded"));
    let mut body = sse_body(&[chunk(json!({"content": "bad"}), Some("content_filter"))]);
    body.push_str(&done());
    assert_eq!(
        final_message(&decode(&m, &body).await).error_message.as_deref(),
        Some("Provider finish_reason: content_filter")
    );
    let mut body = sse_body(&[chunk(json!({"content": "x"}), Some("length"))]);
    body.push_str(&done());
    let ended = decode(&m, &body).await;
    assert_eq!(final_message(&ended).stop_reason, StopReason::Length);
    assert_eq!(final_message(&ended).raw_stop_reason.as_deref(), Some("length"), "the provider's words kept");
    // A call without an id gets one.
    let mut body = sse_body(&[chunk(
        json!({"tool_calls": [{"index": 0, "function": {"name": "ls", "arguments": "{}"}}]}),
        Some("tool_calls"),
    )]);
    body.push_str(&done());
    let events = decode(&m, &body).await;
    let calls: Vec<_> = final_message(&events).tool_calls().cloned().collect();
    assert_eq!(calls.len(), 1);
    assert!(calls[0].id.starts_with("ls_"), "{}", calls[0].id);
    // Garbage is a decode error, not a panic.
    let body = "data: {not json\n\n";
    assert_eq!(failure(&decode(&m, body).await).kind(), ErrorKind::Other);
}
