//! `openai-codex-responses` (a ChatGPT login) against the mock's Responses wire served at
//! `/backend-api/codex/responses`: the account from the token, pi's headers and pi's body.

use base64::Engine;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::common::*;

pub const WIRE: Wire = Wire {
    api: "openai-codex-responses",
    provider: "openai-codex",
    model_id: "gpt-5.2-codex",
    base_path: "/backend-api",
    streams_arguments: true,
    reports_cache_write: false,
};

/// An access token as ChatGPT's login issues one: a JWT whose claims name the account.
pub fn token(claims: serde_json::Value) -> String {
    let encode = |v: &serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.sig", encode(&json!({"alg": "RS256"})), encode(&claims))
}

#[tokio::test]
async fn a_request_carries_the_account_pis_headers_and_body() {
    let server = serve(json!([{"text": "ok"}])).await;
    let m = model(WIRE, &server);
    let access = token(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-42"}}));
    let mut context = prompt("hi");
    context.tools = vec![read_tool()];
    let events = collect(&m, &context, rho_ai::StreamOptions { api_key: Some(access.clone()), ..options() }).await;
    assert_eq!(final_message(&events).text(), "ok");

    let request = server.last_request().unwrap();
    assert_eq!(request.path, "/backend-api/codex/responses");
    assert_eq!(request.header("authorization"), Some(format!("Bearer {access}").as_str()));
    assert_eq!(request.header("chatgpt-account-id"), Some("acct-42"));
    assert_eq!(request.header("originator"), Some("pi"));
    assert_eq!(request.header("openai-beta"), Some("responses=experimental"));
    assert_eq!(request.header("session_id"), Some("session-1"));
    assert!(request.header("user-agent").is_some_and(|a| a.starts_with("pi (")));
    assert_extra_headers(&request);
    let body = &request.body;
    // The system prompt leads the input, for the prompt cache (pi 1.6); no `instructions`.
    assert_eq!(body.get("instructions"), None);
    assert_eq!(
        body["input"],
        json!([
            {"role": "developer", "content": "You are terse."},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ])
    );
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!((&body["tool_choice"], &body["parallel_tool_calls"]), (&json!("auto"), &json!(true)));
    assert_eq!(body["tools"][0]["strict"], json!(null));
    assert_eq!((&body["store"], &body["stream"]), (&json!(false), &json!(true)));
    assert_eq!(body.get("max_output_tokens"), None);
    assert_eq!(body["prompt_cache_key"], json!("session-1"));
}

#[tokio::test]
async fn a_token_without_an_account_fails_before_any_request() {
    let server = serve(json!([{"text": "never"}])).await;
    let m = model(WIRE, &server);
    let events =
        collect(&m, &prompt("hi"), rho_ai::StreamOptions { api_key: Some(token(json!({}))), ..options() }).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, rho_types::types::StopReason::Error);
    assert!(message.error_message.as_deref().unwrap().contains("rho login openai-codex"), "{message:?}");
    assert!(server.last_request().is_none());
}
