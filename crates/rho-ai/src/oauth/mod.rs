//! Subscription logins: the `oauth` entries pi's `/login` (and `rho login`) keep in `auth.json`.
//!
//! An entry's access token is used while it is fresh (`now < expires`; the expiry was stored
//! with the provider's margin already taken off, as pi stores it). Once it is not, the login is
//! refreshed: one thread of this process at a time per file and provider, and under the lock pi
//! takes ([`lock`]), the file is read again (pi or another rho may have refreshed it meanwhile),
//! and only if the entry there is still stale does rho ask the provider's token endpoint, then
//! write the new tokens back into that entry and nothing else ([`store`]). A failed refresh
//! leaves the file as it was.
//!
//! Which logins rho can use, and which it only refreshes, is in [`providers`]: a login for an
//! API rho does not speak fails with an error naming it, never with a request rho cannot make.

pub mod answer;
pub mod anthropic;
pub mod device_code;
pub mod github_copilot;
pub mod kimi_coding;
pub mod lock;
pub mod meta;
pub mod openai_chatgpt;
pub mod openai_codex;
pub mod openrouter;
pub mod providers;
pub mod radius;
pub mod refresh;
pub mod store;
pub mod xai;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

pub use lock::AuthFileLock;
pub use providers::OAuthProvider;
pub use store::OAuthCredentials;

/// Why a login gave no access token.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoginError {
    #[error("rho cannot use the {name} login ({provider}) in {} yet: {reason}.", path.display())]
    Unusable { provider: String, name: String, path: PathBuf, reason: String },
    #[error(
        "The {name} login in {} has expired and could not be refreshed: {detail}\n\nLog in again with `rho login {provider}` (or /login in pi).",
        path.display()
    )]
    Refresh { provider: String, name: String, path: PathBuf, detail: String },
    #[error("{provider} has no login in {} any more (logged out elsewhere?)\n\nLog in with `rho login {provider}`.", path.display())]
    LoggedOut { provider: String, path: PathBuf },
    #[error("{0}")]
    File(String),
}

/// The `oauth` entries of one `auth.json`, with the credentials last seen for each.
pub struct Logins {
    path: PathBuf,
    env: crate::auth::EnvLookup,
    known: Mutex<HashMap<String, OAuthCredentials>>,
    problems: Mutex<HashMap<String, LoginError>>,
}

impl std::fmt::Debug for Logins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Providers only: the tokens are secrets.
        f.debug_struct("Logins")
            .field("path", &self.path)
            .field("providers", &guard(&self.known).keys().cloned().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Logins {
    /// The logins in `path` (none when it is missing or unreadable: the API key loader reports
    /// that).
    pub fn load(path: &Path, env: crate::auth::EnvLookup) -> Self {
        let known = store::read(path)
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(|(id, entry)| OAuthCredentials::from_entry(entry).map(|c| (id.clone(), c)))
                    .collect()
            })
            .unwrap_or_default();
        Self { path: path.to_owned(), env, known: Mutex::new(known), problems: Mutex::default() }
    }

    /// Whether `provider` has an `oauth` entry rho recognises (one it can use, or one it can
    /// name the reason it cannot).
    pub fn has(&self, provider: &str) -> bool {
        (providers::find(provider).is_some() || providers::retired(provider).is_some())
            && guard(&self.known).contains_key(provider)
    }

    /// `provider`'s access token, refreshed first when it is stale. The failure is also kept
    /// for [`problem`](Self::problem).
    pub fn access_token(&self, provider: &str) -> Result<String, LoginError> {
        let result = self.fresh_token(provider);
        let mut problems = guard(&self.problems);
        match &result {
            Ok(_) => problems.remove(provider),
            Err(e) => problems.insert(provider.to_owned(), e.clone()),
        };
        result
    }

    /// The logins in the file that rho cannot use (for an API it does not speak), with why.
    pub fn unusable(&self) -> Vec<LoginError> {
        let providers: Vec<String> = guard(&self.known).keys().cloned().collect();
        providers.iter().filter(|p| self.has(p)).filter_map(|p| usable(p, &self.path).err()).collect()
    }

    /// Why the last [`access_token`](Self::access_token) for `provider` failed, if it did.
    pub fn problem(&self, provider: &str) -> Option<LoginError> {
        guard(&self.problems).get(provider).cloned()
    }

    fn fresh_token(&self, provider: &str) -> Result<String, LoginError> {
        let spec = usable(provider, &self.path)?;
        let known = guard(&self.known).get(provider).cloned();
        if let Some(creds) = known.filter(|c| c.is_fresh(refresh::now_ms())) {
            return Ok(creds.access);
        }
        let creds = refresh_entry(&self.path, spec, self.env.as_ref())?;
        guard(&self.known).insert(provider.to_owned(), creds.clone());
        Ok(creds.access)
    }
}

