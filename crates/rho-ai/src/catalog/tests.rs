use std::collections::HashSet;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::model::api;

const APIS: [&str; 9] = [
    api::ANTHROPIC_MESSAGES,
    api::OPENAI_COMPLETIONS,
    api::OPENAI_RESPONSES,
    api::AZURE_OPENAI_RESPONSES,
    api::OPENAI_CODEX_RESPONSES,
    api::GOOGLE_GENERATIVE_AI,
    api::GOOGLE_VERTEX,
    api::BEDROCK_CONVERSE_STREAM,
    api::PI_MESSAGES,
];

/// pi-ai 1.6.0 rows whose output cap is above their context window, kept as pi has them (none).
const CAP_ABOVE_WINDOW: [&str; 0] = [];

#[test]
fn every_model_is_usable() {
    let mut seen = HashSet::new();
    for model in models() {
        let label = model.selector();
        assert!(APIS.contains(&model.api.as_str()), "{label}: unknown api");
        assert!(model.context_window > 0, "{label}: context window");
        assert!(model.max_tokens > 0, "{label}: max tokens");
        assert_eq!(
            model.max_tokens > model.context_window,
            CAP_ABOVE_WINDOW.contains(&label.as_str()),
            "{label}: max tokens above the context window"
        );
        assert!(!model.name.is_empty(), "{label}: name");
        // Azure's URL is the user's resource (AZURE_OPENAI_BASE_URL / _RESOURCE_NAME), not pi's data.
        let azure = model.provider == "azure";
        assert!(model.base_url.starts_with("https://") || (azure && model.base_url.is_empty()), "{label}: base url");
        // Only Cloudflare's URLs name the account and gateway, filled per request (cloudflare.rs).
        let placeholders = model.base_url.contains(['{', '}']);
        let filled = model.provider.starts_with("cloudflare-") || model.provider == "google-vertex";
        assert_eq!(placeholders, filled, "{label}: base url placeholder");
        let costs = [model.cost.input, model.cost.output, model.cost.cache_read, model.cost.cache_write];
        assert!(costs.iter().all(|c| c.is_finite() && *c >= 0.0), "{label}: {costs:?}");
        for name in model.headers.keys() {
            let name = name.to_ascii_lowercase();
            assert!(!["authorization", "x-api-key", "api-key"].contains(&name.as_str()), "{label}: {name}");
        }
        let login = crate::oauth::providers::find(&model.provider).is_some_and(|p| p.unusable.is_none());
        assert!(crate::auth::env_var_for(&model.provider).is_some() || login, "{label}: no key variable or login");
        assert!(seen.insert(label.clone()), "{label}: duplicate");
    }
    assert_eq!(seen.len(), model_count());
}

#[test]
fn every_provider_has_its_default_and_distinct_name() {
    let mut names = HashSet::new();
    for provider in PROVIDERS {
        assert!(names.insert(provider.name), "{}: duplicate", provider.name);
        assert!(
            find(provider.name, provider.default_model).is_some(),
            "{}: default model {} missing",
            provider.name,
            provider.default_model
        );
        let first = &provider.models[0];
        assert_eq!((provider.api, provider.base_url), (first.api, first.base_url), "{}", provider.name);
    }
    let registry_order: Vec<_> = data::REGISTRY_ORDER.iter().map(|p| p.name).collect();
    assert!(registry_order.is_sorted(), "{registry_order:?}");
    let mut search_order: Vec<_> = PROVIDERS.iter().map(|p| p.name).collect();
    search_order.sort_unstable();
    assert_eq!(search_order, registry_order, "both orders hold every provider once");
}

