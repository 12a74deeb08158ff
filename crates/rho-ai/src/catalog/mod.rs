//! The built-in model catalogue: every provider of pi's model table whose API rho speaks, with
//! all of its models, as plain static tables.
//!
//! The tables live in `data.rs`, generated from pi (`@earendil-works/pi-ai`'s `MODELS` and
//! `@earendil-works/pi-coding-agent`'s default model per provider) by
//! `scripts/catalog/generate.mjs`; its header names the source versions, the date and what was
//! left out. They are `static` data: nothing is parsed at start-up and nothing allocated until a
//! model is asked for; [`CatalogModel::to_model`] builds a [`Model`] on demand. Prices are USD
//! per million tokens.
//!
//! Two orders, as in pi: [`models`] lists providers in pi's registry order (by name), and
//! [`PROVIDERS`] is the order the initial-model search walks (docs/agent-behavior.md,
//! "Initial model").

mod collate;
#[rustfmt::skip]
mod data;

pub use collate::locale_compare;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::model::{InputKind, InputLimits, Model, ModelCost, PromptCache, ThinkingLevel};
use crate::types::CostTier;

/// A built-in provider and its models.
#[derive(Debug)]
pub struct CatalogProvider {
    pub name: &'static str,
    /// The wire API and base URL of its first model: what a model that `models.json` adds to
    /// this provider without saying gets (as pi does).
    pub api: &'static str,
    pub base_url: &'static str,
    /// The model picked for this provider when nothing else says which (step 5 of
    /// docs/agent-behavior.md, "Initial model").
    pub default_model: &'static str,
    pub models: &'static [CatalogModel],
}

/// A compat flag's value as pi's table gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompatValue {
    Bool(bool),
    Str(&'static str),
    /// An object or array (a chat template's arguments, allowed fallback models), as JSON text.
    Json(&'static str),
}

/// One built-in model, as pi's table has it.
#[derive(Debug)]
pub struct CatalogModel {
    pub id: &'static str,
    pub name: &'static str,
    pub api: &'static str,
    pub base_url: &'static str,
    pub reasoning: bool,
    /// Accepts images besides text.
    pub images: bool,
    /// `[input, output, cacheRead, cacheWrite]`, USD per million tokens.
    pub cost: [f64; 4],
    /// Higher rates for requests above an input size (pi's `cost.tiers`): `(inputTokensAbove,
    /// [input, output, cacheRead, cacheWrite])`, in pi's order.
    pub cost_tiers: &'static [(u64, [f64; 4])],
    pub context_window: u64,
    pub max_tokens: u64,
    /// Headers every request to this model carries.
    pub headers: &'static [(&'static str, &'static str)],
    /// Provider-compatibility flags (pi's `compat`), in pi's order.
    pub compat: &'static [(&'static str, CompatValue)],
    /// pi's `thinkingLevelMap`: a level mapped to `None` is not supported, one mapped to a value
    /// is sent as that value; `xhigh` exists only when it is listed. Least to most intensive.
    pub thinking_level_map: &'static [(ThinkingLevel, Option<&'static str>)],
    /// pi's `inputLimits`: image and request limits.
    pub input_limits: Option<InputLimits>,
    /// pi's `promptCache`: the prompt cache's lifetime per retention tier.
    pub prompt_cache: Option<PromptCache>,
}

/// A model row without price tiers, headers, compat flags, thinking-level map, input limits or
/// prompt-cache lifetimes (each added by its builder).
#[allow(clippy::too_many_arguments)]
pub(crate) const fn m(
    id: &'static str,
    name: &'static str,
    api: &'static str,
    base_url: &'static str,
    reasoning: bool,
    images: bool,
    cost: [f64; 4],
    context_window: u64,
    max_tokens: u64,
) -> CatalogModel {
    CatalogModel {
        id,
        name,
        api,
        base_url,
        reasoning,
        images,
        cost,
        cost_tiers: &[],
        context_window,
        max_tokens,
        headers: &[],
        compat: &[],
        thinking_level_map: &[],
        input_limits: None,
        prompt_cache: None,
    }
}

impl CatalogModel {
    pub(crate) const fn headers(mut self, headers: &'static [(&'static str, &'static str)]) -> Self {
        self.headers = headers;
        self
    }