/// The provider of a login rho can use, or why it cannot.
pub fn usable(provider: &str, path: &Path) -> Result<&'static OAuthProvider, LoginError> {
    let unusable = |name: &str, reason: &str| LoginError::Unusable {
        provider: provider.to_owned(),
        name: name.to_owned(),
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    match providers::find(provider) {
        Some(spec) => match spec.unusable {
            None => Ok(spec),
            Some(reason) => Err(unusable(spec.name, reason)),
        },
        None => Err(unusable(provider, providers::retired(provider).unwrap_or("rho knows no login by that name"))),
    }
}

/// Refreshes `provider`'s entry in `path` unless someone already has: under this process's
/// per-login mutex and pi's file lock, reads the entry again; fresh there, it is taken as is;
/// stale, the token endpoint is asked and the entry rewritten. The file is untouched on failure.
pub fn refresh_entry(
    path: &Path,
    provider: &'static OAuthProvider,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthCredentials, LoginError> {
    refresh_entry_within(path, provider, env, 0)
}

/// [`refresh_entry`], refreshing too when the token has less than `min_validity_ms` left
/// (`rho auth print-bearer-token --min-expiry`).
pub fn refresh_entry_within(
    path: &Path,
    provider: &'static OAuthProvider,
    env: &dyn Fn(&str) -> Option<String>,
    min_validity_ms: i64,
) -> Result<OAuthCredentials, LoginError> {
    let one_at_a_time = refresh_mutex(path, provider.id);
    let _mine = guard(&one_at_a_time);
    let _lock = AuthFileLock::acquire(path).map_err(|e| LoginError::File(e.to_string()))?;
    let mut entries = store::read(path).map_err(|e| LoginError::File(e.to_string()))?;
    let current = entries
        .get(provider.id)
        .and_then(OAuthCredentials::from_entry)
        .ok_or_else(|| LoginError::LoggedOut { provider: provider.id.to_owned(), path: path.to_owned() })?;
    if current.is_fresh(refresh::now_ms().saturating_add(min_validity_ms)) {
        return Ok(current);
    }
    let url = token_url(provider, &current, env);
    let next = refresh::refresh(provider, &url, &current).map_err(|e| LoginError::Refresh {
        provider: provider.id.to_owned(),
        name: provider.name.to_owned(),
        path: path.to_owned(),
        detail: e.0,
    })?;
    entries.insert(provider.id.to_owned(), next.to_entry());
    store::write(path, &entries).map_err(|e| LoginError::File(e.to_string()))?;
    tracing::info!("refreshed the {} login in {}", provider.id, path.display());
    Ok(next)
}

/// Where `provider` refreshes `current`: the variable's URL, else a GitHub Enterprise login's own
/// host (`enterpriseUrl`, as pi), else the provider's.
fn token_url(provider: &OAuthProvider, current: &OAuthCredentials, env: &dyn Fn(&str) -> Option<String>) -> String {
    let enterprise = current.extra.get("enterpriseUrl").and_then(Value::as_str).filter(|d| !d.is_empty());
    match (provider.grant, enterprise) {
        (providers::RefreshGrant::CopilotTokenExchange, Some(domain)) if env(provider.token_url_env).is_none() => {
            format!("https://api.{domain}/copilot_internal/v2/token")
        }
        _ => provider.token_url(env),
    }
}

