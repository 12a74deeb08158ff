//! Refreshes against the mock's token endpoints: one refresh for many callers at once, and each
//! provider's grant shape.

use std::sync::Arc;

use rho_mock_llm::{IssuedTokens, MockServer, Script};
use serde_json::{Value, json};

use super::providers::{ANTHROPIC, GITHUB_COPILOT, OPENAI_CODEX};
use super::refresh::now_ms;
use super::*;

fn issued(access: &str) -> IssuedTokens {
    IssuedTokens { access_token: access.into(), refresh_token: Some("rt-new".into()), expires_in: 3600 }
}

fn env_for(server: &MockServer) -> crate::auth::EnvLookup {
    let url = server.url();
    crate::auth::env_from([
        ("RHO_OAUTH_TOKEN_URL_ANTHROPIC", format!("{url}/v1/oauth/token")),
        ("RHO_OAUTH_TOKEN_URL_OPENAI_CODEX", format!("{url}/oauth/token")),
        ("RHO_OAUTH_TOKEN_URL_GITHUB_COPILOT", format!("{url}/copilot_internal/v2/token")),
    ])
}

fn stale(provider: &str, refresh: &str) -> Value {
    json!({provider: {"type": "oauth", "refresh": refresh, "access": "old", "expires": 1000, "accountId": "acc"}})
}

/// Eight threads ask for a stale login's token at once: the token endpoint is asked once (it
/// would refuse a second use of the refresh token) and every thread gets the new token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_refresh_serves_every_caller_at_once() {
    let server = MockServer::start(Script::new(vec![])).await.unwrap();
    server.accept_oauth_refresh("rt-old", issued("sk-ant-oat01-new"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, stale("anthropic", "rt-old").to_string()).unwrap();
    let logins = Arc::new(Logins::load(&path, env_for(&server)));
    let tokens = tokio::task::spawn_blocking(move || {
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let logins = logins.clone();
                std::thread::spawn(move || logins.access_token("anthropic"))
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap().unwrap()).collect::<Vec<_>>()
    })
    .await
    .unwrap();
    assert_eq!(tokens, vec!["sk-ant-oat01-new"; 8]);
    assert_eq!(server.requests().len(), 1);
    let entry = &store::read(&path).unwrap()["anthropic"];
    assert_eq!(entry["refresh"], "rt-new");
    assert_eq!(entry["accountId"], "acc", "fields rho does not know are kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_provider_refreshes_in_its_own_shape() {
    let server = MockServer::start(Script::new(vec![])).await.unwrap();
    server.accept_oauth_refresh("rt-codex", issued("codex-new"));
    server.accept_oauth_refresh("gho_github", issued("tid=1;exp=2;proxy-ep=proxy.individual.githubcopilot.com"));
    let env = env_for(&server);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let mut entries = stale("openai-codex", "rt-codex");
    entries["github-copilot"] = stale("github-copilot", "gho_github")["github-copilot"].clone();
    std::fs::write(&path, entries.to_string()).unwrap();

    let (codex, copilot) = tokio::task::spawn_blocking(move || {
        (
            refresh_entry(&path, &OPENAI_CODEX, env.as_ref()).unwrap(),
            refresh_entry(&path, &GITHUB_COPILOT, env.as_ref()).unwrap(),
        )
    })
    .await
    .unwrap();
    assert_eq!((codex.access.as_str(), codex.refresh.as_str()), ("codex-new", "rt-new"));
    assert_eq!(codex.extra.get("accountId"), Some(&Value::from("acc")), "kept");
    assert!((codex.expires - (now_ms() + 3_600_000)).abs() < 60_000, "no margin for ChatGPT, as pi");
    assert_eq!(copilot.refresh, "gho_github", "the GitHub token stays the refresh credential");
    assert!(copilot.access.starts_with("tid=1;"));
    assert!((copilot.expires - (now_ms() + 3_600_000 - 300_000)).abs() < 60_000);

    let requests = server.requests();
    assert_eq!(requests[0].path, "/oauth/token");
    assert_eq!(requests[0].header("content-type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(
        requests[0].body,
        Value::from("grant_type=refresh_token&refresh_token=rt-codex&client_id=app_EMoamEEZ73f0CkXaXp7hrann")
    );
    assert_eq!((requests[1].method.as_str(), requests[1].path.as_str()), ("GET", "/copilot_internal/v2/token"));
    assert_eq!(requests[1].header("authorization"), Some("Bearer gho_github"));
    assert_eq!(requests[1].header("editor-version"), Some("vscode/1.107.0"));
    // Usable or not, a refreshed login is written back for pi.
    assert_eq!(store::read(dir.path().join("auth.json").as_path()).unwrap()["openai-codex"]["access"], "codex-new");
}

#[test]
fn logins_rho_cannot_use_give_no_token_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let mut entries = stale("google-gemini-cli", "r");
    entries["someone-else"] = stale("someone-else", "r")["someone-else"].clone();
    std::fs::write(&path, entries.to_string()).unwrap();
    let logins = Logins::load(&path, crate::auth::env_from::<[(&str, &str); 0], _, _>([]));
    assert!(logins.has("google-gemini-cli") && !logins.has("someone-else"));
    let err = logins.access_token("google-gemini-cli").unwrap_err().to_string();
    assert!(err.starts_with("rho cannot use the"), "{err}");
    assert!(err.contains("(google-gemini-cli)"), "{err}");
    assert_eq!(logins.problem("google-gemini-cli").map(|e| e.to_string()), Some(err));
    assert_eq!(logins.unusable().len(), 1);
    assert!(usable("anthropic", &path).is_ok_and(|p| p.id == ANTHROPIC.id));
}