#[test]
fn providers_follow_pis_search_order_and_endpoints() {
    let table: Vec<_> = PROVIDERS.iter().map(|p| (p.name, p.api, p.base_url, p.default_model)).collect();
    assert_eq!(
        table,
        [
            (
                "amazon-bedrock",
                "bedrock-converse-stream",
                "https://bedrock-runtime.us-east-1.amazonaws.com",
                "us.anthropic.claude-opus-5-5"
            ),
            ("ant-ling", "openai-completions", "https://api.ant-ling.com/v1", "Ring-2.6-1T"),
            ("anthropic", "anthropic-messages", "https://api.anthropic.com", "claude-opus-5-5"),
            ("openai", "openai-responses", "https://api.openai.com/v1", "gpt-6.2-sol"),
            ("azure", "azure-openai-responses", "", "gpt-6.2-sol"),
            ("openai-codex", "openai-codex-responses", "https://chatgpt.com/backend-api", "gpt-6.2-sol"),
            ("radius", "pi-messages", "https://radius.pi.dev/v1", "balanced"),
            (
                "nvidia",
                "openai-completions",
                "https://integrate.api.nvidia.com/v1",
                "nvidia/nemotron-3.5-super-vl-120b-a12b"
            ),
            ("deepseek", "openai-completions", "https://api.deepseek.com", "deepseek-v4-pro"),
            ("google", "google-generative-ai", "https://generativelanguage.googleapis.com/v1beta", "gemini-4-argon"),
            ("google-vertex", "google-vertex", "https://{location}-aiplatform.googleapis.com", "gemini-4-argon"),
            ("github-copilot", "anthropic-messages", "https://api.individual.githubcopilot.com", "gpt-6.1-sol"),
            ("openrouter", "anthropic-messages", "https://openrouter.ai/api", "moonshotai/kimi-k2.7-code"),
            ("vercel-ai-gateway", "anthropic-messages", "https://ai-gateway.vercel.sh", "zai/glm-5.3"),
            ("xai", "openai-responses", "https://api.x.ai/v1", "grok-4.7"),
            ("groq", "openai-completions", "https://api.groq.com/openai/v1", "openai/gpt-oss-120b"),
            ("cerebras", "openai-completions", "https://api.cerebras.ai/v1", "gpt-oss-120b"),
            ("zai", "openai-completions", "https://api.z.ai/api/coding/paas/v4", "glm-5.3"),
            ("zai-coding-cn", "openai-completions", "https://open.bigmodel.cn/api/coding/paas/v4", "glm-5.3"),
            ("mistral", "openai-completions", "https://api.mistral.ai/v1", "devstral-medium-latest"),
            ("minimax", "anthropic-messages", "https://api.minimax.io/anthropic", "MiniMax-M3"),
            ("minimax-cn", "anthropic-messages", "https://api.minimaxi.com/anthropic", "MiniMax-M3"),
            ("moonshotai", "openai-completions", "https://api.moonshot.ai/v1", "kimi-k2.7-code"),
            ("moonshotai-cn", "openai-completions", "https://api.moonshot.cn/v1", "kimi-k2.7-code"),
            ("huggingface", "openai-completions", "https://router.huggingface.co/v1", "moonshotai/Kimi-K2.7-Code"),
            (
                "fireworks",
                "anthropic-messages",
                "https://api.fireworks.ai/inference",
                "accounts/fireworks/models/kimi-k3"
            ),
            ("together", "openai-completions", "https://api.together.ai/v1", "moonshotai/Kimi-K3"),
            ("baseten", "openai-completions", "https://inference.baseten.co/v1", "zai-org/GLM-5.3"),
            ("opencode", "anthropic-messages", "https://opencode.ai/inference/anthropic", "kimi-k2.7-code"),
            ("opencode-go", "anthropic-messages", "https://opencode.ai/inference/go/anthropic", "kimi-k3.1-pro"),
            ("kimi-coding", "openai-completions", "https://api.kimi.com/coding/v1", "kimi-for-coding"),
            ("meta", "openai-responses", "https://api.meta.ai/v1", "muse-spark-1.3"),
            (
                "cloudflare-workers-ai",
                "openai-completions",
                "https://api.cloudflare.com/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1",
                "@cf/moonshotai/kimi-k2.7-code"
            ),
            (
                "cloudflare-ai-gateway",
                "anthropic-messages",
                "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/anthropic",
                "workers-ai/@cf/moonshotai/kimi-k2.7-code"
            ),
            (
                "qwen-token-plan",
                "openai-completions",
                "https://token-plan.maas.qwencloudapi.com/compatible-mode/v1",
                "qwen3.8-max"
            ),
            (
                "qwen-token-plan-cn",
                "openai-completions",
                "https://token-plan.maas.qianwenaiapi.com/compatible-mode/v1",
                "qwen3.8-max"
            ),
            (
                "qwen-token-plan-individual",
                "openai-completions",
                "https://token-plan.maas.qwencloudapi.com/compatible-mode/v1",
                "qwen3.8-max"
            ),
            (
                "qwen-token-plan-individual-cn",
                "openai-completions",
                "https://token-plan.maas.qianwenaiapi.com/compatible-mode/v1",
                "qwen3.8-max"
            ),
            ("xiaomi", "openai-completions", "https://api.xiaomimimo.com/v1", "mimo-v2.6-pro"),
            ("xiaomi-token-plan-cn", "openai-completions", "https://token-plan-cn.xiaomimimo.com/v1", "mimo-v2.6-pro"),
            (
                "xiaomi-token-plan-ams",
                "openai-completions",
                "https://token-plan-ams.xiaomimimo.com/v1",
                "mimo-v2.6-pro"
            ),
            (
                "xiaomi-token-plan-sgp",
                "openai-completions",
                "https://token-plan-sgp.xiaomimimo.com/v1",
                "mimo-v2.6-pro"
            ),
        ]
    );
}

