//! `bedrock-converse-stream` against the mock's Bedrock wire: AWS's binary event stream, the
//! ConverseStream path with the model id escaped into it, a Bedrock API key as the bearer token
//! (the SigV4 path needs AWS's credential chain, and is driven through the binary).

use pretty_assertions::assert_eq;
use rho_types::ThinkingLevel;
use serde_json::json;

use crate::common::*;

const WIRE: Wire = Wire {
    api: "bedrock-converse-stream",
    provider: "amazon-bedrock",
    model_id: "us.anthropic.claude-sonnet-4-20250514-v1:0",
    base_path: "",
    streams_arguments: true,
    reports_cache_write: true,
};

shared_tests!(WIRE);

#[tokio::test]
async fn reasoning_keeps_its_signature() {
    let message = thinking_then_text(WIRE, "c2lnLWJlZHJvY2s=").await;
    let rho_types::types::AssistantContent::Thinking(t) = &message.content[0] else { unreachable!() };
    assert_eq!(t.thinking_signature.as_deref(), Some("c2lnLWJlZHJvY2s="));
}

#[tokio::test]
async fn the_request_carries_system_tools_thinking_and_history() {
    let (first, request) = round_trip(WIRE, "c2lnLWJlZHJvY2s=", ThinkingLevel::High).await;
    assert_eq!(request.path, "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream");
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    assert_eq!(request.header("accept"), Some("application/vnd.amazon.eventstream"));
    assert_extra_headers(&request);
    let call_id = first.tool_calls().next().unwrap().id.clone();
    assert_eq!(call_id, "call_7");
    let cache = json!({"cachePoint": {"type": "default"}});
    assert_eq!(
        request.body,
        json!({
            "messages": [
                {"role": "user", "content": [{"text": "Read a.txt"}]},
                {"role": "assistant", "content": [
                    {"reasoningContent": {"reasoningText": {"text": "I need the file.", "signature": "c2lnLWJlZHJvY2s="}}},
                    {"toolUse": {"toolUseId": call_id, "name": "read", "input": {"path": "a.txt"}}}
                ]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": call_id, "content": [{"text": "file contents"}], "status": "success"}},
                    cache.clone()
                ]}
            ],
            "system": [{"text": "You are terse."}, cache],
            "inferenceConfig": {"maxTokens": 48384},
            "toolConfig": {"tools": [{"toolSpec": {
                "name": "read", "description": "Read a file", "inputSchema": {"json": read_tool().parameters}
            }}]},
            "additionalModelRequestFields": {
                "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"},
                "anthropic_beta": ["interleaved-thinking-2025-05-14"]
            }
        })
    );
}
