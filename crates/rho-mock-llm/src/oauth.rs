//! The token endpoints of the subscription logins, for testing refresh and login flows without
//! the providers: `POST /v1/oauth/token` (Anthropic, JSON), `POST /oauth/token` (OpenAI's
//! ChatGPT login, form-encoded), `GET /copilot_internal/v2/token` (GitHub Copilot's token
//! exchange, the GitHub token as Bearer), and GitHub's device flow (`POST /login/device/code`,
//! then `POST /login/oauth/access_token` polled: pending once, then the token). AWS's container
//! credentials endpoint (`GET /aws/container-credentials`, what `AWS_CONTAINER_CREDENTIALS_FULL_URI`
//! names in an ECS task) hands out [`CONTAINER_ACCESS_KEY_ID`]'s temporary credentials, and
//! STS's `AssumeRoleWithWebIdentity` (`POST /aws/sts/`, what `AWS_ENDPOINT_URL_STS` can name; an
//! EKS pod's web identity) hands out [`WEB_IDENTITY_ACCESS_KEY_ID`]'s, in STS's XML.
//!
//! A test says which refresh tokens and authorization codes are good ([`OAuthGrants`]) and what
//! each gives. Each is good once, as a real server rotates them: a second refresh with the same
//! token is refused with `invalid_grant`, so a test sees when two clients refreshed. Requests
//! are recorded with the others (`api` = `oauth`).

use std::collections::HashMap;

use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};

/// The tokens an accepted grant gives.
#[derive(Debug, Clone, PartialEq)]
pub struct IssuedTokens {
    pub access_token: String,
    /// `None` leaves `refresh_token` out of the answer.
    pub refresh_token: Option<String>,
    /// Seconds; for the Copilot exchange, `expires_at` is now plus this.
    pub expires_in: u64,
}

/// The grants the token endpoints accept.
#[derive(Debug, Default)]
pub struct OAuthGrants {
    refresh: HashMap<String, IssuedTokens>,
    codes: HashMap<String, IssuedTokens>,
    /// GitHub device logins: the device code handed out, the GitHub token it gives, and whether
    /// it was polled once already (the first poll is `authorization_pending`).
    devices: Vec<(String, String, bool)>,
    /// Standard device logins (Kimi Code's, xAI's): the device code handed out, the tokens it
    /// gives, and whether it was polled once already.
    standard_devices: Vec<(String, IssuedTokens, bool)>,
}

impl OAuthGrants {
    pub fn accept_refresh(&mut self, refresh_token: &str, issued: IssuedTokens) {
        self.refresh.insert(refresh_token.to_owned(), issued);
    }

    pub fn accept_code(&mut self, code: &str, issued: IssuedTokens) {
        self.codes.insert(code.to_owned(), issued);
    }

    /// The next GitHub device login gives `github_token` once approved (at the second poll).
    pub fn accept_device(&mut self, github_token: &str) {
        let code = format!("device-{}", self.devices.len() + 1);
        self.devices.push((code, github_token.to_owned(), false));
    }

    /// The next standard device login (Kimi Code's, xAI's) gives `issued` once approved (at
    /// the second poll).
    pub fn accept_device_login(&mut self, issued: IssuedTokens) {
        let code = format!("std-device-{}", self.standard_devices.len() + 1);
        self.standard_devices.push((code, issued, false));
    }
}

/// The access key id of the credentials the container credentials endpoint hands out; the
/// secret is `mock-container-secret` and the session token [`CONTAINER_SESSION_TOKEN`].
pub const CONTAINER_ACCESS_KEY_ID: &str = "ASIAMOCKCONTAINER";
pub const CONTAINER_SESSION_TOKEN: &str = "mock-container-session";
const CONTAINER_CREDENTIALS_PATH: &str = "/aws/container-credentials";

/// The access key id of the credentials STS's `AssumeRoleWithWebIdentity` hands out; the session
/// token is [`WEB_IDENTITY_SESSION_TOKEN`].
pub const WEB_IDENTITY_ACCESS_KEY_ID: &str = "ASIAMOCKWEBIDENTITY";
pub const WEB_IDENTITY_SESSION_TOKEN: &str = "mock-web-identity-session";

