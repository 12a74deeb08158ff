//! ChatGPT's Codex backend (`openai-codex-responses`), reached with a ChatGPT Plus/Pro login as pi
//! reaches it: the Responses wire at `{base}/codex/responses` (base
//! `https://chatgpt.com/backend-api`), the login's access token as Bearer and its ChatGPT
//! account (a claim of that token) in `chatgpt-account-id`, `originator: pi`. The body is the
//! Responses body with the system prompt as its leading developer item (pi 1.6: the backend puts
//! `instructions` after the input from GPT-6.2 on, so a prompt there was never served from the
//! prompt cache), the reasoning item always included, terse text, automatic tool choice and
//! parallel calls, and no output cap, as pi sends it.
//!
//! The request goes over the session's websocket first unless the `transport` option says
//! `sse` ([`websocket`]), and over the event stream when the websocket cannot carry it.

#[cfg(test)]
mod tests;
mod websocket;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Map, Value, json};

use super::openai_responses::{format, session_headers, stream};
use crate::error::ProviderError;
use crate::model::Model;
use crate::oauth::openai_codex::account_id;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions, ToolChoice};
use crate::types::{Context, StopReason};

const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
/// The websocket protocol version the reference asks for.
const WEBSOCKET_BETA: &str = "responses_websockets=2026-02-06";

pub(super) async fn run(
    model: &Model,
    context: Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let token = options
        .api_key
        .as_deref()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ProviderError::MissingApiKey(model.provider.clone()))?;
    let account = account_id(token).ok_or_else(|| {
        ProviderError::Login(
            "Failed to extract accountId from token: log in again with `rho login openai-codex`.".into(),
        )
    })?;
    let body = build_body(model, &context, options);
    // The request holds the conversation now; it is not kept a second time while it is out.
    drop(context);
    let body = super::hooked(body, options).await;
    let auth = format!("Bearer {token}");
    let agent = user_agent();
    let base = [
        ("authorization", auth.as_str()),
        ("chatgpt-account-id", &account),
        ("originator", "pi"),
        ("user-agent", &agent),
    ];
    let url = url(&model.base_url);
    let session = options.session_id.as_deref().filter(|s| !s.is_empty());
    if options.transport.tries_websocket()
        && !websocket::failed_before(session)
        && let Value::Object(fields) = &body
    {
        let request_id = session.map_or_else(request_id, str::to_owned);
        let headers = websocket_headers(&base, &request_id, model, options)?;
        let socket_url = websocket::websocket_url(&url);
        match websocket::run(model, &socket_url, fields, headers, options, emitter).await {
            websocket::Outcome::Done(result) => return result,
            websocket::Outcome::Unavailable(error) => {
                tracing::debug!("codex websocket unavailable, using the event stream: {error}");
            }
        }
    }
    let mut headers: Vec<(&str, &str)> = base.to_vec();
    headers.extend([("openai-beta", "responses=experimental"), ("accept", "text/event-stream")]);
    headers.extend(session_headers(model, options));
    let headers = super::request_headers(&headers, model, options)?;
    let bytes = serde_json::to_vec(&body).map_err(|e| ProviderError::Request(e.to_string()))?;
    drop(body);
    let sse = super::post_sse_bytes(&url, headers, bytes, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}

/// The websocket's handshake headers: the event stream's, with the websocket beta, and the
/// session (or a fresh id) as the request id.
fn websocket_headers(
    base: &[(&str, &str)],
    request_id: &str,
    model: &Model,
    options: &StreamOptions,
) -> Result<HeaderMap, ProviderError> {
    let mut headers = super::request_headers(base, model, options)?;
    for name in ["accept", "content-type"] {
        headers.remove(name);
    }
    let id = HeaderValue::from_str(request_id).map_err(|_| ProviderError::Request("invalid session id".into()))?;
    headers.insert("openai-beta", HeaderValue::from_static(WEBSOCKET_BETA));
    headers.insert("x-client-request-id", id.clone());
    headers.insert("session_id", id);
    Ok(headers)
}

/// A random request id (a v4 UUID) for a request without a session.
fn request_id() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 16];
    let _ = ring::rand::SystemRandom::new().fill(&mut bytes);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// The Responses body, turned into the Codex backend's.
pub(crate) fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut body = format::build_body(model, context, options);
    let Value::Object(fields) = &mut body else { return body };
    // The system prompt stays the input's first item; no `instructions`.
    fields.insert("text".into(), json!({"verbosity": "low"}));
    fields.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if !matches!(options.tool_choice, ToolChoice::Tool(_)) {
        fields.insert("tool_choice".into(), json!("auto"));
    }
    fields.insert("parallel_tool_calls".into(), json!(true));
    fields.remove("max_output_tokens");
    // Thinking off is said by leaving reasoning out.
    if fields.get("reasoning").and_then(|r| r.get("effort")).and_then(Value::as_str) == Some("none") {
        fields.remove("reasoning");
    }
    if let Some(Value::Array(tools)) = fields.get_mut("tools") {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            tool.insert("strict".into(), Value::Null);
        }
    }
    reorder(fields);
    body
}

/// The fields in the order pi writes them (a server may not care; a person comparing does).
fn reorder(fields: &mut Map<String, Value>) {
    const ORDER: &[&str] = &[
        "model",
        "store",
        "stream",
        "instructions",
        "input",
        "text",
        "include",
        "prompt_cache_key",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "tools",
        "reasoning",
    ];
    let mut ordered = Map::new();
    for key in ORDER {
        if let Some(value) = fields.remove(*key) {
            ordered.insert((*key).to_owned(), value);
        }
    }
    ordered.append(fields);
    *fields = ordered;
}

/// `{base}/codex/responses`, whatever of that path the base already has.
fn url(base: &str) -> String {
    let base = base.trim();
    let base = if base.is_empty() { DEFAULT_BASE_URL } else { base }.trim_end_matches('/');
    if base.ends_with("/codex/responses") {
        base.to_owned()
    } else if base.ends_with("/codex") {
        format!("{base}/responses")
    } else {
        format!("{base}/codex/responses")
    }
}

/// `pi (<os> <release>; <arch>)`, as pi names itself to the backend.
fn user_agent() -> String {
    let release =
        std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|r| r.trim().to_owned()).unwrap_or_default();
    format!("pi ({} {release}; {})", std::env::consts::OS, node_arch())
}

/// The architecture as Node names it.
fn node_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    }
}
