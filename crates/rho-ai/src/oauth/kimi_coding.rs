//! Signing in to Kimi Code (the subscription) as pi 1.6 does: the device login
//! ([`super::device_code`]) at auth.kimi.com; the access token is then the key of the
//! `kimi-coding` models and is refreshed with the refresh token (a form `refresh_token` grant).
//! pi's `KIMI_CODE_OAUTH_HOST` (or `KIMI_OAUTH_HOST`) moves the server, for tests and proxies.

use super::device_code::DeviceLogin;
use super::providers::KIMI_CODING;

const DEFAULT_HOST: &str = "https://auth.kimi.com";
/// pi's variables that move the server.
const HOST_ENV: [&str; 2] = ["KIMI_CODE_OAUTH_HOST", "KIMI_OAUTH_HOST"];

/// The server: pi's variable, else auth.kimi.com.
pub fn host(env: &dyn Fn(&str) -> Option<String>) -> String {
    super::providers::server(env, &HOST_ENV, DEFAULT_HOST)
}

/// The token endpoint (refreshes go there too).
pub fn token_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/api/oauth/token", host(env))
}

fn device_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/api/oauth/device_authorization", host(env))
}

pub const LOGIN: DeviceLogin = DeviceLogin { provider: &KIMI_CODING, device_url, start_fields: &[], https_only: false };
