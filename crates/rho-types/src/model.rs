//! A model as the protocol describes it (`get_available_models`, `set_model`, `get_state.model`)
//! and the thinking levels it supports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::model_limits::{ImageInputLimits, ImageResize, InputLimits, PromptCache};
pub use crate::types::ModelCost;

/// The wire API a model is spoken to with.
pub mod api {
    pub const ANTHROPIC_MESSAGES: &str = "anthropic-messages";
    pub const OPENAI_COMPLETIONS: &str = "openai-completions";
    pub const OPENAI_RESPONSES: &str = "openai-responses";
    pub const AZURE_OPENAI_RESPONSES: &str = "azure-openai-responses";
    pub const OPENAI_CODEX_RESPONSES: &str = "openai-codex-responses";
    pub const GOOGLE_GENERATIVE_AI: &str = "google-generative-ai";
    pub const GOOGLE_VERTEX: &str = "google-vertex";
    pub const BEDROCK_CONVERSE_STREAM: &str = "bedrock-converse-stream";
    /// pi's own message protocol (the Radius gateway's).
    pub const PI_MESSAGES: &str = "pi-messages";
    /// The APIs rho speaks itself (a model of any other needs an extension's stream).
    pub const SPOKEN: &[&str] = &[
        ANTHROPIC_MESSAGES,
        OPENAI_COMPLETIONS,
        OPENAI_RESPONSES,
        AZURE_OPENAI_RESPONSES,
        OPENAI_CODEX_RESPONSES,
        GOOGLE_GENERATIVE_AI,
        GOOGLE_VERTEX,
        BEDROCK_CONVERSE_STREAM,
        PI_MESSAGES,
    ];
    /// A virtual model's (pi 1.6's `pi-virtual`): never spoken to; each request is routed to a
    /// physical model first.
    pub const VIRTUAL: &str = "pi-virtual";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Text,
    Image,
}

/// Reasoning effort, from none to the most the model allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    Off,
    Minimal,
    Low,
    #[default]
    Medium,
    High,
    Xhigh,
    /// pi 1.6: the most a model allows, where its `thinkingLevelMap` names it.
    Max,
}

impl ThinkingLevel {
    pub const ALL: [ThinkingLevel; 7] =
        [Self::Off, Self::Minimal, Self::Low, Self::Medium, Self::High, Self::Xhigh, Self::Max];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

impl std::fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A model as offered to hosts. Key order follows the reference interface; `headers` is never
/// serialized because custom headers often carry credentials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    pub base_url: String,
    pub reasoning: bool,
    pub input: Vec<InputKind>,
    pub cost: ModelCost,
    pub context_window: u64,
    pub max_tokens: u64,
    #[serde(skip)]
    pub headers: BTreeMap<String, String>,
    /// Provider-compatibility overrides (openai-completions / openai-responses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Value>,
    /// pi's `thinkingLevelMap`: the value sent to the provider for each level, `null` for a
    /// level the model does not take. `xhigh` and `max` exist only where it names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<BTreeMap<ThinkingLevel, Option<String>>>,
    /// pi 1.6's `promptCache`: the prompt cache's lifetime per retention tier (kept and shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    /// pi 1.6's `inputLimits`: its `images.resize` decides how new images are shrunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_limits: Option<InputLimits>,
    /// pi 1.6's `samplingParams` and `samplingParamsByThinkingLevel` (models.json): body fields
    /// an OpenAI-style request carries (`temperature`, `top_p`, …). Configuration, not shown to
    /// hosts.
    #[serde(skip)]
    pub sampling: Option<SamplingParams>,
}

/// A model's sampling defaults and their overrides per thinking level (pi 1.6's models.json).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingParams {
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub sampling_params: serde_json::Map<String, Value>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sampling_params_by_thinking_level: BTreeMap<ThinkingLevel, serde_json::Map<String, Value>>,
}

impl SamplingParams {
    /// The fields a request at `level` carries: the defaults, then the level's overrides.
    pub fn for_level(&self, level: ThinkingLevel) -> serde_json::Map<String, Value> {
        let mut fields = self.sampling_params.clone();
        if let Some(overrides) = self.sampling_params_by_thinking_level.get(&level) {
            fields.extend(overrides.clone());
        }
        fields
    }
}

