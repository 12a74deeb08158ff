//! pi's own message protocol (`pi-messages`), which the Radius gateway speaks: one `POST
//! {baseUrl}/messages` of `{model, context, options}` (the conversation as pi serializes it) with
//! the key as Bearer, answered by an SSE stream of pi's assistant-message events ending in `done`
//! or `error`.

pub(super) mod stream;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use crate::model::Model;
use crate::sse::Interrupted;
use crate::stream::{CacheRetention, Emitter, StreamOptions, ToolChoice};
use crate::types::{Context, StopReason};

pub(super) async fn run(
    model: &Model,
    context: Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let body = build_body(model, context, options);
    let auth = options.api_key.as_deref().filter(|k| !k.is_empty()).map(|k| format!("Bearer {k}"));
    let mut base: Vec<(&str, &str)> = vec![("accept", "text/event-stream")];
    base.extend(auth.as_deref().map(|a| ("authorization", a)));
    let headers = super::request_headers(&base, model, options)?;
    let url = super::endpoint(&model.base_url, "messages");
    let sse = super::post_sse(&url, headers, body, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}

/// The request: the model's id, the context as pi's `Context` (`systemPrompt`, `messages`,
/// `tools`) and the options pi passes on; an option not set is left out.
pub(crate) fn build_body(model: &Model, context: Context, options: &StreamOptions) -> Value {
    let mut ctx = Map::new();
    if let Some(system) = context.system_prompt {
        ctx.insert("systemPrompt".into(), Value::String(system));
    }
    let messages = context.messages.iter().map(|m| serde_json::to_value(m).unwrap_or(Value::Null)).collect();
    ctx.insert("messages".into(), Value::Array(messages));
    if !context.tools.is_empty() {
        ctx.insert("tools".into(), serde_json::to_value(&context.tools).unwrap_or(Value::Null));
    }
    let mut opts = Map::new();
    if let Some(t) = options.temperature {
        opts.insert("temperature".into(), json!(t));
    }
    if let Some(max) = options.max_tokens {
        opts.insert("maxTokens".into(), json!(max));
    }
    if let Some(level) = super::requested_thinking(model, options) {
        opts.insert("reasoning".into(), json!(level.as_str()));
    }
    // The backend's default applies unless asked (or `PI_CACHE_RETENTION=long`).
    let retention = options.cache_retention.or_else(|| {
        (super::env_value("PI_CACHE_RETENTION").as_deref() == Some("long")).then_some(CacheRetention::Long)
    });
    if let Some(retention) = retention {
        let name = match retention {
            CacheRetention::None => "none",
            CacheRetention::Short => "short",
            CacheRetention::Long => "long",
        };
        opts.insert("cacheRetention".into(), json!(name));
    }
    if let Some(session) = options.session_id.as_deref().filter(|s| !s.is_empty()) {
        opts.insert("sessionId".into(), json!(session));
    }
    if let ToolChoice::Tool(name) = &options.tool_choice {
        opts.insert("toolChoice".into(), json!({"type": "function", "function": {"name": name}}));
    }
    json!({"model": model.id, "context": ctx, "options": opts})
}