#[test]
fn every_model_pi_lists_for_the_main_providers_is_there() {
    let count = |name: &str| provider(name).map_or(0, |p| p.models.len());
    assert_eq!(
        [count("anthropic"), count("openai"), count("google"), count("openrouter")],
        [18, 47, 26, 417],
        "pi-ai 1.6.0's counts"
    );
    for (provider, id) in [
        ("anthropic", "claude-opus-5-5"),
        ("anthropic", "claude-opus-4-7"),
        ("anthropic", "claude-sonnet-4-5-20250929"),
        ("openai", "gpt-6.2-sol"),
        ("openai", "gpt-5.5-pro"),
        ("google", "gemini-4-argon"),
        ("openrouter", "anthropic/claude-opus-4.7"),
        ("mistral", "devstral-medium-latest"),
        ("azure", "gpt-6.2-sol"),
    ] {
        assert!(find(provider, id).is_some(), "{provider}/{id}");
    }
    assert_eq!(model_count(), 1698, "all of pi-ai 1.6.0's chat models");
}

#[test]
fn one_million_token_models_have_their_full_window() {
    for (provider, id, window) in [
        ("anthropic", "claude-opus-4-7", 1_000_000),
        ("anthropic", "claude-opus-4-6", 1_000_000),
        ("anthropic", "claude-sonnet-4-6", 1_000_000),
        ("anthropic", "claude-sonnet-4-5", 200_000),
        ("openai", "gpt-5.5-pro", 1_050_000),
        ("google", "gemini-2.5-pro", 1_048_576),
        ("deepseek", "deepseek-v4-pro", 1_000_000),
    ] {
        assert_eq!(find(provider, id).unwrap().context_window, window, "{provider}/{id}");
    }
}

#[test]
fn compat_flags_and_headers_come_from_pi() {
    let deepseek = find("deepseek", "deepseek-v4-pro").unwrap();
    assert_eq!(
        deepseek.compat,
        Some(json!({
            "supportsStore": false,
            "maxTokensField": "max_tokens",
            "requiresReasoningContentOnAssistantMessages": true,
            "thinkingFormat": "deepseek",
            "supportsStrictMode": true,
            "supportsMidConvoSystemMessages": true
        }))
    );
    let glm = find("zai", "glm-5.3").unwrap();
    assert_eq!(glm.compat_str("thinkingFormat"), Some("zai"));
    assert_eq!(glm.compat_bool("zaiToolStream"), Some(true));
    let devstral = find("mistral", "devstral-medium-latest").unwrap();
    assert_eq!(
        devstral.compat,
        Some(json!({"supportsReasoningEffort": false})),
        "rewritten from mistral-conversations"
    );
    assert_eq!(
        find("anthropic", "claude-opus-4-7").unwrap().compat,
        Some(json!({"forceAdaptiveThinking": true, "supportsTemperature": false, "supportsStrictTools": true}))
    );
    let copilot = find("github-copilot", "claude-haiku-4.5").unwrap();
    assert_eq!(copilot.headers.get("Copilot-Integration-Id").map(String::as_str), Some("vscode-chat"));
    assert!(find("anthropic", "claude-opus-4-7").unwrap().headers.is_empty());
    let auto = find("openrouter", "openrouter/auto").unwrap();
    assert_eq!((auto.cost.input, auto.cost.output), (0.0, 0.0), "pi's -1000000 placeholder is not a price");
}

