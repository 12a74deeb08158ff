//! The Gemini request body for a full conversation and every thinking mapping, and the stream
//! half over recorded chunk bodies.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::format::build_body;
use crate::error::ErrorKind;
use crate::model::{Model, ThinkingLevel, api};
use crate::providers::test_fixtures::*;
use crate::stream::{StreamOptions, ToolChoice};
use crate::types::{
    AssistantContent, Context, ImageContent, StopReason, TextContent, ThinkingContent, ToolCall, UserContent,
};

fn gemini(id: &str) -> Model {
    model(api::GOOGLE_GENERATIVE_AI, "google", id, "https://generativelanguage.googleapis.com/v1beta")
}

fn options(thinking: ThinkingLevel) -> StreamOptions {
    StreamOptions { thinking, ..Default::default() }
}

#[test]
fn a_full_conversation() {
    let m = gemini("gemini-2.5-pro");
    let context = conversation(&m, "c2lnLTE=", ["read_1", "read_2"]);
    assert_eq!(
        build_body(&m, &context, &options(ThinkingLevel::Medium)),
        json!({
            "contents": [
                {"role": "user", "parts": [
                    {"text": "What is in a.txt?"},
                    {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}}
                ]},
                {"role": "model", "parts": [
                    {"thought": true, "text": "Need to read it.", "thoughtSignature": "c2lnLTE="},
                    {"text": "Reading."},
                    {"functionCall": {"name": "read", "args": {"path": "a.txt"}}},
                    {"functionCall": {"name": "read", "args": {"path": "b.txt"}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "read", "response": {"output": "hello"}}},
                    {"functionResponse": {"name": "read", "response": {"error": "(see attached image)"}}}
                ]},
                // Gemini 2.x takes a tool result's images only in a user turn of their own.
                {"role": "user", "parts": [
                    {"text": "Tool result image:"},
                    {"inlineData": {"mimeType": "image/jpeg", "data": "aW1n"}}
                ]},
                {"role": "model", "parts": [{"text": "Other thoughts."}, {"text": "It says hello."}]},
                {"role": "user", "parts": [{"text": "Thanks"}]}
            ],
            "systemInstruction": {"parts": [{"text": "You are a test."}]},
            "tools": [{"functionDeclarations": [{
                "name": "read",
                "description": "Read a file",
                "parametersJsonSchema": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "File to read"},
                        "limit": {"type": ["integer", "null"]}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }
            }]}],
            "generationConfig": {
                "maxOutputTokens": 32000,
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}
            }
        })
    );
}

#[test]
fn tool_result_images_go_inside_the_response_on_gemini_3_and_in_a_turn_of_their_own_before() {
    let image = || UserContent::Image(ImageContent { data: "aW1n".into(), mime_type: "image/png".into() });
    let inline = json!({"inlineData": {"mimeType": "image/png", "data": "aW1n"}});
    let context = |m: &Model| Context {
        messages: vec![
            user("look"),
            assistant(m, vec![call("a", "shot", json!({})), call("b", "read", json!({}))]),
            result("a", "shot", vec![UserContent::text("Screenshot:"), image()], false),
            result("b", "read", vec![UserContent::text("text")], false),
        ],
        ..Default::default()
    };
    let contents = |id: &str| {
        let m = gemini(id);
        build_body(&m, &context(&m), &options(ThinkingLevel::Off))["contents"].clone()
    };
    // Gemini 3: one turn answers both calls, the image inside its response.
    assert_eq!(
        contents("gemini-3-pro-preview")[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "shot", "response": {"output": "Screenshot:"}, "parts": [inline]}},
            {"functionResponse": {"name": "read", "response": {"output": "text"}}}
        ]})
    );
    // Gemini 2.5: the image turn follows its result, and the next result starts a turn.
    let older = contents("gemini-2.5-flash");
    assert_eq!(
        older.as_array().unwrap()[2..],
        [
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "shot", "response": {"output": "Screenshot:"}}}
            ]}),
            json!({"role": "user", "parts": [{"text": "Tool result image:"}, inline]}),
            json!({"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"output": "text"}}}]}),
        ]
    );
    assert_eq!(contents("gemini-live-2.5-flash").as_array().unwrap().len(), 5);
    assert_eq!(contents("gemini-3.1-flash-lite-preview").as_array().unwrap().len(), 3);
    assert_eq!(contents("gemma-3-27b-it").as_array().unwrap().len(), 3);
}

