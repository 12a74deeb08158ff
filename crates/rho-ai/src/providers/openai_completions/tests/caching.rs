//! Prompt caching: `prompt_cache_key` and `prompt_cache_retention` for servers that cache by
//! themselves, `cache_control` markers for those that cache the Anthropic way.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{gpt, hi, served};
use crate::providers::openai_completions::format::build_body;
use crate::providers::test_fixtures::*;
use crate::stream::{CacheRetention, StreamOptions};
use crate::types::{Context, ImageContent, Message, UserContent, UserMessage, UserMessageContent};

fn with(session: Option<&str>, retention: CacheRetention) -> StreamOptions {
    StreamOptions { session_id: session.map(Into::into), cache_retention: Some(retention), ..Default::default() }
}

/// `prompt_cache_key` and `prompt_cache_retention` of `model`'s body.
fn cache_fields(model: &crate::model::Model, options: &StreamOptions) -> (Option<Value>, Option<Value>) {
    let body = build_body(model, &hi(), options);
    (body.get("prompt_cache_key").cloned(), body.get("prompt_cache_retention").cloned())
}

#[test]
fn openais_own_servers_get_the_session_as_prompt_cache_key() {
    let openai = gpt("gpt-4o", "https://api.openai.com/v1");
    let local = gpt("gpt-4o", "http://127.0.0.1:8080/v1");
    let short = with(Some("sess-9"), CacheRetention::Short);
    assert_eq!(cache_fields(&openai, &short), (Some(json!("sess-9")), None));
    assert_eq!(cache_fields(&local, &short), (None, None));
    assert_eq!(cache_fields(&openai, &with(None, CacheRetention::Short)), (None, None));
    assert_eq!(cache_fields(&openai, &with(Some("sess-9"), CacheRetention::None)), (None, None));
    let long_id = "s".repeat(80);
    let (key, _) = cache_fields(&openai, &with(Some(&long_id), CacheRetention::Short));
    assert_eq!(key, Some(json!("s".repeat(64))), "OpenAI's limit");
}

/// A long retention asks for a day where the server supports it, and keys the cache by the
/// session there.
#[test]
fn a_long_retention_is_a_day_where_supported() {
    let long = with(Some("sess-9"), CacheRetention::Long);
    let local = gpt("gpt-4o", "http://127.0.0.1:8080/v1");
    assert_eq!(cache_fields(&local, &long), (Some(json!("sess-9")), Some(json!("24h"))));
    assert_eq!(cache_fields(&local, &with(None, CacheRetention::Long)), (None, Some(json!("24h"))));
    let together = served("together", "m", "https://api.together.ai/v1", json!(null));
    assert_eq!(cache_fields(&together, &long), (None, None));
    let opted_out = served("custom", "m", "https://example.com/v1", json!({"supportsLongCacheRetention": false}));
    assert_eq!(cache_fields(&opted_out, &long), (None, None));
}

/// `compat.promptCacheKeyMode` sends the key to any server, or to none.
#[test]
fn prompt_cache_key_mode() {
    let short = with(Some("sess-9"), CacheRetention::Short);
    let proxy = served("custom", "m", "https://proxy.example/v1", json!({"promptCacheKeyMode": "enabled"}));
    assert_eq!(cache_fields(&proxy, &short), (Some(json!("sess-9")), None));
    assert_eq!(cache_fields(&proxy, &with(Some("sess-9"), CacheRetention::None)), (None, None));
    let mut openai = gpt("gpt-4o", "https://api.openai.com/v1");
    openai.compat = Some(json!({"promptCacheKeyMode": "disabled"}));
    assert_eq!(cache_fields(&openai, &short), (None, None));
}

/// OpenRouter's Claude models cache the Anthropic way: markers on the system prompt, the last
/// tool and the last text of the conversation.
#[test]
fn anthropic_cache_control_markers() {
    let m = served("openrouter", "anthropic/claude-sonnet-4.5", "https://openrouter.ai/api/v1", json!(null));
    let context = conversation(&m, "reasoning_content", ["call_1", "call_2"]);
    let body = build_body(&m, &context, &with(None, CacheRetention::Short));
    let marker = json!({"type": "ephemeral"});
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": [{"type": "text", "text": "You are a test.", "cache_control": marker}]})
    );
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.last().unwrap()["cache_control"], marker);
    assert_eq!(tools.last().unwrap()["function"]["name"], json!("read"));
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "user", "content": [{"type": "text", "text": "Thanks", "cache_control": marker}]})
    );
    let marked = messages.iter().filter(|m| m.to_string().contains("cache_control")).count();
    assert_eq!(marked, 2, "the system prompt and the last message only");

    // An hour for a long retention; nothing when caching is off.
    let long = build_body(&m, &context, &with(None, CacheRetention::Long));
    assert_eq!(long["tools"][0]["cache_control"], json!({"type": "ephemeral", "ttl": "1h"}));
    let none = build_body(&m, &context, &with(None, CacheRetention::None));
    assert!(!none.to_string().contains("cache_control"), "{none}");
    // Other OpenRouter models cache by themselves.
    let gpt = served("openrouter", "openai/gpt-5.2", "https://openrouter.ai/api/v1", json!(null));
    assert!(!build_body(&gpt, &context, &with(None, CacheRetention::Short)).to_string().contains("cache_control"));
}

/// The last message with text takes the marker: a user turn of images only has none, and of
/// content parts the last text part is marked.
#[test]
fn the_marker_goes_on_the_last_text() {
    let m = served("custom", "claude", "https://proxy.example/v1", json!({"cacheControlFormat": "anthropic"}));
    let marker = json!({"type": "ephemeral"});
    let image = UserContent::Image(ImageContent { data: "aW1n".into(), mime_type: "image/png".into() });
    let image_only = Message::User(UserMessage {
        content: UserMessageContent::Blocks(vec![image]),
        synthetic: None,
        attribution: None,
        timestamp: 1,
    });
    let context = Context {
        system_prompt: None,
        messages: vec![user("look"), assistant(&m, vec![text("Send it.")]), image_only],
        tools: vec![],
    };
    let body = build_body(&m, &context, &with(None, CacheRetention::Short));
    assert_eq!(body["messages"][0]["content"], json!("look"));
    assert_eq!(body["messages"][1]["content"], json!([{"type": "text", "text": "Send it.", "cache_control": marker}]));
    assert_eq!(body.get("tools"), None);

    let context = Context { system_prompt: None, messages: vec![user_with_image("look")], tools: vec![] };
    let body = build_body(&m, &context, &with(None, CacheRetention::Short));
    assert_eq!(
        body["messages"][0]["content"],
        json!([
            {"type": "text", "text": "look", "cache_control": marker},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}
        ])
    );
}
