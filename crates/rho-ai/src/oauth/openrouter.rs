//! Signing in with OpenRouter as pi 1.6 does: PKCE at openrouter.ai, the browser coming back to
//! a loopback callback on a port of the system's choosing under a random path (OpenRouter sends
//! no `state`; the path keeps stray requests out), and the code exchanged for an API key the
//! user controls on OpenRouter's side. pi files the key as an `oauth` entry that never expires
//! (`refresh` empty, `expires` JavaScript's largest safe integer), and so does rho.

use serde_json::{Map, Value, json};

use super::providers::OPENROUTER;
use super::refresh::{self, TokenError};
use super::store::OAuthCredentials;

pub const AUTHORIZE_URL: &str = "https://openrouter.ai/auth";

/// The expiry pi stores for a key that does not expire (`Number.MAX_SAFE_INTEGER`).
pub const NEVER_EXPIRES: i64 = 9_007_199_254_740_991;

/// The URL the user opens: the callback, and the PKCE challenge.
pub fn authorize_url(challenge: &str, callback_url: &str) -> String {
    let params = [("callback_url", callback_url), ("code_challenge", challenge), ("code_challenge_method", "S256")];
    reqwest::Url::parse_with_params(AUTHORIZE_URL, params).map_or_else(|_| AUTHORIZE_URL.to_owned(), Into::into)
}

/// Exchanges `code` for the key at OpenRouter's endpoint (`RHO_OAUTH_TOKEN_URL_OPENROUTER` moves
/// it).
pub fn exchange(
    env: &dyn Fn(&str) -> Option<String>,
    code: &str,
    verifier: &str,
) -> Result<OAuthCredentials, TokenError> {
    let url = OPENROUTER.token_url(env);
    let body = json!({"code": code, "code_verifier": verifier, "code_challenge_method": "S256"});
    let answer = refresh::post_json_answer(&url, body)
        .map_err(|e| TokenError(format!("{} sign-in failed: {e}", OPENROUTER.name)))?;
    let key = answer.get("key").and_then(Value::as_str).filter(|k| !k.is_empty()).ok_or_else(|| {
        TokenError(format!("{} sign-in failed: the answer carries no \"key\" (from {url})", OPENROUTER.name))
    })?;
    Ok(OAuthCredentials { access: key.to_owned(), refresh: String::new(), expires: NEVER_EXPIRES, extra: Map::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorize_url_names_the_callback_and_the_challenge() {
        let url = authorize_url("abc", "http://127.0.0.1:5000/oauth/callback/x-y");
        assert_eq!(
            url,
            "https://openrouter.ai/auth?callback_url=http%3A%2F%2F127.0.0.1%3A5000%2Foauth%2Fcallback%2Fx-y\
             &code_challenge=abc&code_challenge_method=S256"
        );
    }
}
