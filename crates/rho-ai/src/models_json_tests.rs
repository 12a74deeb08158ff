use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::auth::env_from;

fn path() -> PathBuf {
    PathBuf::from("/home/u/.rho/agent/models.json")
}

fn parse_ok(text: &str) -> ModelsConfig {
    parse(&path(), text).unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> String {
    parse(&path(), text).unwrap_err().to_string()
}

/// The built-ins with `text` applied.
fn applied(text: &str) -> (Vec<Model>, ApiKeys, Applied) {
    let mut models: Vec<Model> = catalog::models().collect();
    let mut keys = ApiKeys::new(env_from([("OLLAMA_TOKEN", "tok")]));
    let applied = parse_ok(text).apply(&mut models, &mut keys);
    (models, keys, applied)
}

fn find<'a>(models: &'a [Model], provider: &str, id: &str) -> &'a Model {
    models.iter().find(|m| m.provider == provider && m.id == id).unwrap_or_else(|| panic!("{provider}/{id} missing"))
}

const OLLAMA: &str = r#"{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "compat": {"supportsDeveloperRole": false},
      "models": [
        {"id": "llama3.1:8b"},
        {"id": "qwen2.5-coder:32b", "name": "Qwen 2.5 Coder 32B", "reasoning": true,
         "input": ["text", "image"], "contextWindow": 32768, "maxTokens": 8192,
         "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0},
         "compat": {"maxTokensField": "max_tokens"}}
      ]
    }
  }
}"#;

#[test]
fn a_local_openai_compatible_provider_gets_defaults() {
    let (models, keys, applied) = applied(OLLAMA);
    let builtin = catalog::model_count();
    assert_eq!(models.len(), builtin + 2);
    let llama = &models[builtin];
    assert_eq!(
        serde_json::to_value(llama).unwrap(),
        json!({
            "id": "llama3.1:8b", "name": "llama3.1:8b", "api": "openai-completions",
            "provider": "ollama", "baseUrl": "http://localhost:11434/v1", "reasoning": false,
            "input": ["text"], "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
            "contextWindow": 128000, "maxTokens": 16384,
            "compat": {"supportsDeveloperRole": false}
        })
    );
    let qwen = &models[builtin + 1];
    assert_eq!(qwen.name, "Qwen 2.5 Coder 32B");
    assert!(qwen.reasoning && qwen.supports_images());
    assert_eq!((qwen.context_window, qwen.max_tokens), (32768, 8192));
    assert_eq!(qwen.cost.output, 0.2);
    assert_eq!(qwen.compat, Some(json!({"supportsDeveloperRole": false, "maxTokensField": "max_tokens"})));
    assert_eq!(keys.resolve("ollama").as_deref(), Some("ollama"));
    assert!(applied.keyless.is_empty());
}

#[test]
fn a_built_in_provider_is_overridden() {
    let (models, keys, applied) = applied(
        r#"{"providers": {"anthropic": {
            "baseUrl": "https://proxy.example.com",
            "apiKey": "!echo proxied",
            "headers": {"X-Team": "rho"},
            "compat": {"supportsStore": false},
            "modelOverrides": {
              "claude-sonnet-4-5": {"name": "Sonnet (proxy)", "contextWindow": 1000000,
                                     "cost": {"input": 2.5}, "headers": {"X-Model": "s"},
                                     "compat": {"flag": true}}
            }}}}"#,
    );
    assert_eq!(models.len(), catalog::model_count());
    for m in models.iter().filter(|m| m.provider == "anthropic") {
        assert_eq!(m.base_url, "https://proxy.example.com", "{}", m.id);
        assert_eq!(m.compat_bool("supportsStore"), Some(false), "{}", m.id);
    }
    let sonnet = find(&models, "anthropic", "claude-sonnet-4-5");
    assert_eq!(sonnet.name, "Sonnet (proxy)");
    assert_eq!(sonnet.context_window, 1_000_000);
    assert_eq!(sonnet.max_tokens, 64_000, "untouched fields stay");
    assert_eq!(
        (sonnet.cost.input, sonnet.cost.output, sonnet.cost.cache_read),
        (2.5, 15.0, 0.3),
        "a partial cost keeps the other prices"
    );
    assert_eq!(sonnet.compat, Some(json!({"supportsStrictTools": true, "supportsStore": false, "flag": true})));
    assert!(sonnet.headers.is_empty(), "headers stay templates until a request");
    let openai = find(&models, "openai", "gpt-5.4");
    assert_eq!(openai.base_url, "https://api.openai.com/v1", "other providers untouched");
    assert_eq!(keys.resolve("anthropic").as_deref(), Some("proxied"));
    let (headers, auth) = applied.headers.for_model("anthropic", "claude-sonnet-4-5");
    assert_eq!(headers, [("X-Team", "rho"), ("X-Model", "s")]);
    assert!(!auth);
    let (headers, _) = applied.headers.for_model("anthropic", "claude-opus-4-6");
    assert_eq!(headers, [("X-Team", "rho")]);
}

