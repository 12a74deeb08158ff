//! The Chat Completions request body for a full conversation in several dialects, and the
//! stream half over recorded chunk bodies.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::format::build_body;
use crate::error::ErrorKind;
use crate::model::{Model, ThinkingLevel, api};
use crate::providers::test_fixtures::*;
use crate::stream::{StreamOptions, ToolChoice};
use crate::types::{AssistantContent, Context, StopReason, ThinkingContent, UserContent};

fn gpt(id: &str, base_url: &str) -> Model {
    model(api::OPENAI_COMPLETIONS, "openai", id, base_url)
}

fn options(thinking: ThinkingLevel) -> StreamOptions {
    StreamOptions { thinking, ..Default::default() }
}

fn hi() -> Context {
    Context { system_prompt: Some("Be brief.".into()), messages: vec![user("hi")], tools: vec![] }
}

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
                "parameters": read_tool().parameters,
                "strict": false
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

/// The providers the reference knows to speak a narrower dialect.
#[test]
fn known_non_standard_providers() {
    let body = |provider: &str, url: &str| {
        let mut m = gpt("m", url);
        m.provider = provider.into();
        build_body(&m, &hi(), &options(ThinkingLevel::High))
    };
    for (provider, url) in [("moonshotai", "https://api.moonshot.ai/v1"), ("cloudflare-ai-gateway", "https://x/v1")] {
        let b = body(provider, url);
        assert_eq!(b.get("store"), None, "{provider}");
        assert_eq!(b["max_tokens"], json!(32000), "{provider}");
        assert_eq!(b.get("reasoning_effort"), None, "{provider}");
        assert_eq!(b["messages"][0]["role"], json!("system"), "{provider}");
    }
    let workers = body("cloudflare-workers-ai", "https://api.cloudflare.com/client/v4");
    assert_eq!(workers.get("store"), None);
    assert_eq!(workers["max_completion_tokens"], json!(32000));
    assert_eq!(workers["reasoning_effort"], json!("high"));
    let deepseek = body("deepseek", "https://api.deepseek.com");
    assert_eq!((deepseek.get("store"), &deepseek["max_completion_tokens"]), (None, &json!(32000)));
}

/// OpenRouter takes `reasoning: {effort}`, and `none` turns reasoning off.
#[test]
fn openrouter_reasoning_object() {
    let m = gpt("openai/gpt-5.2", "https://openrouter.ai/api/v1");
    let body = |level| build_body(&m, &hi(), &options(level));
    assert_eq!(body(ThinkingLevel::High)["reasoning"], json!({"effort": "high"}));
    assert_eq!(body(ThinkingLevel::Xhigh)["reasoning"], json!({"effort": "xhigh"}));
    assert_eq!(body(ThinkingLevel::Off)["reasoning"], json!({"effort": "none"}));
    assert_eq!(body(ThinkingLevel::High).get("reasoning_effort"), None);
    let mut plain = m.clone();
    plain.reasoning = false;
    assert_eq!(build_body(&plain, &hi(), &options(ThinkingLevel::Off)).get("reasoning"), None);
}

#[test]
fn reasoning_follows_the_compat_flags() {
    let effort = |m: &Model, level| build_body(m, &hi(), &options(level));
    let openai = gpt("gpt-5-mini", "https://api.openai.com/v1");
    assert_eq!(effort(&openai, ThinkingLevel::Off).get("reasoning_effort"), None);
    assert_eq!(effort(&openai, ThinkingLevel::Xhigh)["reasoning_effort"], json!("high"));
    assert_eq!(
        effort(&gpt("gpt-5.2", "https://api.openai.com/v1"), ThinkingLevel::Xhigh)["reasoning_effort"],
        json!("xhigh")
    );
    let mut plain = openai.clone();
    plain.reasoning = false;
    let body = effort(&plain, ThinkingLevel::High);
    assert_eq!(body.get("reasoning_effort"), None);
    assert_eq!(body["messages"][0]["role"], json!("system"));

    let mut xai = gpt("grok-4", "https://api.x.ai/v1");
    xai.provider = "xai".into();
    let body = effort(&xai, ThinkingLevel::High);
    assert_eq!(body.get("reasoning_effort"), None);
    assert_eq!(body.get("store"), None);

    let mut zai = gpt("glm-4.6", "https://api.z.ai/api/coding/paas/v4");
    zai.provider = "zai".into();
    assert_eq!(effort(&zai, ThinkingLevel::High)["enable_thinking"], json!(true));
    assert_eq!(effort(&zai, ThinkingLevel::Off)["enable_thinking"], json!(false));

    let mut qwen = gpt("qwen3-32b", "http://localhost:8000/v1");
    qwen.compat = Some(json!({"thinkingFormat": "qwen-chat-template"}));
    assert_eq!(effort(&qwen, ThinkingLevel::Low)["chat_template_kwargs"], json!({"enable_thinking": true}));

    let mut groq = gpt("qwen/qwen3-32b", "https://api.groq.com/openai/v1");
    groq.provider = "groq".into();
    assert_eq!(effort(&groq, ThinkingLevel::Low)["reasoning_effort"], json!("default"));

    let mut mapped = openai.clone();
    mapped.compat = Some(json!({
        "reasoningEffortMap": {"minimal": "low"},
        "supportsUsageInStreaming": false,
        "maxTokensField": "max_tokens",
        "supportsDeveloperRole": false,
        "supportsStrictMode": false,
        "openRouterRouting": {"order": ["x"]}
    }));
    let body = effort(&mapped, ThinkingLevel::Minimal);
    assert_eq!(body["reasoning_effort"], json!("low"));
    assert_eq!(body.get("stream_options"), None);
    assert_eq!(body["max_tokens"], json!(32000));
    assert_eq!(body["messages"][0]["role"], json!("system"));
    assert_eq!(body["provider"], json!({"order": ["x"]}));
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
    assert_eq!((message.usage.input, message.usage.cache_read, message.usage.output), (20, 100, 40));
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

#[test]
fn openais_own_servers_get_the_session_as_prompt_cache_key() {
    let with_session = StreamOptions { session_id: Some("sess-9".into()), ..options(ThinkingLevel::Off) };
    let openai = build_body(&gpt("gpt-4o", "https://api.openai.com/v1"), &hi(), &with_session);
    assert_eq!(openai["prompt_cache_key"], json!("sess-9"));
    let local = build_body(&gpt("gpt-4o", "http://127.0.0.1:8080/v1"), &hi(), &with_session);
    assert_eq!(local.get("prompt_cache_key"), None);
    let no_session = build_body(&gpt("gpt-4o", "https://api.openai.com/v1"), &hi(), &options(ThinkingLevel::Off));
    assert_eq!(no_session.get("prompt_cache_key"), None);
}
