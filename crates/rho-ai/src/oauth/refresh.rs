//! Asking a provider's token endpoint for new tokens: the refresh grant of each provider, the
//! authorization-code exchange of a login, and the answers' shapes.
//!
//! Callers are synchronous (a key is resolved while a request is being built), so each call
//! runs on a thread of its own with a small runtime of its own: it works from any thread, on any
//! runtime or none, and never blocks a runtime's worker while it waits.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::providers::{OAuthProvider, RefreshGrant};
use super::store::OAuthCredentials;

/// How long a token request may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// A token endpoint that did not give new tokens. Never quotes a token.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct TokenError(pub String);

/// Milliseconds since the epoch now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// New credentials for `current` from `provider`'s endpoint at `url`.
pub fn refresh(
    provider: &OAuthProvider,
    url: &str,
    current: &OAuthCredentials,
) -> Result<OAuthCredentials, TokenError> {
    let (client_id, grant, target) = (provider.client_id, provider.grant, url.to_owned());
    let refresh_token = current.refresh.clone();
    if grant == RefreshGrant::Never {
        return Err(TokenError(format!("{} logins do not expire; sign in again", provider.name)));
    }
    if grant == RefreshGrant::IssuedClientForResource {
        return refresh_issued_client(provider, url, current);
    }
    if grant == RefreshGrant::MintKey {
        let env = |name: &str| std::env::var(name).ok();
        return super::meta::mint(&env, &current.refresh).map_err(TokenError);
    }
    let request = move |client: &reqwest::Client| match grant {
        RefreshGrant::Never | RefreshGrant::IssuedClientForResource | RefreshGrant::MintKey => client.get(&target),
        RefreshGrant::JsonRefreshToken => post_json(
            client,
            &target,
            &json!({"grant_type": "refresh_token", "client_id": client_id, "refresh_token": refresh_token}),
        ),
        RefreshGrant::FormRefreshToken => client.post(&target).form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.as_str()),
            ("client_id", client_id),
        ]),
        RefreshGrant::CopilotTokenExchange => client
            .get(&target)
            .header("Accept", "application/json")
            .header("Authorization", format!("Bearer {refresh_token}"))
            .header("User-Agent", "GitHubCopilotChat/0.35.0")
            .header("Editor-Version", "vscode/1.107.0")
            .header("Editor-Plugin-Version", "copilot-chat/0.35.0")
            .header("Copilot-Integration-Id", "vscode-chat"),
    };
    let answer = call(url, request).map_err(|e| TokenError(format!("{} token refresh failed: {e}", provider.name)))?;
    let failed = |problem: &str| TokenError(format!("{} token refresh failed: {problem} (from {url})", provider.name));
    let mut next = match provider.grant {
        RefreshGrant::CopilotTokenExchange => {
            let token = answer.get("token").and_then(Value::as_str).ok_or_else(|| failed("no token in the answer"))?;
            let expires_at = answer
                .get("expires_at")
                .and_then(Value::as_f64)
                .ok_or_else(|| failed("no expires_at in the answer"))?;
            OAuthCredentials {
                access: token.to_owned(),
                refresh: current.refresh.clone(),
                expires: (expires_at * 1000.0) as i64 - provider.expiry_margin_ms,
                extra: current.extra.clone(),
            }
        }
        _ => granted(provider, &answer, Some(&current.refresh)).map_err(|p| failed(&p))?,
    };
    // The entry's other fields (a ChatGPT login's accountId, Copilot's enterpriseUrl) are kept;
    // pi derives the account id from the token again, rho has no use for it.
    if next.extra.is_empty() {
        next.extra = current.extra.clone();
    }
    Ok(next)
}

