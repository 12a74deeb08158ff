//! The model registry: the built-in catalogue with the user's `models.json` applied, the keys
//! from `auth.json` and the environment, and the answers the rest of rho asks of them (which
//! models exist, which can be used, with what key and headers, and which to start with).
//!
//! Both files live in the agent directory (`~/.rho/agent`, or `RHO_CODING_AGENT_DIR`). A file
//! with a problem is reported in the returned errors and skipped; the registry is always usable.
//!
//! Availability: a model is available when its provider has a key configured (see
//! [`ApiKeys::is_configured`]), or when its provider is *keyless*: a custom provider declared
//! with `"apiKey": ""`, or without `apiKey` at a local `baseUrl` (see [`crate::models_json`]).
//! A model without a key is listed as unavailable; asking for its key just gives `None`.
//!
//! Keys and header values are resolved when asked for ([`ModelRegistry::api_key`],
//! [`ModelRegistry::headers_for`]), never at load, so start-up runs no commands. The models the
//! registry hands out carry no configured headers (`Model::headers` is empty for them): a caller
//! making a request passes `headers_for(model)` along (e.g. as `StreamOptions::headers`).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use crate::auth::{self, ApiKeys, EnvLookup};
use crate::catalog;
use crate::config_error::ConfigError;
use crate::model::Model;
use crate::models_json::{self, HeaderTemplates};

/// The environment variable that moves the agent directory.
pub const AGENT_DIR_ENV: &str = "RHO_CODING_AGENT_DIR";

/// The agent directory: `RHO_CODING_AGENT_DIR` (a leading `~` is the home directory), else
/// `~/.rho/agent`. `None` only when there is no home directory to put it in.
pub fn agent_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let home = dirs::home_dir();
    if let Some(dir) = env(AGENT_DIR_ENV).filter(|d| !d.is_empty()) {
        if dir == "~" {
            return home;
        }
        if let Some(rest) = dir.strip_prefix("~/") {
            return home.map(|h| h.join(rest));
        }
        return Some(PathBuf::from(dir));
    }
    home.map(|h| h.join(".rho").join("agent"))
}

#[derive(Debug, Clone)]
pub struct ModelRegistry {
    models: Vec<Model>,
    keys: ApiKeys,
    keyless: HashSet<String>,
    headers: HeaderTemplates,
    models_json: Option<PathBuf>,
}

impl ModelRegistry {
    /// Reads `agent_dir/auth.json` again: its keys and logins replace those read before (a login
    /// made since, or removed).
    pub fn reload_auth(&mut self, agent_dir: &Path) -> Result<(), ConfigError> {
        let auth_file = agent_dir.join("auth.json");
        let entries = auth::load_auth_file(&auth_file)?;
        self.keys.set_auth_file(entries);
        self.keys.set_logins(crate::oauth::Logins::load(&auth_file, self.keys.env().clone()));
        Ok(())
    }

    /// The built-ins, `agent_dir/models.json` and `agent_dir/auth.json`, with keys from the
    /// process environment.
    pub fn load(agent_dir: &Path) -> (Self, Vec<ConfigError>) {
        Self::load_with_env(agent_dir, auth::process_env())
    }

    /// As [`load`](Self::load), reading the environment through `env`.
    pub fn load_with_env(agent_dir: &Path, env: EnvLookup) -> (Self, Vec<ConfigError>) {
        let mut registry = Self::builtin(env);
        let mut errors = Vec::new();
        if let Err(e) = registry.reload_auth(agent_dir) {
            errors.push(e);
        }
        let models_json = agent_dir.join("models.json");
        match models_json::load(&models_json) {
            Ok(Some(config)) => {
                let applied = config.apply(&mut registry.models, &mut registry.keys);
                registry.headers = applied.headers;
                registry.keyless = applied.keyless;
            }
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        registry.models_json = Some(models_json);
        registry.keys.prefetch();
        (registry, errors)
    }

    /// The built-in catalogue alone.
    pub fn builtin(env: EnvLookup) -> Self {
        let mut models = Vec::with_capacity(catalog::model_count());
        models.extend(catalog::models());
        Self {
            models,
            keys: ApiKeys::new(env),
            keyless: HashSet::new(),
            headers: HeaderTemplates::default(),
            models_json: None,
        }
    }

    /// Adds or changes the provider `name` as pi's `registerProvider` does: `config` has the
    /// schema of a `models.json` provider entry; its `models`, when given, replace the
    /// provider's models; a `baseUrl` alone moves a built-in provider's models (a proxy).
    pub fn register_provider(&mut self, name: &str, config: serde_json::Value) -> Result<(), String> {
        let config = models_json::parse_provider(name, config)?;
        if config.models.is_some() {
            self.models.retain(|m| m.provider != name);
        }
        let file = models_json::ModelsConfig { providers: vec![(name.to_owned(), config)] };
        let applied = file.apply(&mut self.models, &mut self.keys);
        self.headers.merge(applied.headers);
        self.keyless.extend(applied.keyless);
        Ok(())
    }

    /// Lists a virtual model (pi 1.6's `registerVirtualModel`) after its provider's models. It
    /// takes the place of a model of that provider with the same id. Under a provider no
    /// physical model belongs to it needs no key (its requests go to the models it routes to);
    /// under one that has them, it is available when the provider has a key.
    pub fn add_virtual_model(&mut self, model: Model) {
        self.models.retain(|m| !(m.provider == model.provider && m.id == model.id));
        if !self.models.iter().any(|m| m.provider == model.provider && !m.is_virtual()) {
            self.keyless.insert(model.provider.clone());
        }
        let after_provider =
            self.models.iter().rposition(|m| m.provider == model.provider).map_or(self.models.len(), |at| at + 1);
        self.models.insert(after_provider, model);
    }

    /// Where `models.json` was looked for (for "add models to …" hints).
    pub fn models_json_path(&self) -> Option<&Path> {
        self.models_json.as_deref()
    }

    /// Every model: built-in providers in the reference's order (each provider's custom models
    /// after its built-ins), then custom providers in file order.
    pub fn all(&self) -> &[Model] {
        &self.models
    }

    /// The models that can be used now (their provider has a key, or needs none).
    pub fn available(&self) -> Vec<&Model> {
        self.models.iter().filter(|m| self.has_key(&m.provider)).collect()
    }

    pub fn is_available(&self, model: &Model) -> bool {
        self.has_key(&model.provider)
    }

    /// Whether `provider` has a key configured or needs none. Runs no commands.
    pub fn has_key(&self, provider: &str) -> bool {
        self.keyless.contains(provider) || self.keys.is_configured(provider)
    }

    /// Whether `provider` is a custom provider that needs no key.
    pub fn is_keyless(&self, provider: &str) -> bool {
        self.keyless.contains(provider)
    }

    /// The model `id` of `provider` (exact names; a provider's former name finds it too, as a
    /// session written before pi renamed it names it).
    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        let find = |provider: &str| self.models.iter().find(|m| m.provider == provider && m.id == id);
        find(provider).or_else(|| find(crate::auth::current_provider_name(provider)))
    }

