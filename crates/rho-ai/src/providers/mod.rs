//! One module per wire API. Each has a pure "format" half (our messages to the vendor's request
//! JSON) and a streaming half (the vendor's SSE chunks to [`Emitter`] calls). The streaming half
//! takes an [`SseStream`], so a recorded body can be decoded without HTTP ([`decode`]).
//!
//! This module holds what they share: the request (headers in precedence order, one POST,
//! the body read as SSE), budget thinking's output cap, and ids for calls that come without one.

mod anthropic;
mod azure;
mod bedrock;
mod body;
pub(crate) mod copilot;
mod google;
mod openai_codex;
mod openai_completions;
mod openai_responses;
mod pi_messages;
#[cfg(test)]
pub(crate) mod test_fixtures;
pub(crate) mod vertex;

use std::sync::atomic::{AtomicU64, Ordering};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::error::ProviderError;
use crate::model::{Model, ThinkingLevel, api};
use crate::sse::{self, Interrupted, SseStream};
use crate::stream::{Emitter, StreamOptions};
use crate::types::{Context, StopReason, ToolResultMessage, UserContent};

/// Runs the provider for `model.api` to the end of its reply.
pub(crate) async fn run(
    model: &Model,
    context: Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let (model, options) = copilot::adapt(model, &context, options);
    let (model, options) = (model.as_ref(), options.as_ref());
    match model.api.as_str() {
        api::ANTHROPIC_MESSAGES => anthropic::run(model, context, options, emitter).await,
        api::OPENAI_COMPLETIONS => openai_completions::run(model, context, options, emitter).await,
        api::OPENAI_RESPONSES => openai_responses::run(model, context, options, emitter).await,
        api::AZURE_OPENAI_RESPONSES => azure::run(model, context, options, emitter).await,
        api::OPENAI_CODEX_RESPONSES => openai_codex::run(model, context, options, emitter).await,
        api::GOOGLE_GENERATIVE_AI => google::run(model, context, options, emitter).await,
        api::GOOGLE_VERTEX => vertex::run(model, context, options, emitter).await,
        api::BEDROCK_CONVERSE_STREAM => bedrock::run(model, context, options, emitter).await,
        api::PI_MESSAGES => pi_messages::run(model, context, options, emitter).await,
        other => Err(ProviderError::UnsupportedApi(other.to_owned()).into()),
    }
}

/// Decodes an already open SSE body the way `model.api` streams it.
pub(crate) async fn decode(
    model: &Model,
    sse: SseStream,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let cancel = &options.cancel;
    match model.api.as_str() {
        api::ANTHROPIC_MESSAGES => anthropic::stream::consume(sse, emitter, cancel, None).await,
        api::OPENAI_COMPLETIONS => openai_completions::stream::consume(sse, emitter, cancel).await,
        api::OPENAI_RESPONSES | api::AZURE_OPENAI_RESPONSES | api::OPENAI_CODEX_RESPONSES => {
            openai_responses::stream::consume(sse, emitter, cancel).await
        }
        api::GOOGLE_GENERATIVE_AI | api::GOOGLE_VERTEX => google::stream::consume(sse, emitter, cancel).await,
        api::PI_MESSAGES => pi_messages::stream::consume(sse, emitter, cancel).await,
        other => Err(ProviderError::UnsupportedApi(other.to_owned()).into()),
    }
}

/// A JSON object of `pairs`, their values moved in. `json!` copies every `Value` it is given,
/// and a conversation's blocks are too large to copy again.
fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
}

/// An environment variable's value, trimmed; `None` when unset or blank.
fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// A configured key that is a key: not blank, and not a `<placeholder>` (such as the marker a
/// registry reports when a cloud's own credentials stand in for a key).
fn is_real_key(key: &str) -> bool {
    let key = key.trim();
    let placeholder = key.starts_with('<') && key.ends_with('>');
    !key.is_empty() && !placeholder
}

