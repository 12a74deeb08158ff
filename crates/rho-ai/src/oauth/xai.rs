//! Signing in to xAI with a SuperGrok or X Premium subscription as pi 1.6 does: the device login
//! ([`super::device_code`]) at auth.x.ai with pi's scope (`referrer: pi`); the access token is the
//! key of the `xai` models, refreshed five minutes early with the refresh token. Only an
//! `https://` address is shown. `RHO_OAUTH_XAI_URL` moves the server (tests and proxies).

use super::device_code::DeviceLogin;
use super::providers::XAI;

const DEFAULT_HOST: &str = "https://auth.x.ai";
/// The variable that moves the server.
pub const HOST_ENV: &str = "RHO_OAUTH_XAI_URL";

fn host(env: &dyn Fn(&str) -> Option<String>) -> String {
    super::providers::server(env, &[HOST_ENV], DEFAULT_HOST)
}

/// The token endpoint (refreshes go there too).
pub fn token_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/oauth2/token", host(env))
}

fn device_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/oauth2/device/code", host(env))
}

pub const LOGIN: DeviceLogin = DeviceLogin {
    provider: &XAI,
    device_url,
    start_fields: &[("scope", "openid profile email offline_access grok-cli:access api:access"), ("referrer", "pi")],
    https_only: true,
};