#[test]
fn thinking_levels_follow_pis_map() {
    use ThinkingLevel::*;
    let levels = |provider: &str, id: &str| entry(provider, id).unwrap().supported_thinking_levels();
    assert_eq!(levels("anthropic", "claude-opus-4-7"), [Off, Minimal, Low, Medium, High, Xhigh, Max]);
    assert_eq!(entry("anthropic", "claude-opus-4-6").unwrap().thinking_level_map, [(Max, Some("max"))]);
    assert_eq!(levels("anthropic", "claude-opus-5-5"), [Low, Medium, High, Xhigh, Max]);
    assert_eq!(levels("anthropic", "claude-sonnet-4-5"), [Off, Minimal, Low, Medium, High]);
    assert_eq!(levels("openai", "gpt-5"), [Minimal, Low, Medium, High], "gpt-5 cannot be switched off");
    assert_eq!(levels("openai", "gpt-5.5"), [Off, Low, Medium, High, Xhigh]);
    assert_eq!(levels("google", "gemini-3.1-pro-preview"), [Low, Medium, High]);
    assert_eq!(levels("deepseek", "deepseek-v4-pro"), [Off, High, Max]);
    assert_eq!(levels("openai", "gpt-4o"), [Off], "no reasoning");
}

#[test]
fn every_model_offers_the_levels_its_row_does() {
    for provider in PROVIDERS {
        for row in provider.models {
            let model = row.to_model(provider);
            if model.thinking_level_map.is_some() {
                assert_eq!(model.thinking_levels(), row.supported_thinking_levels(), "{}", model.selector());
            }
        }
    }
}

#[test]
fn a_model_is_built_with_its_provider_fields() {
    let model = find("anthropic", "claude-sonnet-4-5").unwrap();
    let json = rho_types::json::to_string(&model).unwrap();
    assert_eq!(
        json,
        r#"{"id":"claude-sonnet-4-5","name":"Claude Sonnet 4.5 (latest)","api":"anthropic-messages","provider":"anthropic","baseUrl":"https://api.anthropic.com","reasoning":true,"input":["text","image"],"cost":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75},"contextWindow":200000,"maxTokens":64000,"compat":{"supportsStrictTools":true},"promptCache":{"short":300,"long":3600},"inputLimits":{"maxRequestBytes":33554432,"images":{"resize":{"maxWidth":2000,"maxHeight":2000,"maxBytes":4718592,"jpegQuality":80},"maxPerRequest":100}}}"#
    );
    let opencode_gemini = find("opencode", "gemini-3.5-flash").unwrap();
    assert_eq!(
        (opencode_gemini.api.as_str(), opencode_gemini.base_url.as_str()),
        ("google-generative-ai", "https://opencode.ai/inference/google/v1beta"),
        "a model's own API and endpoint, not its provider's first"
    );
    assert!(find("anthropic", "no-such-model").is_none());
    assert!(find("no-such-provider", "claude-sonnet-4-5").is_none());
}

