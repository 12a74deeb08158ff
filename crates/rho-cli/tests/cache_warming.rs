//! Prompt-cache warming (pi 1.6's `cacheWarming`) against the mock: after a reply whose prompt is
//! large enough for a refresh to pay for itself, the same request goes again with a one-token
//! cap before the model's cache lifetime ends (12 s here: after 2 s), without the session's
//! thread, and is recorded as a `cache_warm` usage entry; with `streaming`, an idle agent warms
//! nothing.

use std::time::Duration;

use rho_mock_llm::{Turn, Usage};
use serde_json::{Value, json};

use crate::common::{Env, Rho, read_jsonl};

/// Env's mock model with a 12-second prompt cache.
fn with_short_cache(env: &Env) {
    let path = env.agent_dir.join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    models["providers"]["mock"]["models"][0]["promptCache"] = json!({"short": 12});
    std::fs::write(&path, models.to_string()).unwrap();
}

fn large_prompt() -> Usage {
    Usage { input: 1_000_000, output: 20, ..Usage::default() }
}

#[tokio::test]
async fn a_large_prompts_cache_is_refreshed_before_it_expires() {
    let env = Env::new(vec![Turn::text("First.").with_usage(large_prompt()), Turn::text("w")]).await;
    with_short_cache(&env);
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "hello"})).await;
    rho.until(|f| f["type"] == "agent_settled").await;
    let warmed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if env.server.requests().len() == 2 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(warmed.is_ok(), "no refresh came");
    let bodies = env.request_bodies();
    assert_eq!(bodies[1]["max_tokens"], 1);
    assert_eq!(bodies[1]["messages"], bodies[0]["messages"], "the same request, before its reply");
    assert_eq!(bodies[1].get("thread"), None);
    // Recorded once the answer is in.
    let recorded = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let entries = read_jsonl(&env.session_files().pop().unwrap());
            if let Some(usage) = entries.iter().find(|e| e["type"] == "usage") {
                return usage.clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("a usage entry");
    assert_eq!((&recorded["kind"], &recorded["provider"]), (&json!("cache_warm"), &json!("mock")));
    // Announced to the host.
    let announced = rho.until(|f| f["type"] == "entry_appended").await;
    assert_eq!(announced.last().unwrap()["entry"]["id"], recorded["id"]);
}

#[tokio::test]
async fn with_streaming_an_idle_agent_warms_nothing() {
    let env = Env::new(vec![Turn::text("First.").with_usage(large_prompt())]).await;
    with_short_cache(&env);
    let mut rho = Rho::start(&env, &["--setting", "cacheWarming=streaming"]).await;
    rho.send(json!({"type": "prompt", "message": "hello"})).await;
    rho.until(|f| f["type"] == "agent_settled").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(env.server.requests().len(), 1, "no refresh once idle");
}