#[test]
fn custom_models_are_upserted_by_provider_and_id() {
    let (models, _, _) = applied(
        r#"{"providers": {"anthropic": {"models": [
            {"id": "claude-sonnet-4-5", "name": "Replaced", "reasoning": true},
            {"id": "claude-next", "contextWindow": 500000}
        ]}}}"#,
    );
    assert_eq!(models.len(), catalog::model_count() + 1);
    let position = |id: &str| models.iter().position(|m| m.provider == "anthropic" && m.id == id);
    let builtin_position = catalog::models().position(|m| m.id == "claude-sonnet-4-5");
    assert_eq!(position("claude-sonnet-4-5"), builtin_position, "replaced in place");
    let replaced = find(&models, "anthropic", "claude-sonnet-4-5");
    assert_eq!(replaced.name, "Replaced");
    assert_eq!(replaced.context_window, DEFAULT_CONTEXT_WINDOW, "custom wins whole");
    let next = find(&models, "anthropic", "claude-next");
    assert_eq!(next.api, "anthropic-messages", "the built-in provider's api");
    assert_eq!(next.base_url, "https://api.anthropic.com");
    let last_anthropic = models.iter().rposition(|m| m.provider == "anthropic");
    assert_eq!(position("claude-next"), last_anthropic, "kept with its provider");
    assert_eq!(models[last_anthropic.unwrap() + 1].provider, "azure", "the next provider in pi's order");
}

#[test]
fn auth_header_and_keyless_providers() {
    let (_, keys, applied) = applied(
        r#"{"providers": {
            "gateway": {"baseUrl": "https://gw.example.com/v1", "api": "openai-completions",
                        "apiKey": "OLLAMA_TOKEN", "authHeader": true,
                        "models": [{"id": "m1", "headers": {"X-Route": "fast"}}]},
            "lan": {"baseUrl": "http://10.0.0.5:8080/v1", "api": "openai-completions",
                    "apiKey": "", "models": [{"id": "m2"}]},
            "llamacpp": {"baseUrl": "http://127.0.0.1:8080/v1", "api": "openai-completions",
                         "models": [{"id": "m3"}]}
        }}"#,
    );
    assert_eq!(keys.resolve("gateway").as_deref(), Some("tok"));
    let (headers, auth) = applied.headers.for_model("gateway", "m1");
    assert_eq!(headers, [("X-Route", "fast")]);
    assert!(auth);
    let mut keyless: Vec<_> = applied.keyless.iter().cloned().collect();
    keyless.sort();
    assert_eq!(keyless, ["lan", "llamacpp"]);
    assert_eq!(keys.resolve("lan"), None);
}

#[test]
fn a_models_own_base_url_serves_for_the_provider() {
    let (models, ..) = applied(
        r#"{"providers": {"x": {"api": "openai-completions", "models": [
            {"id": "a", "baseUrl": "http://localhost:1/v1"}, {"id": "b", "baseUrl": "http://127.0.0.1:2/v1"}]}}}"#,
    );
    let urls: Vec<&str> = models.iter().filter(|m| m.provider == "x").map(|m| m.base_url.as_str()).collect();
    assert_eq!(urls, ["http://localhost:1/v1", "http://127.0.0.1:2/v1"]);
    // One model without a URL of its own needs the provider's.
    assert!(
        parse_err(r#"{"providers": {"x": {"api": "a", "models": [{"id": "a", "baseUrl": "http://localhost:1"}, {"id": "b"}]}}}"#)
            .ends_with("\"baseUrl\" is required when defining custom models")
    );
}