    pub(crate) const fn compat(mut self, compat: &'static [(&'static str, CompatValue)]) -> Self {
        self.compat = compat;
        self
    }

    pub(crate) const fn tiers(mut self, tiers: &'static [(u64, [f64; 4])]) -> Self {
        self.cost_tiers = tiers;
        self
    }

    pub(crate) const fn thinking(mut self, map: &'static [(ThinkingLevel, Option<&'static str>)]) -> Self {
        self.thinking_level_map = map;
        self
    }

    pub(crate) const fn limits(mut self, limits: InputLimits) -> Self {
        self.input_limits = Some(limits);
        self
    }

    pub(crate) const fn cache(mut self, cache: PromptCache) -> Self {
        self.prompt_cache = Some(cache);
        self
    }

    /// The full [`Model`] for this row of `provider`.
    pub fn to_model(&self, provider: &CatalogProvider) -> Model {
        let mut input = vec![InputKind::Text];
        if self.images {
            input.push(InputKind::Image);
        }
        let [input_price, output_price, cache_read, cache_write] = self.cost;
        let compat = (!self.compat.is_empty()).then(|| {
            let map: Map<String, Value> = self
                .compat
                .iter()
                .map(|(key, value)| {
                    let value = match *value {
                        CompatValue::Bool(b) => Value::Bool(b),
                        CompatValue::Str(s) => Value::String(s.to_owned()),
                        // Generated from pi's JSON, so it parses; checked by the catalogue's tests.
                        CompatValue::Json(text) => serde_json::from_str(text).unwrap_or(Value::Null),
                    };
                    ((*key).to_owned(), value)
                })
                .collect();
            Value::Object(map)
        });
        Model {
            id: self.id.to_owned(),
            name: self.name.to_owned(),
            api: self.api.to_owned(),
            provider: provider.name.to_owned(),
            base_url: self.base_url.to_owned(),
            reasoning: self.reasoning,
            input,
            cost: ModelCost {
                input: input_price,
                output: output_price,
                cache_read,
                cache_write,
                tiers: self
                    .cost_tiers
                    .iter()
                    .map(|&(input_tokens_above, [input, output, cache_read, cache_write])| CostTier {
                        input_tokens_above,
                        input,
                        output,
                        cache_read,
                        cache_write,
                    })
                    .collect(),
            },
            context_window: self.context_window,
            max_tokens: self.max_tokens,
            headers: self.headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect::<BTreeMap<_, _>>(),
            compat,
            thinking_level_map: (!self.thinking_level_map.is_empty()).then(|| {
                self.thinking_level_map.iter().map(|(level, value)| (*level, value.map(str::to_owned))).collect()
            }),
            prompt_cache: self.prompt_cache,
            input_limits: self.input_limits,
            sampling: None,
        }
    }

    /// The thinking levels pi offers for this model, least to most intensive: `off` alone for a
    /// model that does not reason; otherwise every level its map does not rule out, `xhigh` and
    /// `max` only when the map names them.
    pub fn supported_thinking_levels(&self) -> Vec<ThinkingLevel> {
        if !self.reasoning {
            return vec![ThinkingLevel::Off];
        }
        let mapped = |level| self.thinking_level_map.iter().find(|(l, _)| *l == level).map(|(_, v)| *v);
        ThinkingLevel::ALL
            .into_iter()
            .filter(|level| match mapped(*level) {
                Some(None) => false,
                Some(Some(_)) => true,
                None => !matches!(level, ThinkingLevel::Xhigh | ThinkingLevel::Max),
            })
            .collect()
    }
}

/// Every built-in provider, in the order the initial-model search walks them (pi's
/// `defaultModelPerProvider`).
pub static PROVIDERS: &[&CatalogProvider] = data::SEARCH_ORDER;

/// The built-in provider called `name` (exact, as providers are named in model selectors).
pub fn provider(name: &str) -> Option<&'static CatalogProvider> {
    data::REGISTRY_ORDER.iter().copied().find(|p| p.name == name)
}

/// Whether `name` is one of the built-in providers.
pub fn is_builtin_provider(name: &str) -> bool {
    provider(name).is_some()
}

/// The default model id of a built-in provider.
pub fn default_model_id(provider_name: &str) -> Option<&'static str> {
    provider(provider_name).map(|p| p.default_model)
}

/// One built-in model's row.
pub fn entry(provider_name: &str, id: &str) -> Option<&'static CatalogModel> {
    provider(provider_name)?.models.iter().find(|m| m.id == id)
}

/// One built-in model, built on demand.
pub fn find(provider_name: &str, id: &str) -> Option<Model> {
    let provider = provider(provider_name)?;
    provider.models.iter().find(|m| m.id == id).map(|m| m.to_model(provider))
}

/// Every built-in model, in pi's registry order: providers by name, each one's models as its table has them.
pub fn models() -> impl Iterator<Item = Model> {
    data::REGISTRY_ORDER.iter().flat_map(|p| p.models.iter().map(move |m| m.to_model(p)))
}

/// How many built-in models there are, without building them.
pub fn model_count() -> usize {
    data::REGISTRY_ORDER.iter().map(|p| p.models.len()).sum()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
