use pretty_assertions::assert_eq;

use super::*;
use crate::auth::{EnvLookup, env_from};

fn registry_with(env: EnvLookup, models_json: Option<&str>) -> ModelRegistry {
    let dir = tempfile::tempdir().unwrap();
    if let Some(text) = models_json {
        std::fs::write(dir.path().join("models.json"), text).unwrap();
    }
    let (registry, errors) = ModelRegistry::load_with_env(dir.path(), env);
    assert!(errors.is_empty(), "{errors:?}");
    registry
}

fn builtin() -> ModelRegistry {
    registry_with(env_from::<[(&str, &str); 0], &str, &str>([]), None)
}

/// `provider/id` and level a pattern resolves to.
fn resolve(registry: &ModelRegistry, pattern: &str, provider: Option<&str>) -> (String, Option<ThinkingLevel>) {
    let resolved = resolve_model(registry, pattern, provider).unwrap_or_else(|e| panic!("{pattern}: {e}"));
    assert_eq!(resolved.warning, None, "{pattern}");
    (resolved.model.selector(), resolved.thinking)
}

fn sel(selector: &str) -> (String, Option<ThinkingLevel>) {
    (selector.to_owned(), None)
}

// The expected answers are pi 1.6.0's, from its own `resolveCliModel` over the same catalogue.

#[test]
fn exact_ids_and_selectors_case_insensitive() {
    let r = builtin();
    assert_eq!(resolve(&r, "anthropic/claude-opus-4-6", None), sel("anthropic/claude-opus-4-6"));
    // Azure, Cloudflare's AI Gateway and OpenAI list gpt-4o: the provider with a key is chosen;
    // with no key to choose by, it is ambiguous.
    let keyed = registry_with(env_from([("OPENAI_API_KEY", "k")]), None);
    assert_eq!(resolve(&keyed, "gpt-4o", None), sel("openai/gpt-4o"));
    assert_eq!(resolve(&keyed, "GPT-4o", None), sel("openai/gpt-4o"));
    let err = resolve_model(&r, "gpt-4o", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Model \"gpt-4o\" is ambiguous across providers: azure/gpt-4o, cloudflare-ai-gateway/gpt-4o, \
         openai/gpt-4o. No matching provider is authenticated. Use --provider or provider/model."
    );
    assert_eq!(resolve(&r, "Anthropic/Claude-Opus-4-6", None), sel("anthropic/claude-opus-4-6"));
    // A model id with a slash of its own, with and without its provider.
    assert_eq!(
        resolve(&r, "openrouter/anthropic/claude-sonnet-4.6", None),
        sel("openrouter/anthropic/claude-sonnet-4.6")
    );
    assert_eq!(resolve(&r, "zai/glm-5.3", None), sel("zai/glm-5.3"), "the provider named, not the gateway's id");
    // Two keys for one id: still ambiguous, said so.
    let both = registry_with(env_from([("ANTHROPIC_API_KEY", "a"), ("OPENCODE_API_KEY", "o")]), None);
    assert_eq!(
        resolve_model(&both, "claude-opus-4-7", None).unwrap_err().to_string(),
        "Model \"claude-opus-4-7\" is ambiguous across providers: anthropic/claude-opus-4-7, \
         cloudflare-ai-gateway/claude-opus-4-7, opencode/claude-opus-4-7. More than one matching provider is \
         authenticated. Use --provider or provider/model."
    );
}

