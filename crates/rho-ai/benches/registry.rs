//! Start-up cost of the model registry: the built-in catalogue alone, with a models.json and an
//! auth.json on disk, and one `--model` resolution.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rho_ai::auth::env_from;
use rho_ai::{ModelRegistry, resolve_model};

const MODELS_JSON: &str = r#"{"providers": {
  "ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
             "models": [{"id": "qwen2.5-coder:7b"}, {"id": "llama3.1:8b"}]},
  "anthropic": {"baseUrl": "https://proxy.example", "modelOverrides": {"claude-opus-4-6": {"name": "x"}}}
}}"#;

fn bench(c: &mut Criterion) {
    let env = env_from([("ANTHROPIC_API_KEY", "k")]);
    c.bench_function("registry_builtin", |b| b.iter(|| black_box(ModelRegistry::builtin(env.clone()))));
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("models.json"), MODELS_JSON).expect("write");
    std::fs::write(dir.path().join("auth.json"), r#"{"openai": {"type": "api_key", "key": "sk"}}"#).expect("write");
    c.bench_function("registry_load_with_files", |b| {
        b.iter(|| black_box(ModelRegistry::load_with_env(dir.path(), env.clone())))
    });
    let (registry, _) = ModelRegistry::load_with_env(dir.path(), env.clone());
    c.bench_function("resolve_model_fuzzy", |b| {
        b.iter(|| black_box(resolve_model(&registry, black_box("sonnet:high"), None)))
    });
    c.bench_function("available", |b| b.iter(|| black_box(registry.available().len())));
}

criterion_group!(benches, bench);
criterion_main!(benches);