    /// The distinct provider names, in registry order.
    pub fn providers(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        self.models.iter().map(|m| m.provider.as_str()).filter(|p| seen.insert(*p)).collect()
    }

    /// The model a provider stands for: its catalogue default, else its first model.
    pub fn provider_default(&self, provider: &str) -> Option<&Model> {
        catalog::default_model_id(provider)
            .and_then(|id| self.find(provider, id))
            .or_else(|| self.models.iter().find(|m| m.provider == provider))
    }

    /// `provider`'s key, resolved now (a `!command` runs at most once per process). `None` when
    /// there is none, including for keyless providers without one.
    pub fn api_key(&self, provider: &str) -> Option<String> {
        self.keys.resolve(provider)
    }

    /// Why `provider`'s subscription login gave no key the last time one was asked for (an
    /// expired login that could not be refreshed, one rho cannot use), if that is the reason
    /// it has none.
    pub fn login_problem(&self, provider: &str) -> Option<crate::oauth::LoginError> {
        self.keys.login_problem(provider)
    }

    /// The subscription logins in `auth.json` rho cannot use (ChatGPT, Copilot, …), with why:
    /// for the messages that would otherwise leave their owner guessing.
    pub fn unusable_logins(&self) -> Vec<crate::oauth::LoginError> {
        self.keys.unusable_logins()
    }

    /// Why `provider`'s login cannot be used, when it has one rho cannot use.
    pub fn unusable_login(&self, provider: &str) -> Option<crate::oauth::LoginError> {
        self.unusable_logins()
            .into_iter()
            .find(|e| matches!(e, crate::oauth::LoginError::Unusable { provider: p, .. } if p == provider))
    }

    /// The `--api-key` value for `provider` (not persisted).
    pub fn set_runtime_key(&mut self, provider: &str, key: impl Into<String>) {
        self.keys.set_runtime_key(provider, key);
    }

    /// The request headers `model` needs, values resolved now: the model's own, then the
    /// provider's from `models.json`, then the model's from `models.json`, then
    /// `Authorization: Bearer <key>` when the provider sets `authHeader` and has a key. A value
    /// that resolves to nothing is left out.
    pub fn headers_for(&self, model: &Model) -> BTreeMap<String, String> {
        let env = self.keys.env().as_ref();
        let mut headers = model.headers.clone();
        let (templates, auth_header) = self.headers.for_model(&model.provider, &model.id);
        for (name, raw) in templates {
            if let Some(value) = auth::resolve_config_value(raw, env) {
                headers.insert(name.to_owned(), value);
            }
        }
        if auth_header && let Some(key) = self.api_key(&model.provider) {
            headers.retain(|name, _| !name.eq_ignore_ascii_case("authorization"));
            headers.insert("Authorization".into(), format!("Bearer {key}"));
        }
        headers
    }

    /// The model to start with when neither the command line, a scope nor a session says
    /// (docs/agent-behavior.md, "Initial model", steps 4–6): the settings'
    /// `defaultProvider`/`defaultModel` if that model exists (key or not), else the first available
    /// model that is its provider's default (providers in catalogue order), else the first
    /// available model.
    pub fn default_model(&self, default_provider: Option<&str>, default_model: Option<&str>) -> Option<&Model> {
        if let (Some(provider), Some(id)) = (default_provider, default_model)
            && let Some(model) = self.find(provider, id)
        {
            return Some(model);
        }
        let available = self.available();
        catalog::PROVIDERS
            .iter()
            .find_map(|p| available.iter().copied().find(|m| m.provider == p.name && m.id == p.default_model))
            .or_else(|| available.first().copied())
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
