//! Logging in to GitHub Copilot as pi does: GitHub's device flow (a code the person enters at
//! github.com/login/device while rho polls for the GitHub token), then the GitHub token
//! exchanged for a Copilot token, which is what requests carry; the GitHub token stays the
//! refresh credential. After the login the catalogue's Copilot models are enabled for the
//! account (some, such as Claude's, must be before they answer), as pi enables them.
//! `RHO_OAUTH_GITHUB_URL` moves github.com's endpoints (tests and proxies).

use std::time::Duration;

use serde_json::{Value, json};

use super::providers::GITHUB_COPILOT;
use super::refresh::{self, TokenError};
use super::store::OAuthCredentials;

/// The variable that moves `https://github.com` (the device code and access token endpoints).
pub const GITHUB_URL_ENV: &str = "RHO_OAUTH_GITHUB_URL";
const GITHUB_URL: &str = "https://github.com";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
/// The identity Copilot's API expects beside the token (pi's).
const EDITOR_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", USER_AGENT),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];

pub use super::device_code::Device;

fn github_url(env: &(dyn Fn(&str) -> Option<String> + Sync)) -> String {
    env(GITHUB_URL_ENV)
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| GITHUB_URL.to_owned())
        .trim_end_matches('/')
        .to_owned()
}

fn client() -> Result<reqwest::Client, String> {
    crate::http::client(|builder| builder.timeout(refresh::TIMEOUT))
}

/// A form `POST` to GitHub, its JSON answer.
async fn post_form(url: &str, form: &[(&str, &str)]) -> Result<Value, String> {
    refresh::post_form_json(url, form, &[("User-Agent", USER_AGENT)]).await
}

/// Asks GitHub for a device code.
pub async fn start(env: &(dyn Fn(&str) -> Option<String> + Sync)) -> Result<Device, String> {
    let url = format!("{}/login/device/code", github_url(env));
    let answer = post_form(&url, &[("client_id", GITHUB_COPILOT.client_id), ("scope", "read:user")]).await?;
    let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
    let number = |key: &str| answer.get(key).and_then(Value::as_f64);
    match (text("device_code"), text("user_code"), text("verification_uri"), number("interval"), number("expires_in")) {
        (Some(device_code), Some(user_code), Some(verification_uri), Some(interval), Some(expires_in)) => Ok(Device {
            device_code,
            user_code,
            verification_uri,
            interval: Duration::from_secs_f64(interval.max(1.0)),
            expires_in: Duration::from_secs_f64(expires_in.max(0.0)),
        }),
        _ => Err("GitHub's device code answer lacks a field".to_owned()),
    }
}

/// Polls until the person entered the code (pi's pacing: a little over the interval GitHub
/// asks for, longer after `slow_down`); the GitHub token.
pub async fn wait_for_token(env: &(dyn Fn(&str) -> Option<String> + Sync), device: &Device) -> Result<String, String> {
    let url = format!("{}/login/oauth/access_token", github_url(env));
    let deadline = tokio::time::Instant::now() + device.expires_in;
    let (mut interval, mut factor) = (device.interval, 1.2);
    let mut slowed = false;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(interval.mul_f64(factor).min(deadline - tokio::time::Instant::now())).await;
        let form = [
            ("client_id", GITHUB_COPILOT.client_id),
            ("device_code", device.device_code.as_str()),
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ];
        let answer = post_form(&url, &form).await?;
        if let Some(token) = answer.get("access_token").and_then(Value::as_str) {
            return Ok(token.to_owned());
        }
        match answer.get("error").and_then(Value::as_str) {
            Some("authorization_pending") => {}
            Some("slow_down") => {
                slowed = true;
                interval = answer
                    .get("interval")
                    .and_then(Value::as_f64)
                    .filter(|i| *i > 0.0)
                    .map_or(interval + Duration::from_secs(5), Duration::from_secs_f64);
                factor = 1.4;
            }
            Some(error) => {
                let description = answer.get("error_description").and_then(Value::as_str);
                return Err(format!(
                    "Device flow failed: {error}{}",
                    description.map(|d| format!(": {d}")).unwrap_or_default()
                ));
            }
            None => return Err("GitHub's answer has neither a token nor an error".to_owned()),
        }
    }
    Err(if slowed {
        "Device flow timed out after slow_down answers (often a clock that drifted, in WSL or a VM)".to_owned()
    } else {
        "Device flow timed out".to_owned()
    })
}

/// The Copilot token for `github_token` (its credentials: the Copilot token to send, the GitHub
/// token to refresh it with).
pub fn exchange(
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    github_token: &str,
) -> Result<OAuthCredentials, TokenError> {
    let current = OAuthCredentials {
        access: String::new(),
        refresh: github_token.to_owned(),
        expires: 0,
        extra: serde_json::Map::new(),
    };
    refresh::refresh(&GITHUB_COPILOT, &GITHUB_COPILOT.token_url(env), &current)
}

/// Enables `models` for the account behind `token` (`POST {base}/models/{id}/policy`); a model
/// that cannot be enabled is no matter (pi goes on too). The ones enabled.
pub async fn enable_models(token: &str, base_url: &str, models: &[String]) -> usize {
    let Ok(client) = client() else { return 0 };
    let requests = models.iter().map(|id| {
        let mut request = client
            .post(format!("{}/models/{id}/policy", base_url.trim_end_matches('/')))
            .bearer_auth(token)
            .header("openai-intent", "chat-policy")
            .header("x-interaction-type", "chat-policy")
            .header("content-type", "application/json")
            .body(json!({"state": "enabled"}).to_string());
        for (name, value) in EDITOR_HEADERS {
            request = request.header(name, value);
        }
        async move { request.send().await.is_ok_and(|r| r.status().is_success()) }
    });
    futures::future::join_all(requests).await.into_iter().filter(|ok| *ok).count()
}

/// Enables the catalogue's Copilot models for the account behind the Copilot token `token`, at
/// the API the token names; the number enabled.
pub async fn enable_catalogue_models(token: &str) -> usize {
    let ids: Vec<String> = crate::catalog::provider(GITHUB_COPILOT.id)
        .map(|p| p.models.iter().map(|m| m.id.to_owned()).collect())
        .unwrap_or_default();
    enable_models(token, &crate::providers::copilot::api_base_url(token), &ids).await
}
