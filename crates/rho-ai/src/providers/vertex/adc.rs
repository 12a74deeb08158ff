//! Google's Application Default Credentials, for Vertex AI: the file `GOOGLE_APPLICATION_
//! CREDENTIALS` names, else `~/.config/gcloud/application_default_credentials.json` (what `gcloud
//! auth application-default login` writes). A user's credentials (`authorized_user`) are turned
//! into an access token with their refresh token; a service account's (`service_account`) with a
//! JWT it signs (RS256) for the `cloud-platform` scope. Either goes to the file's `token_uri`
//! (Google's token endpoint by default). The token is kept until a minute before it expires.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

const TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// A token is renewed this long before it would expire.
const MARGIN: Duration = Duration::from_secs(60);

/// The token last obtained, and until when it is good.
static CACHED: Mutex<Option<(PathBuf, String, Instant)>> = Mutex::new(None);

/// Where the credentials are.
pub fn credentials_path() -> Option<PathBuf> {
    credentials_path_in(&|name: &str| std::env::var(name).ok())
}

/// Where the credentials are, the variables read through `env`.
pub fn credentials_path_in(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    match env("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None => env("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(dirs::home_dir)
            .map(|home| home.join(".config/gcloud/application_default_credentials.json")),
    }
}

/// Whether Vertex can authenticate with Application Default Credentials: the file exists, and a
/// project and a location are set (what pi asks before it lists Vertex's models as available).
pub fn usable_in(env: &dyn Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
    credentials_path_in(env).is_some_and(|p| p.is_file())
        && (set("GOOGLE_CLOUD_PROJECT") || set("GCLOUD_PROJECT"))
        && set("GOOGLE_CLOUD_LOCATION")
}

/// An access token for Vertex AI.
pub async fn access_token() -> Result<String, String> {
    let path = credentials_path().ok_or("no home directory to find Application Default Credentials in")?;
    if let Some((cached_path, token, until)) = CACHED.lock().clone()
        && cached_path == path
        && Instant::now() < until
    {
        return Ok(token);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read Application Default Credentials at {}: {e} (run `gcloud auth application-default login`)",
            path.display()
        )
    })?;
    let creds: Value = serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    let field = |key: &str| creds.get(key).and_then(Value::as_str).filter(|v| !v.is_empty());
    let token_uri = field("token_uri").unwrap_or(TOKEN_URI).to_owned();
    let form: Vec<(&str, String)> = match field("type") {
        Some("authorized_user") => {
            let (Some(id), Some(secret), Some(refresh)) =
                (field("client_id"), field("client_secret"), field("refresh_token"))
            else {
                return Err(format!(
                    "{}: a user's credentials need client_id, client_secret and refresh_token",
                    path.display()
                ));
            };
            vec![
                ("grant_type", "refresh_token".to_owned()),
                ("client_id", id.to_owned()),
                ("client_secret", secret.to_owned()),
                ("refresh_token", refresh.to_owned()),
            ]
        }
        Some("service_account") => {
            let (Some(email), Some(key)) = (field("client_email"), field("private_key")) else {
                return Err(format!("{}: a service account needs client_email and private_key", path.display()));
            };
            let assertion = assertion(email, key, field("private_key_id"), &token_uri, now_s())?;
            vec![("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned()), ("assertion", assertion)]
        }
        other => return Err(format!("{}: credentials of type {other:?} are not supported", path.display())),
    };
    let (token, lifetime) = request_token(&token_uri, &form).await?;
    let until = Instant::now() + lifetime.saturating_sub(MARGIN);
    *CACHED.lock() = Some((path, token.clone(), until));
    Ok(token)
}

async fn request_token(url: &str, form: &[(&str, String)]) -> Result<(String, Duration), String> {
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let answer = crate::oauth::refresh::post_form_json(url, &form, &[])
        .await
        .map_err(|e| format!("Google's token endpoint did not give a token: {e}"))?;
    let token = answer.get("access_token").and_then(Value::as_str).ok_or("no access_token in Google's answer")?;
    let expires_in = answer.get("expires_in").and_then(Value::as_f64).unwrap_or(3600.0);
    Ok((token.to_owned(), Duration::from_secs_f64(expires_in.max(0.0))))
}

fn now_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The signed JWT a service account exchanges for a token: RS256 over the `cloud-platform`
/// scope, issued now for an hour, for `audience` (the token endpoint).
pub fn assertion(
    email: &str,
    private_key_pem: &str,
    key_id: Option<&str>,
    audience: &str,
    now: u64,
) -> Result<String, String> {
    let encode = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let mut header = json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = key_id {
        header["kid"] = json!(kid);
    }
    let claims = json!({"iss": email, "scope": SCOPE, "aud": audience, "iat": now, "exp": now + 3600});
    let signing_input = format!("{}.{}", encode(header.to_string().as_bytes()), encode(claims.to_string().as_bytes()));
    let der = pem_der(private_key_pem)?;
    let key =
        ring::signature::RsaKeyPair::from_pkcs8(&der).map_err(|e| format!("the service account's private key: {e}"))?;
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "signing the service account's JWT failed".to_owned())?;
    Ok(format!("{signing_input}.{}", encode(&signature)))
}

/// The DER bytes of a PEM `PRIVATE KEY` block (PKCS#8, as service account files hold them).
fn pem_der(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|e| format!("the service account's private key is not PEM: {e}"))
}