/// Whether `path` is the mock's STS endpoint.
pub(crate) fn is_sts_path(path: &str) -> bool {
    path.trim_end_matches('/') == "/aws/sts"
}

/// STS's answer to `body` (a form): credentials for `AssumeRoleWithWebIdentity` with a token,
/// an STS error otherwise.
pub(crate) fn sts_answer(body: &[u8]) -> (StatusCode, String) {
    let form = form_params(body).unwrap_or_default();
    let param = |name: &str| form.get(name).map(String::as_str).filter(|v| !v.is_empty());
    if param("Action") != Some("AssumeRoleWithWebIdentity") || param("WebIdentityToken").is_none() {
        let error = "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code>\
                     <Message>mock-llm serves AssumeRoleWithWebIdentity with a token only</Message></Error>\
                     <RequestId>mock</RequestId></ErrorResponse>";
        return (StatusCode::BAD_REQUEST, error.to_owned());
    }
    let answer = format!(
        "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\
         <AssumeRoleWithWebIdentityResult><Credentials>\
         <AccessKeyId>{WEB_IDENTITY_ACCESS_KEY_ID}</AccessKeyId><SecretAccessKey>mock-web-identity-secret</SecretAccessKey>\
         <SessionToken>{WEB_IDENTITY_SESSION_TOKEN}</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration>\
         </Credentials><AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/mock/rho</Arn>\
         <AssumedRoleId>AROAMOCK:rho</AssumedRoleId></AssumedRoleUser></AssumeRoleWithWebIdentityResult>\
         <ResponseMetadata><RequestId>mock</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>"
    );
    (StatusCode::OK, answer)
}

/// The label requests to these paths are recorded under.
pub const API_LABEL: &str = "oauth";

/// Whether `path` is one of the token endpoints.
pub(crate) fn is_token_path(path: &str) -> bool {
    matches!(
        path,
        "/v1/oauth/token"
            | "/oauth/token"
            | "/copilot_internal/v2/token"
            | "/login/device/code"
            | "/login/oauth/access_token"
            | OPENROUTER_KEYS_PATH
            | KIMI_DEVICE_PATH
            | KIMI_TOKEN_PATH
            | XAI_DEVICE_PATH
            | XAI_TOKEN_PATH
            | META_DEVICE_PATH
            | META_TOKEN_PATH
            | META_KEY_PATH
            | RADIUS_DEVICE_PATH
            | CONTAINER_CREDENTIALS_PATH
    )
}

/// OpenRouter's sign-in exchanges its code for a key here.
const OPENROUTER_KEYS_PATH: &str = "/api/v1/auth/keys";
/// The standard device logins (RFC 8628, JSON answers, errors with status 400): Kimi Code's,
/// xAI's, Meta's and Radius's.
const KIMI_DEVICE_PATH: &str = "/api/oauth/device_authorization";
const KIMI_TOKEN_PATH: &str = "/api/oauth/token";
const XAI_DEVICE_PATH: &str = "/oauth2/device/code";
const XAI_TOKEN_PATH: &str = "/oauth2/token";
const META_DEVICE_PATH: &str = "/oidc/device/authorization/";
/// Radius's device login (its token endpoint is `/v1/oauth/token`, taking a form there).
const RADIUS_DEVICE_PATH: &str = "/v1/oauth/device";
const META_TOKEN_PATH: &str = "/oidc/device/token/";
/// Meta's key mint: a key for the identity token given as Bearer (`mk-<token>`); the identity
/// token `revoked` is refused with 401.
const META_KEY_PATH: &str = "/muse-code/key";