/// A refresh for the client the login was issued (its `clientId`) and the resource its tokens
/// are for (Sign in with ChatGPT).
fn refresh_issued_client(
    provider: &OAuthProvider,
    url: &str,
    current: &OAuthCredentials,
) -> Result<OAuthCredentials, TokenError> {
    let failed = |problem: &str| TokenError(format!("{} token refresh failed: {problem}", provider.name));
    let client_id = current
        .extra
        .get("clientId")
        .and_then(Value::as_str)
        .filter(|id| !id.trim().is_empty())
        .ok_or_else(|| failed("the stored login names no issued client; sign in again"))?;
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", client_id),
        ("refresh_token", current.refresh.as_str()),
        ("resource", super::openai_chatgpt::RESOURCE),
    ];
    let answer = post_form(url, &form).map_err(|e| failed(&e))?;
    super::openai_chatgpt::credentials(&answer, client_id, Some(&current.refresh))
}

/// Exchanges a login's authorization code (PKCE) at `url`: the JSON body pi sends for Anthropic.
pub fn exchange_code(
    provider: &OAuthProvider,
    url: &str,
    code: &str,
    state: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<OAuthCredentials, TokenError> {
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": provider.client_id,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    });
    let target = url.to_owned();
    let request = move |client: &reqwest::Client| post_json(client, &target, &body);
    let answer = call(url, request).map_err(|e| TokenError(format!("{} login failed: {e}", provider.name)))?;
    granted(provider, &answer, None)
        .map_err(|problem| TokenError(format!("{} login failed: {problem} (from {url})", provider.name)))
}

/// Exchanges a login's authorization code (PKCE) at `url` as a form, as pi sends it for the
/// ChatGPT login.
pub fn exchange_code_form(
    provider: &OAuthProvider,
    url: &str,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<OAuthCredentials, TokenError> {
    let form: Vec<(&'static str, String)> = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("client_id", provider.client_id.to_owned()),
        ("code", code.to_owned()),
        ("code_verifier", verifier.to_owned()),
        ("redirect_uri", redirect_uri.to_owned()),
    ];
    let target = url.to_owned();
    let request = move |client: &reqwest::Client| client.post(&target).form(&form);
    let answer = call(url, request).map_err(|e| TokenError(format!("{} login failed: {e}", provider.name)))?;
    granted(provider, &answer, None)
        .map_err(|problem| TokenError(format!("{} login failed: {problem} (from {url})", provider.name)))
}

/// `form` posted to `url`; the JSON answer of a success.
pub fn post_form(url: &str, form: &[(&str, &str)]) -> Result<Value, String> {
    let target = url.to_owned();
    let form: Vec<(String, String)> = form.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    call(url, move |client: &reqwest::Client| client.post(&target).header("Accept", "application/json").form(&form))
}

/// An empty JSON object posted to `url` with `token` as Bearer (and `headers`): the status and
/// the JSON answer (`Null` when it is not JSON), whatever the status.
pub fn post_bearer_json(url: &str, token: &str, headers: &[(&str, &str)]) -> Result<(u16, Value), String> {
    let (target, token) = (url.to_owned(), token.to_owned());
    let headers: Vec<(String, String)> = headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let shown = url.to_owned();
    let work = move || -> Result<(u16, Value), String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        runtime.block_on(async move {
            let client = crate::http::client(|builder| builder.timeout(TIMEOUT))?;
            let mut request = post_json(&client, &target, &json!({})).bearer_auth(token);
            for (name, value) in &headers {
                request = request.header(name, value);
            }
            let response = request.send().await.map_err(|e| format!("cannot reach {shown}: {e}"))?;
            let status = response.status().as_u16();
            let text = response.text().await.map_err(|e| format!("reading the answer of {shown}: {e}"))?;
            Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
        })
    };
    off_the_runtime(work)
}

/// `body` posted as JSON to `url`; the JSON answer of a success (a sign-in whose answer is not
/// an OAuth token answer: OpenRouter's key).
pub fn post_json_answer(url: &str, body: Value) -> Result<Value, String> {
    let target = url.to_owned();
    call(url, move |client: &reqwest::Client| post_json(client, &target, &body))
}

/// The credentials in an OAuth token answer (`access_token`, `refresh_token`, `expires_in`). A
/// refresh answer without a new refresh token keeps `old_refresh`.
pub(super) fn granted(
    provider: &OAuthProvider,
    answer: &Value,
    old_refresh: Option<&str>,
) -> Result<OAuthCredentials, String> {
    let access = answer.get("access_token").and_then(Value::as_str).ok_or("no access_token in the answer")?;
    let refresh =
        answer.get("refresh_token").and_then(Value::as_str).or(old_refresh).ok_or("no refresh_token in the answer")?;
    let expires_in = answer
        .get("expires_in")
        .and_then(Value::as_f64)
        .or(provider.default_lifetime_s)
        .ok_or("no expires_in in the answer")?;
    Ok(OAuthCredentials {
        access: access.to_owned(),
        refresh: refresh.to_owned(),
        expires: now_ms() + (expires_in * 1000.0) as i64 - provider.expiry_margin_ms,
        extra: Map::new(),
    })
}

/// A form `POST` whose successful answer is JSON, awaited on the caller's runtime (the GitHub
/// device flow's requests, Google's token endpoint); `headers` go with it.
pub(crate) async fn post_form_json(
    url: &str,
    form: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> Result<Value, String> {
    let client = crate::http::client(|builder| builder.timeout(TIMEOUT))?;
    let mut request = client.post(url).header("Accept", "application/json").form(form);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.map_err(|e| crate::redact::reqwest_error(&e))?;
    let status = response.status();
    let text = response.text().await.map_err(|e| format!("reading the answer of {url}: {e}"))?;
    if !status.is_success() {
        return Err(format!("HTTP {} from {url}: {}", status.as_u16(), snippet(&text)));
    }
    serde_json::from_str(&text).map_err(|_| format!("the answer of {url} is not JSON: {}", snippet(&text)))
}

/// A JSON `POST`, as pi sends Anthropic's token requests.
fn post_json(client: &reqwest::Client, url: &str, body: &Value) -> reqwest::RequestBuilder {
    client
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(serde_json::to_vec(body).unwrap_or_default())
}

/// Sends the request `build` makes and reads a successful answer as JSON, on a thread and
/// runtime of its own.
fn call<F>(url: &str, build: F) -> Result<Value, String>
where
    F: FnOnce(&reqwest::Client) -> reqwest::RequestBuilder + Send + 'static,
{
    let shown = url.to_owned();
    let work = move || -> Result<Value, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
        runtime.block_on(async move {
            let client = crate::http::client(|builder| builder.timeout(TIMEOUT))?;
            let response = build(&client).send().await.map_err(|e| format!("cannot reach {shown}: {e}"))?;
            let status = response.status();
            let text = response.text().await.map_err(|e| format!("reading the answer of {shown}: {e}"))?;
            if !status.is_success() {
                return Err(format!("HTTP {} from {shown}: {}", status.as_u16(), snippet(&text)));
            }
            serde_json::from_str(&text).map_err(|_| format!("the answer of {shown} is not JSON: {}", snippet(&text)))
        })
    };
    off_the_runtime(work)
}

/// Runs `work` (a request on a runtime of its own) on a thread of its own, without blocking a
/// runtime's worker while it waits.
fn off_the_runtime<T: Send + 'static>(work: impl FnOnce() -> Result<T, String> + Send + 'static) -> Result<T, String> {
    let run = || match std::thread::Builder::new().name("rho-oauth".into()).spawn(work) {
        Ok(thread) => thread.join().unwrap_or_else(|_| Err("the token request failed".into())),
        Err(e) => Err(format!("cannot start the token request: {e}")),
    };
    let on_worker = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if on_worker { tokio::task::block_in_place(run) } else { run() }
}

/// The start of an error answer, on one line.
fn snippet(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
