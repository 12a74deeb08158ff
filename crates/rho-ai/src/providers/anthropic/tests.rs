//! The Anthropic request body for a full conversation at several thinking levels, and the
//! stream half over recorded event bodies.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::format::{INTERLEAVED_THINKING_BETA, build_request};
use crate::error::ErrorKind;
use crate::event::AssistantMessageEvent as E;
use crate::model::{Model, ThinkingLevel, api};
use crate::providers::test_fixtures::*;
use crate::stream::{StreamOptions, ToolChoice};
use crate::types::{AssistantContent, Context, ModelCost, RedactedThinkingContent, StopReason, ThinkingContent};

fn claude(id: &str) -> Model {
    model(api::ANTHROPIC_MESSAGES, "anthropic", id, "https://api.anthropic.com")
}

fn options(thinking: ThinkingLevel) -> StreamOptions {
    StreamOptions { thinking, ..Default::default() }
}

#[test]
fn a_full_conversation_with_budget_thinking() {
    let m = claude("claude-sonnet-4-5");
    let context = conversation(&m, "sig-1", ["call|1", "toolu_2"]);
    let request = build_request(&m, &context, &options(ThinkingLevel::Medium));
    assert_eq!(request.beta, Some(INTERLEAVED_THINKING_BETA));
    assert_eq!(
        request.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 32000 + 8192,
            "stream": true,
            "system": [
                {"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}
            ],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "What is in a.txt?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="}}
                ]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Need to read it.", "signature": "sig-1"},
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.txt"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b.txt"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "hello", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": [
                        {"type": "text", "text": "(see attached image)"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "aW1n"}}
                    ], "is_error": true}
                ]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Other thoughts."},
                    {"type": "text", "text": "It says hello."}
                ]},
                {"role": "user", "content": [
                    {"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}
                ]}
            ],
            "tools": [{
                "name": "read",
                "description": "Read a file",
                "input_schema": read_tool().parameters
            }],
            "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
        })
    );
}

#[test]
fn thinking_levels_map_to_budgets_or_adaptive_effort() {
    let context = Context { messages: vec![user("hi")], ..Default::default() };
    let body = |id: &str, level| {
        let request = build_request(&claude(id), &context, &options(level));
        (
            request.body.get("thinking").cloned(),
            request.body.get("output_config").cloned(),
            request.body["max_tokens"].clone(),
            request.beta,
        )
    };
    // Off on a model that can stop thinking is said (pi 1.6).
    assert_eq!(
        body("claude-sonnet-4-5", ThinkingLevel::Off),
        (Some(json!({"type": "disabled"})), None, json!(32000), None)
    );
    assert_eq!(
        body("claude-sonnet-4-5", ThinkingLevel::Minimal),
        (
            Some(json!({"type": "enabled", "budget_tokens": 1024, "display": "summarized"})),
            None,
            json!(33024),
            Some(INTERLEAVED_THINKING_BETA)
        )
    );
    // xhigh is high's budget on a model without xhigh.
    assert_eq!(
        body("claude-sonnet-4-5", ThinkingLevel::Xhigh).0,
        Some(json!({"type": "enabled", "budget_tokens": 16384, "display": "summarized"}))
    );
    assert_eq!(
        body("claude-opus-4-6", ThinkingLevel::Xhigh),
        (
            Some(json!({"type": "adaptive", "display": "summarized"})),
            Some(json!({"effort": "max"})),
            json!(32000),
            None
        )
    );
    // A model whose map rules `off` out is sent nothing for it.
    let mut always = claude("claude-opus-5-5");
    always.thinking_level_map = Some([(ThinkingLevel::Off, None)].into_iter().collect());
    let request = build_request(&always, &context, &options(ThinkingLevel::Off));
    assert_eq!(request.body.get("thinking"), None);
    assert_eq!(body("claude-sonnet-4-6", ThinkingLevel::Xhigh).1, Some(json!({"effort": "high"})));
    assert_eq!(body("claude-opus-4.6", ThinkingLevel::Minimal).1, Some(json!({"effort": "low"})));
    assert_eq!(body("claude-opus-4-6", ThinkingLevel::Medium).1, Some(json!({"effort": "medium"})));

    let mut plain = claude("claude-3-5-haiku");
    plain.reasoning = false;
    let request = build_request(&plain, &context, &options(ThinkingLevel::High));
    assert_eq!(request.body.get("thinking"), None);
    assert_eq!(request.beta, None);
}

