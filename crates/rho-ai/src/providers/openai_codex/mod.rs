//! ChatGPT's Codex backend (`openai-codex-responses`), reached with a ChatGPT Plus/Pro login as pi
//! 0.73 reaches it: the Responses wire at `{base}/codex/responses` (base
//! `https://chatgpt.com/backend-api`), the login's access token as Bearer and its ChatGPT
//! account (a claim of that token) in `chatgpt-account-id`, `originator: pi`. The body is the
//! Responses body with the system prompt as `instructions`, the reasoning item always included,
//! terse text, automatic tool choice and parallel calls, and no output cap, as pi sends it.
//!
//! pi tries a websocket first and falls back to this event stream; rho speaks the event stream
//! only (the same events).

#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use super::openai_responses::{format, session_headers, stream};
use crate::error::ProviderError;
use crate::model::Model;
use crate::oauth::openai_codex::account_id;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions, ToolChoice};
use crate::types::{Context, StopReason};

const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
/// What a request without a system prompt is told.
const DEFAULT_INSTRUCTIONS: &str = "You are a helpful assistant.";

pub(super) async fn run(
    model: &Model,
    context: &Context,
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
    let body = build_body(model, context, options);
    let auth = format!("Bearer {token}");
    let agent = user_agent();
    let mut base: Vec<(&str, &str)> = vec![
        ("authorization", &auth),
        ("chatgpt-account-id", &account),
        ("originator", "pi"),
        ("user-agent", &agent),
        ("openai-beta", "responses=experimental"),
        ("accept", "text/event-stream"),
    ];
    base.extend(session_headers(model, options));
    let headers = super::request_headers(&base, model, options)?;
    let sse = super::post_sse(&url(&model.base_url), headers, body, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}

/// The Responses body, turned into the Codex backend's.
pub(crate) fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut body = format::build_body(model, context, options);
    let Value::Object(fields) = &mut body else { return body };
    // The system prompt goes in `instructions`, not in the input.
    if let Some(Value::Array(input)) = fields.get_mut("input")
        && input
            .first()
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            .is_some_and(|r| r == "developer" || r == "system")
        && context.system_prompt.as_deref().is_some_and(|s| !s.is_empty())
    {
        input.remove(0);
    }
    let instructions = context.system_prompt.as_deref().filter(|s| !s.is_empty()).unwrap_or(DEFAULT_INSTRUCTIONS);
    fields.insert("instructions".into(), json!(instructions));
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