/// A built-in model: its `thinkingLevelMap` says which levels it has.
fn builtin(id: &str) -> crate::model::Model {
    crate::catalog::find("google", id).unwrap_or_else(|| panic!("google/{id} is built in"))
}

#[test]
fn thinking_off_is_said_as_each_model_allows() {
    let context = Context { messages: vec![user("hi")], ..Default::default() };
    let off = |model: crate::model::Model| {
        build_body(&model, &context, &options(ThinkingLevel::Off))["generationConfig"].get("thinkingConfig").cloned()
    };
    assert_eq!(off(gemini("gemini-2.5-flash")), Some(json!({"thinkingBudget": 0})));
    assert_eq!(off(gemini("gemini-2.5-flash-lite")), Some(json!({"thinkingBudget": 0})));
    // 2.5 Pro cannot stop thinking: its lowest budget.
    assert_eq!(off(gemini("gemini-2.5-pro")), Some(json!({"thinkingBudget": 128})));
    // A level-based model whose map lets it stop (none says otherwise) stops, as pi 1.6 sends it.
    assert_eq!(off(gemini("gemini-3-pro-preview")), Some(json!({"thinkingBudget": 0})));
    // One whose map rules `off` out gets its lowest level, without `includeThoughts`.
    assert_eq!(off(builtin("gemini-3.1-pro-preview")), Some(json!({"thinkingLevel": "LOW"})));
    assert_eq!(off(builtin("gemini-3-flash-preview")), Some(json!({"thinkingLevel": "MINIMAL"})));
    assert_eq!(off(builtin("gemini-3.8-flash")), Some(json!({"thinkingLevel": "LOW"})));
    assert_eq!(off(builtin("gemma-4-31b-it")), Some(json!({"thinkingLevel": "MINIMAL"})));
    assert_eq!(off(builtin("gemini-4-argon")), Some(json!({"thinkingLevel": "LOW"})), "Gemini 4 thinks by level");
    let mut plain = gemini("gemini-2.0-flash");
    plain.reasoning = false;
    let body = build_body(&plain, &context, &options(ThinkingLevel::Off));
    assert_eq!(body["generationConfig"].get("thinkingConfig"), None);
}

#[test]
fn thinking_levels_per_model_family() {
    let context = Context { messages: vec![user("hi")], ..Default::default() };
    let config = |model: &crate::model::Model, opts: &StreamOptions| {
        build_body(model, &context, opts)["generationConfig"].get("thinkingConfig").cloned()
    };
    let level = |id: &str, level| config(&gemini(id), &options(level));
    assert_eq!(
        level("gemini-2.5-pro", ThinkingLevel::Minimal),
        Some(json!({"includeThoughts": true, "thinkingBudget": 128}))
    );
    assert_eq!(
        level("gemini-2.5-pro", ThinkingLevel::High),
        Some(json!({"includeThoughts": true, "thinkingBudget": 32768}))
    );
    assert_eq!(
        level("gemini-2.5-flash", ThinkingLevel::Xhigh),
        Some(json!({"includeThoughts": true, "thinkingBudget": 24576}))
    );
    assert_eq!(
        level("gemini-2.5-flash-lite", ThinkingLevel::Minimal),
        Some(json!({"includeThoughts": true, "thinkingBudget": 512}))
    );
    assert_eq!(
        level("gemini-2.0-flash-thinking", ThinkingLevel::Low),
        Some(json!({"includeThoughts": true, "thinkingBudget": -1}))
    );
    let mut custom = options(ThinkingLevel::Low);
    custom.thinking_budgets.low = 3000;
    assert_eq!(
        config(&gemini("gemini-2.5-flash"), &custom),
        Some(json!({"includeThoughts": true, "thinkingBudget": 3000}))
    );
    // Level-based: the level clamped to the model's own and mapped through its map.
    let thinking_level =
        |model: crate::model::Model, l| config(&model, &options(l)).map(|c| c["thinkingLevel"].clone());
    let gemma = |l| thinking_level(builtin("gemma-4-31b-it"), l);
    assert_eq!(gemma(ThinkingLevel::Low), Some(json!("HIGH")), "low is ruled out: the next level up");
    assert_eq!(gemma(ThinkingLevel::Minimal), Some(json!("MINIMAL")));
    let pro = |l| thinking_level(builtin("gemini-3.1-pro-preview"), l);
    assert_eq!(pro(ThinkingLevel::Minimal), Some(json!("LOW")));
    assert_eq!(pro(ThinkingLevel::Low), Some(json!("LOW")));
    assert_eq!(pro(ThinkingLevel::Medium), Some(json!("MEDIUM")));
    assert_eq!(pro(ThinkingLevel::High), Some(json!("HIGH")));
    assert_eq!(pro(ThinkingLevel::Xhigh), Some(json!("HIGH")), "clamped down to high");
    let flash = |l| thinking_level(gemini("gemini-3.1-flash"), l);
    assert_eq!(flash(ThinkingLevel::Minimal), Some(json!("MINIMAL")));
    assert_eq!(flash(ThinkingLevel::Low), Some(json!("LOW")));
    assert_eq!(flash(ThinkingLevel::Medium), Some(json!("MEDIUM")));
    assert_eq!(flash(ThinkingLevel::Xhigh), Some(json!("HIGH")));
    assert_eq!(thinking_level(builtin("gemini-4-argon"), ThinkingLevel::High), Some(json!("HIGH")));
    assert_eq!(level("gemini-3-pro-preview", ThinkingLevel::High).unwrap()["includeThoughts"], json!(true));
}

