//! Logging in to an Anthropic subscription (Claude Pro/Max) as pi does: authorization code with
//! PKCE at claude.ai, the code coming back to a loopback callback or pasted by the user (as
//! `code#state`, the full redirect URL, or its query: [`super::answer`]), then exchanged at the
//! token endpoint.
//! pi uses the PKCE verifier as the `state` too; so does rho, so either can finish the other's
//! flow.

use super::providers::ANTHROPIC;
use super::refresh::{self, TokenError};
use super::store::OAuthCredentials;

pub const AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";

/// The loopback port of the callback, registered with the client id.
pub const CALLBACK_PORT: u16 = 53692;

/// Moves the callback to another port (`0`: any free one). For tests only: Anthropic sends the
/// browser back only to the registered port.
pub const CALLBACK_PORT_ENV: &str = "RHO_OAUTH_CALLBACK_PORT";

pub const CALLBACK_PATH: &str = "/callback";

/// The redirect URI for a callback on `port` (`http://localhost:53692/callback` normally).
pub fn redirect_uri(port: u16) -> String {
    format!("http://localhost:{port}{CALLBACK_PATH}")
}

pub const SCOPES: &str =
    "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";

/// The URL the user opens to log in.
pub fn authorize_url(challenge: &str, state: &str, redirect_uri: &str) -> String {
    let params = [
        ("code", "true"),
        ("client_id", ANTHROPIC.client_id),
        ("response_type", "code"),
        ("redirect_uri", redirect_uri),
        ("scope", SCOPES),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", state),
    ];
    // A constant URL: parsing it cannot fail.
    reqwest::Url::parse_with_params(AUTHORIZE_URL, params).map_or_else(|_| AUTHORIZE_URL.to_owned(), Into::into)
}

/// A login under way: its PKCE verifier (also its state) and where the browser comes back.
#[derive(Debug, Clone)]
pub struct Flow {
    pub verifier: String,
    pub redirect_uri: String,
}

/// Exchanges `code` at the token endpoint (`RHO_OAUTH_TOKEN_URL_ANTHROPIC` moves it).
pub fn exchange(
    env: &dyn Fn(&str) -> Option<String>,
    flow: &Flow,
    code: &str,
    state: &str,
) -> Result<OAuthCredentials, TokenError> {
    refresh::exchange_code(&ANTHROPIC, &ANTHROPIC.token_url(env), code, state, &flow.verifier, &flow.redirect_uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_authorize_url_carries_pkce_and_state() {
        let url = authorize_url("chal", "st", &redirect_uri(CALLBACK_PORT));
        assert!(url.starts_with("https://claude.ai/oauth/authorize?code=true&client_id=9d1c250a-"), "{url}");
        assert!(url.contains("&redirect_uri=http%3A%2F%2Flocalhost%3A53692%2Fcallback&"), "{url}");
        assert!(url.contains("&scope=org%3Acreate_api_key+user%3Aprofile+"), "{url}");
        assert!(url.ends_with("&code_challenge=chal&code_challenge_method=S256&state=st"), "{url}");
    }
}