#[test]
fn substrings_prefer_aliases_then_the_highest_id() {
    let r = builtin();
    // Among the aliases, OpenRouter's `~anthropic/claude-sonnet-latest` sorts lowest (pi's
    // `localeCompare` puts `~` before letters).
    assert_eq!(resolve(&r, "sonnet", Some("anthropic")), sel("anthropic/claude-sonnet-5-5"));
    // Over every provider, Bedrock's `us.anthropic.claude-sonnet-5-5` is the highest.
    assert_eq!(resolve(&r, "sonnet", None), sel("amazon-bedrock/us.anthropic.claude-sonnet-5-5"));
    assert_eq!(resolve(&r, "opus", Some("anthropic")), sel("anthropic/claude-opus-5-5"));
    assert_eq!(resolve(&r, "sonnet-4-5", Some("anthropic")), sel("anthropic/claude-sonnet-4-5"));
    assert_eq!(resolve(&r, "sonnet-4-5", None), sel("amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0"));
    // Only dated ids match: the dated one is taken.
    assert_eq!(resolve(&r, "4-5-2025", Some("anthropic")), sel("anthropic/claude-sonnet-4-5-20250929"));
    // Names match too.
    assert_eq!(resolve(&r, "Gemini 3.1 Pro", Some("google")), sel("google/gemini-3.1-pro-preview-customtools"));
    assert_eq!(resolve(&r, "mistral-large", Some("mistral")), sel("mistral/mistral-large-latest"));
    // `mistralai/…` sorts above `mistral-…`.
    assert_eq!(resolve(&r, "mistral-large", None), sel("openrouter/mistralai/mistral-large-4-0"));

    let dated = registry_with(
        env_from([("K", "k")]),
        Some(
            r#"{"providers": {"local": {"baseUrl": "http://localhost:1/v1", "api": "openai-completions",
                "models": [{"id": "tiny-20240101"}, {"id": "tiny-20250101"}, {"id": "tiny-20240601"}]}}}"#,
        ),
    );
    assert_eq!(resolve(&dated, "tiny", None), sel("local/tiny-20250101"));
    assert_eq!(resolve(&dated, "local/tiny", None), sel("local/tiny-20250101"));
}

#[test]
fn a_thinking_suffix_is_split_off() {
    let r = builtin();
    // With no key at all every provider's models are candidates: Bedrock's
    // `us.anthropic.claude-sonnet-5-5` sorts after Anthropic's `claude-sonnet-5-5`.
    assert_eq!(
        resolve(&r, "sonnet:high", None),
        ("amazon-bedrock/us.anthropic.claude-sonnet-5-5".to_owned(), Some(ThinkingLevel::High))
    );
    assert_eq!(
        resolve(&r, "sonnet:high", Some("anthropic")),
        ("anthropic/claude-sonnet-5-5".to_owned(), Some(ThinkingLevel::High))
    );
    assert_eq!(
        resolve(&r, "anthropic/claude-opus-4-6:xhigh", None),
        ("anthropic/claude-opus-4-6".to_owned(), Some(ThinkingLevel::Xhigh))
    );
    assert_eq!(resolve(&r, "gpt-5.4:off", Some("openai")), ("openai/gpt-5.4".to_owned(), Some(ThinkingLevel::Off)));
    // `--model` is strict: an unknown suffix is part of the pattern, so nothing matches.
    let err = resolve_model(&r, "sonnet:turbo", None).unwrap_err();
    assert!(matches!(err, ResolveError::NotFound { .. }), "{err}");

    let colons = registry_with(
        env_from([("K", "k")]),
        Some(
            r#"{"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions",
                "models": [{"id": "qwen3:8b"}]}}}"#,
        ),
    );
    assert_eq!(resolve(&colons, "qwen3:8b", None), sel("ollama/qwen3:8b"));
    assert_eq!(resolve(&colons, "qwen3:8b:low", None), ("ollama/qwen3:8b".to_owned(), Some(ThinkingLevel::Low)));
}

#[test]
fn the_provider_flag_restricts_and_is_checked() {
    let r = builtin();
    assert_eq!(resolve(&r, "opus", Some("ANTHROPIC")), sel("anthropic/claude-opus-5-5"));
    assert_eq!(
        resolve(&r, "anthropic/claude-haiku-4-5", Some("anthropic")),
        sel("anthropic/claude-haiku-4-5"),
        "a repeated provider prefix is tolerated"
    );
    assert_eq!(resolve(&r, "gpt-oss-120b", Some("cerebras")), sel("cerebras/gpt-oss-120b"));
    let err = resolve_model(&r, "claude-opus-4-6", Some("nope")).unwrap_err();
    assert_eq!(err.to_string(), "Unknown provider \"nope\". Use --list-models to see available providers/models.");
    assert_eq!(err, ResolveError::UnknownProvider { provider: "nope".into() });
}

