//! Signing in to Kimi Code (the subscription) as pi 1.6 does: the device authorization grant
//! (RFC 8628) at auth.kimi.com, answered in JSON: a code the person confirms at the address shown
//! while rho polls for the tokens; the access token is then the key of the `kimi-coding` models
//! and is refreshed with the refresh token (a form `refresh_token` grant). pi's
//! `KIMI_CODE_OAUTH_HOST` (or `KIMI_OAUTH_HOST`) moves the server, for tests and proxies.

use std::time::Duration;

use serde_json::{Map, Value};

use super::providers::KIMI_CODING;
use super::refresh;
use super::store::OAuthCredentials;

const DEFAULT_HOST: &str = "https://auth.kimi.com";
/// pi's variables that move the server.
const HOST_ENV: [&str; 2] = ["KIMI_CODE_OAUTH_HOST", "KIMI_OAUTH_HOST"];
const DEFAULT_INTERVAL_S: f64 = 5.0;
const DEFAULT_EXPIRES_S: f64 = 15.0 * 60.0;

/// The server: pi's variable, else auth.kimi.com.
pub fn host(env: &dyn Fn(&str) -> Option<String>) -> String {
    HOST_ENV
        .iter()
        .find_map(|name| env(name).filter(|h| !h.is_empty()))
        .unwrap_or_else(|| DEFAULT_HOST.to_owned())
        .trim_end_matches('/')
        .to_owned()
}

/// The token endpoint (refreshes go there too).
pub fn token_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/api/oauth/token", host(env))
}

/// What the person is to do: confirm `user_code` at `verification_uri` (the address with the
/// code already in it).
#[derive(Debug, Clone)]
pub struct Device {
    pub device_code: String,
    pub user_code: String,
    pub verification_uri: String,
    interval: Duration,
    expires_in: Duration,
}

/// A form `POST`: the status and the JSON answer (`Null` when it is not JSON).
async fn post_form(url: &str, form: &[(&str, &str)]) -> Result<(u16, Value), String> {
    let client = crate::http::client(|builder| builder.timeout(refresh::TIMEOUT))?;
    let response = client
        .post(url)
        .header("Accept", "application/json")
        .form(form)
        .send()
        .await
        .map_err(|e| crate::redact::reqwest_error(&e))?;
    let status = response.status().as_u16();
    let text = response.text().await.map_err(|e| format!("reading the answer of {url}: {e}"))?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// Asks for a device code.
pub async fn start(env: &(dyn Fn(&str) -> Option<String> + Sync)) -> Result<Device, String> {
    let url = format!("{}/api/oauth/device_authorization", host(env));
    let (status, answer) = post_form(&url, &[("client_id", KIMI_CODING.client_id)]).await?;
    if !(200..300).contains(&status) {
        return Err(format!("Kimi Code device authorization failed with status {status}: {answer}"));
    }
    let text = |key: &str| answer.get(key).and_then(Value::as_str).filter(|v| !v.is_empty()).map(str::to_owned);
    let seconds =
        |key: &str, default: f64| answer.get(key).and_then(Value::as_f64).filter(|n| *n > 0.0).unwrap_or(default);
    let web = |url: Option<String>| url.filter(|u| u.starts_with("https://") || u.starts_with("http://"));
    match (text("device_code"), text("user_code"), web(text("verification_uri_complete"))) {
        (Some(device_code), Some(user_code), Some(verification_uri)) => Ok(Device {
            device_code,
            user_code,
            verification_uri,
            interval: Duration::from_secs_f64(seconds("interval", DEFAULT_INTERVAL_S)),
            expires_in: Duration::from_secs_f64(seconds("expires_in", DEFAULT_EXPIRES_S)),
        }),
        _ => Err(format!("Invalid Kimi Code device authorization response: {answer}")),
    }
}

/// Polls until the person confirmed the code (an interval first, as pi waits); the credentials.
pub async fn wait_for_token(
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    device: &Device,
) -> Result<OAuthCredentials, String> {
    let url = token_url(env);
    let deadline = tokio::time::Instant::now() + device.expires_in;
    let mut interval = device.interval;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(interval.min(deadline - tokio::time::Instant::now())).await;
        let form = [
            ("client_id", KIMI_CODING.client_id),
            ("device_code", device.device_code.as_str()),
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ];
        let (status, answer) = post_form(&url, &form).await?;
        if status >= 500 {
            return Err(format!("Kimi Code device token request failed with status {status}"));
        }
        if (200..300).contains(&status) && answer.get("access_token").is_some() {
            return credentials(&answer);
        }
        match answer.get("error").and_then(Value::as_str) {
            Some("authorization_pending") => {}
            Some("slow_down") => {
                interval = answer
                    .get("interval")
                    .and_then(Value::as_f64)
                    .filter(|i| *i > 0.0)
                    .map_or(interval + Duration::from_secs(5), Duration::from_secs_f64);
            }
            Some("expired_token") => return Err("Kimi Code device authorization expired. Please restart login.".into()),
            Some("access_denied") => return Err("Kimi Code login was denied.".into()),
            other => {
                return Err(format!(
                    "Kimi Code device token request failed (status {status}){}",
                    other.map(|e| format!(": {e}")).unwrap_or_default()
                ));
            }
        }
    }
    Err("Kimi Code device authorization expired. Please restart login.".into())
}

/// The credentials of a token answer: all three fields, as pi requires them.
fn credentials(answer: &Value) -> Result<OAuthCredentials, String> {
    let text = |key: &str| answer.get(key).and_then(Value::as_str).filter(|v| !v.is_empty());
    let expires_in = answer.get("expires_in").and_then(Value::as_f64).filter(|n| n.is_finite() && *n > 0.0);
    match (text("access_token"), text("refresh_token"), expires_in) {
        (Some(access), Some(refresh_token), Some(expires_in)) => Ok(OAuthCredentials {
            access: access.to_owned(),
            refresh: refresh_token.to_owned(),
            expires: refresh::now_ms() + (expires_in * 1000.0) as i64,
            extra: Map::new(),
        }),
        _ => Err(format!("Kimi Code token poll response missing fields: {answer}")),
    }
}
