//! Whole conversations as each dialect replays them: roles, images, tool results, tool-call ids
//! and the fields thinking goes back in.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::{gpt, hi, options, served};
use crate::model::ThinkingLevel;
use crate::providers::openai_completions::format::build_body;
use crate::providers::test_fixtures::*;
use crate::stream::{StreamOptions, ToolChoice};
use crate::types::{Context, UserContent};

#[test]
fn a_full_conversation_for_openai() {
    let m = gpt("gpt-5-mini", "https://api.openai.com/v1");
    let context = conversation(&m, "reasoning_content", ["call|1", "call_2"]);
    let body = build_body(&m, &context, &options(ThinkingLevel::Medium));
    assert_eq!(
        body,
        json!({
            "model": "gpt-5-mini",
            "messages": [
                {"role": "developer", "content": "You are a test."},
                {"role": "user", "content": [
                    {"type": "text", "text": "What is in a.txt?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}
                ]},
                {"role": "assistant", "content": "Reading.", "reasoning_content": "Need to read it.",
                 "tool_calls": [
                    {"id": "call", "type": "function",
                     "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "read", "arguments": "{\"path\":\"b.txt\"}"}}
                ]},
                {"role": "tool", "content": "hello", "tool_call_id": "call"},
                {"role": "tool", "content": "(see attached image)", "tool_call_id": "call_2"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Attached image(s) from tool result:"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,aW1n"}}
                ]},
                {"role": "assistant", "content": "Other thoughts.\nIt says hello."},
                {"role": "user", "content": "Thanks"}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "store": false,
            "max_completion_tokens": 32000,
            "tools": [{"type": "function", "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": read_tool().parameters
            }}],
            "reasoning_effort": "medium"
        })
    );
}

/// A local server is spoken to in OpenAI's own dialect, as the reference does; its `compat`
/// asks for the plainer one.
#[test]
fn a_local_server_gets_openais_dialect_unless_its_compat_says_otherwise() {
    let mut m = gpt("qwen3", "http://127.0.0.1:8080/v1");
    let body = build_body(&m, &hi(), &options(ThinkingLevel::Off));
    assert_eq!(
        body,
        json!({
            "model": "qwen3",
            "messages": [
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": "hi"}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "store": false,
            "max_completion_tokens": 32000
        })
    );
    m.compat = Some(json!({"supportsDeveloperRole": false, "supportsStore": false, "maxTokensField": "max_tokens"}));
    let body = build_body(&m, &hi(), &options(ThinkingLevel::Off));
    assert_eq!(body["messages"][0]["role"], json!("system"));
    assert_eq!(body.get("store"), None);
    assert_eq!(body.get("max_completion_tokens"), None);
    assert_eq!(body["max_tokens"], json!(32000));
}

#[test]
fn mistral_ids_names_and_thinking_as_text() {
    let mut m = gpt("devstral", "https://api.mistral.ai/v1");
    m.provider = "mistral".into();
    m.compat = Some(json!({"requiresAssistantAfterToolResult": true}));
    let context = Context {
        system_prompt: None,
        messages: vec![
            user("go"),
            assistant(
                &m,
                vec![thinking("plan", Some("reasoning_content")), call("toolu_01ABCDEFGHIJK", "read", json!({}))],
            ),
            result("toolu_01ABCDEFGHIJK", "read", vec![UserContent::text("ok")], false),
            user("next"),
        ],
        tools: vec![],
    };
    let body = build_body(&m, &context, &options(ThinkingLevel::Off));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "<thinking>\nplan\n</thinking>", "tool_calls": [
                {"id": "toolu01AB", "type": "function",
                 "function": {"name": "read", "arguments": "{}"}}
            ]},
            {"role": "tool", "content": "ok", "tool_call_id": "toolu01AB", "name": "read"},
            {"role": "assistant", "content": "I have processed the tool results."},
            {"role": "user", "content": "next"}
        ])
    );
    assert_eq!(body["max_tokens"], json!(32000));
}

