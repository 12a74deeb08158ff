//! A model as the protocol describes it (`get_available_models`, `set_model`, `get_state.model`)
//! and the thinking levels it supports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
}

impl ThinkingLevel {
    pub const ALL: [ThinkingLevel; 6] = [Self::Off, Self::Minimal, Self::Low, Self::Medium, Self::High, Self::Xhigh];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
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
}

impl Model {
    pub fn supports_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }

    /// `xhigh` exists only on the models that allow it.
    pub fn supports_xhigh(&self) -> bool {
        ["gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6"].iter().any(|needle| self.id.contains(needle))
    }

    /// The levels this model accepts, least to most intensive (`off` first).
    pub fn thinking_levels(&self) -> Vec<ThinkingLevel> {
        if !self.reasoning {
            return vec![ThinkingLevel::Off];
        }
        ThinkingLevel::ALL.into_iter().filter(|l| *l != ThinkingLevel::Xhigh || self.supports_xhigh()).collect()
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

    /// `provider/id`.
    pub fn selector(&self) -> String {
        format!("{}/{}", self.provider, self.id)
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
            cost: ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 },
            context_window: 200_000,
            max_tokens: 64_000,
            headers: BTreeMap::from([("x-secret".into(), "s".into())]),
            compat: None,
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
}
