//! `models.json`: custom providers and models, and overrides of the built-in ones
//! (docs/agent-behavior.md, "models.json"). The schema is pi's, so a pi user's file loads
//! unchanged:
//!
//! ```json
//! {"providers": {"<name>": {"baseUrl", "api", "apiKey", "headers", "authHeader", "compat",
//!                           "models": [{"id", ...}], "modelOverrides": {"<id>": {...}}}}}
//! ```
//!
//! A file with any problem is rejected as a whole (the error names the file, the provider and
//! what is wrong) and the built-ins load without it. rho is more lenient than pi in two places,
//! so every file pi accepts still loads:
//! - a built-in provider may add models without repeating `baseUrl`, `api` or `apiKey` (they
//!   default to the built-in provider's, and its usual key sources apply);
//! - a custom provider serving a local model may go without a key: `"apiKey": ""` says so
//!   explicitly, and leaving `apiKey` out is accepted when `baseUrl` points at this machine
//!   (`localhost`, `127.x`, `[::1]`, `0.0.0.0`). Such a provider is *keyless*: its models are
//!   available without any key.
//!
//! Header values and `apiKey` are config values (`!command`, `$NAME`, `NAME`, literal); they are
//! kept unresolved here and resolved when a request is made (see [`HeaderTemplates`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::auth::ApiKeys;
use crate::catalog;
use crate::config_error::{ConfigError, parse_json, read_optional, redact_strings};
use crate::model::{InputKind, InputLimits, Model, ModelCost, PromptCache, SamplingParams, ThinkingLevel};
use crate::types::CostTier;

/// Defaults for fields a custom model leaves out.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
pub const DEFAULT_MAX_TOKENS: u64 = 16_384;

/// A parsed and validated `models.json`, providers in file order.
#[derive(Debug, Clone, Default)]
pub struct ModelsConfig {
    pub providers: Vec<(String, ProviderConfig)>,
}

/// One provider's entry. Its `Debug` leaves out `apiKey` and header values.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub api: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    pub auth_header: Option<bool>,
    pub compat: Option<Map<String, Value>>,
    pub models: Option<Vec<ModelDefinition>>,
    pub model_overrides: Option<BTreeMap<String, ModelOverride>>,
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("api", &self.api)
            .field("headers", &self.headers.as_ref().map(|h| h.keys().collect::<Vec<_>>()))
            .field("auth_header", &self.auth_header)
            .field("compat", &self.compat)
            .field("models", &self.models.as_ref().map(|m| m.iter().map(|d| &d.id).collect::<Vec<_>>()))
            .field("model_overrides", &self.model_overrides.as_ref().map(|o| o.keys().collect::<Vec<_>>()))
            .finish()
    }
}

#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelDefinition {
    pub id: String,
    pub name: Option<String>,
    pub api: Option<String>,
    pub base_url: Option<String>,
    pub reasoning: Option<bool>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<CostOverride>,
    pub context_window: Option<f64>,
    pub max_tokens: Option<f64>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<Map<String, Value>>,
    /// pi 1.6's `thinkingLevelMap`, read leniently ([`thinking_level_map`]).
    pub thinking_level_map: Option<Map<String, Value>>,
    /// pi 1.6's sampling defaults and their overrides per thinking level.
    pub sampling_params: Option<Map<String, Value>>,
    pub sampling_params_by_thinking_level: Option<Map<String, Value>>,
    /// pi 1.6's image and request limits, and prompt-cache lifetimes.
    pub input_limits: Option<InputLimits>,
    pub prompt_cache: Option<PromptCache>,
}

#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelOverride {
    pub name: Option<String>,
    pub reasoning: Option<bool>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<CostOverride>,
    pub context_window: Option<f64>,
    pub max_tokens: Option<f64>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<Map<String, Value>>,
    pub thinking_level_map: Option<Map<String, Value>>,
    pub sampling_params: Option<Map<String, Value>>,
    pub sampling_params_by_thinking_level: Option<Map<String, Value>>,
    /// Merged field by field over the model's own, as pi does.
    pub input_limits: Option<InputLimits>,
    pub prompt_cache: Option<PromptCache>,
}

