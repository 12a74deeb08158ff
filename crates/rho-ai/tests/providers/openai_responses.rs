//! `openai-responses` against the mock's Responses wire format, including encrypted reasoning
//! carried from one request to the next.

use pretty_assertions::assert_eq;
use rho_ai::{AssistantContent, ThinkingLevel};
use serde_json::{Value, json};

use crate::common::*;

const WIRE: Wire = Wire {
    api: "openai-responses",
    provider: "openai",
    model_id: "gpt-5",
    base_path: "/v1",
    streams_arguments: true,
    reports_cache_write: false,
};

shared_tests!(WIRE);

#[tokio::test]
async fn reasoning_keeps_its_encrypted_item() {
    let message = thinking_then_text(WIRE, "ENC-thinking").await;
    let AssistantContent::Thinking(t) = &message.content[0] else { unreachable!() };
    let item: Value = serde_json::from_str(t.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(item["type"], json!("reasoning"));
    assert_eq!(item["encrypted_content"], json!("ENC-thinking"));
    let AssistantContent::Text(text) = &message.content[1] else { unreachable!() };
    assert!(text.text_signature.as_deref().unwrap().starts_with("msg_"));
}

#[tokio::test]
async fn encrypted_reasoning_is_carried_to_the_next_request() {
    let (first, request) = round_trip(WIRE, "ENC-abc", ThinkingLevel::High).await;
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    assert_extra_headers(&request);

    let AssistantContent::Thinking(thinking) = &first.content[0] else { panic!("{:?}", first.content) };
    let reasoning: Value = serde_json::from_str(thinking.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(reasoning["encrypted_content"], json!("ENC-abc"));
    let call = first.tool_calls().next().unwrap();
    let (call_id, item_id) = call.id.split_once('|').unwrap();
    assert_eq!(call_id, "call_7");
    assert!(item_id.starts_with("fc"));

    assert_eq!(
        request.body,
        json!({
            "model": "gpt-5",
            "input": [
                {"role": "developer", "content": "You are terse."},
                {"role": "user", "content": [{"type": "input_text", "text": "Read a.txt"}]},
                reasoning,
                {"type": "function_call", "id": item_id, "call_id": "call_7", "name": "read",
                 "arguments": "{\"path\":\"a.txt\"}"},
                {"type": "function_call_output", "call_id": "call_7", "output": "file contents"}
            ],
            "stream": true,
            "store": false,
            "prompt_cache_key": "session-1",
            "max_output_tokens": 32000,
            "tools": [{"type": "function", "name": "read", "description": "Read a file",
                       "parameters": read_tool().parameters, "strict": false}],
            "reasoning": {"effort": "high", "summary": "auto"},
            "include": ["reasoning.encrypted_content"]
        })
    );
}

#[tokio::test]
async fn a_length_stop_is_incomplete() {
    let server = serve(json!([{"text": "cut", "stopReason": "length"}])).await;
    let events = collect(&model(WIRE, &server), &prompt("hi"), options()).await;
    assert_eq!(final_message(&events).stop_reason, rho_ai::StopReason::Length);
}