#[test]
fn an_unknown_id_of_a_known_provider_is_made_up_with_a_warning() {
    let r = builtin();
    let resolved = resolve_model(&r, "anthropic/claude-opus-9", None).unwrap();
    assert_eq!(
        resolved.warning.as_deref(),
        Some("Model \"claude-opus-9\" not found for provider \"anthropic\". Using custom model id.")
    );
    // A copy of the provider's default model.
    let mut expected = r.find("anthropic", "claude-opus-5-5").unwrap().clone();
    expected.id = "claude-opus-9".into();
    expected.name = "claude-opus-9".into();
    assert_eq!(resolved.model, expected);
    assert_eq!(resolved.thinking, None);

    let resolved = resolve_model(&r, "devstral-9:high", Some("mistral")).unwrap();
    assert_eq!(resolved.model.id, "devstral-9");
    assert_eq!(resolved.thinking, Some(ThinkingLevel::High));
    assert!(resolved.model.reasoning, "asking for thinking makes the made-up model reason");
    assert_eq!(resolved.model.base_url, "https://api.mistral.ai/v1");
    assert_eq!(
        resolved.warning.as_deref(),
        Some("Model \"devstral-9\" not found for provider \"mistral\". Using custom model id.")
    );
    let plain = resolve_model(&r, "devstral-9", Some("mistral")).unwrap();
    assert!(!plain.model.reasoning, "cloned from devstral-medium-latest");
    let grok = resolve_model(&r, "grok-9", Some("xai")).unwrap();
    assert!(grok.model.reasoning, "cloned from grok-4.7");
    assert_eq!(grok.model.base_url, "https://api.x.ai/v1");
}

#[test]
fn nothing_matches() {
    let r = builtin();
    let err = resolve_model(&r, "definitely-not-here", None).unwrap_err();
    assert_eq!(err.to_string(), "Model \"definitely-not-here\" not found. Use --list-models to see available models.");
    let ResolveError::NotFound { suggestions, .. } = resolve_model(&r, "claude-sonet-4-6", None).unwrap_err() else {
        panic!("not found expected");
    };
    assert_eq!(suggestions.first().map(String::as_str), Some("anthropic/claude-sonnet-4-6"));
    assert!(suggestions.len() <= 5);
    let ResolveError::NotFound { suggestions, .. } = resolve_model(&r, "gpt5:high", None).unwrap_err() else {
        panic!("not found expected");
    };
    // Azure's, Copilot's and OpenAI's gpt-5 tie; pi's registry order (by provider) decides.
    assert_eq!(suggestions[..3], ["azure/gpt-5", "cloudflare-ai-gateway/gpt-5", "openai/gpt-5"]);
    let ResolveError::NotFound { suggestions, .. } = resolve_model(&r, "zzzzzzzzzz", None).unwrap_err() else {
        panic!("not found expected");
    };
    assert!(suggestions.is_empty(), "{suggestions:?}");
}

#[test]
fn ids_several_providers_share() {
    // `openai/` names a provider, but `openai/gpt-oss-120b` is an id at six gateways: ambiguous
    // without keys, else the one with a key.
    let r = builtin();
    let err = resolve_model(&r, "openai/gpt-oss-120b", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Model \"openai/gpt-oss-120b\" is ambiguous across providers: baseten/openai/gpt-oss-120b, \
         groq/openai/gpt-oss-120b, huggingface/openai/gpt-oss-120b, openrouter/openai/gpt-oss-120b, \
         together/openai/gpt-oss-120b, vercel-ai-gateway/openai/gpt-oss-120b. No matching provider is \
         authenticated. Use --provider or provider/model."
    );
    let groq = registry_with(env_from([("GROQ_API_KEY", "g")]), None);
    assert_eq!(resolve(&groq, "openai/gpt-oss-120b", None), sel("groq/openai/gpt-oss-120b"));
    let openrouter = registry_with(env_from([("OPENROUTER_API_KEY", "o")]), None);
    assert_eq!(resolve(&openrouter, "openai/gpt-oss-120b", None), sel("openrouter/openai/gpt-oss-120b"));

    let two = r#"{"providers": {
        "a": {"baseUrl": "http://localhost:1/v1", "api": "openai-completions", "apiKey": "$A_KEY", "models": [{"id": "shared"}]},
        "b": {"baseUrl": "http://localhost:2/v1", "api": "openai-completions", "apiKey": "$B_KEY", "models": [{"id": "shared"}]}}}"#;
    let none_keyed = registry_with(env_from([("X", "x")]), Some(two));
    let err = resolve_model(&none_keyed, "shared", None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Model \"shared\" is ambiguous across providers: a/shared, b/shared. No matching provider is \
         authenticated. Use --provider or provider/model."
    );
    let b_keyed = registry_with(env_from([("B_KEY", "b")]), Some(two));
    assert_eq!(resolve(&b_keyed, "shared", None), sel("b/shared"));
    assert_eq!(resolve(&none_keyed, "shared", Some("a")), sel("a/shared"));
}