#[test]
fn models_come_in_pis_registry_order() {
    let selectors: Vec<String> = models().map(|m| m.selector()).collect();
    let first_of = |provider: &str| selectors.iter().position(|s| s.starts_with(&format!("{provider}/")));
    assert_eq!(selectors[0], "amazon-bedrock/amazon.nova-2-lite-v1:0");
    assert!(first_of("amazon-bedrock") < first_of("anthropic"));
    assert!(first_of("anthropic") < first_of("cerebras"));
    assert!(first_of("openai") < first_of("opencode"));
    assert!(first_of("vercel-ai-gateway") < first_of("xai"));
    assert_eq!(selectors.last().map(String::as_str), Some("zai-coding-cn/glm-5.3-highspeed"));
}

#[test]
fn the_data_file_says_where_it_comes_from() {
    let data = include_str!("data.rs");
    let header: Vec<&str> = data.lines().take_while(|l| l.starts_with("//")).collect();
    let has = |needle: &str| header.iter().any(|l| l.contains(needle));
    assert!(has("@generated by scripts/catalog/generate.mjs"), "{header:#?}");
    assert!(has("Source: @earendil-works/pi-ai 1.6.0"), "{header:#?}");
    assert!(has("@earendil-works/pi-coding-agent 1.6.0"), "{header:#?}");
    assert!(has("Regenerate: node scripts/catalog/generate.mjs"), "{header:#?}");
    let date = header.iter().find_map(|l| l.strip_prefix("// Generated: ")).unwrap_or_default();
    let digits: Vec<bool> = date.chars().map(|c| c.is_ascii_digit()).collect();
    assert_eq!(digits, [true, true, true, true, false, true, true, false, true, true], "{date}");
    assert!(has("Skipped providers"), "{header:#?}");
}

#[test]
fn prices_above_an_input_size_come_from_pi() {
    let gemini = find("google", "gemini-3.1-pro-preview").unwrap();
    assert_eq!(
        gemini.cost.tiers,
        [crate::types::CostTier {
            input_tokens_above: 200_000,
            input: 4.0,
            output: 18.0,
            cache_read: 0.4,
            cache_write: 0.0
        }]
    );
    assert_eq!(gemini.cost.rates_for(200_000), [2.0, 12.0, 0.2, 0.0], "at the threshold: the base rates");
    assert_eq!(gemini.cost.rates_for(200_001), [4.0, 18.0, 0.4, 0.0]);
    let json = rho_types::json::to_string(&gemini.cost).unwrap();
    assert!(json.contains(r#""tiers":[{"inputTokensAbove":200000"#), "{json}");
    assert!(find("anthropic", "claude-sonnet-4-5").unwrap().cost.tiers.is_empty());
}

#[test]
fn structured_compat_values_limits_and_cache_lifetimes_come_from_pi() {
    for provider in PROVIDERS {
        for row in provider.models {
            for (key, value) in row.compat {
                if let CompatValue::Json(text) = value {
                    let parsed: serde_json::Value = serde_json::from_str(text).unwrap();
                    assert!(parsed.is_object() || parsed.is_array(), "{}/{} compat.{key}", provider.name, row.id);
                }
            }
        }
    }
    let glm = find("baseten", "zai-org/GLM-5.2").unwrap();
    assert_eq!(
        glm.compat.as_ref().unwrap()["chatTemplateArgs"],
        serde_json::json!({"enable_thinking": {"$var": "thinking.enabled"}})
    );
    let fable = find("anthropic", "claude-fable-5").unwrap();
    let fallbacks = fable.compat.as_ref().unwrap()["allowedFallbackModels"].as_array().unwrap().clone();
    assert!(!fallbacks.is_empty());
    assert_eq!(fallbacks[0]["provider"], "anthropic");
    assert!(fallbacks[0]["cost"]["input"].is_number());
    let cache = fable.prompt_cache.unwrap();
    assert_eq!((cache.short, cache.long), (Some(300.0), Some(3600.0)));
    let nova = find("amazon-bedrock", "amazon.nova-pro-v1:0").unwrap();
    let limits = nova.input_limits.unwrap();
    assert_eq!(limits.images.unwrap().max_per_message, Some(20));
    assert_eq!(nova.image_resize().unwrap().max_bytes, Some(4_718_592));
    assert_eq!(find("amazon-bedrock", "amazon.nova-micro-v1:0").unwrap().input_limits, None);
}