/// The answer of a token endpoint: status and JSON body.
pub(crate) fn answer(
    grants: &mut OAuthGrants,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> (StatusCode, Value) {
    if path == "/copilot_internal/v2/token" {
        return copilot(grants, method, headers);
    }
    if path == CONTAINER_CREDENTIALS_PATH {
        let credentials = json!({
            "AccessKeyId": CONTAINER_ACCESS_KEY_ID,
            "SecretAccessKey": "mock-container-secret",
            "Token": CONTAINER_SESSION_TOKEN,
            "Expiration": "2099-01-01T00:00:00Z",
        });
        return (StatusCode::OK, credentials);
    }
    if path == "/login/device/code" || path == "/login/oauth/access_token" {
        return device(grants, path, body);
    }
    if path == OPENROUTER_KEYS_PATH {
        return openrouter_key(grants, body);
    }
    if [KIMI_DEVICE_PATH, KIMI_TOKEN_PATH, XAI_DEVICE_PATH, XAI_TOKEN_PATH, META_DEVICE_PATH, META_TOKEN_PATH]
        .contains(&path)
        || path == RADIUS_DEVICE_PATH
    {
        return standard_device(grants, path, body);
    }
    let form = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
    if path == "/v1/oauth/token" && form {
        // Radius's token endpoint: a form, where Anthropic's takes JSON.
        return standard_device(grants, path, body);
    }
    if path == META_KEY_PATH {
        return meta_key(headers);
    }
    if method != Method::POST {
        return refuse(StatusCode::METHOD_NOT_ALLOWED, "invalid_request", "the token endpoint takes POST");
    }
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let params = match (path, content_type) {
        ("/v1/oauth/token", t) if t.starts_with("application/json") => json_params(body),
        ("/oauth/token", t) if t.starts_with("application/x-www-form-urlencoded") => form_params(body),
        _ => None,
    };
    let Some(params) = params else {
        return refuse(StatusCode::BAD_REQUEST, "invalid_request", "the body is not in this endpoint's encoding");
    };
    let param = |name: &str| params.get(name).map(String::as_str).filter(|v| !v.is_empty());
    if param("client_id").is_none() {
        return refuse(StatusCode::UNAUTHORIZED, "invalid_client", "client_id is missing");
    }
    let issued = match param("grant_type") {
        Some("refresh_token") => param("refresh_token").and_then(|t| grants.refresh.remove(t)),
        Some("authorization_code") => {
            if param("code_verifier").is_none() || param("redirect_uri").is_none() {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "code_verifier and redirect_uri are required",
                );
            }
            param("code").and_then(|c| grants.codes.remove(c))
        }
        _ => return refuse(StatusCode::BAD_REQUEST, "unsupported_grant_type", "grant_type is not supported"),
    };
    match issued {
        Some(tokens) => {
            let mut answer =
                json!({"token_type": "Bearer", "access_token": tokens.access_token, "expires_in": tokens.expires_in});
            if let Some(refresh) = tokens.refresh_token {
                answer["refresh_token"] = Value::from(refresh);
            }
            // Sign in with ChatGPT asks for a resource: its answers carry an ID token and the
            // scope granted, the direct-use scope among them.
            if param("resource").is_some() {
                answer["id_token"] = Value::from("mock-id-token");
                answer["scope"] = Value::from(CHATGPT_DIRECT_SCOPE);
            }
            (StatusCode::OK, answer)
        }
        None => refuse(StatusCode::BAD_REQUEST, "invalid_grant", "the grant is invalid, expired or already used"),
    }
}

/// The scope a Sign in with ChatGPT grant carries.
const CHATGPT_DIRECT_SCOPE: &str = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";

/// OpenRouter's key exchange: JSON `{code, code_verifier, code_challenge_method}`; an accepted
/// code's access token comes back as the `key`.
fn openrouter_key(grants: &mut OAuthGrants, body: &[u8]) -> (StatusCode, Value) {
    let Some(params) = json_params(body) else {
        return (StatusCode::BAD_REQUEST, json!({"error": {"message": "the body is not JSON", "code": 400}}));
    };
    let param = |name: &str| params.get(name).map(String::as_str).filter(|v| !v.is_empty());
    if param("code_verifier").is_none() || param("code_challenge_method") != Some("S256") {
        return (StatusCode::BAD_REQUEST, json!({"error": {"message": "code_verifier is required", "code": 400}}));
    }
    match param("code").and_then(|c| grants.codes.remove(c)) {
        Some(tokens) => (StatusCode::OK, json!({"key": tokens.access_token, "user_id": "user_mock"})),
        None => (StatusCode::FORBIDDEN, json!({"error": {"message": "Invalid code", "code": 403}})),
    }
}