/// A `thinkingLevelMap` as rho keeps it: the levels it knows, each with the provider's value
/// (a string) or `null` (not supported); other keys and values are left out.
fn thinking_level_map(raw: &Map<String, Value>) -> BTreeMap<ThinkingLevel, Option<String>> {
    raw.iter()
        .filter_map(|(key, value)| {
            let level = ThinkingLevel::parse(key)?;
            match value {
                Value::String(s) => Some((level, Some(s.clone()))),
                Value::Null => Some((level, None)),
                _ => None,
            }
        })
        .collect()
}

/// Prices, any of which may be left out (kept from the model, or zero for a new model).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostOverride {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
    /// pi 1.6's prices above an input size.
    pub tiers: Option<Vec<CostTier>>,
}

impl CostOverride {
    fn apply(&self, base: ModelCost) -> ModelCost {
        ModelCost {
            input: self.input.unwrap_or(base.input),
            output: self.output.unwrap_or(base.output),
            cache_read: self.cache_read.unwrap_or(base.cache_read),
            cache_write: self.cache_write.unwrap_or(base.cache_write),
            tiers: self.tiers.clone().unwrap_or(base.tiers),
        }
    }
}

#[derive(Deserialize)]
struct RawFile {
    providers: Map<String, Value>,
}

/// Reads `path`. `Ok(None)` when there is no file; an empty file counts as no providers.
pub fn load(path: &Path) -> Result<Option<ModelsConfig>, ConfigError> {
    match read_optional(path)? {
        None => Ok(None),
        Some(text) if text.trim().is_empty() => Ok(Some(ModelsConfig::default())),
        Some(text) => parse(path, &text).map(Some),
    }
}

/// Parses and validates the text of `path`.
pub fn parse(path: &Path, text: &str) -> Result<ModelsConfig, ConfigError> {
    let raw: RawFile = parse_json(path, text)?;
    let mut providers = Vec::with_capacity(raw.providers.len());
    for (name, value) in raw.providers {
        let config: ProviderConfig = serde_path_to_error::deserialize(value).map_err(|e| {
            let location = e.path().to_string();
            let inner = e.into_inner().to_string();
            let at = if location == "." { format!("providers.{name}") } else { format!("providers.{name}.{location}") };
            ConfigError::Parse { path: path.to_owned(), problem: redact_strings(&format!("{at}: {inner}")) }
        })?;
        validate(&name, &config).map_err(|problem| ConfigError::Invalid {
            path: path.to_owned(),
            problem: format!("provider \"{name}\": {problem}"),
        })?;
        // An entry under a built-in provider's former name configures that provider.
        let current = crate::auth::current_provider_name(&name);
        let name = if current != name && catalog::provider(current).is_some() { current.to_owned() } else { name };
        providers.push((name, config));
    }
    Ok(ModelsConfig { providers })
}

/// One provider's entry given as JSON (pi's `registerProvider` config, whose schema is the
/// file's), validated as the file's entries are.
pub fn parse_provider(name: &str, value: Value) -> Result<ProviderConfig, String> {
    let config: ProviderConfig = serde_path_to_error::deserialize(value).map_err(|e| {
        let location = e.path().to_string();
        let inner = e.into_inner().to_string();
        redact_strings(&if location == "." { inner } else { format!("{location}: {inner}") })
    })?;
    validate(name, &config)?;
    Ok(config)
}

/// Whether `base_url` points at this machine.
pub fn is_local_url(base_url: &str) -> bool {
    let lower = base_url.to_ascii_lowercase();
    let after_scheme = lower.split_once("://").map_or(lower.as_str(), |(_, rest)| rest);
    let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_inclusive(']').next().unwrap_or(host_port)
    } else {
        host_port.split(':').next().unwrap_or(host_port)
    };
    host == "localhost" || host == "[::1]" || host == "0.0.0.0" || host.starts_with("127.")
}

