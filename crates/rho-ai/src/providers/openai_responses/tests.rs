//! The Responses request body for a full conversation (reasoning items replayed from thinking
//! signatures), and the stream half over recorded event bodies.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::format::build_body;
use crate::error::ErrorKind;
use crate::model::{Model, ThinkingLevel, api};
use crate::providers::test_fixtures::*;
use crate::stream::{StreamOptions, ToolChoice};
use crate::types::{AssistantContent, Context, StopReason, TextContent, ThinkingContent};

fn gpt(id: &str) -> Model {
    model(api::OPENAI_RESPONSES, "openai", id, "https://api.openai.com/v1")
}

fn reasoning_item() -> Value {
    json!({
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Need to read it."}],
        "encrypted_content": "ENC"
    })
}

#[test]
fn a_full_conversation_with_reasoning_replayed() {
    let m = gpt("gpt-5");
    let context = conversation(&m, &reasoning_item().to_string(), ["call_1|fc_1", "call_2|fc_2"]);
    let options =
        StreamOptions { thinking: ThinkingLevel::Medium, session_id: Some("sess-1".into()), ..Default::default() };
    assert_eq!(
        build_body(&m, &context, &options),
        json!({
            "model": "gpt-5",
            "input": [
                {"role": "developer", "content": "You are a test."},
                {"role": "user", "content": [
                    {"type": "input_text", "text": "What is in a.txt?"},
                    {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,aGVsbG8="}
                ]},
                reasoning_item(),
                {"role": "assistant", "content": "Reading."},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read",
                 "arguments": "{\"path\":\"a.txt\"}"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "read",
                 "arguments": "{\"path\":\"b.txt\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
                {"type": "function_call_output", "call_id": "call_2", "output": "(see attached image)"},
                {"role": "user", "content": [
                    {"type": "input_text", "text": "Attached image(s) from tool result:"},
                    {"type": "input_image", "detail": "auto", "image_url": "data:image/jpeg;base64,aW1n"}
                ]},
                {"role": "assistant", "content": "Other thoughts."},
                {"role": "assistant", "content": "It says hello."},
                {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]}
            ],
            "stream": true,
            "store": false,
            "prompt_cache_key": "sess-1",
            "max_output_tokens": 32000,
            "tools": [{
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": read_tool().parameters,
                "strict": false
            }],
            "reasoning": {"effort": "medium", "summary": "auto"},
            "include": ["reasoning.encrypted_content"]
        })
    );
}