#[test]
fn custom_budgets_and_a_small_model_cap() {
    let mut m = claude("claude-sonnet-4-5");
    m.max_tokens = 8192;
    let context = Context { messages: vec![user("hi")], ..Default::default() };
    let request = build_request(&m, &context, &options(ThinkingLevel::High));
    assert_eq!(request.body["max_tokens"], json!(8192));
    assert_eq!(
        request.body["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192 - 1024, "display": "summarized"})
    );
    let mut custom = options(ThinkingLevel::Low);
    custom.thinking_budgets.low = 3000;
    custom.max_tokens = Some(1000);
    let request = build_request(&claude("claude-sonnet-4-5"), &context, &custom);
    assert_eq!(request.body["max_tokens"], json!(4000));
    assert_eq!(request.body["thinking"]["budget_tokens"], json!(3000));
}

#[test]
fn tool_choice_temperature_and_redacted_thinking() {
    let m = claude("claude-sonnet-4-5");
    let context = Context {
        system_prompt: None,
        messages: vec![
            user("hi"),
            assistant(
                &m,
                vec![
                    AssistantContent::RedactedThinking(RedactedThinkingContent { data: "opaque".into() }),
                    AssistantContent::Thinking(ThinkingContent {
                        thinking: "[redacted]".into(),
                        thinking_signature: Some("pi-opaque".into()),
                        redacted: Some(true),
                    }),
                    thinking("lost signature", None),
                    thinking("   ", Some("empty")),
                    text("Answer"),
                ],
            ),
        ],
        tools: vec![],
    };
    let opts =
        StreamOptions { tool_choice: ToolChoice::Tool("read".into()), temperature: Some(0.5), ..Default::default() };
    let body = build_request(&m, &context, &opts).body;
    assert_eq!(
        body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 32000,
            "stream": true,
            "messages": [
                // The conversation ends with the assistant: no cache breakpoint on the user turn.
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "redacted_thinking", "data": "pi-opaque"},
                    {"type": "text", "text": "lost signature"},
                    {"type": "text", "text": "Answer"}
                ]}
            ],
            "tool_choice": {"type": "tool", "name": "read"},
            "thinking": {"type": "disabled"},
            "temperature": 0.5
        })
    );
    // Temperature goes only without thinking, and never to a model that refuses it.
    let thinking_on = StreamOptions { thinking: ThinkingLevel::Low, ..opts.clone() };
    assert_eq!(build_request(&m, &context, &thinking_on).body.get("temperature"), None);
    let mut opus = claude("claude-opus-4-7");
    opus.compat = Some(json!({"supportsTemperature": false}));
    assert_eq!(build_request(&opus, &context, &opts).body.get("temperature"), None);
}

fn message_start() -> (Option<&'static str>, serde_json::Value) {
    (
        Some("message_start"),
        json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "usage": {"input_tokens": 100, "output_tokens": 1,
                      "cache_read_input_tokens": 20, "cache_creation_input_tokens": 5}
        }}),
    )
}

#[tokio::test]
async fn thinking_signature_redacted_and_tool_input() {
    let m = claude("claude-sonnet-4-5");
    let body = sse_body(&[
        message_start(),
        (Some("ping"), json!({"type": "ping"})),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Hmm"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "ab"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "cd"}}),
        ),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "secret"}}),
        ),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 1})),
        // A proxy that sends the whole input up front and no deltas.
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "x"}}}),
        ),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 2})),
        (Some("some_future_event"), json!({"type": "some_future_event", "x": 1})),
        (
            Some("message_delta"),
            json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 42}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]);
    let events = decode(&m, &body).await;
    assert_eq!(
        types(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    let E::Start { partial } = &events[0] else { panic!() };
    assert_eq!(partial.response_id.as_deref(), Some("msg_1"));
    assert_eq!(partial.usage.input, 100);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(
        message.content,
        vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "Hmm".into(),
                thinking_signature: Some("abcd".into()),
                redacted: None,
            }),
            AssistantContent::RedactedThinking(RedactedThinkingContent { data: "secret".into() }),
            call("toolu_1", "read", json!({"path": "x"})),
        ]
    );
    assert_eq!(
        (
            message.usage.input,
            message.usage.output,
            message.usage.cache_read,
            message.usage.cache_write,
            message.usage.total_tokens
        ),
        (100, 42, 20, 5, 167)
    );
}