impl Model {
    pub fn supports_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }

    /// `xhigh` exists only on the models that allow it: those whose map names it, else (a model
    /// without a map) the ones pi 0.73 knew to.
    pub fn supports_xhigh(&self) -> bool {
        match &self.thinking_level_map {
            Some(map) => matches!(map.get(&ThinkingLevel::Xhigh), Some(Some(_))),
            None => {
                ["gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6"].iter().any(|needle| self.id.contains(needle))
            }
        }
    }

    /// Whether the model's map sets `level` to `null`: the model does not take it (for `off`:
    /// its thinking cannot be switched off).
    pub fn rules_out(&self, level: ThinkingLevel) -> bool {
        self.thinking_level_map.as_ref().is_some_and(|map| matches!(map.get(&level), Some(None)))
    }

    /// The value the provider is sent for `level`, when the model's map gives one.
    pub fn provider_level(&self, level: ThinkingLevel) -> Option<&str> {
        self.thinking_level_map.as_ref()?.get(&level)?.as_deref()
    }

    /// The levels this model accepts, least to most intensive (`off` first), as pi 1.6 decides
    /// them: a level its map sets to `null` is out; `xhigh` and `max` only where named.
    pub fn thinking_levels(&self) -> Vec<ThinkingLevel> {
        if !self.reasoning {
            return vec![ThinkingLevel::Off];
        }
        let mapped = |level: &ThinkingLevel| self.thinking_level_map.as_ref().and_then(|m| m.get(level));
        ThinkingLevel::ALL
            .into_iter()
            .filter(|level| match (level, mapped(level)) {
                (_, Some(None)) => false,
                (ThinkingLevel::Xhigh, _) => self.supports_xhigh(),
                (ThinkingLevel::Max, mapped) => mapped.is_some(),
                _ => true,
            })
            .collect()
    }

    /// The nearest level this model supports: the level itself, else the next one up, else the
    /// next one down.
    pub fn clamp_thinking(&self, level: ThinkingLevel) -> ThinkingLevel {
        let available = self.thinking_levels();
        if available.contains(&level) {
            return level;
        }
        available
            .iter()
            .copied()
            .find(|l| *l > level)
            .or_else(|| available.iter().rev().copied().find(|l| *l < level))
            .unwrap_or(ThinkingLevel::Off)
    }

    /// Whether this is a virtual model, which an extension routes to a physical one per request.
    pub fn is_virtual(&self) -> bool {
        self.api == api::VIRTUAL
    }

    /// `provider/id`.
    pub fn selector(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }

    /// How new images are shrunk for this model, when it says (`inputLimits.images.resize`).
    pub fn image_resize(&self) -> Option<ImageResize> {
        self.input_limits?.image_resize()
    }

    /// A compat flag from `compat`, if set.
    pub fn compat_bool(&self, key: &str) -> Option<bool> {
        self.compat.as_ref()?.get(key)?.as_bool()
    }

    pub fn compat_str(&self, key: &str) -> Option<&str> {
        self.compat.as_ref()?.get(key)?.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str, reasoning: bool) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: api::ANTHROPIC_MESSAGES.into(),
            provider: "anthropic".into(),
            base_url: "https://api.anthropic.com".into(),
            reasoning,
            input: vec![InputKind::Text, InputKind::Image],
            cost: ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, tiers: Vec::new() },
            context_window: 200_000,
            max_tokens: 64_000,
            headers: BTreeMap::from([("x-secret".into(), "s".into())]),
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
            input_limits: None,
            sampling: None,
        }
    }

    #[test]
    fn serializes_in_reference_order_without_headers() {
        let json = crate::json::to_string(&model("claude-sonnet-4-5", true)).unwrap();
        assert_eq!(
            json,
            r#"{"id":"claude-sonnet-4-5","name":"claude-sonnet-4-5","api":"anthropic-messages","provider":"anthropic","baseUrl":"https://api.anthropic.com","reasoning":true,"input":["text","image"],"cost":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75},"contextWindow":200000,"maxTokens":64000}"#
        );
    }

    #[test]
    fn thinking_is_clamped_to_the_model() {
        let plain = model("claude-sonnet-4-5", true);
        assert_eq!(plain.clamp_thinking(ThinkingLevel::Xhigh), ThinkingLevel::High);
        assert_eq!(plain.clamp_thinking(ThinkingLevel::Low), ThinkingLevel::Low);
        assert_eq!(model("claude-opus-4-6", true).clamp_thinking(ThinkingLevel::Xhigh), ThinkingLevel::Xhigh);
        assert_eq!(model("gpt-4o", false).clamp_thinking(ThinkingLevel::High), ThinkingLevel::Off);
        assert_eq!(model("gpt-4o", false).thinking_levels(), vec![ThinkingLevel::Off]);
    }

    #[test]
    fn a_thinking_level_map_decides_the_levels_and_the_values_sent() {
        use ThinkingLevel::*;
        let mut opus = model("claude-opus-5", true);
        opus.thinking_level_map = Some(BTreeMap::from([(Xhigh, Some("xhigh".into())), (Max, Some("max".into()))]));
        assert_eq!(opus.thinking_levels(), ThinkingLevel::ALL);
        assert_eq!(opus.provider_level(Max), Some("max"));
        assert_eq!(opus.clamp_thinking(Max), Max);
        let mut sonnet = model("claude-sonnet-5-5", true);
        sonnet.thinking_level_map =
            Some(BTreeMap::from([(Off, None), (Minimal, None), (Low, Some("low".into())), (Max, Some("max".into()))]));
        assert_eq!(sonnet.thinking_levels(), [Low, Medium, High, Max]);
        assert_eq!(sonnet.clamp_thinking(Off), Low);
        assert_eq!(sonnet.clamp_thinking(Xhigh), Max);
        // Without a map, `max` is nobody's: it comes down to the highest level there is.
        assert_eq!(model("claude-sonnet-4-5", true).clamp_thinking(Max), High);
        let json = crate::json::to_string(&opus).unwrap();
        assert!(json.ends_with(r#""thinkingLevelMap":{"xhigh":"xhigh","max":"max"}}"#), "{json}");
    }
}
