//! The model registry through rho-ai's public surface, the way the application uses it: an agent
//! directory with a pi user's `models.json` and `auth.json`, an injected environment, then
//! `--model` / `--models` resolution, keys and headers for a request.

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use rho_ai::auth::env_from;
use rho_ai::{ModelRegistry, ResolveError, env_var_for, resolve_model, resolve_scope};
use rho_types::ThinkingLevel;

/// A file as pi users write them: a local Ollama, an OpenAI-compatible gateway with a key from a
/// command and an Authorization header, and an Anthropic proxy with a model override.
const MODELS_JSON: &str = r#"{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "models": [
        {"id": "qwen2.5-coder:7b", "name": "Qwen 2.5 Coder 7B", "contextWindow": 32768, "maxTokens": 8192}
      ]
    },
    "gateway": {
      "baseUrl": "https://llm.corp.example/v1",
      "api": "openai-responses",
      "apiKey": "!echo corp-secret",
      "authHeader": true,
      "headers": {"X-Corp-Team": "CORP_TEAM"},
      "models": [{"id": "gpt-5.4", "reasoning": true, "input": ["text", "image"]}]
    },
    "anthropic": {
      "baseUrl": "https://anthropic-proxy.corp.example",
      "modelOverrides": {"claude-opus-5-5": {"name": "Opus (corp)"}}
    }
  }
}"#;

#[test]
fn a_pi_users_configuration_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("models.json"), MODELS_JSON).unwrap();
    std::fs::write(dir.path().join("auth.json"), r#"{"anthropic": {"type": "api_key", "key": "sk-ant-from-auth"}}"#)
        .unwrap();
    let env = env_from([("CORP_TEAM", "platform")]);
    let (mut registry, errors) = ModelRegistry::load_with_env(dir.path(), env);
    assert!(errors.is_empty(), "{errors:?}");

    let available: Vec<String> = registry.available().iter().map(|m| m.provider.clone()).collect();
    assert!(available.iter().all(|p| ["anthropic", "ollama", "gateway"].contains(&p.as_str())));
    assert_eq!(registry.default_model(None, None).unwrap().selector(), "anthropic/claude-opus-5-5");

    // `--model` forms.
    let opus = resolve_model(&registry, "opus:high", Some("anthropic")).unwrap();
    assert_eq!(opus.model.name, "Opus (corp)");
    assert_eq!(opus.model.base_url, "https://anthropic-proxy.corp.example");
    assert_eq!(opus.thinking, Some(ThinkingLevel::High));
    let local = resolve_model(&registry, "ollama/qwen2.5-coder:7b", None).unwrap();
    assert_eq!(local.model.context_window, 32768);
    // `gpt-5.4` is both a built-in OpenAI id and the gateway's; only the gateway has a key.
    let gateway = resolve_model(&registry, "gpt-5.4", None).unwrap();
    assert_eq!(gateway.model.selector(), "gateway/gpt-5.4");
    let made_up = resolve_model(&registry, "gpt-5.4", Some("groq")).unwrap();
    assert!(made_up.warning.is_some(), "unknown id of a known provider: made up, with a warning");
    let err = resolve_model(&registry, "x", Some("nowhere")).unwrap_err();
    assert!(matches!(err, ResolveError::UnknownProvider { .. }));

    // What a request gets.
    assert_eq!(registry.api_key("gateway").as_deref(), Some("corp-secret"));
    assert_eq!(
        registry.headers_for(&gateway.model),
        BTreeMap::from([
            ("Authorization".to_owned(), "Bearer corp-secret".to_owned()),
            ("X-Corp-Team".to_owned(), "platform".to_owned()),
        ])
    );
    assert_eq!(registry.api_key("anthropic").as_deref(), Some("sk-ant-from-auth"));
    registry.set_runtime_key("anthropic", "sk-from-flag");
    assert_eq!(registry.api_key("anthropic").as_deref(), Some("sk-from-flag"));
    assert_eq!(registry.api_key("openai"), None);
    assert_eq!(env_var_for("openai"), Some("OPENAI_API_KEY"));

    // `--models` scope over what is available.
    let scope = resolve_scope(&registry, &["ollama/*", "claude-sonnet-4-6:low", "openai/*"]);
    let selected: Vec<String> = scope.models.iter().map(|s| s.model.selector()).collect();
    assert_eq!(selected, ["ollama/qwen2.5-coder:7b", "anthropic/claude-sonnet-4-6"]);
    assert_eq!(scope.warnings, ["No models match pattern \"openai/*\""]);

    // Nothing secret is serialized.
    let json = serde_json::to_string(registry.all()).unwrap();
    assert!(!json.contains("corp-secret") && !json.contains("sk-ant") && !json.contains("headers"));
}

#[test]
fn a_broken_models_json_leaves_a_working_registry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("models.json"), "{\"providers\": {\"x\": ").unwrap();
    let env = env_from([("GEMINI_API_KEY", "g")]);
    let (registry, errors) = ModelRegistry::load_with_env(dir.path(), env);
    assert_eq!(errors.len(), 1);
    let message = errors[0].to_string();
    let path = dir.path().join("models.json");
    assert!(message.starts_with(&format!("Failed to parse {}: ", path.display())), "{message}");
    assert_eq!(errors[0].path(), path);
    assert_eq!(registry.default_model(None, None).unwrap().selector(), "google/gemini-4-argon");
}