#[tokio::test]
async fn failures_are_classified() {
    let m = claude("claude-sonnet-4-5");
    let overloaded = sse_body(&[
        message_start(),
        (
            Some("error"),
            json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ]);
    let events = decode(&m, &overloaded).await;
    let failure = failure(&events);
    assert_eq!(failure.kind(), ErrorKind::Retryable);
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Overloaded"));

    let cut = sse_body(&[message_start()]);
    assert!(matches!(failure_of(&m, &cut).await, crate::ProviderError::StreamEnded(_)));

    let refusal = sse_body(&[
        message_start(),
        (
            Some("message_delta"),
            json!({"type": "message_delta",
            "delta": {"stop_reason": "refusal"}, "usage": {"output_tokens": 3}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]);
    let events = decode(&m, &refusal).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(final_message(&events).usage.output, 3);

    let malformed = "event: message_start\ndata: {\"type\": \"message_start\", \n\n";
    assert_eq!(failure_of(&m, malformed).await.kind(), ErrorKind::Other);
}

async fn failure_of(m: &Model, body: &str) -> crate::ProviderError {
    failure(&decode(m, body).await)
}

/// One-hour cache writes are counted apart and priced at twice the input price; the stop reason
/// is kept in the provider's words.
#[tokio::test]
async fn one_hour_cache_writes_and_the_raw_stop_reason() {
    let mut m = claude("claude-sonnet-4-5");
    m.cost = ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, tiers: Vec::new() };
    let body = sse_body(&[
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": "msg_1", "content": [],
                "usage": {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 1000,
                          "cache_creation": {"ephemeral_5m_input_tokens": 400, "ephemeral_1h_input_tokens": 600}}}}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]);
    let message = final_message(&decode(&m, &body).await).clone();
    assert_eq!((message.usage.cache_write, message.usage.cache_write_1h), (1000, Some(600)));
    let expected = (3.75 * 400.0 + 3.0 * 2.0 * 600.0) / 1_000_000.0;
    assert!((message.usage.cost.cache_write - expected).abs() < 1e-12, "{}", message.usage.cost.cache_write);
    assert_eq!(message.usage.cost.total_from_provider, Some(false));
    assert_eq!(message.raw_stop_reason.as_deref(), Some("end_turn"));

    // Without retention details the one-hour count is there, at zero.
    let plain = sse_body(&[message_start(), (Some("message_stop"), json!({"type": "message_stop"}))]);
    assert_eq!(final_message(&decode(&m, &plain).await).usage.cache_write_1h, Some(0));
}

/// A model whose catalogue entry names fallback models asks for them (`fallbacks`, with their
/// beta beside the others); one without sends no such field.
#[test]
fn fallback_models_are_asked_for_with_their_beta() {
    let mut m = claude("claude-fable-5");
    m.compat = Some(json!({"allowedFallbackModels": [
        {"provider": "anthropic", "model": "claude-opus-5", "cost": {"input": 5, "output": 25}},
        {"provider": "anthropic", "model": "claude-opus-4-8"}]}));
    let context = conversation(&m, "sig-1", ["call|1", "toolu_2"]);
    let request = build_request(&m, &context, &options(ThinkingLevel::Medium));
    assert_eq!(request.body["fallbacks"], json!([{"model": "claude-opus-5"}, {"model": "claude-opus-4-8"}]));
    assert_eq!(request.betas().as_deref(), Some("interleaved-thinking-2025-05-14,server-side-fallback-2026-07-01"));
    let plain = build_request(&claude("claude-sonnet-4-5"), &context, &options(ThinkingLevel::Off));
    assert_eq!((plain.body.get("fallbacks"), plain.betas()), (None, None));
}

/// A reply a fallback model gave (`message_start` names it) names it as `responseModel` and is
/// priced at the fallback's prices.
#[tokio::test]
async fn a_fallbacks_reply_is_priced_at_its_own_prices() {
    let mut m = claude("claude-fable-5");
    m.cost = ModelCost { input: 10.0, output: 50.0, cache_read: 1.0, cache_write: 12.5, tiers: Vec::new() };
    m.compat = Some(json!({"allowedFallbackModels": [{"provider": "anthropic", "model": "claude-opus-5",
        "cost": {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25}}]}));
    let reply = |model: &str| {
        sse_body(&[
            (
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "msg_1", "model": model, "content": [],
                    "usage": {"input_tokens": 1000, "output_tokens": 1}}}),
            ),
            (
                Some("message_delta"),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1000}}),
            ),
            (Some("message_stop"), json!({"type": "message_stop"})),
        ])
    };
    let own = final_message(&decode(&m, &reply("claude-fable-5")).await).clone();
    let by_fallback = final_message(&decode(&m, &reply("claude-opus-5")).await).clone();
    assert_eq!((own.response_model, by_fallback.response_model.as_deref()), (None, Some("claude-opus-5")));
    let (own, fallback) = (own.usage.cost.total, by_fallback.usage.cost.total);
    assert!((own - (10.0 * 1000.0 + 50.0 * 1000.0) / 1e6).abs() < 1e-12, "{own}");
    assert!((fallback - (5.0 * 1000.0 + 25.0 * 1000.0) / 1e6).abs() < 1e-12, "{fallback}");
}
