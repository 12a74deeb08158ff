//! `openai-responses` against the mock's Responses wire format, including encrypted reasoning
//! carried from one request to the next.

use pretty_assertions::assert_eq;
use rho_types::ThinkingLevel;
use rho_types::types::AssistantContent;
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
    // The reference's versioned form: the output message's id (no phase was sent).
    let signature: Value = serde_json::from_str(text.text_signature.as_deref().unwrap()).unwrap();
    assert_eq!(signature["v"], json!(1));
    assert!(signature["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(signature.get("phase"), None);
}

#[tokio::test]
async fn encrypted_reasoning_is_carried_to_the_next_request() {
    let (first, request) = round_trip(WIRE, "ENC-abc", ThinkingLevel::High).await;
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    assert_extra_headers(&request);
    // The session routes to one prompt cache, in the body and in pi's two headers.
    assert_eq!(request.body["prompt_cache_key"], json!("session-1"));
    assert_eq!(request.header("session_id"), Some("session-1"));
    assert_eq!(request.header("x-client-request-id"), Some("session-1"));

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
    assert_eq!(final_message(&events).stop_reason, rho_types::types::StopReason::Length);
}

/// A gpt-oss server streams raw `reasoning_text` instead of a summary: it is thinking, in
/// pieces, and the item it came from is kept for replay.
#[tokio::test]
async fn reasoning_text_from_a_gpt_oss_server_is_thinking() {
    let server = serve(json!([{"thinking": "Raw chain of thought.", "reasoningText": true,
                               "text": "Done.", "chunkSize": 5}]))
    .await;
    let mut opts = options();
    opts.thinking = ThinkingLevel::High;
    let events = collect(&model(WIRE, &server), &prompt("why?"), opts).await;
    assert_eq!(types(&events)[1], "thinking_start");
    assert_eq!(deltas(&events, 0), ["Raw c", "hain ", "of th", "ought", "."]);
    let message = final_message(&events);
    let AssistantContent::Thinking(t) = &message.content[0] else { panic!("{:?}", message.content) };
    assert_eq!(t.thinking, "Raw chain of thought.");
    let item: Value = serde_json::from_str(t.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(item["content"], json!([{"type": "reasoning_text", "text": "Raw chain of thought."}]));
    assert_eq!(message.text(), "Done.");
}

/// The message's `phase` is kept in the versioned text signature and sent back on the message
/// item in the next request (OpenAI asks for it from gpt-5.3-codex on).
#[tokio::test]
async fn the_message_phase_is_kept_and_sent_back() {
    let server = serve(json!([
        {"text": "Let me look.", "phase": "commentary",
         "toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "It says hi.", "phase": "final_answer"}
    ]))
    .await;
    let mut m = model(WIRE, &server);
    m.id = "gpt-5.3-codex".into();
    let mut context = prompt("Read a.txt");
    context.tools = vec![read_tool()];
    let events = collect(&m, &context, options()).await;
    let first = final_message(&events).clone();
    let AssistantContent::Text(text) = &first.content[0] else { panic!("{:?}", first.content) };
    let signature = text.text_signature.clone().unwrap();
    let parsed: Value = serde_json::from_str(&signature).unwrap();
    assert_eq!(parsed["v"], json!(1));
    assert_eq!(parsed["phase"], json!("commentary"));
    let message_id = parsed["id"].as_str().unwrap().to_owned();
    assert!(signature.starts_with(r#"{"v":1,"id":"msg_"#), "{signature}");
    // The text_end event already carries it.
    assert!(events.iter().any(|e| matches!(e,
        rho_ai::AssistantMessageEvent::TextEnd { signature: Some(s), .. } if *s == signature)));

    let call_id = first.tool_calls().next().unwrap().id.clone();
    let second = collect(&m, &continuation(&first, &call_id), options()).await;
    let AssistantContent::Text(answer) = &final_message(&second).content[0] else { panic!() };
    assert!(answer.text_signature.as_deref().unwrap().ends_with(r#","phase":"final_answer"}"#));
    let input = server.requests()[1].body["input"].clone();
    let item = input.as_array().unwrap().iter().find(|i| i["type"] == "message").unwrap().clone();
    assert_eq!(
        item,
        json!({"type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}],
               "status": "completed", "id": message_id, "phase": "commentary"})
    );
}

/// Thinking off says so on the request, as the reference does: the GPT-5 family at its lowest
/// level (it cannot turn reasoning off), other reasoning models `effort: "none"`; no extra
/// developer message either way.
#[tokio::test]
async fn thinking_off_is_said_in_reasoning_effort() {
    let server = serve(json!([{"text": "ok"}, {"text": "ok"}])).await;
    let mut gpt5 = model(WIRE, &server);
    gpt5.id = "gpt-5-mini".into();
    let mut o3 = model(WIRE, &server);
    o3.id = "o3".into();
    let mut opts = options();
    opts.thinking = ThinkingLevel::Off;
    collect(&gpt5, &prompt("hi"), opts.clone()).await;
    collect(&o3, &prompt("hi"), opts).await;
    let requests = server.requests();
    let (gpt5_body, o3_body) = (&requests[0].body, &requests[1].body);
    assert_eq!(gpt5_body["reasoning"], json!({"effort": "minimal", "summary": "auto"}));
    assert_eq!(gpt5_body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(o3_body["reasoning"], json!({"effort": "none"}));
    assert_eq!(o3_body.get("include"), None);
    for body in [gpt5_body, o3_body] {
        assert_eq!(
            body["input"],
            json!([{"role": "developer", "content": "You are terse."},
                   {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}])
        );
    }
}

/// Failures read as the reference shows them, the server's code first, and classify by it.
#[tokio::test]
async fn failures_keep_the_servers_code() {
    let server = serve(json!([
        {"text": "partial", "streamError": {"type": "server_error", "message": "The server had an error"}},
        {"streamError": {"type": "rate_limit_exceeded", "message": "Slow down", "errorEvent": true}},
        {"text": "partial", "streamError": {"type": "invalid_request_error", "message": "Bad input", "unframed": true}}
    ]))
    .await;
    let m = model(WIRE, &server);
    let context = prompt("hi");
    let run = || collect(&m, &context, options());
    let events = run().await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("server_error: The server had an error"));
    assert_eq!(final_message(&events).text(), "partial");
    assert_eq!(failure(&events).kind(), rho_ai::ErrorKind::Retryable);
    let events = run().await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Error Code rate_limit_exceeded: Slow down"));
    assert_eq!(failure(&events).kind(), rho_ai::ErrorKind::Retryable);
    // Error JSON written without SSE framing shows its message instead of a stream cut short.
    let events = run().await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Bad input"));
    assert_eq!(failure(&events).kind(), rho_ai::ErrorKind::Other);
}