#[test]
fn signatures_are_replayed_only_where_valid() {
    let m = gemini("gemini-3-pro-preview");
    let other = gemini("gemini-2.5-flash");
    let mut signed_text = TextContent::new("Answer");
    signed_text.text_signature = Some("dGV4dA==".into());
    let signed_call = AssistantContent::ToolCall(ToolCall {
        id: "a".into(),
        name: "read".into(),
        arguments: Default::default(),
        thought_signature: Some("Y2FsbA==".into()),
        intent: None,
    });
    let mut bad_call = signed_call.clone();
    if let AssistantContent::ToolCall(c) = &mut bad_call {
        c.id = "b".into();
        c.thought_signature = Some("not base64!".into());
    }
    let mut other_call = signed_call.clone();
    if let AssistantContent::ToolCall(c) = &mut other_call {
        c.id = "c".into();
    }
    let context = Context {
        system_prompt: None,
        messages: vec![
            user("go"),
            assistant(&m, vec![AssistantContent::Text(signed_text), signed_call, bad_call]),
            result("a", "read", vec![crate::types::UserContent::text("1")], false),
            result("b", "read", vec![crate::types::UserContent::text("2")], false),
            assistant(&other, vec![other_call]),
            result("c", "read", vec![crate::types::UserContent::text("3")], false),
        ],
        tools: vec![],
    };
    let opts =
        StreamOptions { tool_choice: ToolChoice::Tool("read".into()), temperature: Some(0.5), ..Default::default() };
    let body = build_body(&m, &context, &opts);
    let call = |sig: &str| json!({"functionCall": {"name": "read", "args": {}}, "thoughtSignature": sig});
    assert_eq!(
        body["contents"][1]["parts"],
        json!([
            {"text": "Answer", "thoughtSignature": "dGV4dA=="},
            call("Y2FsbA=="),
            call("skip_thought_signature_validator")
        ])
    );
    // Another model's signature is not replayed.
    assert_eq!(body["contents"][3]["parts"], json!([call("skip_thought_signature_validator")]));
    assert_eq!(body["toolConfig"], json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}}));
    assert_eq!(body["generationConfig"]["temperature"], json!(0.5));
    assert_eq!(body.get("systemInstruction"), None);
    assert_eq!(body.get("tools"), None);
}

fn chunk(parts: Value, finish: Option<&str>, usage: Option<Value>) -> (Option<&'static str>, Value) {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
    }
    let mut data = json!({"candidates": [candidate], "responseId": "gr-1"});
    if let Some(usage) = usage {
        data["usageMetadata"] = usage;
    }
    (None, data)
}

