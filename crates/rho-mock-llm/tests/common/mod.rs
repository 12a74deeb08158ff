//! What the integration tests share: a plain HTTP client that posts to a path and reads the
//! reply as SSE events (with eventsource-stream), keeping what arrived before a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use rho_mock_llm::{MockServer, Script, Turn};
use serde_json::{Value, json};

pub const ANTHROPIC: &str = "/v1/messages";
pub const COMPLETIONS: &str = "/v1/chat/completions";
pub const RESPONSES: &str = "/v1/responses";
pub const GEMINI: &str = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse";

/// One event as a client sees it.
#[derive(Debug, Clone)]
pub struct Ev {
    /// The `event:` name (`message` when the line is absent).
    pub event: String,
    pub data: String,
}

impl Ev {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("event data is not JSON ({e}): {}", self.data))
    }
}

/// A reply read to its end.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub events: Vec<Ev>,
    /// Why the body stopped early (transport failure), if it did.
    pub transport_error: Option<String>,
    /// The raw body text of a non-success answer.
    pub error_body: Option<String>,
}

impl Reply {
    pub fn names(&self) -> Vec<&str> {
        self.events.iter().map(|e| e.event.as_str()).collect()
    }

    pub fn jsons(&self) -> Vec<Value> {
        self.events.iter().map(Ev::json).collect()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn error_json(&self) -> Value {
        serde_json::from_str(self.error_body.as_deref().expect("an error body")).expect("error body is JSON")
    }
}

/// A client for the mock's plain-HTTP address. reqwest is built without a crypto provider of its
/// own (rho hands it its TLS set-up); these tests speak no TLS, but a client needs a provider.
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().expect("client")
}

/// A request body in the shape each API expects (the OpenAI one asks for usage).
pub fn body_for(path: &str, marker: &str) -> Value {
    if path.contains("chat/completions") {
        json!({"model": "gpt-test", "stream": true, "stream_options": {"include_usage": true},
               "messages": [{"role": "user", "content": marker}]})
    } else if path.contains("responses") {
        json!({"model": "gpt-test", "stream": true, "input": marker})
    } else if path.contains("models/") {
        json!({"contents": [{"role": "user", "parts": [{"text": marker}]}]})
    } else {
        json!({"model": "claude-test", "stream": true, "max_tokens": 100,
               "messages": [{"role": "user", "content": marker}]})
    }
}

pub async fn post(server: &MockServer, path: &str, body: &Value) -> Reply {
    post_url(&format!("{}{path}", server.url()), body).await
}

pub async fn post_url(url: &str, body: &Value) -> Reply {
    let response = client()
        .post(url)
        .header("x-api-key", "test-key")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("request sent");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    if !response.status().is_success() {
        let text = response.text().await.expect("error body");
        return Reply { status, headers, events: Vec::new(), transport_error: None, error_body: Some(text) };
    }
    let mut stream = response.bytes_stream().eventsource();
    let mut events = Vec::new();
    let mut transport_error = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => events.push(Ev { event: e.event, data: e.data }),
            Err(EventStreamError::Transport(e)) => {
                transport_error = Some(format!("{e:?}"));
                break;
            }
            Err(e) => panic!("SSE decoding failed: {e}"),
        }
    }
    Reply { status, headers, events, transport_error, error_body: None }
}

pub async fn serve(turns: Vec<Turn>) -> MockServer {
    MockServer::start(Script::new(turns)).await.expect("server starts")
}

/// Serves one turn and posts one request for it.
pub async fn one(path: &str, turn: Turn) -> Reply {
    let server = serve(vec![turn]).await;
    post(&server, path, &body_for(path, "hello")).await
}

/// Serves one turn and returns the raw body of the answer to one request (for what an SSE
/// decoder would drop: text written without framing).
pub async fn one_raw(path: &str, turn: Turn) -> String {
    let server = serve(vec![turn]).await;
    let url = format!("{}{path}", server.url());
    let response = client().post(&url).body(body_for(path, "hello").to_string()).send().await.expect("request sent");
    response.text().await.expect("body")
}
