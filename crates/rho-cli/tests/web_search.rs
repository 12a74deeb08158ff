//! The `web_search` tool (`--tools +web_search`) against a search API of the test's own on
//! 127.0.0.1 (`webSearch.baseUrl`): Brave Search's request (query, key) and answer, the results
//! narrowed by domain; Tavily's; an error status; and no tool without a key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use crate::common;

use axum::extract::{Json, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use common::{Env, Rho, tool_results};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// What the API was asked: the query and the key.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// A Brave Search and a Tavily of the test's own; the base address.
async fn serve(seen: Seen) -> String {
    async fn brave(
        State(seen): State<Seen>,
        headers: HeaderMap,
        RawQuery(query): RawQuery,
    ) -> (StatusCode, Json<Value>) {
        let key = headers.get("x-subscription-token").and_then(|v| v.to_str().ok()).unwrap_or_default();
        let query = query.unwrap_or_default();
        let q = query.split('&').find_map(|pair| pair.strip_prefix("q=")).map(decode).unwrap_or_default();
        seen.lock().unwrap().push((q.clone(), key.to_owned()));
        if q == "fail" {
            return (StatusCode::TOO_MANY_REQUESTS, Json(json!({"message": "rate limited"})));
        }
        let results = json!([
            {"title": "The Rust Book", "url": "https://doc.rust-lang.org/book/", "description": "Learn <strong>Rust</strong>"},
            {"title": "serde - Rust", "url": "https://docs.rs/serde", "description": "A framework"},
            {"title": "Spam", "url": "https://spam.example/rust", "description": ""},
        ]);
        (StatusCode::OK, Json(json!({"web": {"results": results}})))
    }
    async fn tavily(State(seen): State<Seen>, headers: HeaderMap, Json(body): Json<Value>) -> Json<Value> {
        let key = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default();
        seen.lock().unwrap().push((body["query"].as_str().unwrap_or_default().to_owned(), key.to_owned()));
        Json(json!({"results": [{"title": "Tokio", "url": "https://tokio.rs/", "content": "An async runtime"}]}))
    }
    let app =
        axum::Router::new().route("/res/v1/web/search", get(brave)).route("/search", post(tavily)).with_state(seen);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// A form-encoded value as text.
fn decode(value: &str) -> String {
    let bytes = value.replace('+', " ").into_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push(u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap(), 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

async fn start(env: &Env, base: &str, key: (&str, &str), provider: &str) -> Rho {
    let setting = format!("webSearch.baseUrl={base}");
    let provider = format!("webSearch.provider={provider}");
    let args = ["--mode", "rpc", "--model", "mock/mock-model", "--no-session", "--tools", "+web_search"];
    let mut command = env.command(&args);
    command.args(["--setting", &setting, "--setting", &provider]).env(key.0, key.1);
    Rho::start_command(command).await
}

#[tokio::test]
async fn brave_results_come_back_as_a_list_narrowed_by_domain() {
    let seen = Seen::default();
    let base = serve(seen.clone()).await;
    let env = Env::new(vec![
        Turn::tool_call("web_search", json!({"query": "rust book", "blocked_domains": ["spam.example"]})),
        Turn::tool_call("web_search", json!({"query": "rust", "allowed_domains": ["docs.rs"]})),
        Turn::tool_call("web_search", json!({"query": "fail"})),
        Turn::text("searched"),
    ])
    .await;
    let mut rho = start(&env, &base, ("BRAVE_API_KEY", "brave-key"), "brave").await;
    rho.send(json!({"type": "prompt", "message": "look it up"})).await;
    let results = tool_results(&rho.until_agent_end().await);
    let first = "Search results for \"rust book\":\n\n1. The Rust Book\n   https://doc.rust-lang.org/book/\n   Learn Rust\n\n\
                 2. serde - Rust\n   https://docs.rs/serde\n   A framework";
    let narrowed = "Search results for \"rust\":\n\n1. serde - Rust\n   https://docs.rs/serde\n   A framework";
    let failed = "Brave Search answered 429 Too Many Requests \"rate limited\"";
    assert_eq!(results, [(first.to_owned(), false), (narrowed.to_owned(), false), (failed.to_owned(), true)]);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], ("rust book".to_owned(), "brave-key".to_owned()));
}

#[tokio::test]
async fn tavily_is_asked_with_its_key() {
    let seen = Seen::default();
    let base = serve(seen.clone()).await;
    let env =
        Env::new(vec![Turn::tool_call("web_search", json!({"query": "async runtime"})), Turn::text("searched")]).await;
    let mut rho = start(&env, &base, ("TAVILY_API_KEY", "tvly-key"), "tavily").await;
    rho.send(json!({"type": "prompt", "message": "look it up"})).await;
    let results = tool_results(&rho.until_agent_end().await);
    assert_eq!(
        results[0].0,
        "Search results for \"async runtime\":\n\n1. Tokio\n   https://tokio.rs/\n   An async runtime"
    );
    assert_eq!(seen.lock().unwrap()[0], ("async runtime".to_owned(), "Bearer tvly-key".to_owned()));
}

/// Without a key for a search API the tool is not offered (a warning says why).
#[tokio::test]
async fn without_a_key_there_is_no_web_search() {
    let env = Env::new(vec![Turn::text("ok")]).await;
    let args = ["--mode", "rpc", "--model", "mock/mock-model", "--no-session", "--tools", "+web_search"];
    let mut command = env.command(&args);
    command.env_remove("BRAVE_API_KEY").env_remove("TAVILY_API_KEY");
    let mut rho = Rho::start_command(command).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    rho.until_agent_end().await;
    assert!(!env.request_bodies()[0]["tools"].to_string().contains("web_search"));
}
