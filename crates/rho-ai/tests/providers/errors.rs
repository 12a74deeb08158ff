//! Failure classification beyond the basics in `common`: every server status the retry logic
//! acts on (500, 529, 503 with `retry-after-ms`), context overflow in each API's own words, and a
//! rate limit that talks about tokens, which must stay a rate limit.

use std::time::Duration;

use rho_ai::{ErrorKind, ProviderError};
use rho_types::types::StopReason;
use serde_json::json;

use crate::common::*;

/// The wording each API uses when a request is too long for the context window (taken from
/// the providers' real error bodies).
fn overflow_message(wire: Wire) -> &'static str {
    match wire.api {
        "anthropic-messages" => "prompt is too long: 213462 tokens > 200000 maximum",
        "openai-completions" => {
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages."
        }
        "openai-responses" => {
            "Your input exceeds the context window of this model. Please adjust your input and try again."
        }
        "google-generative-ai" => {
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048576)."
        }
        "bedrock-converse-stream" => "Input is too long for requested model.",
        // A pi-messages gateway passes the upstream model's words on.
        "pi-messages" => "prompt is too long: 213462 tokens > 200000 maximum",
        other => panic!("no overflow text for {other}"),
    }
}

pub async fn server_statuses_are_retryable(wire: Wire) {
    let server = serve(json!([
        {"error": {"status": 500, "message": "Internal server error"}},
        {"error": {"status": 529, "message": "Overloaded"}},
        {"error": {"status": 503, "retryAfterMs": 1500}}
    ]))
    .await;
    let m = model(wire, &server);
    let context = prompt("hi");

    for (status, text) in [(500, "Internal server error"), (529, "Overloaded")] {
        let events = collect(&m, &context, options()).await;
        assert_eq!(types(&events), ["start", "error"], "{status}");
        let error = failure(&events);
        assert!(matches!(error, ProviderError::Http { status: s, .. } if s == status), "{error:?}");
        assert_eq!(error.kind(), ErrorKind::Retryable, "{status}");
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Error);
        assert!(message.error_message.as_deref().unwrap().contains(text), "{:?}", message.error_message);
    }

    let error = failure(&collect(&m, &context, options()).await);
    assert_eq!(error.kind(), ErrorKind::Retryable);
    assert_eq!(error.retry_after(), Some(Duration::from_millis(1500)));
}

pub async fn overflow_in_the_apis_own_words(wire: Wire) {
    let text = overflow_message(wire);
    let server = serve(json!([{"error": {"status": 400, "message": text}}])).await;
    let events = collect(&model(wire, &server), &prompt("a very long prompt"), options()).await;
    let error = failure(&events);
    assert_eq!(error.kind(), ErrorKind::ContextOverflow, "{error:?}");
    assert!(final_message(&events).error_message.as_deref().unwrap().contains(text));
}

/// Bedrock-style and tokens-per-minute rate limits mention tokens; a 429 is still a rate limit
/// to wait out, never an overflow to compact.
pub async fn a_rate_limit_about_tokens_is_not_an_overflow(wire: Wire) {
    let server = serve(json!([
        {"error": {"status": 429, "message": "Too many tokens, please wait before trying again."}}
    ]))
    .await;
    let error = failure(&collect(&model(wire, &server), &prompt("hi"), options()).await);
    assert_eq!(error.kind(), ErrorKind::Retryable, "{error:?}");
}

/// The error scenarios, as tests of `$wire`.
/// A 50 MB error message (plain text or the API's JSON) is kept as a few KB: the request
/// fails with a bounded text, and nothing holds the body.
pub async fn huge_error_bodies_are_capped(wire: Wire) {
    let huge = "e".repeat(50 * 1024 * 1024);
    let server = serve(json!([
        {"error": {"status": 500, "message": huge}},
        {"error": {"status": 500, "body": huge}}
    ]))
    .await;
    let m = model(wire, &server);
    for shape in ["json", "plain"] {
        let events = collect(&m, &prompt("hi"), options()).await;
        let text = final_message(&events).error_message.clone().unwrap();
        assert!(text.starts_with("500 "), "{shape}: {:.80}", text);
        assert!(text.len() <= rho_ai::error::MAX_ERROR_TEXT + 64, "{shape}: {} bytes kept", text.len());
        assert_eq!(failure(&events).kind(), ErrorKind::Retryable, "{shape}");
    }
}

/// A server that answers 200 with JSON instead of an event stream gets a message saying so.
pub async fn a_json_answer_instead_of_a_stream_is_named(wire: Wire) {
    let server = serve(json!([{"error": {"status": 200, "body": {"id": "x", "object": "chat.completion"}}}])).await;
    let events = collect(&model(wire, &server), &prompt("hi"), options()).await;
    assert_eq!(
        final_message(&events).error_message.as_deref(),
        Some(
            r#"Invalid response from provider: expected an event stream, got application/json: {"id":"x","object":"chat.completion"}"#
        )
    );
}

/// Error JSON a server writes into a started stream without SSE framing (as Gemini does when it
/// aborts one) fails the reply with its message and its kind, instead of reading as a stream
/// cut short; what arrived before it is kept.
pub async fn an_unframed_stream_error_shows_its_message(wire: Wire) {
    let server = serve(json!([{"text": "partial",
        "streamError": {"type": "overloaded_error", "message": "Overloaded", "unframed": true}}]))
    .await;
    let events = collect(&model(wire, &server), &prompt("hi"), options()).await;
    let error = failure(&events);
    assert!(!matches!(error, ProviderError::StreamEnded(_) | ProviderError::Decode(_)), "{error:?}");
    assert_eq!(error.kind(), ErrorKind::Retryable, "{error:?}");
    let message = final_message(&events);
    assert!(message.error_message.as_deref().unwrap().ends_with("Overloaded"), "{:?}", message.error_message);
    assert_eq!(message.text(), "partial");
}

macro_rules! error_tests {
    ($wire:expr) => {
        #[tokio::test]
        async fn an_unframed_stream_error_shows_its_message() {
            crate::errors::an_unframed_stream_error_shows_its_message($wire).await;
        }

        #[tokio::test]
        async fn huge_error_bodies_are_capped() {
            crate::errors::huge_error_bodies_are_capped($wire).await;
        }

        #[tokio::test]
        async fn a_json_answer_instead_of_a_stream_is_named() {
            crate::errors::a_json_answer_instead_of_a_stream_is_named($wire).await;
        }

        #[tokio::test]
        async fn server_statuses_are_retryable() {
            crate::errors::server_statuses_are_retryable($wire).await;
        }

        #[tokio::test]
        async fn overflow_in_the_apis_own_words() {
            crate::errors::overflow_in_the_apis_own_words($wire).await;
        }

        #[tokio::test]
        async fn a_rate_limit_about_tokens_is_not_an_overflow() {
            crate::errors::a_rate_limit_about_tokens_is_not_an_overflow($wire).await;
        }
    };
}
