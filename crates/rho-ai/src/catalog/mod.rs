//! The built-in model catalogue: the providers rho knows out of the box and their notable
//! current models, as plain static tables.
//!
//! The tables are `static` data (no JSON blob parsed at start-up, nothing allocated until a model
//! is asked for); [`CatalogModel::to_model`] builds a [`Model`] on demand. Providers are listed in
//! the reference's table order, which is also the order the initial-model search walks
//! (agent-behavior.md §9.1, §9.4). Prices are USD per million tokens.

mod first_party;
mod hosted;

use serde_json::{Map, Value};

use crate::model::{InputKind, Model, ModelCost};

/// A built-in provider: where it lives, which wire API it speaks, and its models.
#[derive(Debug)]
pub struct CatalogProvider {
    pub name: &'static str,
    pub api: &'static str,
    pub base_url: &'static str,
    /// The model picked for this provider when nothing else says which (§9.4 step 5).
    pub default_model: &'static str,
    /// Compat flags every model of this provider gets (openai-completions dialects).
    pub compat: &'static [(&'static str, bool)],
    pub models: &'static [CatalogModel],
}

/// One built-in model. The provider's name, API and base URL come from its [`CatalogProvider`].
#[derive(Debug)]
pub struct CatalogModel {
    pub id: &'static str,
    pub name: &'static str,
    pub reasoning: bool,
    /// Accepts images besides text.
    pub images: bool,
    /// `[input, output, cacheRead, cacheWrite]`, USD per million tokens.
    pub cost: [f64; 4],
    pub context_window: u64,
    pub max_tokens: u64,
    /// Compat flags for this model alone, applied over the provider's.
    pub compat: &'static [(&'static str, bool)],
}

/// A model row without model-level compat flags (most of them).
pub(crate) const fn m(
    id: &'static str,
    name: &'static str,
    reasoning: bool,
    images: bool,
    cost: [f64; 4],
    context_window: u64,
    max_tokens: u64,
) -> CatalogModel {
    CatalogModel { id, name, reasoning, images, cost, context_window, max_tokens, compat: &[] }
}

impl CatalogModel {
    /// With compat flags of its own.
    pub(crate) const fn with_compat(mut self, compat: &'static [(&'static str, bool)]) -> Self {
        self.compat = compat;
        self
    }

    /// The full [`Model`] for this row of `provider`.
    pub fn to_model(&self, provider: &CatalogProvider) -> Model {
        let mut input = vec![InputKind::Text];
        if self.images {
            input.push(InputKind::Image);
        }
        let [input_price, output_price, cache_read, cache_write] = self.cost;
        let mut compat = Map::new();
        for (key, value) in provider.compat.iter().chain(self.compat) {
            compat.insert((*key).to_owned(), Value::Bool(*value));
        }
        Model {
            id: self.id.to_owned(),
            name: self.name.to_owned(),
            api: provider.api.to_owned(),
            provider: provider.name.to_owned(),
            base_url: provider.base_url.to_owned(),
            reasoning: self.reasoning,
            input,
            cost: ModelCost { input: input_price, output: output_price, cache_read, cache_write },
            context_window: self.context_window,
            max_tokens: self.max_tokens,
            headers: Default::default(),
            compat: (!compat.is_empty()).then_some(Value::Object(compat)),
        }
    }
}

/// Every built-in provider, in the reference's order.
pub static PROVIDERS: &[&CatalogProvider] = &[
    &first_party::ANTHROPIC,
    &first_party::OPENAI,
    &first_party::GOOGLE,
    &hosted::OPENROUTER,
    &hosted::XAI,
    &hosted::GROQ,
    &hosted::CEREBRAS,
    &hosted::MISTRAL,
    &hosted::DEEPSEEK,
];

/// The built-in provider called `name` (exact, as providers are named in model selectors).
pub fn provider(name: &str) -> Option<&'static CatalogProvider> {
    PROVIDERS.iter().copied().find(|p| p.name == name)
}

/// Whether `name` is one of the built-in providers.
pub fn is_builtin_provider(name: &str) -> bool {
    provider(name).is_some()
}

/// The default model id of a built-in provider.
pub fn default_model_id(provider_name: &str) -> Option<&'static str> {
    provider(provider_name).map(|p| p.default_model)
}

/// One built-in model, built on demand.
pub fn find(provider_name: &str, id: &str) -> Option<Model> {
    let provider = provider(provider_name)?;
    provider.models.iter().find(|m| m.id == id).map(|m| m.to_model(provider))
}