/// Stores a new login for `provider` in `path` (pi's entry shape), keeping every other entry.
pub fn save_login(path: &Path, provider: &str, creds: &OAuthCredentials) -> Result<(), LoginError> {
    change_entry(path, |entries| {
        entries.insert(provider.to_owned(), creds.to_entry());
    })
}

/// Stores an API key for `provider` in `path` (`{"type":"api_key","key":…}`, pi's shape),
/// replacing what the provider had there and keeping every other entry.
pub fn save_api_key(path: &Path, provider: &str, key: &str) -> Result<(), LoginError> {
    change_entry(path, |entries| {
        entries.insert(provider.to_owned(), serde_json::json!({"type": "api_key", "key": key}));
    })
}

/// What [`remove_login`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    /// The login was there and is gone.
    Login,
    /// There was no entry for the provider.
    Nothing,
    /// The entry is an API key, not a login; it was left alone.
    ApiKey,
}

/// Removes `provider`'s `oauth` entry from `path`, keeping every other entry.
pub fn remove_login(path: &Path, provider: &str) -> Result<Removed, LoginError> {
    if !path.exists() {
        return Ok(Removed::Nothing);
    }
    let mut removed = Removed::Nothing;
    change_entry(path, |entries| match entries.get(provider) {
        Some(entry) if OAuthCredentials::from_entry(entry).is_some() => {
            entries.shift_remove(provider);
            removed = Removed::Login;
        }
        Some(entry) if entry.get("type").and_then(Value::as_str) == Some("api_key") => removed = Removed::ApiKey,
        Some(_) => {
            entries.shift_remove(provider);
            removed = Removed::Login;
        }
        None => {}
    })?;
    Ok(removed)
}

/// Removes whatever `path` holds for `provider` (a login or an API key), keeping every other
/// entry; [`Removed::Nothing`] when there was nothing.
pub fn remove_credentials(path: &Path, provider: &str) -> Result<Removed, LoginError> {
    if !path.exists() {
        return Ok(Removed::Nothing);
    }
    let mut removed = Removed::Nothing;
    change_entry(path, |entries| {
        if let Some(entry) = entries.shift_remove(provider) {
            let key = entry.get("type").and_then(Value::as_str) == Some("api_key");
            removed = if key { Removed::ApiKey } else { Removed::Login };
        }
    })?;
    Ok(removed)
}

/// Reads, changes and writes back `path` under pi's lock (made first if missing, as pi does).
fn change_entry(path: &Path, change: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Result<(), LoginError> {
    let file_error = |e: &dyn std::fmt::Display| LoginError::File(e.to_string());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        store::create_private_dir(dir).map_err(|e| file_error(&format!("cannot create {}: {e}", dir.display())))?;
    }
    let _lock = AuthFileLock::acquire(path).map_err(|e| file_error(&e))?;
    let mut entries = store::read(path).map_err(|e| file_error(&e))?;
    let before = entries.clone();
    change(&mut entries);
    if entries != before {
        store::write(path, &entries).map_err(|e| file_error(&e))?;
    }
    Ok(())
}

/// The mutex that lets one thread of this process refresh `provider`'s login in `path`.
fn refresh_mutex(path: &Path, provider: &str) -> Arc<Mutex<()>> {
    type Mutexes = Mutex<HashMap<(PathBuf, String), Arc<Mutex<()>>>>;
    static MUTEXES: OnceLock<Mutexes> = OnceLock::new();
    guard(MUTEXES.get_or_init(Default::default)).entry((path.to_owned(), provider.to_owned())).or_default().clone()
}

fn guard<T>(m: &Mutex<T>) -> parking_lot::MutexGuard<'_, T> {
    m.lock()
}

#[cfg(test)]
mod tests;