#[test]
fn message_ids_and_unpaired_function_call_ids() {
    let m = gpt("gpt-5");
    let mut signed = TextContent::new("Signed.");
    signed.text_signature = Some("msg_abc".into());
    let mut v1 = TextContent::new("Versioned.");
    v1.text_signature = Some(r#"{"v":1,"id":"msg_v1","phase":"final_answer"}"#.into());
    let mut odd_phase = TextContent::new("Odd phase.");
    odd_phase.text_signature = Some(r#"{"v":1,"id":"msg_odd","phase":"draft"}"#.into());
    let mut long = TextContent::new("Long.");
    long.text_signature = Some("m".repeat(80));
    let context = Context {
        system_prompt: None,
        messages: vec![
            user("go"),
            assistant(
                &m,
                vec![
                    AssistantContent::Text(signed),
                    AssistantContent::Text(v1),
                    AssistantContent::Text(odd_phase),
                    AssistantContent::Text(long),
                    // Reasoning lost to an interrupted stream: the call's item id must go.
                    AssistantContent::Thinking(ThinkingContent {
                        thinking: "partial".into(),
                        thinking_signature: None,
                        redacted: None,
                    }),
                    call("call_9|fc_9", "read", json!({})),
                ],
            ),
        ],
        tools: vec![],
    };
    let input = build_body(&m, &context, &StreamOptions::default())["input"].clone();
    let ids: Vec<Value> =
        input.as_array().unwrap().iter().map(|i| i.get("id").cloned().unwrap_or(Value::Null)).collect();
    assert_eq!(ids[1], json!("msg_abc"));
    assert_eq!(input[1].get("phase"), None);
    // The phase goes back on the message item.
    assert_eq!(
        input[2],
        json!({"type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "Versioned.", "annotations": []}],
               "status": "completed", "id": "msg_v1", "phase": "final_answer"})
    );
    assert_eq!((&input[3]["id"], input[3].get("phase")), (&json!("msg_odd"), None));
    let hashed = ids[4].as_str().unwrap();
    assert!(hashed.starts_with("msg_") && hashed.len() <= 64, "{hashed}");
    assert_eq!(input[5], json!({"type": "function_call", "call_id": "call_9", "name": "read", "arguments": "{}"}));
}

/// Thinking off is said as the reference says it: the GPT-5 family's lowest level (it cannot
/// turn reasoning off), `effort: "none"` for other reasoning models, nothing on Copilot; never an
/// extra developer message.
#[test]
fn thinking_off_and_levels() {
    let context = Context { messages: vec![user("hi")], ..Default::default() };
    let body = |m: &Model, thinking| {
        let options = StreamOptions { thinking, tool_choice: ToolChoice::Tool("read".into()), ..Default::default() };
        build_body(m, &context, &options)
    };
    let off = body(&gpt("gpt-5"), ThinkingLevel::Off);
    assert_eq!(off["reasoning"], json!({"effort": "minimal", "summary": "auto"}));
    assert_eq!(off["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(off["input"], json!([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]));
    assert_eq!(off.get("prompt_cache_key"), None);
    assert_eq!(off["tool_choice"], json!({"type": "function", "name": "read"}));
    assert_eq!(body(&gpt("gpt-5.3-codex"), ThinkingLevel::Off)["reasoning"]["effort"], json!("minimal"));
    let o3 = body(&gpt("o3"), ThinkingLevel::Off);
    assert_eq!(o3["reasoning"], json!({"effort": "none"}));
    assert_eq!(o3.get("include"), None);
    assert_eq!(o3["input"].as_array().unwrap().len(), 1);
    let mut copilot = gpt("claude-sonnet-4");
    copilot.provider = "github-copilot".into();
    assert_eq!(body(&copilot, ThinkingLevel::Off).get("reasoning"), None);
    assert_eq!(body(&gpt("gpt-5"), ThinkingLevel::Xhigh)["reasoning"], json!({"effort": "high", "summary": "auto"}));
    assert_eq!(body(&gpt("gpt-5.2"), ThinkingLevel::Xhigh)["reasoning"], json!({"effort": "xhigh", "summary": "auto"}));
    let mut plain = gpt("gpt-4.1");
    plain.reasoning = false;
    assert_eq!(body(&plain, ThinkingLevel::High).get("reasoning"), None);
    assert_eq!(body(&plain, ThinkingLevel::Off).get("reasoning"), None);
}

/// An event as `data:` only: the client reads the type from the data, not the event name.
fn ev(data: Value) -> (Option<&'static str>, Value) {
    (None, data)
}

#[tokio::test]
async fn reasoning_text_and_a_function_call() {
    let m = gpt("gpt-5");
    let reasoning_done = json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "ENC",
        "summary": [{"type": "summary_text", "text": "A"}, {"type": "summary_text", "text": "B"}]});
    let body = sse_body(&[
        ev(json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}})),
        ev(json!({"type": "response.in_progress", "response": {"id": "resp_1"}})),
        ev(json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"id": "rs_1", "type": "reasoning", "summary": []}})),
        ev(json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1"})),
        ev(json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "A"})),
        ev(json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1"})),
        ev(json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "B"})),
        ev(json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning_done})),
        ev(json!({"type": "response.output_item.added", "output_index": 1,
            "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}})),
        ev(json!({"type": "response.content_part.added", "item_id": "msg_1"})),
        ev(json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Hi"})),
        ev(json!({"type": "response.output_item.done", "item": {"id": "msg_1", "type": "message",
            "content": [{"type": "output_text", "text": "Hi"}]}})),
        ev(json!({"type": "response.output_item.added", "item": {"id": "fc_1",
            "type": "function_call", "call_id": "call_1", "name": "read", "arguments": ""}})),
        ev(json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"pa"})),
        ev(json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "th\":\"a\"}"})),
        ev(json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
            "arguments": "{\"path\":\"a\"}"})),
        ev(json!({"type": "response.output_item.done", "item": {"id": "fc_1", "type": "function_call",
            "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a\"}"}})),
        ev(json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
            "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 10},
                      "output_tokens": 7, "total_tokens": 57}}})),
    ]);
    let events = decode(&m, &body).await;
    assert_eq!(
        types(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    let message = final_message(&events);
    assert_eq!(message.response_id.as_deref(), Some("resp_1"));
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let mut hi = TextContent::new("Hi");
    hi.text_signature = Some(r#"{"v":1,"id":"msg_1"}"#.into());
    assert_eq!(
        message.content,
        vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "A\n\nB".into(),
                thinking_signature: Some(reasoning_done.to_string()),
                redacted: None,
            }),
            AssistantContent::Text(hi),
            call("call_1|fc_1", "read", json!({"path": "a"})),
        ]
    );
    assert_eq!((message.usage.input, message.usage.cache_read, message.usage.output), (40, 10, 7));
}