#[tokio::test]
async fn thoughts_text_and_whole_function_calls() {
    let m = gemini("gemini-2.5-pro");
    let body = sse_body(&[
        chunk(json!([{"text": "Thinking", "thought": true}]), None, None),
        chunk(json!([{"text": " more", "thought": true, "thoughtSignature": "c2ln"}]), None, None),
        chunk(json!([{"text": "Answer"}]), None, None),
        chunk(
            json!([
                {"functionCall": {"name": "read", "args": {"path": "a"}}, "thoughtSignature": "Zm4="},
                {"functionCall": {"name": "ls", "args": {}}}
            ]),
            Some("STOP"),
            Some(json!({"promptTokenCount": 100, "cachedContentTokenCount": 40,
                        "candidatesTokenCount": 20, "thoughtsTokenCount": 5, "totalTokenCount": 125})),
        ),
    ]);
    let events = decode(&m, &body).await;
    assert_eq!(
        types(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.response_id.as_deref(), Some("gr-1"));
    assert_eq!(
        message.content[0],
        AssistantContent::Thinking(ThinkingContent {
            thinking: "Thinking more".into(),
            thinking_signature: Some("c2ln".into()),
            redacted: None,
        })
    );
    assert_eq!(message.content[1], text("Answer"));
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(calls[0].name, "read");
    assert_eq!(calls[0].arguments, json!({"path": "a"}).as_object().cloned().unwrap());
    assert_eq!(calls[0].thought_signature.as_deref(), Some("Zm4="));
    // The signature is on the call from its end event on.
    let ends: Vec<&ToolCall> = events
        .iter()
        .filter_map(|e| match e {
            crate::AssistantMessageEvent::ToolCallEnd { tool_call, .. } => Some(tool_call),
            _ => None,
        })
        .collect();
    assert_eq!(ends[0].thought_signature.as_deref(), Some("Zm4="));
    assert_eq!(ends[1].thought_signature, None);
    assert!(calls[0].id.starts_with("read_"));
    assert_ne!(calls[0].id, calls[1].id);
    assert_eq!((message.usage.input, message.usage.cache_read, message.usage.output), (60, 40, 25));
}

#[tokio::test]
async fn endings_and_failures() {
    let m = gemini("gemini-2.5-flash");
    let length = sse_body(&[chunk(json!([{"text": "a"}]), Some("MAX_TOKENS"), None)]);
    let ended = decode(&m, &length).await;
    assert_eq!(final_message(&ended).stop_reason, StopReason::Length);
    assert_eq!(final_message(&ended).raw_stop_reason.as_deref(), Some("MAX_TOKENS"), "the provider's words kept");
    let safety = sse_body(&[chunk(json!([{"text": "Here is"}]), None, None), chunk(json!([]), Some("SAFETY"), None)]);
    let events = decode(&m, &safety).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Provider finishReason: SAFETY"));
    // The text block ends before the error.
    let ends = events.iter().filter(|e| matches!(e, crate::AssistantMessageEvent::TextEnd { .. })).count();
    assert_eq!(ends, 1);
    assert!(matches!(events.last(), Some(crate::AssistantMessageEvent::Error { .. })));
    let cut = sse_body(&[chunk(json!([{"text": "a"}]), None, None)]);
    assert_eq!(failure(&decode(&m, &cut).await).kind(), ErrorKind::Retryable);
    let error = sse_body(&[(
        None,
        json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
    )]);
    let events = decode(&m, &error).await;
    assert_eq!(failure(&events).kind(), ErrorKind::Retryable);
    assert_eq!(final_message(&events).error_message.as_deref(), Some("503 UNAVAILABLE: The model is overloaded."));
}

/// A quota error in the stream is a 429 like an HTTP one, whatever its wording; a refused
/// prompt names its reason and is not retried.
#[tokio::test]
async fn quota_errors_retry_and_blocked_prompts_do_not() {
    let m = gemini("gemini-2.5-flash");
    let quota = sse_body(&[
        chunk(json!([{"text": "a"}]), None, None),
        (None, json!({"error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}})),
    ]);
    let events = decode(&m, &quota).await;
    let error = failure(&events);
    assert!(matches!(error, crate::ProviderError::Http { status: 429, .. }), "{error:?}");
    assert_eq!(error.kind(), ErrorKind::Retryable);
    assert_eq!(final_message(&events).error_message.as_deref(), Some("429 RESOURCE_EXHAUSTED: Resource exhausted."));
    assert_eq!(final_message(&events).text(), "a");
    let blocked = sse_body(&[(
        None,
        json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
               "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}}),
    )]);
    let events = decode(&m, &blocked).await;
    assert_eq!(failure(&events).kind(), ErrorKind::Other);
    let message = final_message(&events);
    assert_eq!(message.error_message.as_deref(), Some("Prompt blocked by the provider: PROHIBITED_CONTENT"));
    assert_eq!(message.usage.input, 12);
}
