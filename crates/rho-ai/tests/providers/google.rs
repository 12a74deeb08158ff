//! `google-generative-ai` against the mock's Gemini wire format. Gemini sends function calls
//! whole, so a call's arguments arrive as one delta.

use pretty_assertions::assert_eq;
use rho_ai::{AssistantContent, ThinkingLevel};
use serde_json::json;

use crate::common::*;

const WIRE: Wire = Wire {
    api: "google-generative-ai",
    provider: "google",
    model_id: "gemini-2.5-flash",
    base_path: "/v1beta",
    streams_arguments: false,
    reports_cache_write: false,
};

shared_tests!(WIRE);

#[tokio::test]
async fn thoughts_keep_their_signature() {
    let message = thinking_then_text(WIRE, "dGhvdWdodA==").await;
    let AssistantContent::Thinking(t) = &message.content[0] else { unreachable!() };
    assert_eq!(t.thinking_signature.as_deref(), Some("dGhvdWdodA=="));
}

#[tokio::test]
async fn the_request_carries_system_tools_thinking_and_history() {
    let (first, request) = round_trip(WIRE, "c2lnLWdvb2dsZQ==", ThinkingLevel::High).await;
    assert_eq!(request.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    assert_eq!(request.query, "alt=sse");
    assert_eq!(request.header("x-goog-api-key"), Some("test-key"));
    assert_extra_headers(&request);
    // Gemini sends no call ids; one was made up and pairs the call with its result.
    assert!(first.tool_calls().next().unwrap().id.starts_with("read_"));
    assert_eq!(
        request.body,
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "Read a.txt"}]},
                {"role": "model", "parts": [
                    {"thought": true, "text": "I need the file.", "thoughtSignature": "c2lnLWdvb2dsZQ=="},
                    {"functionCall": {"name": "read", "args": {"path": "a.txt"}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "read", "response": {"output": "file contents"}}}
                ]}
            ],
            "systemInstruction": {"parts": [{"text": "You are terse."}]},
            "tools": [{"functionDeclarations": [
                {"name": "read", "description": "Read a file", "parameters": read_tool().parameters}
            ]}],
            "generationConfig": {
                "maxOutputTokens": 32000,
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 24576}
            }
        })
    );
}