/// `base` joined with `path`, without doubling the slash.
fn endpoint(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// Request headers: the API's own first, then the model's, then the caller's; a later value
/// replaces an earlier one with the same name. Header values never appear in errors (they often
/// carry credentials).
fn request_headers(base: &[(&str, &str)], model: &Model, options: &StreamOptions) -> Result<HeaderMap, ProviderError> {
    let mut map = HeaderMap::new();
    let pairs = base
        .iter()
        .map(|(k, v)| (*k, *v))
        .chain(model.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .chain(options.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    for (name, value) in pairs {
        let header = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| ProviderError::Request(format!("invalid header name {name:?}")))?;
        let value = HeaderValue::from_str(value.trim())
            .map_err(|_| ProviderError::Request(format!("invalid value for header {name}")))?;
        map.insert(header, value);
    }
    Ok(map)
}

/// POSTs `body` as JSON and opens the reply as an SSE stream. Error statuses, connection
/// failures and cancellation are classified by [`sse::send`]. The request hooks, when set, see
/// the body first (and may replace it) and the response's status and headers.
async fn post_sse(
    url: &str,
    headers: HeaderMap,
    body: Value,
    options: &StreamOptions,
) -> Result<SseStream, Interrupted> {
    let body = body::JsonBody::new(hooked(body, options).await)?;
    post_sse_body(url, headers, body, options).await
}

/// [`post_sse`] with the body already serialized (and already seen by the payload hook).
async fn post_sse_bytes(
    url: &str,
    headers: HeaderMap,
    bytes: Vec<u8>,
    options: &StreamOptions,
) -> Result<SseStream, Interrupted> {
    let len = bytes.len() as u64;
    post_sse_body(url, headers, body::JsonBody { body: bytes.into(), len }, options).await
}

async fn post_sse_body(
    url: &str,
    headers: HeaderMap,
    body: body::JsonBody,
    options: &StreamOptions,
) -> Result<SseStream, Interrupted> {
    let mut headers = match &options.hooks.headers {
        Some(hook) => hooked_headers(hook, headers).await,
        None => headers,
    };
    // Unless the API's or the caller's headers say otherwise (once: a second value would be
    // sent beside theirs).
    headers.entry(reqwest::header::CONTENT_TYPE).or_insert(HeaderValue::from_static("application/json"));
    headers.entry(reqwest::header::ACCEPT).or_insert(HeaderValue::from_static("text/event-stream"));
    // Given for a streamed body too, which is then sent with it rather than in chunks.
    headers.insert(reqwest::header::CONTENT_LENGTH, HeaderValue::from(body.len));
    let request = sse::client()?.post(url).headers(headers).body(body.body);
    let response = sse::send_observed(request, &options.cancel, options.hooks.response.as_ref()).await?;
    Ok(SseStream::new(response, options.idle_timeout).observed(options.hooks.stream_event.clone()))
}

/// The JSON body to send: `body`, or what the payload hook made of it. The body is consumed:
/// a long conversation is not held twice while the request is out.
async fn body_bytes(body: Value, options: &StreamOptions) -> Result<Vec<u8>, ProviderError> {
    let body = hooked(body, options).await;
    serde_json::to_vec(&body).map_err(|e| ProviderError::Request(e.to_string()))
}

/// The headers the headers hook gives back for `headers` (one it makes unusable is dropped).
async fn hooked_headers(hook: &crate::stream::HeadersHook, headers: HeaderMap) -> HeaderMap {
    let pairs =
        headers.iter().filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned()))).collect();
    let mut out = HeaderMap::new();
    for (name, value) in hook(pairs).await {
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name.trim().as_bytes()), HeaderValue::from_str(value.trim()))
        {
            out.append(name, value);
        }
    }
    out
}

/// `body`, or what the payload hook made of it.
async fn hooked(body: Value, options: &StreamOptions) -> Value {
    match &options.hooks.payload {
        Some(hook) => hook(body).await,
        None => body,
    }
}

/// Output cap and thinking budget for budget-based thinking: the budget is added to the cap
/// (bounded by the model's own maximum), and when that leaves no room for an answer the budget
/// shrinks to keep 1024 tokens of output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BudgetThinking {
    max_tokens: u64,
    budget: u64,
}

fn budget_thinking(model: &Model, options: &StreamOptions, level: ThinkingLevel) -> BudgetThinking {
    const MIN_OUTPUT: u64 = 1024;
    let base = options.max_tokens_for(model);
    let mut budget = options.thinking_budgets.for_level(level);
    let ceiling = if model.max_tokens > 0 { model.max_tokens } else { base + budget };
    let max_tokens = (base + budget).min(ceiling);
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(MIN_OUTPUT);
    }
    BudgetThinking { max_tokens, budget }
}