#[test]
fn invalid_files_say_what_is_wrong() {
    let file = path().display().to_string();
    assert_eq!(
        parse_err(r#"{"providers": {"x": {"api": "openai-completions", "apiKey": "k", "models": [{"id": "a"}]}}}"#),
        format!("Invalid {file}: provider \"x\": \"baseUrl\" is required when defining custom models")
    );
    assert_eq!(
        parse_err(
            r#"{"providers": {"x": {"baseUrl": "https://x.example.com", "apiKey": "k", "models": [{"id": "a"}]}}}"#
        ),
        format!(
            "Invalid {file}: provider \"x\": model \"a\": no \"api\" specified. Set it on the provider or the model"
        )
    );
    assert_eq!(
        parse_err(
            r#"{"providers": {"x": {"baseUrl": "https://x.example.com", "api": "openai-completions", "models": [{"id": "a"}]}}}"#
        ),
        format!(
            "Invalid {file}: provider \"x\": \"apiKey\" is required when defining custom models (use \"apiKey\": \"\" for a server that needs none)"
        )
    );
    assert_eq!(
        parse_err(
            r#"{"providers": {"x": {"baseUrl": "http://localhost:1/v1", "api": "a", "models": [{"id": "a", "contextWindow": 0}]}}}"#
        ),
        format!("Invalid {file}: provider \"x\": model \"a\": invalid contextWindow (must be a positive number)")
    );
    assert_eq!(
        parse_err(
            r#"{"providers": {"x": {"baseUrl": "http://localhost:1/v1", "api": "a", "models": [{"id": "a"}, {"id": "a"}]}}}"#
        ),
        format!("Invalid {file}: provider \"x\": model \"a\" is defined twice")
    );
    assert_eq!(
        parse_err(r#"{"providers": {"anthropic": {}}}"#),
        format!(
            "Invalid {file}: provider \"anthropic\": must specify \"baseUrl\", \"compat\", \"modelOverrides\" or \"models\""
        )
    );
    assert_eq!(
        parse_err(r#"{"providers": {"x": {"baseUrl": "http://localhost:1", "models": [{"name": "no id"}]}}}"#),
        format!("Failed to parse {file}: providers.x.models[0]: missing field `id`")
    );
    assert_eq!(
        parse_err(r#"{"providers": {"x": {"authHeader": "sk-secret-value"}}}"#),
        format!("Failed to parse {file}: providers.x.authHeader: invalid type: a string, expected a boolean")
    );
    assert_eq!(
        parse_err(r#"{"providers": {"x": {"models": [{"id": "a", "input": ["audio"]}]}}}"#),
        format!(
            "Failed to parse {file}: providers.x.models[0].input[0]: unknown variant `audio`, expected `text` or `image`"
        )
    );
    let syntax = parse_err("{\"providers\": {\n  \"x\": {,}}}");
    assert!(syntax.starts_with(&format!("Failed to parse {file}: ")), "{syntax}");
    assert!(syntax.contains("line 2"), "{syntax}");
    let missing = parse_err("{}");
    assert_eq!(missing, format!("Failed to parse {file}: missing field `providers` at line 1 column 2"));
}

#[test]
fn pi_style_files_with_unknown_fields_and_float_counts_load() {
    let config = parse_ok(
        r#"{"providers": {"lmstudio": {
            "baseUrl": "http://localhost:1234/v1", "api": "openai-completions", "apiKey": "lm",
            "someFutureField": 1,
            "models": [{"id": "m", "contextWindow": 65536.0, "maxTokens": 4096, "extra": true}]
        }}}"#,
    );
    let mut models = Vec::new();
    config.apply(&mut models, &mut ApiKeys::new(env_from::<[(&str, &str); 0], _, _>([])));
    assert_eq!((models[0].context_window, models[0].max_tokens), (65536, 4096));
}

#[test]
fn missing_and_empty_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("models.json");
    assert!(load(&path).unwrap().is_none());
    std::fs::write(&path, "  \n").unwrap();
    assert!(load(&path).unwrap().unwrap().providers.is_empty());
    std::fs::write(&path, OLLAMA).unwrap();
    assert_eq!(load(&path).unwrap().unwrap().providers.len(), 1);
}

#[test]
fn compat_merges_one_level_deep() {
    let base = Some(json!({"a": 1, "openRouterRouting": {"only": ["x"], "order": ["y"]}}));
    let over = json!({"b": 2, "openRouterRouting": {"only": ["z"]}});
    assert_eq!(
        merge_compat(base, over.as_object()),
        Some(json!({"a": 1, "openRouterRouting": {"only": ["z"], "order": ["y"]}, "b": 2}))
    );
    assert_eq!(merge_compat(None, None), None);
    assert_eq!(merge_compat(None, Some(&Map::new())), None);
}

#[test]
fn local_urls() {
    for url in [
        "http://localhost:11434/v1",
        "http://127.0.0.1:8080",
        "http://[::1]:8080/v1",
        "http://0.0.0.0:1",
        "HTTP://LOCALHOST",
    ] {
        assert!(is_local_url(url), "{url}");
    }
    for url in ["https://api.example.com", "http://10.0.0.5:8080", "http://localhost.evil.com"] {
        assert!(!is_local_url(url), "{url}");
    }
}

#[test]
fn cost_tiers_and_sampling_params_are_read() {
    let (models, _, _) = applied(
        r#"{"providers": {"local": {"baseUrl": "http://localhost:8080/v1", "api": "openai-completions",
            "models": [{"id": "big", "cost": {"input": 1, "output": 2,
                "tiers": [{"inputTokensAbove": 200000, "input": 2, "output": 4, "cacheRead": 0, "cacheWrite": 0}]},
                "samplingParams": {"temperature": 0.2},
                "samplingParamsByThinkingLevel": {"high": {"top_k": 20}, "nope": {"top_k": 1}, "low": 3}}]},
          "anthropic": {"modelOverrides": {"claude-opus-4-6": {"cost": {"tiers": [
                {"inputTokensAbove": 200000, "input": 10, "output": 37.5, "cacheRead": 1, "cacheWrite": 12.5}]}}}}}}"#,
    );
    let big = find(&models, "local", "big");
    assert_eq!(big.cost.rates_for(300_000), [2.0, 4.0, 0.0, 0.0]);
    let sampling = big.sampling.as_ref().unwrap();
    assert_eq!(
        serde_json::Value::Object(sampling.for_level(ThinkingLevel::High)),
        json!({"temperature": 0.2, "top_k": 20})
    );
    assert_eq!(serde_json::Value::Object(sampling.for_level(ThinkingLevel::Low)), json!({"temperature": 0.2}));
    let opus = find(&models, "anthropic", "claude-opus-4-6");
    assert_eq!(opus.cost.rates_for(1_000)[0], 5.0, "an override of tiers alone keeps the base prices");
    assert_eq!(opus.cost.rates_for(300_000), [10.0, 37.5, 1.0, 12.5]);
}