/// Every built-in model, in catalogue order.
pub fn models() -> impl Iterator<Item = Model> {
    PROVIDERS.iter().flat_map(|p| p.models.iter().map(move |m| m.to_model(p)))
}

/// How many built-in models there are, without building them.
pub fn model_count() -> usize {
    PROVIDERS.iter().map(|p| p.models.len()).sum()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::model::api;

    const APIS: [&str; 4] =
        [api::ANTHROPIC_MESSAGES, api::OPENAI_COMPLETIONS, api::OPENAI_RESPONSES, api::GOOGLE_GENERATIVE_AI];

    #[test]
    fn every_model_is_usable() {
        let mut seen = HashSet::new();
        for model in models() {
            let label = model.selector();
            assert!(APIS.contains(&model.api.as_str()), "{label}: unknown api");
            assert!(model.context_window > 0, "{label}: context window");
            assert!(model.max_tokens > 0, "{label}: max tokens");
            assert!(model.max_tokens <= model.context_window, "{label}: max tokens above the context window");
            assert!(!model.name.is_empty(), "{label}: name");
            assert!(model.base_url.starts_with("https://"), "{label}: base url");
            let costs = [model.cost.input, model.cost.output, model.cost.cache_read, model.cost.cache_write];
            assert!(costs.iter().all(|c| c.is_finite() && *c >= 0.0), "{label}");
            assert!(model.headers.is_empty(), "{label}: built-ins carry no headers");
            assert!(seen.insert(label.clone()), "{label}: duplicate");
        }
        assert_eq!(seen.len(), model_count());
    }

    #[test]
    fn every_provider_has_its_default_and_distinct_name() {
        let mut names = HashSet::new();
        for provider in PROVIDERS {
            assert!(names.insert(provider.name), "{}: duplicate", provider.name);
            assert!(
                find(provider.name, provider.default_model).is_some(),
                "{}: default model {} missing",
                provider.name,
                provider.default_model
            );
            assert!((2..=16).contains(&provider.models.len()), "{}: a handful of models", provider.name);
        }
    }

    #[test]
    fn providers_follow_the_reference_order_and_endpoints() {
        let table: Vec<_> = PROVIDERS.iter().map(|p| (p.name, p.api, p.base_url)).collect();
        assert_eq!(
            table,
            [
                ("anthropic", "anthropic-messages", "https://api.anthropic.com"),
                ("openai", "openai-responses", "https://api.openai.com/v1"),
                ("google", "google-generative-ai", "https://generativelanguage.googleapis.com/v1beta"),
                ("openrouter", "openai-completions", "https://openrouter.ai/api/v1"),
                ("xai", "openai-completions", "https://api.x.ai/v1"),
                ("groq", "openai-completions", "https://api.groq.com/openai/v1"),
                ("cerebras", "openai-completions", "https://api.cerebras.ai/v1"),
                ("mistral", "openai-completions", "https://api.mistral.ai/v1"),
                ("deepseek", "openai-completions", "https://api.deepseek.com/v1"),
            ]
        );
    }

    #[test]
    fn non_standard_servers_get_their_compat_flags() {
        for provider in ["xai", "cerebras", "deepseek"] {
            let default = default_model_id(provider).unwrap();
            let model = find(provider, default).unwrap();
            assert_eq!(model.compat_bool("supportsDeveloperRole"), Some(false), "{provider}");
            assert_eq!(model.compat_bool("supportsStore"), Some(false), "{provider}");
        }
        let grok = find("xai", "grok-4").unwrap();
        assert_eq!(grok.compat_bool("supportsReasoningEffort"), Some(false));
        let oss = find("cerebras", "gpt-oss-120b").unwrap();
        assert_eq!(oss.compat_bool("supportsReasoningEffort"), Some(true));
        assert_eq!(find("anthropic", "claude-opus-4-6").unwrap().compat, None);
    }

    #[test]
    fn a_model_is_built_with_its_provider_fields() {
        let model = find("anthropic", "claude-sonnet-4-5").unwrap();
        let json = crate::json::to_string(&model).unwrap();
        assert_eq!(
            json,
            r#"{"id":"claude-sonnet-4-5","name":"Claude Sonnet 4.5","api":"anthropic-messages","provider":"anthropic","baseUrl":"https://api.anthropic.com","reasoning":true,"input":["text","image"],"cost":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75},"contextWindow":200000,"maxTokens":64000}"#
        );
        assert!(find("anthropic", "no-such-model").is_none());
        assert!(find("no-such-provider", "claude-sonnet-4-5").is_none());
    }
}