/// The thinking level to send, or `None` when no reasoning option goes on the request.
fn requested_thinking(model: &Model, options: &StreamOptions) -> Option<ThinkingLevel> {
    (model.reasoning && options.thinking != ThinkingLevel::Off).then_some(options.thinking)
}

/// An id for a tool call the provider sent without one, unique within the process.
fn generated_tool_call_id(name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
    let name = crate::transform::sanitize_tool_call_id(name, 32);
    format!("{name}_{}_{n}", crate::types::now_ms())
}

/// An error payload that is none of the API's own events: `{"error": …}` sent by a proxy, or
/// error JSON a server wrote without SSE framing (which the SSE layer passes on as data).
/// `None` when `data` is not that shape, so the caller reports its own decode error.
fn raw_error(data: &str) -> Option<ProviderError> {
    #[derive(serde::Deserialize)]
    struct Raw {
        error: Value,
    }
    let error = serde_json::from_str::<Raw>(data).ok()?.error;
    let text = |key: &str| match error.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let message = match &error {
        Value::String(s) => s.clone(),
        _ => text("message").unwrap_or_else(|| error.to_string()),
    };
    let error_type = text("type").or_else(|| text("code")).or_else(|| text("status")).unwrap_or_default();
    Some(ProviderError::Stream { error_type, message })
}

/// The images of a tool result.
fn tool_result_images(result: &ToolResultMessage) -> impl Iterator<Item = &crate::types::ImageContent> {
    result.content.iter().filter_map(|c| match c {
        UserContent::Image(i) => Some(i),
        UserContent::Text(_) => None,
    })
}

/// `data:` URL of an image, as the OpenAI APIs take them.
fn data_url(image: &crate::types::ImageContent) -> String {
    format!("data:{};base64,{}", image.mime_type, image.data)
}

/// The text sent in place of a tool result that holds only images.
const IMAGE_ONLY_RESULT: &str = "(see attached image)";

/// Introduces the images of tool results on APIs whose tool results carry text only.
const TOOL_RESULT_IMAGES: &str = "Attached image(s) from tool result:";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{InputKind, ModelCost};

    fn model(max_tokens: u64) -> Model {
        Model {
            id: "m".into(),
            name: "m".into(),
            api: api::ANTHROPIC_MESSAGES.into(),
            provider: "p".into(),
            base_url: "http://x".into(),
            reasoning: true,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 200_000,
            max_tokens,
            headers: Default::default(),
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
            input_limits: None,
            sampling: None,
        }
    }

    #[test]
    fn budget_thinking_adds_the_budget_to_the_cap() {
        let options = StreamOptions::default();
        assert_eq!(
            budget_thinking(&model(64_000), &options, ThinkingLevel::Medium),
            BudgetThinking { max_tokens: 32_000 + 8192, budget: 8192 }
        );
        // Bounded by the model's maximum.
        assert_eq!(
            budget_thinking(&model(36_000), &options, ThinkingLevel::High),
            BudgetThinking { max_tokens: 36_000, budget: 16_384 }
        );
        // No room left for an answer: the budget gives way.
        assert_eq!(
            budget_thinking(&model(8192), &options, ThinkingLevel::High),
            BudgetThinking { max_tokens: 8192, budget: 8192 - 1024 }
        );
    }

    #[test]
    fn headers_later_sources_win_and_bad_ones_are_rejected() {
        let mut m = model(1);
        m.headers.insert("x-a".into(), "model".into());
        let options = StreamOptions { headers: vec![("X-A".into(), "option".into())], ..Default::default() };
        let map = request_headers(&[("x-a", "base"), ("x-b", "b")], &m, &options).unwrap();
        assert_eq!(map["x-a"], "option");
        assert_eq!(map["x-b"], "b");
        let bad = StreamOptions { headers: vec![("bad name".into(), "secret".into())], ..Default::default() };
        let err = request_headers(&[], &m, &bad).unwrap_err();
        assert!(!err.to_string().contains("secret"));
    }

    #[test]
    fn endpoints_join_cleanly() {
        assert_eq!(endpoint("http://h/v1/", "/responses"), "http://h/v1/responses");
        assert_eq!(endpoint("http://h", "v1/messages"), "http://h/v1/messages");
    }
}
