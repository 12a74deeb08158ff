//! `google-generative-ai` against the mock's Gemini wire format. Gemini sends function calls
//! whole, so a call's arguments arrive as one delta.

use pretty_assertions::assert_eq;
use rho_ai::{ErrorKind, ProviderError};
use rho_types::ThinkingLevel;
use rho_types::types::{AssistantContent, ImageContent, Message, UserContent};
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
                {"name": "read", "description": "Read a file", "parametersJsonSchema": read_tool().parameters}
            ]}],
            "generationConfig": {
                "maxOutputTokens": 32000,
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 24576}
            }
        })
    );
}

/// Thinking off says so, since Gemini models think by default: budget 0 where the model can stop
/// (Gemini 2.5 Flash; a Gemini 3 model whose map does not rule `off` out), else its lowest level
/// (the built-in Gemini 3 models), and no thoughts asked for.
#[tokio::test]
async fn thinking_off_turns_thinking_off() {
    let server = serve(json!([{"text": "ok"}, {"text": "ok"}, {"text": "ok"}, {"text": "ok"}])).await;
    let mut opts = options();
    opts.thinking = ThinkingLevel::Off;
    let mut sent = Vec::new();
    let builtin = |id: &str| rho_ai::catalog::find("google", id).unwrap().thinking_level_map;
    for (id, map) in [
        ("gemini-2.5-flash", None),
        ("gemini-3-pro-preview", None),
        ("gemini-3.1-pro-preview", builtin("gemini-3.1-pro-preview")),
        ("gemini-3-flash-preview", builtin("gemini-3-flash-preview")),
    ] {
        let mut m = model(WIRE, &server);
        m.id = id.into();
        m.thinking_level_map = map;
        collect(&m, &prompt("hi"), opts.clone()).await;
        sent.push(server.last_request().unwrap().body["generationConfig"]["thinkingConfig"].clone());
    }
    assert_eq!(
        sent,
        [
            json!({"thinkingBudget": 0}),
            json!({"thinkingBudget": 0}),
            json!({"thinkingLevel": "LOW"}),
            json!({"thinkingLevel": "MINIMAL"})
        ]
    );
}

/// A prompt Gemini refuses fails with the reason, as an error no retry would fix.
#[tokio::test]
async fn a_blocked_prompt_is_reported_and_not_retryable() {
    let server = serve(json!([{"blockReason": "PROHIBITED_CONTENT"}])).await;
    let events = collect(&model(WIRE, &server), &prompt("something bad"), options()).await;
    let error = failure(&events);
    assert_eq!(error.kind(), ErrorKind::Other, "{error:?}");
    assert!(!error.is_retryable());
    let message = final_message(&events);
    assert_eq!(message.stop_reason, rho_types::types::StopReason::Error);
    assert_eq!(message.error_message.as_deref(), Some("Prompt blocked by the provider: PROHIBITED_CONTENT"));
    assert_eq!(message.usage.input, 100);
}

/// A quota error once the stream has started — as a `data:` chunk, or as Google writes it,
/// pretty-printed without framing — is a 429, retried like an HTTP one; what arrived is kept.
#[tokio::test]
async fn a_quota_error_mid_stream_is_retryable_like_a_429() {
    let server = serve(json!([
        {"text": "partial", "streamError": {"type": "RESOURCE_EXHAUSTED", "message": "Resource has been exhausted."}},
        {"text": "partial", "streamError": {"type": "RESOURCE_EXHAUSTED", "message": "Resource has been exhausted.",
                                            "unframed": true}}
    ]))
    .await;
    let m = model(WIRE, &server);
    for framing in ["data", "unframed"] {
        let events = collect(&m, &prompt("hi"), options()).await;
        let error = failure(&events);
        assert!(matches!(error, ProviderError::Http { status: 429, .. }), "{framing}: {error:?}");
        assert_eq!(error.kind(), ErrorKind::Retryable, "{framing}");
        let message = final_message(&events);
        assert_eq!(
            message.error_message.as_deref(),
            Some("429 RESOURCE_EXHAUSTED: Resource has been exhausted."),
            "{framing}"
        );
        assert_eq!(message.text(), "partial", "{framing}");
    }
}

/// A call's thought signature is on it from `toolcall_end` on, and goes back with it.
#[tokio::test]
async fn a_signed_call_carries_its_signature_from_toolcall_end() {
    let server = serve(json!([
        {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}, "thoughtSignature": "Y2FsbC1zaWc="}]},
        {"text": "Read."}
    ]))
    .await;
    let m = model(WIRE, &server);
    let mut context = prompt("Read a.txt");
    context.tools = vec![read_tool()];
    let events = collect(&m, &context, options()).await;
    let end = events
        .iter()
        .find_map(|e| match e {
            rho_ai::AssistantMessageEvent::ToolCallEnd { tool_call, .. } => Some(tool_call.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(end.thought_signature.as_deref(), Some("Y2FsbC1zaWc="));
    let first = final_message(&events).clone();
    collect(&m, &continuation(&first, &end.id), options()).await;
    let body = server.last_request().unwrap().body;
    assert_eq!(
        body["contents"][1]["parts"][0],
        json!({"functionCall": {"name": "read", "args": {"path": "a.txt"}}, "thoughtSignature": "Y2FsbC1zaWc="})
    );
}

/// A tool result's images: inside its `functionResponse` on Gemini 3, in a user turn of their
/// own after it on Gemini 2.5.
#[tokio::test]
async fn tool_result_images_follow_the_model_generation() {
    let server = serve(json!([{"text": "ok"}, {"text": "ok"}])).await;
    let image = UserContent::Image(ImageContent { data: "aW1n".into(), mime_type: "image/png".into() });
    let inline = json!({"inlineData": {"mimeType": "image/png", "data": "aW1n"}});
    let mut sent = Vec::new();
    for id in ["gemini-3-pro-preview", "gemini-2.5-flash"] {
        let mut m = model(WIRE, &server);
        m.id = id.into();
        let mut first = rho_types::types::AssistantMessage::empty(&m.api, &m.provider, &m.id);
        first.content = vec![AssistantContent::ToolCall(rho_types::types::ToolCall {
            id: "shot_1".into(),
            name: "screenshot".into(),
            arguments: Default::default(),
            thought_signature: None,
            intent: None,
        })];
        first.stop_reason = rho_types::types::StopReason::ToolUse;
        let mut context = continuation(&first, "shot_1");
        if let Message::ToolResult(result) = &mut context.messages[2] {
            result.tool_name = "screenshot".into();
            result.content = vec![UserContent::text("The screen:"), image.clone()];
        }
        collect(&m, &context, options()).await;
        sent.push(server.last_request().unwrap().body["contents"].as_array().unwrap()[2..].to_vec());
    }
    let response = json!({"name": "screenshot", "response": {"output": "The screen:"}});
    let mut inside = response.clone();
    inside["parts"] = json!([inline]);
    assert_eq!(sent[0], [json!({"role": "user", "parts": [{"functionResponse": inside}]})]);
    assert_eq!(
        sent[1],
        [
            json!({"role": "user", "parts": [{"functionResponse": response}]}),
            json!({"role": "user", "parts": [{"text": "Tool result image:"}, inline]})
        ]
    );
}
