//! Logging in to ChatGPT (Plus/Pro, for its Codex models) as pi does: authorization code with
//! PKCE at auth.openai.com, the browser coming back to a loopback callback on port 1455
//! (`/auth/callback`) or the user pasting where it ended, the code exchanged (form-encoded) at
//! the token endpoint. The ChatGPT account the tokens are for is a claim of the access token;
//! pi stores it beside the tokens as `accountId`, and so does rho.

use base64::Engine;
use serde_json::{Value, json};

use super::providers::OPENAI_CODEX;
use super::refresh::{self, TokenError};
use super::store::OAuthCredentials;

pub const AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";

/// The loopback port of the callback, registered with the client id.
pub const CALLBACK_PORT: u16 = 1455;

pub const CALLBACK_PATH: &str = "/auth/callback";

pub const SCOPE: &str = "openid profile email offline_access";

/// The claim of the access token that holds the ChatGPT account.
const AUTH_CLAIM: &str = "https://api.openai.com/auth";

/// The redirect URI for a callback on `port` (`http://localhost:1455/auth/callback` normally).
pub fn redirect_uri(port: u16) -> String {
    format!("http://localhost:{port}{CALLBACK_PATH}")
}

/// The URL the user opens to log in, with pi's parameters (`originator: pi`).
pub fn authorize_url(challenge: &str, state: &str, redirect_uri: &str) -> String {
    let params = [
        ("response_type", "code"),
        ("client_id", OPENAI_CODEX.client_id),
        ("redirect_uri", redirect_uri),
        ("scope", SCOPE),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", state),
        ("id_token_add_organizations", "true"),
        ("codex_cli_simplified_flow", "true"),
        ("originator", "pi"),
    ];
    reqwest::Url::parse_with_params(AUTHORIZE_URL, params).map_or_else(|_| AUTHORIZE_URL.to_owned(), Into::into)
}

/// Exchanges `code` at the token endpoint (`RHO_OAUTH_TOKEN_URL_OPENAI_CODEX` moves it); the
/// credentials carry the account the token is for.
pub fn exchange(
    env: &dyn Fn(&str) -> Option<String>,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<OAuthCredentials, TokenError> {
    let url = OPENAI_CODEX.token_url(env);
    let mut creds = refresh::exchange_code_form(&OPENAI_CODEX, &url, code, verifier, redirect_uri)?;
    let account = account_id(&creds.access)
        .ok_or_else(|| TokenError(format!("{} login failed: the token names no ChatGPT account", OPENAI_CODEX.name)))?;
    creds.extra.insert("accountId".into(), json!(account));
    Ok(creds)
}

/// The ChatGPT account an access token (a JWT) was issued for.
pub fn account_id(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    let account = claims.get(AUTH_CLAIM)?.get("chatgpt_account_id")?.as_str()?;
    (!account.is_empty()).then(|| account.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorize_url_carries_pkce_state_and_pis_flags() {
        let url = authorize_url("chal", "st", &redirect_uri(CALLBACK_PORT));
        assert!(
            url.starts_with(
                "https://auth.openai.com/oauth/authorize?response_type=code&client_id=app_EMoamEEZ73f0CkXaXp7hrann&"
            ),
            "{url}"
        );
        assert!(url.contains("&redirect_uri=http%3A%2F%2Flocalhost%3A1455%2Fauth%2Fcallback&"), "{url}");
        assert!(
            url.contains(
                "&scope=openid+profile+email+offline_access&code_challenge=chal&code_challenge_method=S256&state=st&"
            ),
            "{url}"
        );
        assert!(
            url.ends_with("&id_token_add_organizations=true&codex_cli_simplified_flow=true&originator=pi"),
            "{url}"
        );
    }

    #[test]
    fn the_account_comes_from_the_tokens_claim() {
        let encode = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let claims = json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}});
        assert_eq!(account_id(&format!("h.{}.s", encode(claims))).as_deref(), Some("acct-1"));
        assert_eq!(account_id(&format!("h.{}.s", encode(json!({"sub": "x"})))), None);
        assert_eq!(account_id("not-a-jwt"), None);
    }
}
