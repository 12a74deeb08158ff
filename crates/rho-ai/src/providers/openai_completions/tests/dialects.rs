//! Which dialect a server gets: the flags detected from its provider and base URL, what a
//! model's `compat` overrides, tools' `strict`, z.ai's `tool_stream` and the session-affinity
//! headers.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::{body, gpt, hi, options, served};
use crate::model::ThinkingLevel;
use crate::providers::openai_completions::compat::{Compat, MaxTokensField, ThinkingFormat};
use crate::providers::openai_completions::format::build_body;
use crate::providers::test_fixtures::read_tool;
use crate::types::Context;

/// pi 1.6's table of known servers (and rho's Mistral): whether they take `store`, which
/// output-cap field, whether they take `reasoning_effort`, how thinking is switched, and
/// whether a long cache retention is theirs.
#[test]
fn known_servers_are_recognised_by_provider_or_url() {
    use MaxTokensField::{MaxCompletionTokens as Completion, MaxTokens as Max};
    use ThinkingFormat as F;
    let cases = [
        ("zai", "https://api.z.ai/api/coding/paas/v4", false, Max, false, F::Zai, true),
        ("zai-coding-cn", "https://example.com/v4", false, Max, false, F::Zai, true),
        ("custom", "https://open.bigmodel.cn/api/paas/v4", false, Max, false, F::Zai, true),
        ("together", "https://example.com/v1", false, Max, false, F::Together, false),
        ("custom", "https://api.together.xyz/v1", false, Max, false, F::Together, false),
        ("custom", "https://api.together.ai/v1", false, Max, false, F::Together, false),
        ("nvidia", "https://integrate.api.nvidia.com/v1", false, Max, false, F::OpenAi, false),
        ("custom", "https://api.ant-ling.com/v1", false, Max, false, F::AntLing, false),
        ("deepseek", "https://api.deepseek.com", false, Max, true, F::DeepSeek, true),
        ("moonshotai", "https://api.moonshot.ai/v1", false, Max, false, F::OpenAi, true),
        (
            "cloudflare-ai-gateway",
            "https://gateway.ai.cloudflare.com/v1/a/b/compat",
            false,
            Max,
            false,
            F::OpenAi,
            false,
        ),
        ("cloudflare-workers-ai", "https://api.cloudflare.com/client/v4", false, Completion, true, F::OpenAi, false),
        ("xai", "https://api.x.ai/v1", false, Completion, false, F::OpenAi, true),
        ("custom", "https://llm.chutes.ai/v1", false, Max, true, F::OpenAi, true),
        ("cerebras", "https://api.cerebras.ai/v1", false, Completion, true, F::OpenAi, true),
        ("opencode", "https://opencode.ai/zen/v1", false, Completion, true, F::OpenAi, true),
        ("mistral", "https://api.mistral.ai/v1", false, Max, true, F::OpenAi, true),
        ("openrouter", "https://openrouter.ai/api/v1", true, Completion, true, F::OpenRouter, true),
        ("groq", "https://api.groq.com/openai/v1", true, Completion, true, F::OpenAi, true),
        ("custom", "http://127.0.0.1:8080/v1", true, Completion, true, F::OpenAi, true),
    ];
    for (provider, url, store, max_tokens, effort, format, long) in cases {
        let c = Compat::for_model(&served(provider, "m", url, json!(null)));
        let got = (c.supports_store, c.max_tokens_field, c.supports_reasoning_effort, c.thinking_format);
        assert_eq!(got, (store, max_tokens, effort, format), "{provider} {url}");
        assert_eq!(c.supports_long_cache_retention, long, "{provider} {url}");
        assert_eq!(c.requires_reasoning_content, provider == "deepseek", "{provider}");
        assert!(!c.supports_strict_mode, "{provider}");
        assert_eq!(
            (c.requires_mistral_tool_ids, c.requires_thinking_as_text),
            (provider == "mistral", provider == "mistral")
        );
    }
}

