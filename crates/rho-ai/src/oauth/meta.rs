//! Signing in to Meta's Model API with a Muse subscription as pi 1.6 does: the device login
//! ([`super::device_code`]) at auth.meta.com gives an identity token, which the API does not
//! take; it is exchanged for a Model API key at the key-mint endpoint (a key lives about a day).
//! Stored as pi stores it: the identity token as `refresh`, the key as `access`, so a stale key
//! is minted again with the identity token. The identity token cannot be renewed: a mint refused
//! with 401 or 403 means signing in again. `RHO_OAUTH_META_URL` moves the login server and
//! `RHO_OAUTH_META_KEY_URL` the mint endpoint (tests and proxies).

use serde_json::Value;

use super::device_code::DeviceLogin;
use super::providers::META;
use super::refresh;
use super::store::OAuthCredentials;

const DEFAULT_HOST: &str = "https://auth.meta.com";
const HOST_ENV: &str = "RHO_OAUTH_META_URL";
const KEY_URL: &str = "https://api.meta.ai/muse-code/key";
const KEY_URL_ENV: &str = "RHO_OAUTH_META_KEY_URL";
/// How long a minted key is taken to live.
const KEY_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;

fn host(env: &dyn Fn(&str) -> Option<String>) -> String {
    super::providers::server(env, &[HOST_ENV], DEFAULT_HOST)
}

/// The device token endpoint.
pub fn token_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/oidc/device/token/", host(env))
}

fn device_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/oidc/device/authorization/", host(env))
}

pub const LOGIN: DeviceLogin = DeviceLogin { provider: &META, device_url, start_fields: &[], https_only: true };

/// A Model API key for `identity` (the identity token), as the credentials pi stores.
pub fn mint(env: &dyn Fn(&str) -> Option<String>, identity: &str) -> Result<OAuthCredentials, String> {
    let url = super::providers::server(env, &[KEY_URL_ENV], KEY_URL);
    let (status, answer) = refresh::post_bearer_json(&url, identity, &[("x-api-version", "1.0.0")])?;
    if status == 401 || status == 403 {
        return Err(format!("Meta session expired (status {status}): sign in again with `rho login meta`"));
    }
    if !(200..300).contains(&status) {
        return Err(format!("Meta API key mint failed with status {status}"));
    }
    let key = answer.get("api_key").and_then(Value::as_str).filter(|k| !k.is_empty());
    let Some(key) = key else {
        let setup = answer.get("action_url").and_then(Value::as_str).filter(|u| u.starts_with("https://"));
        return Err(format!(
            "Meta did not issue an API key.{}",
            setup.map(|u| format!(" Complete setup at {u}")).unwrap_or_default()
        ));
    };
    Ok(OAuthCredentials {
        access: key.to_owned(),
        refresh: identity.to_owned(),
        expires: refresh::now_ms() + KEY_LIFETIME_MS,
        extra: serde_json::Map::new(),
    })
}