#[test]
fn input_limits_prompt_cache_and_structured_compat_are_read_and_merged() {
    let (models, _, _) = applied(
        r#"{"providers": {
      "anthropic": {"modelOverrides": {"claude-sonnet-4-5": {
        "inputLimits": {"images": {"resize": {"maxWidth": 800, "jpegQuality": 60}, "maxPerMessage": 5}},
        "promptCache": {"long": 7200},
        "compat": {"allowedFallbackModels": [{"provider": "anthropic", "model": "claude-opus-5",
                    "cost": {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25}}]}}}},
      "local": {"baseUrl": "http://localhost:8000/v1", "api": "openai-completions",
        "models": [{"id": "glm", "reasoning": true,
          "inputLimits": {"maxRequestBytes": 1000000, "images": {"resize": {"maxBytes": 65536}, "maxPerRequest": 4}},
          "promptCache": {"short": 300},
          "compat": {"thinkingFormat": "baseten",
                     "chatTemplateArgs": {"enable_thinking": {"$var": "thinking.enabled"}}}}]}}}"#,
    );
    let sonnet = find(&models, "anthropic", "claude-sonnet-4-5");
    // Field by field over the catalogue's own.
    assert_eq!(
        serde_json::to_value(sonnet.input_limits).unwrap(),
        json!({"maxRequestBytes": 33554432, "images": {"maxPerMessage": 5, "maxPerRequest": 100,
               "resize": {"maxWidth": 800, "maxHeight": 2000, "maxBytes": 4718592, "jpegQuality": 60}}})
    );
    assert_eq!(serde_json::to_value(sonnet.prompt_cache).unwrap(), json!({"short": 300.0, "long": 7200.0}));
    assert_eq!(sonnet.compat.as_ref().unwrap()["allowedFallbackModels"][0]["model"], "claude-opus-5");
    let glm = find(&models, "local", "glm");
    let shown = serde_json::to_value(glm).unwrap();
    assert_eq!(
        shown["inputLimits"],
        json!({"maxRequestBytes": 1000000, "images": {"resize": {"maxBytes": 65536}, "maxPerRequest": 4}})
    );
    assert_eq!(shown["promptCache"], json!({"short": 300.0}));
    assert_eq!(shown["compat"]["chatTemplateArgs"], json!({"enable_thinking": {"$var": "thinking.enabled"}}));
}

#[test]
fn out_of_range_limits_reject_the_file() {
    let with = |model: &str| {
        format!(
            r#"{{"providers": {{"local": {{"baseUrl": "http://localhost:1/v1", "api": "openai-completions",
              "models": [{model}]}}}}}}"#
        )
    };
    let zero = parse_err(&with(r#"{"id": "m", "inputLimits": {"images": {"resize": {"maxWidth": 0}}}}"#));
    assert!(zero.contains("model \"m\": inputLimits.images.resize.maxWidth must be at least 1"), "{zero}");
    let cache = parse_err(&with(r#"{"id": "m", "promptCache": {"short": -1}}"#));
    assert!(cache.contains("promptCache.short"), "{cache}");
    let negative = parse_err(&with(r#"{"id": "m", "inputLimits": {"maxRequestBytes": -5}}"#));
    assert!(negative.contains("inputLimits"), "{negative}");
}
