use pretty_assertions::assert_eq;
use serde_json::json;

use super::build_body;
use crate::error::ProviderError;
use crate::model::api;
use crate::providers::test_fixtures::*;
use crate::stream::{CacheRetention, StreamOptions, ToolChoice};
use crate::types::{AssistantContent, Context, StopReason};

fn radius() -> crate::model::Model {
    model(api::PI_MESSAGES, "radius", "balanced", "https://radius.example/v1")
}

#[test]
fn options_not_set_are_left_out() {
    let context = Context { system_prompt: None, messages: vec![user("hi")], tools: vec![] };
    let body = build_body(&radius(), context, &StreamOptions::default());
    assert_eq!(body["options"], json!({}));
    assert_eq!(body["context"].as_object().unwrap().keys().collect::<Vec<_>>(), ["messages"]);

    let context =
        Context { system_prompt: Some("Be brief.".into()), messages: vec![user("hi")], tools: vec![read_tool()] };
    let options = StreamOptions {
        temperature: Some(0.2),
        max_tokens: Some(1000),
        thinking: crate::model::ThinkingLevel::Minimal,
        cache_retention: Some(CacheRetention::None),
        session_id: Some("s-1".into()),
        tool_choice: ToolChoice::Tool("read".into()),
        ..StreamOptions::default()
    };
    let body = build_body(&radius(), context, &options);
    assert_eq!(
        body["options"],
        json!({"temperature": 0.2, "maxTokens": 1000, "reasoning": "minimal", "cacheRetention": "none",
               "sessionId": "s-1", "toolChoice": {"type": "function", "function": {"name": "read"}}})
    );
    assert_eq!(body["context"]["systemPrompt"], "Be brief.");
    assert_eq!(body["context"]["tools"][0]["name"], "read");
}

#[tokio::test]
async fn an_end_carries_what_the_deltas_left_out() {
    let body = sse_body(&[
        (None, json!({"type": "start"})),
        (None, json!({"type": "text_start", "contentIndex": 0})),
        (None, json!({"type": "text_delta", "contentIndex": 0, "delta": "Hel"})),
        (None, json!({"type": "text_end", "contentIndex": 0, "content": "Hello.", "contentSignature": "ts"})),
        (None, json!({"type": "toolcall_start", "contentIndex": 1, "id": "c1", "toolName": "ls"})),
        (
            None,
            json!({"type": "toolcall_end", "contentIndex": 1,
                      "toolCall": {"type": "toolCall", "id": "c1", "name": "ls", "arguments": {"path": "."}}}),
        ),
        (
            None,
            json!({"type": "done", "reason": "toolUse", "responseId": "r-1",
                      "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}),
        ),
    ]);
    let events = decode(&radius(), &body).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.response_id.as_deref(), Some("r-1"));
    let AssistantContent::Text(text) = &message.content[0] else { panic!("{:?}", message.content) };
    assert_eq!((text.text.as_str(), text.text_signature.as_deref()), ("Hello.", Some("ts")));
    let call = message.tool_calls().next().unwrap();
    assert_eq!((call.id.as_str(), call.arguments.get("path")), ("c1", Some(&json!("."))));
    assert_eq!((message.usage.input, message.usage.output), (10, 5));
    assert!(message.usage.cost.total > 0.0, "priced with the model's prices");
}

#[tokio::test]
async fn a_block_index_out_of_order_is_refused() {
    for bad in [
        json!({"type": "text_start", "contentIndex": 3}),
        json!({"type": "text_delta", "contentIndex": 0, "delta": "x"}),
        json!({"type": "text_start", "contentIndex": -1}),
        json!({"type": "toolcall_delta", "contentIndex": 1e12, "delta": "x"}),
    ] {
        let body = sse_body(&[(None, json!({"type": "start"})), (None, bad.clone())]);
        let events = decode(&radius(), &body).await;
        let error = failure(&events);
        assert!(matches!(error, ProviderError::Decode(_)), "{bad}: {error:?}");
    }
}

#[tokio::test]
async fn an_error_event_fails_the_reply_and_a_cut_body_is_retryable() {
    let body = sse_body(&[
        (None, json!({"type": "start"})),
        (
            None,
            json!({"type": "error", "reason": "error", "errorMessage": "Upstream overloaded",
                      "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}}),
        ),
    ]);
    let events = decode(&radius(), &body).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.error_message.as_deref(), Some("Upstream overloaded"));
    assert!(failure(&events).is_retryable());

    let body = sse_body(&[(None, json!({"type": "start"})), (None, json!({"type": "text_start", "contentIndex": 0}))]);
    let events = decode(&radius(), &body).await;
    assert!(matches!(failure(&events), ProviderError::StreamEnded(_)));
}
