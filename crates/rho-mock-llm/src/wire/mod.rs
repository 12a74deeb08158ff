//! The wire formats: each renders a [`Reply`] as that API's event sequence (SSE, or Bedrock's
//! binary event stream) and an error as that API's error JSON. Only the shapes live here; pacing and faults are the pump's.

mod anthropic;
mod bedrock;
mod google;
mod openai_completions;
mod openai_responses;
mod pi_messages;

use serde_json::Value;

use crate::api::Api;
use crate::plan::Plan;
use crate::reply::{Exchange, Reply};

/// The streamed answer to a request for `exchange.api`.
pub fn render_stream(reply: &Reply<'_>, exchange: &Exchange) -> Plan {
    match exchange.api {
        Api::AnthropicMessages => anthropic::stream(reply, exchange),
        Api::OpenAiCompletions => openai_completions::stream(reply, exchange),
        Api::OpenAiResponses => openai_responses::stream(reply, exchange),
        Api::GoogleGenerativeAi => google::stream(reply, exchange),
        Api::BedrockConverseStream => bedrock::stream(reply, exchange),
        Api::PiMessages => pi_messages::stream(reply, exchange),
    }
}

/// The Responses events of a reply, each the JSON of one websocket message (ChatGPT's Codex
/// backend over its websocket).
pub fn render_messages(reply: &Reply<'_>, exchange: &Exchange) -> Plan {
    openai_responses::framed(reply, exchange, crate::plan::Framing::Message)
}

/// The content type of `api`'s stream.
pub fn stream_content_type(api: Api) -> &'static str {
    match api {
        Api::BedrockConverseStream => "application/vnd.amazon.eventstream",
        _ => "text/event-stream; charset=utf-8",
    }
}

/// Headers that go with an error status of `api` (Bedrock names the exception in one).
pub fn error_headers(api: Api, status: u16) -> Vec<(&'static str, String)> {
    match api {
        Api::BedrockConverseStream => vec![("x-amzn-errortype", bedrock::exception_for_status(status).to_owned())],
        _ => Vec::new(),
    }
}

/// Gemini's non-streaming `generateContent` answer.
pub fn render_whole_google(reply: &Reply<'_>, exchange: &Exchange) -> Value {
    google::whole(reply, exchange)
}

/// The HTTP status Gemini uses for an in-stream error type, for when the error has to be an
/// HTTP error instead (`generateContent`).
pub fn google_stream_error_status(kind: &str) -> u16 {
    google::status_for_kind(kind).0
}

/// The error JSON `api` sends with an HTTP error `status`.
pub fn error_body(api: Api, status: u16, message: &str) -> Value {
    match api {
        Api::AnthropicMessages => anthropic::error_body(status, message),
        Api::OpenAiCompletions | Api::OpenAiResponses => openai_completions::error_body(status, message),
        Api::GoogleGenerativeAi => google::error_body(status, message),
        Api::BedrockConverseStream => serde_json::json!({"message": message}),
        Api::PiMessages => pi_messages::error_body(status, message),
    }
}

/// The message of an error turn that gives none.
pub fn default_message(status: u16) -> String {
    match status {
        400 => "Invalid request".into(),
        401 => "Invalid API key".into(),
        403 => "Permission denied".into(),
        404 => "Not found".into(),
        413 => "Request too large".into(),
        429 => "Rate limit exceeded".into(),
        500 => "Internal server error".into(),
        502 => "Bad gateway".into(),
        503 => "Service unavailable".into(),
        504 => "Gateway timeout".into(),
        529 => "Overloaded".into(),
        other => format!("HTTP {other}"),
    }
}