fn validate(name: &str, config: &ProviderConfig) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("a provider needs a name".into());
    }
    let builtin = catalog::provider(name);
    let models = config.models.as_deref().unwrap_or_default();
    let has_overrides = config.model_overrides.as_ref().is_some_and(|o| !o.is_empty());
    if let Some(url) = &config.base_url
        && url.trim().is_empty()
    {
        return Err("\"baseUrl\" must not be empty".into());
    }
    if models.is_empty() {
        let changes_something = config.base_url.is_some()
            || config.compat.is_some()
            || has_overrides
            || config.headers.is_some()
            || config.api_key.is_some();
        if !changes_something {
            return Err("must specify \"baseUrl\", \"compat\", \"modelOverrides\" or \"models\"".into());
        }
    } else if builtin.is_none() {
        // Each model's own `baseUrl`, or the provider's (pi 1.6: "from the model definition or
        // the provider").
        let urls: Option<Vec<&str>> =
            models.iter().map(|m| m.base_url.as_deref().or(config.base_url.as_deref())).collect();
        let Some(urls) = urls else {
            return Err("\"baseUrl\" is required when defining custom models".into());
        };
        if config.api_key.is_none() && !urls.iter().all(|url| is_local_url(url)) {
            return Err("\"apiKey\" is required when defining custom models \
                 (use \"apiKey\": \"\" for a server that needs none)"
                .into());
        }
    }
    let provider_api = config.api.as_deref().or(builtin.map(|p| p.api));
    let mut ids = HashSet::new();
    for (index, model) in models.iter().enumerate() {
        if model.id.trim().is_empty() {
            return Err(format!("models[{index}] is missing \"id\""));
        }
        let id = &model.id;
        if !ids.insert(id.as_str()) {
            return Err(format!("model \"{id}\" is defined twice"));
        }
        match model.api.as_deref().or(provider_api) {
            None => {
                return Err(format!("model \"{id}\": no \"api\" specified. Set it on the provider or the model"));
            }
            Some(api) if api.trim().is_empty() => {
                return Err(format!("model \"{id}\": \"api\" must not be empty"));
            }
            Some(_) => {}
        }
        check_limits(id, model.context_window, model.max_tokens)?;
        check_extras(id, model.input_limits.as_ref(), model.prompt_cache.as_ref())?;
    }
    for (id, o) in config.model_overrides.iter().flatten() {
        check_limits(id, o.context_window, o.max_tokens)?;
        check_extras(id, o.input_limits.as_ref(), o.prompt_cache.as_ref())?;
    }
    Ok(())
}

fn check_limits(id: &str, context_window: Option<f64>, max_tokens: Option<f64>) -> Result<(), String> {
    for (field, value) in [("contextWindow", context_window), ("maxTokens", max_tokens)] {
        if let Some(v) = value
            && !(v.is_finite() && v >= 1.0)
        {
            return Err(format!("model \"{id}\": invalid {field} (must be a positive number)"));
        }
    }
    Ok(())
}

fn check_extras(id: &str, limits: Option<&InputLimits>, cache: Option<&PromptCache>) -> Result<(), String> {
    match limits.and_then(InputLimits::problem).or_else(|| cache.and_then(PromptCache::problem)) {
        Some(problem) => Err(format!("model \"{id}\": {problem}")),
        None => Ok(()),
    }
}

/// A token count from a validated number.
fn count(value: Option<f64>, default: u64) -> u64 {
    value.map(|v| v.round() as u64).unwrap_or(default)
}