#[test]
fn scopes_select_available_models_by_glob_and_pattern() {
    let r = registry_with(env_from([("ANTHROPIC_API_KEY", "a"), ("OPENROUTER_API_KEY", "o")]), None);
    let scope = resolve_scope(
        &r,
        &[
            "anthropic/claude-opus-*",
            "*SONNET-4-6:high",
            "claude-opus-4-6:low",
            "gpt-5.4",
            "haiku:turbo",
            "nomatch*",
            "[x",
        ],
    );
    let got: Vec<(String, Option<ThinkingLevel>)> =
        scope.models.iter().map(|s| (s.model.selector(), s.thinking)).collect();
    let mut expected: Vec<(String, Option<ThinkingLevel>)> = [
        "anthropic/claude-opus-4-5",
        "anthropic/claude-opus-4-5-20251101",
        "anthropic/claude-opus-4-6",
        "anthropic/claude-opus-4-7",
        "anthropic/claude-opus-4-8",
        "anthropic/claude-opus-5",
        "anthropic/claude-opus-5-5",
    ]
    .into_iter()
    .map(|s| (s.to_owned(), None))
    .collect();
    // Their ids `anthropic/claude-opus-…` match the glob too.
    for version in ["4.1", "4.5", "4.6", "4.7", "4.8", "5", "5.5"] {
        expected.push((format!("openrouter/anthropic/claude-opus-{version}"), None));
    }
    for version in ["4.1", "4.5", "4.6", "4.7", "4.8", "5", "5.5"] {
        expected.push((format!("openrouter/anthropic/claude-opus-{version}:batch"), None));
    }
    expected.extend(
        [
            ("anthropic/claude-sonnet-4-6", Some(ThinkingLevel::High)),
            // `claude-opus-4-6:low` names a model already in scope: it keeps its first level.
            // No `gpt-5.4` is available (no OpenAI key): the highest alias containing it.
            ("openrouter/openai/gpt-5.4:batch", None),
            ("anthropic/claude-haiku-5-5", None),
        ]
        .into_iter()
        .map(|(s, t)| (s.to_owned(), t)),
    );
    assert_eq!(got, expected);
    assert_eq!(
        scope.warnings,
        [
            "Invalid thinking level \"turbo\" in pattern \"haiku:turbo\". Using default instead.",
            "No models match pattern \"nomatch*\"",
            "Invalid model pattern \"[x\": unclosed character class; missing ']'",
        ]
    );
}

#[test]
fn scope_globs_cross_slashes_and_skip_unavailable_models() {
    let r = registry_with(env_from([("OPENROUTER_API_KEY", "o")]), None);
    let scope = resolve_scope(&r, &["openrouter/*"]);
    assert_eq!(scope.models.len(), crate::catalog::provider("openrouter").unwrap().models.len());
    assert!(scope.warnings.is_empty());
    let scope = resolve_scope(&r, &["xai/*", "claude-opus-4-1"]);
    assert!(scope.models.is_empty(), "{scope:?}");
    assert_eq!(scope.warnings, ["No models match pattern \"xai/*\"", "No models match pattern \"claude-opus-4-1\""]);
    let scope = resolve_scope(&r, &["*/anthropic/*:minimal", "  ", "*claude-haiku*"]);
    let got: Vec<_> = scope.models.iter().map(|s| (s.model.id.as_str(), s.thinking)).collect();
    let minimal = Some(ThinkingLevel::Minimal);
    let mut expected: Vec<(String, Option<ThinkingLevel>)> = Vec::new();
    let families = [
        "fable-5",
        "fable-5.1",
        "fable-5.2",
        "haiku-4.5",
        "haiku-5.5",
        "opus-4.1",
        "opus-4.5",
        "opus-4.6",
        "opus-4.7",
        "opus-4.8",
        "opus-5",
        "opus-5.5",
        "sonnet-4.5",
        "sonnet-4.6",
        "sonnet-5",
        "sonnet-5.5",
    ];
    for suffix in ["", ":batch"] {
        for family in families {
            expected.push((format!("anthropic/claude-{family}{suffix}"), minimal));
        }
    }
    // `*claude-haiku*` adds the one haiku `*/anthropic/*` missed: rho's `*` crosses `/` (pi's
    // does not, and finds none).
    expected.push(("~anthropic/claude-haiku-latest".to_owned(), None));
    let got: Vec<(String, Option<ThinkingLevel>)> = got.into_iter().map(|(id, t)| (id.to_owned(), t)).collect();
    assert_eq!(got, expected, "a model already in scope keeps its first level");
}