/// A standard device login and its token endpoint (which also takes refresh grants).
fn standard_device(grants: &mut OAuthGrants, path: &str, body: &[u8]) -> (StatusCode, Value) {
    let params = form_params(body).unwrap_or_default();
    if params.get("client_id").is_none_or(String::is_empty) {
        return refuse(StatusCode::UNAUTHORIZED, "invalid_client", "client_id is missing");
    }
    let tokens = |t: IssuedTokens| {
        json!({"access_token": t.access_token, "refresh_token": t.refresh_token, "expires_in": t.expires_in,
               "token_type": "Bearer"})
    };
    if [KIMI_DEVICE_PATH, XAI_DEVICE_PATH, META_DEVICE_PATH, RADIUS_DEVICE_PATH].contains(&path) {
        return match grants.standard_devices.iter().find(|(_, _, polled)| !polled) {
            Some((code, _, _)) => (
                StatusCode::OK,
                json!({"device_code": code, "user_code": "DEVICE-CODE", "verification_uri": "https://login.example/device",
                       "verification_uri_complete": "https://login.example/device?user_code=DEVICE-CODE",
                       "expires_in": 900, "interval": 1}),
            ),
            None => refuse(StatusCode::BAD_REQUEST, "unauthorized_client", "no device login is expected"),
        };
    }
    match params.get("grant_type").map(String::as_str) {
        Some("refresh_token") => match params.get("refresh_token").and_then(|t| grants.refresh.remove(t)) {
            Some(issued) => (StatusCode::OK, tokens(issued)),
            None => refuse(StatusCode::UNAUTHORIZED, "invalid_grant", "the refresh token is invalid"),
        },
        Some("urn:ietf:params:oauth:grant-type:device_code") => {
            let code = params.get("device_code").cloned().unwrap_or_default();
            let Some(at) = grants.standard_devices.iter().position(|(c, _, _)| *c == code) else {
                return refuse(StatusCode::BAD_REQUEST, "expired_token", "the device code expired");
            };
            if !grants.standard_devices[at].2 {
                grants.standard_devices[at].2 = true;
                return refuse(StatusCode::BAD_REQUEST, "authorization_pending", "the user has not confirmed yet");
            }
            let (_, issued, _) = grants.standard_devices.remove(at);
            (StatusCode::OK, tokens(issued))
        }
        _ => refuse(StatusCode::BAD_REQUEST, "unsupported_grant_type", "grant_type is not supported"),
    }
}

fn meta_key(headers: &HeaderMap) -> (StatusCode, Value) {
    let identity = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    match identity {
        "" | "revoked" => (StatusCode::UNAUTHORIZED, json!({"detail": "the identity token is not valid"})),
        token => (StatusCode::OK, json!({"api_key": format!("mk-{token}")})),
    }
}

fn copilot(grants: &mut OAuthGrants, method: &Method, headers: &HeaderMap) -> (StatusCode, Value) {
    if method != Method::GET {
        return refuse(StatusCode::METHOD_NOT_ALLOWED, "invalid_request", "the token exchange takes GET");
    }
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|t| grants.refresh.remove(t));
    match bearer {
        Some(tokens) => {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
            (StatusCode::OK, json!({"token": tokens.access_token, "expires_at": now + tokens.expires_in}))
        }
        None => (StatusCode::UNAUTHORIZED, json!({"message": "Bad credentials"})),
    }
}