#[test]
fn tool_choice_and_temperature() {
    let m = gpt("gpt-4o", "https://api.openai.com/v1");
    let opts =
        StreamOptions { tool_choice: ToolChoice::Tool("read".into()), temperature: Some(0.25), ..Default::default() };
    let body = build_body(&m, &hi(), &opts);
    assert_eq!(body["tool_choice"], json!({"type": "function", "function": {"name": "read"}}));
    assert_eq!(body["temperature"], json!(0.25));
}

/// Every tool result carries text: a placeholder when it has only images or nothing at all.
#[test]
fn tool_results_are_never_empty() {
    let m = gpt("gpt-4o", "https://api.openai.com/v1");
    let context = Context {
        system_prompt: None,
        messages: vec![
            user("go"),
            assistant(&m, vec![call("call_1", "bash", json!({})), call("call_2", "bash", json!({}))]),
            result("call_1", "bash", vec![], false),
            result("call_2", "bash", vec![UserContent::text("  \n")], false),
        ],
        tools: vec![],
    };
    let body = build_body(&m, &context, &options(ThinkingLevel::Off));
    assert_eq!(body["messages"][2], json!({"role": "tool", "content": "(no tool output)", "tool_call_id": "call_1"}));
    assert_eq!(body["messages"][3]["content"], json!("(no tool output)"));
}

/// DeepSeek rejects a history of a reasoning model whose assistant messages lack
/// `reasoning_content`: a turn without thinking carries it empty.
#[test]
fn deepseek_gets_reasoning_content_on_every_assistant_message() {
    let m = served("deepseek", "deepseek-v4-pro", "https://api.deepseek.com", json!(null));
    let other = served("openai", "gpt-4o", "https://api.openai.com/v1", json!(null));
    let context = Context {
        system_prompt: None,
        messages: vec![
            user("go"),
            assistant(&m, vec![thinking("plan", Some("reasoning_content")), call("call_1", "ls", json!({}))]),
            result("call_1", "ls", vec![UserContent::text("a.txt")], false),
            assistant(&m, vec![text("One file.")]),
            user("and now?"),
            assistant(&other, vec![text("Still one.")]),
            user("thanks"),
        ],
        tools: vec![],
    };
    let body = build_body(&m, &context, &options(ThinkingLevel::High));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "reasoning_content": "plan", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ]},
            {"role": "tool", "content": "a.txt", "tool_call_id": "call_1"},
            {"role": "assistant", "content": "One file.", "reasoning_content": ""},
            {"role": "user", "content": "and now?"},
            {"role": "assistant", "content": "Still one.", "reasoning_content": ""},
            {"role": "user", "content": "thanks"}
        ])
    );
    // Only a reasoning model's history needs it, and only where the server asks for it.
    let mut plain = m.clone();
    plain.reasoning = false;
    let body = build_body(&plain, &context, &options(ThinkingLevel::Off));
    assert_eq!(body["messages"][3], json!({"role": "assistant", "content": "One file."}));
    let body = build_body(&gpt("o3", "https://api.openai.com/v1"), &context, &options(ThinkingLevel::High));
    assert_eq!(body["messages"][5], json!({"role": "assistant", "content": "Still one."}));
    let flagged = served(
        "custom",
        "kimi",
        "https://example.com/v1",
        json!({"requiresReasoningContentOnAssistantMessages": true}),
    );
    let body = build_body(&flagged, &context, &options(ThinkingLevel::High));
    assert_eq!(body["messages"][5]["reasoning_content"], json!(""));
}

/// OpenCode Go streams thinking as `reasoning` and takes it back as `reasoning_content`.
#[test]
fn opencode_go_takes_reasoning_back_as_reasoning_content() {
    let m = served("opencode-go", "kimi-k2.6", "https://opencode.ai/zen/go/v1", json!(null));
    let context = Context {
        system_prompt: None,
        messages: vec![user("go"), assistant(&m, vec![thinking("plan", Some("reasoning")), text("Done.")]), user("ok")],
        tools: vec![],
    };
    let body = build_body(&m, &context, &options(ThinkingLevel::High));
    assert_eq!(body["messages"][1], json!({"role": "assistant", "content": "Done.", "reasoning_content": "plan"}));
}
