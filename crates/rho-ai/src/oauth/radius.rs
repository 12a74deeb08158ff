//! Signing in to Radius, pi's gateway, as pi 1.6 does from another device: the device login
//! ([`super::device_code`]) at the gateway (`/v1/oauth/device`, then `/v1/oauth/token`, client
//! `pi-gateway`, scope `gateway offline_access`); the access token is the key of the `radius`
//! models, refreshed a minute early with the refresh token. pi's `PI_RADIUS_GATEWAY` moves the
//! gateway. (pi also offers a browser sign-in, which rho does not: the device login works from
//! any machine.)

use super::device_code::DeviceLogin;
use super::providers::RADIUS;

const DEFAULT_GATEWAY: &str = "https://radius.pi.dev";
const GATEWAY_ENV: &str = "PI_RADIUS_GATEWAY";

/// The gateway: pi's variable, else radius.pi.dev.
pub fn gateway(env: &dyn Fn(&str) -> Option<String>) -> String {
    super::providers::server(env, &[GATEWAY_ENV], DEFAULT_GATEWAY)
}

/// The token endpoint (refreshes go there too).
pub fn token_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/v1/oauth/token", gateway(env))
}

fn device_url(env: &dyn Fn(&str) -> Option<String>) -> String {
    format!("{}/v1/oauth/device", gateway(env))
}

pub const LOGIN: DeviceLogin = DeviceLogin {
    provider: &RADIUS,
    device_url,
    start_fields: &[("scope", "gateway offline_access")],
    https_only: false,
};
