use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::auth::env_from;

fn no_env() -> EnvLookup {
    env_from::<[(&str, &str); 0], &str, &str>([])
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn selectors(models: &[&Model]) -> Vec<String> {
    models.iter().map(|m| m.selector()).collect()
}

#[test]
fn builtins_load_without_files_and_nothing_is_available_without_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (registry, errors) = ModelRegistry::load_with_env(dir.path(), no_env());
    assert!(errors.is_empty());
    assert_eq!(registry.all().len(), catalog::model_count());
    assert!(registry.available().is_empty());
    assert_eq!(registry.default_model(None, None), None);
    assert_eq!(registry.api_key("anthropic"), None);
    // pi's registry order: providers by name.
    assert_eq!(
        registry.providers(),
        [
            "amazon-bedrock",
            "ant-ling",
            "anthropic",
            "azure",
            "baseten",
            "cerebras",
            "cloudflare-ai-gateway",
            "cloudflare-workers-ai",
            "deepseek",
            "fireworks",
            "github-copilot",
            "google",
            "google-vertex",
            "groq",
            "huggingface",
            "kimi-coding",
            "meta",
            "minimax",
            "minimax-cn",
            "mistral",
            "moonshotai",
            "moonshotai-cn",
            "nvidia",
            "openai",
            "openai-codex",
            "opencode",
            "opencode-go",
            "openrouter",
            "qwen-token-plan",
            "qwen-token-plan-cn",
            "qwen-token-plan-individual",
            "qwen-token-plan-individual-cn",
            "radius",
            "together",
            "vercel-ai-gateway",
            "xai",
            "xiaomi",
            "xiaomi-token-plan-ams",
            "xiaomi-token-plan-cn",
            "xiaomi-token-plan-sgp",
            "zai",
            "zai-coding-cn",
        ]
    );
    assert_eq!(registry.models_json_path(), Some(dir.path().join("models.json").as_path()));
}

#[test]
fn availability_follows_keys() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "auth.json", r#"{"groq": {"type": "api_key", "key": "!echo groq-key"}}"#);
    let env = env_from([("XAI_API_KEY", "xai-key")]);
    let (mut registry, errors) = ModelRegistry::load_with_env(dir.path(), env);
    assert!(errors.is_empty(), "{errors:?}");
    let providers: HashSet<&str> = registry.available().iter().map(|m| m.provider.as_str()).collect();
    assert_eq!(providers, HashSet::from(["groq", "xai"]));
    assert_eq!(registry.api_key("groq").as_deref(), Some("groq-key"));
    assert_eq!(registry.api_key("xai").as_deref(), Some("xai-key"));
    let claude = registry.find("anthropic", "claude-opus-4-6").unwrap().clone();
    assert!(!registry.is_available(&claude));
    registry.set_runtime_key("anthropic", "from-flag");
    assert!(registry.is_available(&claude));
    assert_eq!(registry.api_key("anthropic").as_deref(), Some("from-flag"));
}

#[test]
fn keyless_local_providers_are_available_and_keyed_ones_need_their_key() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "models.json",
        r#"{"providers": {
            "ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions",
                       "models": [{"id": "llama3.1:8b"}]},
            "vllm": {"baseUrl": "http://gpu-box:8000/v1", "api": "openai-completions",
                     "apiKey": "$VLLM_KEY", "models": [{"id": "qwen"}]}
        }}"#,
    );
    let (registry, errors) = ModelRegistry::load_with_env(dir.path(), no_env());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(selectors(&registry.available()), ["ollama/llama3.1:8b"]);
    assert!(registry.is_keyless("ollama"));
    assert_eq!(registry.api_key("ollama"), None);
    assert!(!registry.has_key("vllm"), "an unset $NAME is no key");
    let env = env_from([("VLLM_KEY", "v")]);
    let (registry, _) = ModelRegistry::load_with_env(dir.path(), env);
    assert_eq!(selectors(&registry.available()), ["ollama/llama3.1:8b", "vllm/qwen"]);
    assert_eq!(registry.api_key("vllm").as_deref(), Some("v"));
    let last: Vec<String> = registry.all()[registry.all().len() - 2..].iter().map(Model::selector).collect();
    assert_eq!(last, ["ollama/llama3.1:8b", "vllm/qwen"], "custom providers come last, in file order");
}