/// Tools carry no `strict` unless a model's compat says the server takes it; rho's tools then
/// send `strict: false`, as none asks for strict sampling.
#[test]
fn tools_carry_strict_only_where_the_compat_turns_it_on() {
    let context = Context { tools: vec![read_tool()], ..hi() };
    let tool = |compat| {
        let m = served("custom", "m", "https://example.com/v1", compat);
        build_body(&m, &context, &options(ThinkingLevel::Off))["tools"][0]["function"].clone()
    };
    assert_eq!(tool(json!(null)).get("strict"), None);
    assert_eq!(tool(json!({"supportsStrictMode": true}))["strict"], json!(false));
    let openai = build_body(&gpt("gpt-4o", "https://api.openai.com/v1"), &context, &options(ThinkingLevel::Off));
    assert_eq!(openai["tools"][0]["function"].get("strict"), None);
}

/// z.ai streams tool-call arguments only when asked to, with the tools.
#[test]
fn zai_tool_stream_goes_with_the_tools() {
    let m = served("zai", "glm-4.7", "https://api.z.ai/api/coding/paas/v4", json!({"zaiToolStream": true}));
    let with_tools = Context { tools: vec![read_tool()], ..hi() };
    assert_eq!(build_body(&m, &with_tools, &options(ThinkingLevel::Off))["tool_stream"], json!(true));
    assert_eq!(body(&m, ThinkingLevel::Off).get("tool_stream"), None);
    let plain = served("zai", "glm-4.7", "https://api.z.ai/api/coding/paas/v4", json!(null));
    assert_eq!(build_body(&plain, &with_tools, &options(ThinkingLevel::Off)).get("tool_stream"), None);
}

/// `compat` overrides what detection decided.
#[test]
fn compat_overrides_detection() {
    let m = served(
        "openai",
        "gpt-5-mini",
        "https://api.openai.com/v1",
        json!({
            "supportsUsageInStreaming": false,
            "supportsStore": false,
            "maxTokensField": "max_tokens",
            "supportsDeveloperRole": false,
            "openRouterRouting": {"order": ["x"]}
        }),
    );
    let body = body(&m, ThinkingLevel::Off);
    assert_eq!(body.get("stream_options"), None);
    assert_eq!(body.get("store"), None);
    assert_eq!(body["max_tokens"], json!(32000));
    assert_eq!(body["messages"][0]["role"], json!("system"));
    assert_eq!(body["provider"], json!({"order": ["x"]}));
}

/// OpenRouter keeps a session on one upstream by `x-session-id`; servers whose compat asks for
/// session affinity get OpenAI's headers, without `session_id` in the `openai-nosession` format.
#[test]
fn session_affinity_headers_follow_the_format() {
    let headers = |provider: &str, url: &str, compat| {
        let compat = Compat::for_model(&served(provider, "m", url, compat));
        compat.affinity_headers("sess-1").into_iter().map(|(name, _)| name).collect::<Vec<_>>()
    };
    let openrouter = "https://openrouter.ai/api/v1";
    assert_eq!(headers("openrouter", openrouter, json!(null)), ["x-session-id"]);
    assert_eq!(headers("openrouter", openrouter, json!({"sendSessionAffinityHeaders": false})), [] as [&str; 0]);
    let local = "http://127.0.0.1:8080/v1";
    assert_eq!(headers("custom", local, json!(null)), [] as [&str; 0]);
    assert_eq!(
        headers("baseten", "https://inference.baseten.co/v1", json!({"sendSessionAffinityHeaders": true})),
        ["session_id", "x-client-request-id", "x-session-affinity"]
    );
    let no_session = json!({"sendSessionAffinityHeaders": true, "sessionAffinityFormat": "openai-nosession"});
    assert_eq!(headers("custom", local, no_session), ["x-client-request-id", "x-session-affinity"]);
    let routed = json!({"sendSessionAffinityHeaders": true, "sessionAffinityFormat": "openrouter"});
    assert_eq!(headers("custom", local, routed), ["x-session-id"]);
    let compat = Compat::for_model(&served("openrouter", "m", openrouter, json!(null)));
    assert_eq!(compat.affinity_headers("sess-1"), [("x-session-id", "sess-1")]);
    assert_eq!(compat.affinity_headers(""), []);
}