#[test]
fn list_filter_is_fuzzy_and_ranked() {
    let r = builtin();
    assert_eq!(filter_models(r.all(), "").len(), r.all().len());
    assert_eq!(filter_models(r.all(), "   ").len(), r.all().len());
    let opus: Vec<String> = filter_models(r.all(), "anthropic opus-4").iter().map(|m| m.selector()).collect();
    let whole = opus.iter().take_while(|s| s.contains("opus-4")).count();
    assert_eq!(whole, 47, "the 47 ids containing opus-4 first (Bedrock, Anthropic, OpenRouter, Vercel): {opus:?}");
    assert_eq!(opus[0], "amazon-bedrock/anthropic.claude-opus-4-1-20250805-v1:0", "ties keep registry order");
    assert!(opus[whole..].contains(&"anthropic/claude-sonnet-4-6".to_owned()), "then scattered matches: {opus:?}");
    assert!(opus[whole..].iter().all(|s| !s.contains("opus-4")), "{opus:?}");
    let scattered: Vec<String> = filter_models(r.all(), "dsv4p").iter().map(|m| m.selector()).collect();
    assert_eq!(
        scattered[..4],
        [
            "azure/deepseek-v4-pro",
            "deepseek/deepseek-v4-pro",
            "opencode/deepseek-v4-pro",
            "opencode-go/deepseek-v4-pro"
        ],
        "fewest letters skipped first, then registry order"
    );
    let ranked = filter_models(r.all(), "GROK-4");
    let substrings = ranked.iter().take_while(|m| m.id.contains("grok-4")).count();
    assert_eq!(substrings, 40, "substrings before scattered");
    assert!(ranked[substrings..].iter().all(|m| !m.id.contains("grok-4")));
    assert!(filter_models(r.all(), "no such thing at all").is_empty());
}

#[test]
fn aliases_and_distances() {
    assert!(is_alias("claude-sonnet-4-5"));
    assert!(is_alias("mistral-large-latest"));
    assert!(is_alias("gpt-4o"));
    assert!(!is_alias("claude-sonnet-4-5-20250929"));
    assert!(is_alias("x-2025092"), "seven digits is no date");
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("same", "same"), 0);
}

#[test]
fn pi_0_73s_azure_openai_responses_names_the_azure_provider() {
    let r = builtin();
    assert_eq!(resolve(&r, "azure/gpt-5.4", None), sel("azure/gpt-5.4"));
    assert_eq!(resolve(&r, "azure-openai-responses/gpt-5.4", None), sel("azure/gpt-5.4"));
    assert_eq!(resolve(&r, "gpt-5.4", Some("azure-openai-responses")), sel("azure/gpt-5.4"));
    assert_eq!(resolve(&r, "AZURE-OPENAI-RESPONSES/gpt-5.4", Some("AZURE")), sel("azure/gpt-5.4"));
    // A session written before the rename finds its model.
    assert_eq!(r.find("azure-openai-responses", "gpt-5.4").map(Model::selector).as_deref(), Some("azure/gpt-5.4"));
    // pi 0.73 filed the key under the old name.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("auth.json"), r#"{"azure-openai-responses": {"type": "api_key", "key": "az-key"}}"#)
        .unwrap();
    let (keyed, errors) = ModelRegistry::load_with_env(dir.path(), env_from::<[(&str, &str); 0], &str, &str>([]));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(keyed.api_key("azure").as_deref(), Some("az-key"));
    assert!(keyed.has_key("azure"));
    // models.json under the old name configures the provider.
    let moved = registry_with(
        env_from([("AZURE_OPENAI_API_KEY", "k")]),
        Some(r#"{"providers": {"azure-openai-responses": {"baseUrl": "https://mine.openai.azure.com/openai/v1"}}}"#),
    );
    assert_eq!(moved.find("azure", "gpt-5.4").unwrap().base_url, "https://mine.openai.azure.com/openai/v1");
}