#[test]
fn an_invalid_models_json_is_reported_and_the_builtins_still_load() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "models.json", r#"{"providers": {"x": {"models": [{"id": "a"}]}}}"#);
    write(dir.path(), "auth.json", "{not json");
    let env = env_from([("OPENAI_API_KEY", "k")]);
    let (registry, errors) = ModelRegistry::load_with_env(dir.path(), env);
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].starts_with(&format!("Failed to parse {}", dir.path().join("auth.json").display())));
    assert_eq!(
        messages[1],
        format!(
            "Invalid {}: provider \"x\": \"baseUrl\" is required when defining custom models",
            dir.path().join("models.json").display()
        )
    );
    assert_eq!(registry.all().len(), catalog::model_count());
    assert_eq!(registry.default_model(None, None).unwrap().selector(), "openai/gpt-6.2-sol");
}

#[test]
fn headers_are_resolved_per_request_with_the_auth_header() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "models.json",
        r#"{"providers": {
            "gateway": {"baseUrl": "https://gw.example.com/v1", "api": "openai-completions",
                        "apiKey": "!echo gw-secret", "authHeader": true,
                        "headers": {"X-Team": "TEAM_NAME", "X-Missing": "$NOPE", "X-Cmd": "!echo from-cmd"},
                        "models": [{"id": "m1", "headers": {"X-Team": "override"}}, {"id": "m2"}]},
            "openrouter": {"headers": {"HTTP-Referer": "https://rho.example"}}
        }}"#,
    );
    let env = env_from([("TEAM_NAME", "core")]);
    let (mut registry, errors) = ModelRegistry::load_with_env(dir.path(), env);
    assert!(errors.is_empty(), "{errors:?}");
    let m1 = registry.find("gateway", "m1").unwrap().clone();
    let m2 = registry.find("gateway", "m2").unwrap().clone();
    assert!(m1.headers.is_empty(), "models carry no configured headers");
    assert_eq!(
        registry.headers_for(&m1),
        BTreeMap::from([
            ("Authorization".to_owned(), "Bearer gw-secret".to_owned()),
            ("X-Cmd".to_owned(), "from-cmd".to_owned()),
            ("X-Team".to_owned(), "override".to_owned()),
        ])
    );
    assert_eq!(registry.headers_for(&m2)["X-Team"], "core");
    registry.set_runtime_key("gateway", "flag-key");
    assert_eq!(registry.headers_for(&m2)["Authorization"], "Bearer flag-key");
    let or = registry.find("openrouter", "openai/gpt-5.1-codex").unwrap();
    assert_eq!(
        registry.headers_for(or),
        BTreeMap::from([("HTTP-Referer".to_owned(), "https://rho.example".to_owned())])
    );
    let claude = registry.find("anthropic", "claude-opus-4-6").unwrap();
    assert!(registry.headers_for(claude).is_empty());
    // Secrets never show in the serialized model.
    let json = rho_types::json::to_string(&m1).unwrap();
    assert!(!json.contains("gw-secret") && !json.contains("headers"), "{json}");
}

#[test]
fn default_model_selection() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_from([("GROQ_API_KEY", "g"), ("OPENAI_API_KEY", "o")]);
    let (registry, _) = ModelRegistry::load_with_env(dir.path(), env);
    // Step 4: the settings' default exists; no key needed.
    let chosen = registry.default_model(Some("anthropic"), Some("claude-haiku-4-5"));
    assert_eq!(chosen.unwrap().selector(), "anthropic/claude-haiku-4-5");
    // A settings default that does not exist falls through to step 5: the first provider (in
    // catalogue order) whose default model is available.
    let chosen = registry.default_model(Some("anthropic"), Some("claude-9"));
    assert_eq!(chosen.unwrap().selector(), "openai/gpt-6.2-sol");
    assert_eq!(registry.default_model(Some("openai"), None).unwrap().selector(), "openai/gpt-6.2-sol");
    // Step 6: no provider's default is available, so the first available model.
    write(
        dir.path(),
        "models.json",
        r#"{"providers": {"groq": {"modelOverrides": {"openai/gpt-oss-120b": {"name": "x"}}},
             "local": {"baseUrl": "http://localhost:9/v1", "api": "openai-completions",
                       "models": [{"id": "tiny"}]}}}"#,
    );
    let (registry, errors) = ModelRegistry::load_with_env(dir.path(), no_env());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(registry.default_model(None, None).unwrap().selector(), "local/tiny");
    let env = env_from([("GROQ_API_KEY", "g")]);
    let (registry, _) = ModelRegistry::load_with_env(dir.path(), env);
    assert_eq!(registry.default_model(None, None).unwrap().selector(), "groq/openai/gpt-oss-120b");
}