/// GitHub's device flow: a code for the next accepted device login, then its polls.
fn device(grants: &mut OAuthGrants, path: &str, body: &[u8]) -> (StatusCode, Value) {
    let params = form_params(body).unwrap_or_default();
    if params.get("client_id").is_none_or(String::is_empty) {
        return refuse(StatusCode::UNAUTHORIZED, "invalid_client", "client_id is missing");
    }
    if path == "/login/device/code" {
        return match grants.devices.iter().find(|(_, _, polled)| !polled) {
            Some((code, _, _)) => (
                StatusCode::OK,
                json!({"device_code": code, "user_code": "WDJB-MJHT", "verification_uri": "https://github.com/login/device",
                       "expires_in": 900, "interval": 1}),
            ),
            None => refuse(StatusCode::BAD_REQUEST, "unauthorized_client", "no device login is expected"),
        };
    }
    if params.get("grant_type").map(String::as_str) != Some("urn:ietf:params:oauth:grant-type:device_code") {
        return (StatusCode::OK, json!({"error": "unsupported_grant_type"}));
    }
    let code = params.get("device_code").cloned().unwrap_or_default();
    let Some(at) = grants.devices.iter().position(|(c, _, _)| *c == code) else {
        return (StatusCode::OK, json!({"error": "expired_token"}));
    };
    if !grants.devices[at].2 {
        grants.devices[at].2 = true;
        return (StatusCode::OK, json!({"error": "authorization_pending"}));
    }
    let (_, token, _) = grants.devices.remove(at);
    (StatusCode::OK, json!({"access_token": token, "token_type": "bearer", "scope": "read:user"}))
}

fn refuse(status: StatusCode, error: &str, description: &str) -> (StatusCode, Value) {
    (status, json!({"error": error, "error_description": description}))
}

fn json_params(body: &[u8]) -> Option<HashMap<String, String>> {
    let Value::Object(object) = serde_json::from_slice(body).ok()? else {
        return None;
    };
    Some(object.into_iter().filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_owned()))).collect())
}

fn form_params(body: &[u8]) -> Option<HashMap<String, String>> {
    let text = std::str::from_utf8(body).ok()?;
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((decode(k)?, decode(v)?))
        })
        .collect()
}

/// `application/x-www-form-urlencoded` decoding of one name or value.
fn decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issued(access: &str) -> IssuedTokens {
        IssuedTokens { access_token: access.into(), refresh_token: Some("r2".into()), expires_in: 3600 }
    }

    #[test]
    fn a_refresh_token_is_good_once() {
        let mut grants = OAuthGrants::default();
        grants.accept_refresh("r1", issued("a2"));
        let mut headers = HeaderMap::new();
        headers.insert("content-type", "application/json".parse().unwrap());
        let body = br#"{"grant_type":"refresh_token","client_id":"c","refresh_token":"r1"}"#;
        let (status, reply) = answer(&mut grants, &Method::POST, "/v1/oauth/token", &headers, body);
        assert_eq!(status, StatusCode::OK);
        assert_eq!(reply["access_token"], "a2");
        assert_eq!(reply["refresh_token"], "r2");
        let (status, reply) = answer(&mut grants, &Method::POST, "/v1/oauth/token", &headers, body);
        assert_eq!((status, reply["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    }

    #[test]
    fn form_grants_and_the_copilot_exchange() {
        let mut grants = OAuthGrants::default();
        grants.accept_refresh("r 1", issued("a2"));
        grants.accept_refresh("gho_x", issued("tid=1;proxy-ep=proxy.example"));
        let mut headers = HeaderMap::new();
        headers.insert("content-type", "application/x-www-form-urlencoded".parse().unwrap());
        let body = b"grant_type=refresh_token&refresh_token=r+1&client_id=app%5Fx";
        let (status, reply) = answer(&mut grants, &Method::POST, "/oauth/token", &headers, body);
        assert_eq!((status, reply["access_token"].as_str()), (StatusCode::OK, Some("a2")));
        let mut headers = HeaderMap::new();
        headers.insert("authorization", "Bearer gho_x".parse().unwrap());
        let (status, reply) = answer(&mut grants, &Method::GET, "/copilot_internal/v2/token", &headers, b"");
        assert_eq!(status, StatusCode::OK);
        assert!(reply["expires_at"].as_u64().unwrap() > 1_700_000_000);
    }
}
