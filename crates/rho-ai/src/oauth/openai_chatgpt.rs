//! "Sign in with ChatGPT" for the `openai` provider (pi 1.6): a ChatGPT subscription's user
//! token sent straight to api.openai.com's Responses API. Authorization code with PKCE at
//! auth.openai.com, as a public client that registers itself at each login (`client_id`
//! `dynamic_agent_client`; the callback names the client id issued, which the exchange and every
//! refresh then use), for the resource `https://api.openai.com/v1`, with the agent host's id
//! (`urn:uuid:<deviceId>`). The browser comes back to `http://127.0.0.1:1455/auth/callback`.
//! The grant must include the `chatgpt.tokens.use.direct` scope. Stored as pi stores it:
//! `{type: "oauth", access, refresh, expires, clientId, scopes}` under `openai`.

use serde_json::{Value, json};

use super::providers::OPENAI_CHATGPT;
use super::refresh::{self, TokenError};
use super::store::OAuthCredentials;

pub const AUTHORIZE_URL: &str = "https://auth.openai.com/api/accounts/authorize";

/// The client id a login asks with: the server registers a client and names it in the callback.
pub const DYNAMIC_CLIENT_ID: &str = "dynamic_agent_client";

/// The API the tokens are for (sent with the exchange and every refresh).
pub const RESOURCE: &str = "https://api.openai.com/v1";

pub const CALLBACK_PORT: u16 = 1455;

pub const CALLBACK_PATH: &str = "/auth/callback";

/// The scope that lets the token reach the API directly.
pub const DIRECT_TOKEN_SCOPE: &str = "chatgpt.tokens.use.direct";

pub const SCOPE: &str = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";

/// How the consent page names the agent.
const AGENT_NAME_HINT: &str = "rho";

/// The redirect URI for a callback on `port`.
pub fn redirect_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}{CALLBACK_PATH}")
}

/// The URL the user opens to sign in; `device_id` is this installation's (a UUID).
pub fn authorize_url(challenge: &str, state: &str, nonce: &str, redirect_uri: &str, device_id: &str) -> String {
    let host = format!("urn:uuid:{}", device_id.to_ascii_lowercase());
    let params = [
        ("client_id", DYNAMIC_CLIENT_ID),
        ("agent_name_hint", AGENT_NAME_HINT),
        ("ext_agent_host_id", host.as_str()),
        ("response_type", "code"),
        ("redirect_uri", redirect_uri),
        ("resource", RESOURCE),
        ("scope", SCOPE),
        ("state", state),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("nonce", nonce),
    ];
    reqwest::Url::parse_with_params(AUTHORIZE_URL, params).map_or_else(|_| AUTHORIZE_URL.to_owned(), Into::into)
}

/// Exchanges `code` for the client `client_id` the callback named (`RHO_OAUTH_TOKEN_URL_OPENAI`
/// moves the token endpoint).
pub fn exchange(
    env: &dyn Fn(&str) -> Option<String>,
    code: &str,
    verifier: &str,
    client_id: &str,
    redirect_uri: &str,
) -> Result<OAuthCredentials, TokenError> {
    let url = OPENAI_CHATGPT.token_url(env);
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", client_id),
        ("code", code),
        ("code_verifier", verifier),
        ("redirect_uri", redirect_uri),
        ("resource", RESOURCE),
    ];
    let answer = refresh::post_form(&url, &form)
        .map_err(|e| TokenError(format!("{} login failed: {e}", OPENAI_CHATGPT.name)))?;
    if answer.get("id_token").and_then(Value::as_str).is_none_or(|t| t.trim().is_empty()) {
        return Err(TokenError(format!("{} login failed: the answer has no ID token", OPENAI_CHATGPT.name)));
    }
    credentials(&answer, client_id, None)
}

/// The credentials a token answer gives for `client_id` (`previous`: the refresh token kept when
/// the answer has none).
pub fn credentials(answer: &Value, client_id: &str, previous: Option<&str>) -> Result<OAuthCredentials, TokenError> {
    let failed = |problem: &str| TokenError(format!("{}: {problem}", OPENAI_CHATGPT.name));
    let scopes: Vec<&str> =
        answer.get("scope").and_then(Value::as_str).unwrap_or_default().split_whitespace().collect();
    if !scopes.contains(&DIRECT_TOKEN_SCOPE) {
        return Err(failed(&format!("the grant does not include {DIRECT_TOKEN_SCOPE}")));
    }
    let mut creds = refresh::granted(&OPENAI_CHATGPT, answer, previous).map_err(|p| failed(&p))?;
    creds.extra.insert("clientId".into(), json!(client_id));
    creds.extra.insert("scopes".into(), json!(scopes));
    Ok(creds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorize_url_asks_for_a_direct_token_for_this_installation() {
        let url = authorize_url("chal", "st", "nonce", &redirect_uri(CALLBACK_PORT), "AB-CD");
        let parsed = reqwest::Url::parse(&url).unwrap();
        let param = |name: &str| parsed.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
        assert_eq!(param("client_id").as_deref(), Some(DYNAMIC_CLIENT_ID));
        assert_eq!(param("ext_agent_host_id").as_deref(), Some("urn:uuid:ab-cd"));
        assert_eq!(param("redirect_uri").as_deref(), Some("http://127.0.0.1:1455/auth/callback"));
        assert_eq!(param("resource").as_deref(), Some(RESOURCE));
        assert!(param("scope").unwrap().ends_with(DIRECT_TOKEN_SCOPE));
    }

    #[test]
    fn a_grant_without_the_direct_scope_is_refused() {
        let answer = json!({"access_token": "a", "refresh_token": "r", "expires_in": 3600, "scope": "openid"});
        assert!(credentials(&answer, "client-1", None).unwrap_err().to_string().contains(DIRECT_TOKEN_SCOPE));
        let answer = json!({"access_token": "a", "refresh_token": "r", "expires_in": 3600, "scope": SCOPE});
        let creds = credentials(&answer, "client-1", None).unwrap();
        assert_eq!((creds.extra["clientId"].as_str(), creds.access.as_str()), (Some("client-1"), "a"));
    }
}