#[tokio::test]
async fn endings_and_failures() {
    let m = gpt("gpt-5");
    let created = ev(json!({"type": "response.created", "response": {"id": "r"}}));
    let incomplete = sse_body(&[
        created.clone(),
        ev(json!({"type": "response.incomplete", "response": {"status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"}}})),
    ]);
    let ended = decode(&m, &incomplete).await;
    assert_eq!(final_message(&ended).stop_reason, StopReason::Length);
    assert_eq!(final_message(&ended).raw_stop_reason.as_deref(), Some("incomplete.max_output_tokens"));
    let failed = sse_body(&[
        created.clone(),
        ev(json!({"type": "response.failed", "response": {"status": "failed",
            "error": {"code": "server_error", "message": "The server had an error"}}})),
    ]);
    let events = decode(&m, &failed).await;
    assert_eq!(failure(&events).kind(), ErrorKind::Retryable);
    assert_eq!(final_message(&events).error_message.as_deref(), Some("server_error: The server had an error"));
    let error = sse_body(&[ev(json!({"type": "error", "code": "context_length_exceeded",
        "message": "Your input exceeds the context window of this model."}))]);
    let events = decode(&m, &error).await;
    assert_eq!(failure(&events).kind(), ErrorKind::ContextOverflow);
    assert_eq!(
        final_message(&events).error_message.as_deref(),
        Some("Error Code context_length_exceeded: Your input exceeds the context window of this model.")
    );
    let cut = sse_body(std::slice::from_ref(&created));
    assert!(matches!(failure(&decode(&m, &cut).await), crate::ProviderError::StreamEnded(_)));
    // A failed response without an error says why it is incomplete, or that nothing says why.
    let failed =
        |response: Value| sse_body(&[created.clone(), ev(json!({"type": "response.failed", "response": response}))]);
    for (response, text) in [
        (json!({"incomplete_details": {"reason": "max_output_tokens"}}), "incomplete: max_output_tokens"),
        (json!({"error": null}), "Unknown error (no error details in response)"),
        (json!({"error": {"message": "boom"}}), "unknown: boom"),
    ] {
        let events = decode(&m, &failed(response)).await;
        assert_eq!(final_message(&events).error_message.as_deref(), Some(text));
    }
    // An error nested under `error`, and a bare error object, read as their message.
    let nested = sse_body(&[ev(json!({"type": "error", "error": {"type": "server_error", "message": "Try again"}}))]);
    let events = decode(&m, &nested).await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Try again"));
    assert_eq!(failure(&events).kind(), ErrorKind::Retryable);
    let bare = sse_body(&[created, ev(json!({"error": {"message": "Upstream overloaded", "code": 503}}))]);
    let events = decode(&m, &bare).await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Upstream overloaded"));
    assert_eq!(failure(&events).kind(), ErrorKind::Retryable);
}

/// gpt-oss servers stream raw reasoning (`reasoning_text`) instead of a summary; a reasoning
/// item that streamed nothing is read from its `content` parts.
#[tokio::test]
async fn reasoning_text_is_thinking() {
    let m = gpt("gpt-oss-120b");
    let streamed = sse_body(&[
        ev(json!({"type": "response.created", "response": {"id": "r"}})),
        ev(json!({"type": "response.output_item.added", "item": {"id": "rs_1", "type": "reasoning", "summary": []}})),
        ev(json!({"type": "response.content_part.added", "item_id": "rs_1",
            "part": {"type": "reasoning_text", "text": ""}})),
        ev(json!({"type": "response.reasoning_text.delta", "item_id": "rs_1", "delta": "Let me "})),
        ev(json!({"type": "response.reasoning_text.delta", "item_id": "rs_1", "delta": "think."})),
        ev(json!({"type": "response.output_item.done", "item": {"id": "rs_1", "type": "reasoning", "summary": [],
            "content": [{"type": "reasoning_text", "text": "Let me think."}]}})),
        ev(json!({"type": "response.completed", "response": {"id": "r", "status": "completed"}})),
    ]);
    let events = decode(&m, &streamed).await;
    assert_eq!(types(&events), ["start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end", "done"]);
    let AssistantContent::Thinking(t) = &final_message(&events).content[0] else { panic!() };
    assert_eq!(t.thinking, "Let me think.");
    let item_only = sse_body(&[
        ev(json!({"type": "response.output_item.added", "item": {"id": "rs_2", "type": "reasoning"}})),
        ev(json!({"type": "response.output_item.done", "item": {"id": "rs_2", "type": "reasoning", "summary": [],
            "content": [{"type": "reasoning_text", "text": "One."}, {"type": "reasoning_text", "text": "Two."}]}})),
        ev(json!({"type": "response.completed", "response": {"status": "completed"}})),
    ]);
    let events = decode(&m, &item_only).await;
    let AssistantContent::Thinking(t) = &final_message(&events).content[0] else { panic!() };
    assert_eq!(t.thinking, "One.\n\nTwo.");
}

/// A message's `phase` is kept in the versioned text signature.
#[tokio::test]
async fn the_message_phase_is_kept_in_the_signature() {
    let m = gpt("gpt-5.3-codex");
    let body = sse_body(&[
        ev(json!({"type": "response.output_item.added", "item": {"id": "msg_9", "type": "message",
            "phase": "commentary", "content": []}})),
        ev(json!({"type": "response.output_text.delta", "item_id": "msg_9", "delta": "Checking."})),
        ev(json!({"type": "response.output_item.done", "item": {"id": "msg_9", "type": "message",
            "phase": "commentary", "content": [{"type": "output_text", "text": "Checking."}]}})),
        ev(json!({"type": "response.completed", "response": {"status": "completed"}})),
    ]);
    let events = decode(&m, &body).await;
    let AssistantContent::Text(t) = &final_message(&events).content[0] else { panic!() };
    assert_eq!(t.text_signature.as_deref(), Some(r#"{"v":1,"id":"msg_9","phase":"commentary"}"#));
}