#[test]
fn provider_default_falls_back_to_the_first_model() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "models.json",
        r#"{"providers": {"local": {"baseUrl": "http://localhost:9/v1", "api": "openai-completions",
             "models": [{"id": "first"}, {"id": "second"}]}}}"#,
    );
    let (registry, _) = ModelRegistry::load_with_env(dir.path(), no_env());
    assert_eq!(registry.provider_default("local").unwrap().id, "first");
    assert_eq!(registry.provider_default("xai").unwrap().id, "grok-4.7");
    assert!(registry.provider_default("nope").is_none());
}

#[test]
fn the_agent_dir_can_be_moved() {
    let home = dirs::home_dir().unwrap();
    let env = env_from([(AGENT_DIR_ENV, "~/elsewhere/agent")]);
    assert_eq!(agent_dir(env.as_ref()), Some(home.join("elsewhere/agent")));
    let env = env_from([(AGENT_DIR_ENV, "/opt/rho")]);
    assert_eq!(agent_dir(env.as_ref()), Some(PathBuf::from("/opt/rho")));
    assert_eq!(agent_dir(no_env().as_ref()), Some(home.join(".rho/agent")));
}

#[test]
fn providers_register_as_pi_extensions_register_them() {
    let mut registry = ModelRegistry::builtin(env_from([("PROXY_KEY", "secret")]));
    let anthropic_models = registry.all().iter().filter(|m| m.provider == "anthropic").count();
    // A new provider, its key from the environment, its headers per request.
    registry
        .register_provider(
            "my-proxy",
            serde_json::json!({"name": "My Proxy", "baseUrl": "https://proxy.example.com/v1", "apiKey": "PROXY_KEY",
                "api": "openai-completions", "headers": {"X-Team": "rho"},
                "models": [{"id": "m1", "name": "Model one", "contextWindow": 1000, "maxTokens": 100}]}),
        )
        .unwrap();
    let model = registry.find("my-proxy", "m1").unwrap().clone();
    assert_eq!(
        (model.base_url.as_str(), model.context_window, model.max_tokens),
        ("https://proxy.example.com/v1", 1000, 100)
    );
    assert!(registry.is_available(&model));
    assert_eq!(registry.api_key("my-proxy").as_deref(), Some("secret"));
    assert_eq!(registry.headers_for(&model).get("X-Team").map(String::as_str), Some("rho"));
    // A base URL alone moves a built-in provider's models; its models stay.
    registry.register_provider("anthropic", serde_json::json!({"baseUrl": "https://proxy.example.com"})).unwrap();
    let moved: Vec<&Model> = registry.all().iter().filter(|m| m.provider == "anthropic").collect();
    assert_eq!(moved.len(), anthropic_models);
    assert!(moved.iter().all(|m| m.base_url == "https://proxy.example.com"));
    // Models given replace the provider's.
    registry
        .register_provider(
            "anthropic",
            serde_json::json!({"models": [{"id": "only-this", "api": "anthropic-messages"}]}),
        )
        .unwrap();
    assert_eq!(registry.all().iter().filter(|m| m.provider == "anthropic").count(), 1);
    // What pi refuses is refused, saying why.
    let error = registry
        .register_provider("bad", serde_json::json!({"baseUrl": "https://x.example.com", "models": [{"id": "a"}]}))
        .unwrap_err();
    assert!(error.contains("\"apiKey\" is required"), "{error}");
    let error = registry.register_provider("bad", serde_json::json!({"models": "many"})).unwrap_err();
    assert!(error.starts_with("models: invalid type"), "{error}");
}
