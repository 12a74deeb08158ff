//! Prompt caching over Chat Completions, as pi 1.6 asks for it. Servers that cache by themselves
//! are given the session as `prompt_cache_key` (OpenAI's API, or any server when a long retention
//! is asked for and it supports one) and `prompt_cache_retention: "24h"` for a long retention.
//! Servers that cache the Anthropic way (`compat.cacheControlFormat: "anthropic"`, OpenRouter's
//! Claude models) need `cache_control` markers instead: on the system prompt, on the last tool and
//! on the last text of the conversation, an hour long for a long retention. Retention `none`
//! sends neither key nor markers.

use serde_json::{Map, Value, json};

use super::compat::{Compat, PromptCacheKey};
use crate::model::Model;
use crate::providers::env_value;
use crate::stream::{CacheRetention, StreamOptions};

/// The longest `prompt_cache_key` OpenAI accepts, in characters.
const MAX_PROMPT_CACHE_KEY: usize = 64;

/// The retention a request asks for: its own, else `long` when `PI_CACHE_RETENTION=long`.
pub(super) fn retention(options: &StreamOptions) -> CacheRetention {
    options.cache_retention.unwrap_or_else(|| match env_value("PI_CACHE_RETENTION").as_deref() {
        Some("long") => CacheRetention::Long,
        _ => CacheRetention::Short,
    })
}

/// `prompt_cache_key` and `prompt_cache_retention`, where they apply.
pub(super) fn add_cache_fields(
    body: &mut Map<String, Value>,
    model: &Model,
    compat: &Compat,
    retention: CacheRetention,
    session: Option<&str>,
) {
    let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    let keyed = match compat.prompt_cache_key {
        PromptCacheKey::Enabled => true,
        PromptCacheKey::Disabled => false,
        PromptCacheKey::Auto => model.base_url.contains("api.openai.com") || long,
    };
    if let Some(session) = session.filter(|s| !s.is_empty())
        && keyed
        && retention != CacheRetention::None
    {
        let key: String = session.chars().take(MAX_PROMPT_CACHE_KEY).collect();
        body.insert("prompt_cache_key".into(), json!(key));
    }
    if long {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
}

/// The `cache_control` marker a server of the Anthropic convention gets, if any.
pub(super) fn cache_control(compat: &Compat, retention: CacheRetention) -> Option<Value> {
    if !compat.anthropic_cache_control {
        return None;
    }
    match retention {
        CacheRetention::None => None,
        CacheRetention::Long if compat.supports_long_cache_retention => Some(json!({"type": "ephemeral", "ttl": "1h"})),
        CacheRetention::Short | CacheRetention::Long => Some(json!({"type": "ephemeral"})),
    }
}

/// Marks the system prompt, the last tool and the last conversation message that has text.
pub(super) fn place_markers(messages: &mut [Value], tools: &mut [Value], marker: &Value) {
    if let Some(system) = messages.iter_mut().find(|m| matches!(role(m), Some("system" | "developer"))) {
        mark_text(system, marker);
    }
    if let Some(Value::Object(tool)) = tools.last_mut() {
        tool.insert("cache_control".into(), marker.clone());
    }
    for message in messages.iter_mut().rev() {
        if matches!(role(message), Some("user" | "assistant" | "tool")) && mark_text(message, marker) {
            break;
        }
    }
}

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

/// Puts `marker` on the message's last text: a string content becomes one text part carrying it.
/// `false` when the message has no text to mark.
fn mark_text(message: &mut Value, marker: &Value) -> bool {
    let Some(content) = message.get_mut("content") else {
        return false;
    };
    match content {
        Value::String(text) if !text.is_empty() => {
            let text = std::mem::take(text);
            *content = json!([{"type": "text", "text": text, "cache_control": marker}]);
            true
        }
        Value::Array(parts) => {
            match parts.iter_mut().rev().find(|p| p.get("type").and_then(Value::as_str) == Some("text")) {
                Some(Value::Object(part)) => {
                    part.insert("cache_control".into(), marker.clone());
                    true
                }
                _ => false,
            }
        }
        _ => false,
    }
}