/// Merges compat flags: keys of `over` win; object values (routing preferences) are merged one
/// level deep.
pub fn merge_compat(base: Option<Value>, over: Option<&Map<String, Value>>) -> Option<Value> {
    let Some(over) = over else {
        return base;
    };
    let mut merged = match base {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    for (key, value) in over {
        match (merged.get_mut(key), value) {
            (Some(Value::Object(existing)), Value::Object(add)) => {
                for (k, v) in add {
                    existing.insert(k.clone(), v.clone());
                }
            }
            _ => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    (!merged.is_empty()).then_some(Value::Object(merged))
}

/// Header values and the `authHeader` flag as configured, resolved per request. Its `Debug`
/// shows header names only.
#[derive(Clone, Default)]
pub struct HeaderTemplates {
    /// Provider-level headers (apply to every model of the provider) and `authHeader`.
    pub(crate) providers: HashMap<String, (BTreeMap<String, String>, bool)>,
    /// Model-level headers by `(provider, id)`, over the provider's.
    pub(crate) models: HashMap<(String, String), BTreeMap<String, String>>,
}

impl std::fmt::Debug for HeaderTemplates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |h: &BTreeMap<String, String>| h.keys().cloned().collect::<Vec<_>>();
        f.debug_struct("HeaderTemplates")
            .field("providers", &self.providers.iter().map(|(p, (h, auth))| (p, names(h), auth)).collect::<Vec<_>>())
            .field("models", &self.models.iter().map(|(k, h)| (k, names(h))).collect::<Vec<_>>())
            .finish()
    }
}

impl HeaderTemplates {
    /// Adds `other`'s headers; a provider's or model's headers in `other` replace these.
    pub(crate) fn merge(&mut self, other: HeaderTemplates) {
        self.providers.extend(other.providers);
        self.models.extend(other.models);
    }

    /// The unresolved headers for a model, provider's first, and whether `authHeader` is set.
    pub(crate) fn for_model(&self, provider: &str, id: &str) -> (Vec<(&str, &str)>, bool) {
        let mut pairs = Vec::new();
        let mut auth_header = false;
        if let Some((headers, auth)) = self.providers.get(provider) {
            pairs.extend(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            auth_header = *auth;
        }
        if let Some(headers) = self.models.get(&(provider.to_owned(), id.to_owned())) {
            pairs.extend(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        (pairs, auth_header)
    }
}

/// What applying a `models.json` leaves besides the models themselves.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    pub headers: HeaderTemplates,
    /// Custom providers that need no key.
    pub keyless: HashSet<String>,
}

impl ModelsConfig {
    /// Applies the file to `models` (the built-ins, in catalogue order) and records `apiKey`s in
    /// `keys`.
    pub fn apply(&self, models: &mut Vec<Model>, keys: &mut ApiKeys) -> Applied {
        let mut applied = Applied::default();
        for (name, config) in &self.providers {
            let builtin = catalog::provider(name);
            if builtin.is_some() {
                override_builtin(models, name, config);
            }
            for definition in config.models.iter().flatten() {
                upsert(models, custom_model(name, config, definition, builtin));
            }
            match config.api_key.as_deref() {
                Some("") => {
                    applied.keyless.insert(name.clone());
                }
                Some(raw) => keys.set_configured_key(name, raw),
                None if builtin.is_none() => {
                    applied.keyless.insert(name.clone());
                }
                None => {}
            }
            let provider_headers = config.headers.clone().unwrap_or_default();
            let auth_header = config.auth_header.unwrap_or(false);
            if !provider_headers.is_empty() || auth_header {
                applied.headers.providers.insert(name.clone(), (provider_headers, auth_header));
            }
            let model_headers =
                config.models.iter().flatten().filter_map(|m| Some((&m.id, m.headers.as_ref()?))).chain(
                    config.model_overrides.iter().flatten().filter_map(|(id, o)| Some((id, o.headers.as_ref()?))),
                );
            for (id, headers) in model_headers {
                applied
                    .headers
                    .models
                    .entry((name.clone(), id.clone()))
                    .or_default()
                    .extend(headers.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        applied
    }
}

/// Provider-level `baseUrl` / `compat` and per-model `modelOverrides` on a built-in provider.
fn override_builtin(models: &mut [Model], name: &str, config: &ProviderConfig) {
    for model in models.iter_mut().filter(|m| m.provider == name) {
        if let Some(url) = &config.base_url {
            model.base_url = url.clone();
        }
        model.compat = merge_compat(model.compat.take(), config.compat.as_ref());
        if let Some(o) = config.model_overrides.as_ref().and_then(|o| o.get(&model.id)) {
            apply_override(model, o);
        }
    }
}

fn apply_override(model: &mut Model, o: &ModelOverride) {
    if let Some(name) = &o.name {
        model.name = name.clone();
    }
    if let Some(reasoning) = o.reasoning {
        model.reasoning = reasoning;
    }
    if let Some(input) = &o.input {
        model.input = input.clone();
    }
    if let Some(cost) = &o.cost {
        model.cost = cost.apply(std::mem::take(&mut model.cost));
    }
    model.context_window = count(o.context_window, model.context_window);
    model.max_tokens = count(o.max_tokens, model.max_tokens);
    model.compat = merge_compat(model.compat.take(), o.compat.as_ref());
    if let Some(map) = &o.thinking_level_map {
        model.thinking_level_map = Some(thinking_level_map(map));
    }
    model.sampling =
        merge_sampling(model.sampling.take(), o.sampling_params.as_ref(), o.sampling_params_by_thinking_level.as_ref());
    model.input_limits = InputLimits::merge(model.input_limits, o.input_limits);
    model.prompt_cache = PromptCache::merge(model.prompt_cache, o.prompt_cache);
}

/// `base` with `params` and `by_level` merged in, key by key (a level's entries too); `None`
/// when nothing is set.
fn merge_sampling(
    base: Option<SamplingParams>,
    params: Option<&Map<String, Value>>,
    by_level: Option<&Map<String, Value>>,
) -> Option<SamplingParams> {
    let mut sampling = base.unwrap_or_default();
    if let Some(params) = params {
        sampling.sampling_params.extend(params.clone());
    }
    for (key, value) in by_level.into_iter().flatten() {
        let (Some(level), Some(fields)) = (ThinkingLevel::parse(key), value.as_object()) else { continue };
        sampling.sampling_params_by_thinking_level.entry(level).or_default().extend(fields.clone());
    }
    let empty = sampling.sampling_params.is_empty() && sampling.sampling_params_by_thinking_level.is_empty();
    (!empty).then_some(sampling)
}

fn custom_model(
    provider: &str,
    config: &ProviderConfig,
    d: &ModelDefinition,
    builtin: Option<&catalog::CatalogProvider>,
) -> Model {
    let api = d.api.as_deref().or(config.api.as_deref()).or(builtin.map(|p| p.api)).unwrap_or_default();
    let base_url =
        d.base_url.as_deref().or(config.base_url.as_deref()).or(builtin.map(|p| p.base_url)).unwrap_or_default();
    let compat = merge_compat(merge_compat(None, config.compat.as_ref()), d.compat.as_ref());
    Model {
        id: d.id.clone(),
        name: d.name.clone().unwrap_or_else(|| d.id.clone()),
        api: api.to_owned(),
        provider: provider.to_owned(),
        base_url: base_url.to_owned(),
        reasoning: d.reasoning.unwrap_or(false),
        input: d.input.clone().unwrap_or_else(|| vec![InputKind::Text]),
        cost: d.cost.as_ref().map(|c| c.apply(ModelCost::default())).unwrap_or_default(),
        context_window: count(d.context_window, DEFAULT_CONTEXT_WINDOW),
        max_tokens: count(d.max_tokens, DEFAULT_MAX_TOKENS),
        headers: BTreeMap::new(),
        compat,
        thinking_level_map: d.thinking_level_map.as_ref().map(thinking_level_map),
        prompt_cache: d.prompt_cache,
        input_limits: d.input_limits,
        sampling: merge_sampling(None, d.sampling_params.as_ref(), d.sampling_params_by_thinking_level.as_ref()),
    }
}

/// Replaces the model with the same `(provider, id)`, else adds it after the provider's last
/// model (or at the end for a new provider).
fn upsert(models: &mut Vec<Model>, model: Model) {
    if let Some(existing) = models.iter_mut().find(|m| m.provider == model.provider && m.id == model.id) {
        *existing = model;
    } else if let Some(last) = models.iter().rposition(|m| m.provider == model.provider) {
        models.insert(last + 1, model);
    } else {
        models.push(model);
    }
}

#[cfg(test)]
#[path = "models_json_tests.rs"]
mod tests;
