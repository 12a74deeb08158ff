//! The device authorization grant (RFC 8628) of the logins that use it the standard way (Kimi
//! Code's, xAI's): a device code asked for with a form `POST`, the address (and code) shown, the
//! token endpoint polled with `urn:ietf:params:oauth:grant-type:device_code` (an interval first,
//! `authorization_pending` waited out, `slow_down` slowing down) until it gives the tokens. The
//! answers are JSON, with an error status while pending. GitHub's login polls differently (its
//! answers are all `200`, its pacing pi's own) but shows the same [`Device`]
//! ([`super::github_copilot`]).

use std::time::Duration;

use serde_json::{Map, Value};

use super::providers::{Endpoint, OAuthProvider};
use super::refresh;
use super::store::OAuthCredentials;

/// One provider's device login.
#[derive(Debug)]
pub struct DeviceLogin {
    pub provider: &'static OAuthProvider,
    /// The device authorization endpoint, as the environment places it (the token endpoint is
    /// the provider's).
    pub device_url: Endpoint,
    /// More fields of the device authorization request than `client_id` (a scope).
    pub start_fields: &'static [(&'static str, &'static str)],
    /// Only an `https://` address is shown (xAI's rule); else any web address.
    pub https_only: bool,
}

/// What the person is to do: confirm `user_code` at `verification_uri` (the address with the
/// code in it, when the server gives one).
#[derive(Debug, Clone)]
pub struct Device {
    pub device_code: String,
    pub user_code: String,
    pub verification_uri: String,
    /// How long to wait between polls, and for how long the code holds.
    pub(super) interval: Duration,
    pub(super) expires_in: Duration,
}

const DEFAULT_INTERVAL_S: f64 = 5.0;
const DEFAULT_EXPIRES_S: f64 = 15.0 * 60.0;

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
pub async fn start(login: &DeviceLogin, env: &(dyn Fn(&str) -> Option<String> + Sync)) -> Result<Device, String> {
    let name = login.provider.name;
    let mut form = vec![("client_id", login.provider.client_id)];
    form.extend_from_slice(login.start_fields);
    let (status, answer) = post_form(&(login.device_url)(env), &form).await?;
    if !(200..300).contains(&status) {
        return Err(format!("{name} device authorization failed with status {status}: {answer}"));
    }
    let text = |key: &str| answer.get(key).and_then(Value::as_str).filter(|v| !v.is_empty()).map(str::to_owned);
    let seconds =
        |key: &str, default: f64| answer.get(key).and_then(Value::as_f64).filter(|n| *n > 0.0).unwrap_or(default);
    let web = |url: Option<String>| {
        url.filter(|u| u.starts_with("https://") || (!login.https_only && u.starts_with("http://")))
    };
    let shown = web(text("verification_uri_complete")).or_else(|| web(text("verification_uri")));
    match (text("device_code"), text("user_code"), shown) {
        (Some(device_code), Some(user_code), Some(verification_uri)) => Ok(Device {
            device_code,
            user_code,
            verification_uri,
            interval: Duration::from_secs_f64(seconds("interval", DEFAULT_INTERVAL_S)),
            expires_in: Duration::from_secs_f64(seconds("expires_in", DEFAULT_EXPIRES_S)),
        }),
        _ => Err(format!("Invalid {name} device authorization response: {answer}")),
    }
}

/// Polls until the person confirmed the code; the credentials.
pub async fn wait_for_token(
    login: &DeviceLogin,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    device: &Device,
) -> Result<OAuthCredentials, String> {
    let answer = wait_for_answer(login, env, device).await?;
    credentials(login, &answer)
}

/// Polls until the person confirmed the code; the token endpoint's answer (with an
/// `access_token`).
pub async fn wait_for_answer(
    login: &DeviceLogin,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    device: &Device,
) -> Result<Value, String> {
    let name = login.provider.name;
    let url = login.provider.token_url(env);
    let deadline = tokio::time::Instant::now() + device.expires_in;
    let mut interval = device.interval;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(interval.min(deadline - tokio::time::Instant::now())).await;
        let form = [
            ("client_id", login.provider.client_id),
            ("device_code", device.device_code.as_str()),
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ];
        let (status, answer) = post_form(&url, &form).await?;
        if status >= 500 {
            return Err(format!("{name} device token request failed with status {status}"));
        }
        if (200..300).contains(&status) && answer.get("access_token").and_then(Value::as_str).is_some() {
            return Ok(answer);
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
            Some("expired_token") => return Err(format!("The {name} device code expired: log in again.")),
            Some("access_denied" | "authorization_denied") => return Err(format!("The {name} login was denied.")),
            other => {
                return Err(format!(
                    "{name} device token request failed (status {status}){}",
                    other.map(|e| format!(": {e}")).unwrap_or_default()
                ));
            }
        }
    }
    Err(format!("The {name} device code expired: log in again."))
}

/// The credentials of a token answer, the provider's margin taken off the lifetime.
pub fn credentials(login: &DeviceLogin, answer: &Value) -> Result<OAuthCredentials, String> {
    let text = |key: &str| answer.get(key).and_then(Value::as_str).filter(|v| !v.is_empty());
    let lifetime = answer
        .get("expires_in")
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n > 0.0)
        .or(login.provider.default_lifetime_s);
    match (text("access_token"), text("refresh_token"), lifetime) {
        (Some(access), Some(refresh_token), Some(lifetime)) => Ok(OAuthCredentials {
            access: access.to_owned(),
            refresh: refresh_token.to_owned(),
            expires: refresh::now_ms() + (lifetime * 1000.0) as i64 - login.provider.expiry_margin_ms,
            extra: Map::new(),
        }),
        _ => Err(format!("The {} token answer lacks a field: {answer}", login.provider.name)),
    }
}
