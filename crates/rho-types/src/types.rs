//! The provider-neutral conversation types, serialized exactly as the pi-family protocol writes
//! them (camelCase keys, absent optionals omitted, keys in the reference's construction order).
//!
//! These are what the model sees: user, assistant and tool-result messages and their content
//! blocks. Application-level roles (bash executions, summaries, custom messages) live in
//! `rho-agent` and are converted to these before a request.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::text::Text;

/// Unix time in milliseconds, the unit of every message `timestamp`.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    pub text: Text,
    /// Opaque provider replay data (OpenAI Responses message id), passed through untouched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

impl TextContent {
    pub fn new(text: impl Into<Text>) -> Self {
        Self { text: text.into(), text_signature: None }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    pub thinking: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// pi writes redacted thinking as a thinking block with this flag; kept so such sessions
    /// round-trip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RedactedThinkingContent {
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64 without a `data:` prefix.
    pub data: Text,
    pub mime_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Map<String, Value>,
    /// Google's replay signature for function calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
}

/// A block of a user message or a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum UserContent {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "image")]
    Image(ImageContent),
}

impl UserContent {
    pub fn text(text: impl Into<Text>) -> Self {
        Self::Text(TextContent::new(text))
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            Self::Image(_) => None,
        }
    }
}

/// A block of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum AssistantContent {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "thinking")]
    Thinking(ThinkingContent),
    #[serde(rename = "redactedThinking")]
    RedactedThinking(RedactedThinkingContent),
    #[serde(rename = "toolCall")]
    ToolCall(ToolCall),
}

/// A user message's content: older sessions store a bare string, rho always writes blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserMessageContent {
    Text(Text),
    Blocks(Vec<UserContent>),
}

impl UserMessageContent {
    /// The text blocks joined with `sep` (images skipped).
    pub fn text_joined(&self, sep: &str) -> String {
        match self {
            Self::Text(s) => s.to_string(),
            Self::Blocks(blocks) => blocks.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join(sep),
        }
    }

    pub fn into_blocks(self) -> Vec<UserContent> {
        match self {
            Self::Text(s) => vec![UserContent::text(s)],
            Self::Blocks(b) => b,
        }
    }

    pub fn blocks(&self) -> std::borrow::Cow<'_, [UserContent]> {
        match self {
            Self::Text(s) => std::borrow::Cow::Owned(vec![UserContent::text(s.clone())]),
            Self::Blocks(b) => std::borrow::Cow::Borrowed(b),
        }
    }
}

/// Who initiated a message (xcsh's billing attribution).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Attribution {
    User,
    Agent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    pub content: UserMessageContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    pub timestamp: i64,
}

impl UserMessage {
    /// A prompt as RPC builds it: a text block followed by the images, attributed to the user.
    pub fn prompt(text: impl Into<Text>, images: Vec<ImageContent>) -> Self {
        let mut blocks = vec![UserContent::text(text)];
        blocks.extend(images.into_iter().map(UserContent::Image));
        Self {
            content: UserMessageContent::Blocks(blocks),
            synthetic: None,
            attribution: Some(Attribution::User),
            timestamp: now_ms(),
        }
    }

    pub fn text(&self) -> String {
        self.content.text_joined("")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    #[default]
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    #[serde(default)]
    pub input: f64,
    #[serde(default)]
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
    #[serde(default)]
    pub total: f64,
    /// pi 1.6's: `total` is what the provider billed (OpenRouter reports it), not rho's sum of
    /// the parts at the catalogue's prices (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
    /// pi 1.6's: the part of `cacheWrite` written with one-hour retention (Anthropic's), priced
    /// at twice the input price.
    #[serde(default, rename = "cacheWrite1h", skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<u64>,
    #[serde(default)]
    pub total_tokens: u64,
    /// The reasoning tokens among `output`, where the provider says (pi 1.6's `reasoning`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub premium_requests: Option<f64>,
    #[serde(default)]
    pub cost: Cost,
}

impl Usage {
    /// The context size this usage reports: `totalTokens`, or the sum of the four buckets.
    pub fn context_tokens(&self) -> u64 {
        if self.total_tokens > 0 {
            self.total_tokens
        } else {
            self.input + self.output + self.cache_read + self.cache_write
        }
    }

    /// Sets `totalTokens` to the sum of the four buckets and prices them with `prices`
    /// (USD per million tokens).
    pub fn finish(&mut self, prices: &ModelCost) {
        self.total_tokens = self.input + self.output + self.cache_read + self.cache_write;
        let per = |price: f64, n: u64| price / 1_000_000.0 * n as f64;
        let long_write = self.cache_write_1h.unwrap_or(0).min(self.cache_write);
        let [input, output, cache_read, cache_write] =
            prices.rates_for(self.input + self.cache_read + self.cache_write);
        self.cost.input = per(input, self.input);
        self.cost.output = per(output, self.output);
        self.cost.cache_read = per(cache_read, self.cache_read);
        self.cost.cache_write = per(cache_write, self.cache_write - long_write) + per(input * 2.0, long_write);
        self.cost.total = self.cost.input + self.cost.output + self.cost.cache_read + self.cost.cache_write;
        self.cost.total_from_provider = Some(false);
    }

    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.total_tokens += other.total_tokens;
        if let Some(reasoning) = other.reasoning {
            self.reasoning = Some(self.reasoning.unwrap_or(0) + reasoning);
        }
        if let Some(long_write) = other.cache_write_1h {
            self.cache_write_1h = Some(self.cache_write_1h.unwrap_or(0) + long_write);
        }
        self.cost.input += other.cost.input;
        self.cost.output += other.cost.output;
        self.cost.cache_read += other.cost.cache_read;
        self.cost.cache_write += other.cost.cache_write;
        self.cost.total += other.cost.total;
        // The sum is the provider's own only when every part was.
        self.cost.total_from_provider = match (self.cost.total_from_provider, other.cost.total_from_provider) {
            (Some(a), Some(b)) => Some(a && b),
            (a, b) => a.or(b),
        };
    }
}

/// Prices in USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    #[serde(default)]
    pub input: f64,
    #[serde(default)]
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
    /// pi 1.6: higher prices for a request whose input (cache reads and writes included) is over
    /// a size; the highest threshold passed prices the whole request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<CostTier>,
}

/// One of [`ModelCost::tiers`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CostTier {
    pub input_tokens_above: u64,
    #[serde(default)]
    pub input: f64,
    #[serde(default)]
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
}

impl ModelCost {
    /// The rates `[input, output, cacheRead, cacheWrite]` for a request of `input_tokens`.
    pub fn rates_for(&self, input_tokens: u64) -> [f64; 4] {
        let tier =
            self.tiers.iter().filter(|t| input_tokens > t.input_tokens_above).max_by_key(|t| t.input_tokens_above);
        match tier {
            Some(t) => [t.input, t.output, t.cache_read, t.cache_write],
            None => [self.input, self.output, self.cache_read, self.cache_write],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    pub content: Vec<AssistantContent>,
    pub api: String,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    pub stop_reason: StopReason,
    pub timestamp: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Request duration in ms (omp's name; pi 1.6's `durationMs` is the same figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<u32>,
    /// Time to first token in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft: Option<u32>,
    /// pi 1.6's: the request's duration in ms, as `duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u32>,
    /// pi 1.6's: the stop reason as the provider said it (`end_turn`, `tool_calls`, `STOP`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    /// pi 1.6's: the thinking level the request was made with (`off` for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<crate::ThinkingLevel>,
    /// pi 1.6's: the model that answered when it is not `model` (a server-side fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// (Boxed: a message is moved often, and this is rarely set.)
    pub response_model: Option<Box<str>>,
}

impl AssistantMessage {
    /// An empty partial message for `model`, stamped now, as a run starts streaming it.
    pub fn empty(api: &str, provider: &str, model: &str) -> Self {
        Self {
            content: Vec::new(),
            api: api.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            timestamp: now_ms(),
            response_id: None,
            error_message: None,
            duration: None,
            ttft: None,
            duration_ms: None,
            raw_stop_reason: None,
            thinking_level: None,
            response_model: None,
        }
    }

    /// The text blocks concatenated (thinking and tool calls skipped).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let AssistantContent::Text(t) = block {
                out.push_str(&t.text);
            }
        }
        out
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            AssistantContent::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    pub fn is_failed(&self) -> bool {
        matches!(self.stop_reason, StopReason::Error | StopReason::Aborted)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: Vec<UserContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_warning: Option<bool>,
    pub timestamp: i64,
}

impl ToolResultMessage {
    pub fn text(&self) -> String {
        self.content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n")
    }
}

/// A message the model sees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role")]
pub enum Message {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object.
    pub parameters: Value,
}

/// Everything a request sends besides the options: the system prompt, the conversation and the
/// tools.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub system_prompt: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// pi 0.73's `contextUsage`: `tokens` and `percent` are `null` when they are not known (right
/// after a compaction, before the model reported a size again).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    pub context_window: u64,
    pub percent: Option<f64>,
}

impl ContextUsage {
    /// `tokens` of a `window` (`None` when there is no window).
    pub fn new(tokens: Option<u64>, window: u64) -> Option<Self> {
        (window > 0).then(|| Self {
            tokens,
            context_window: window,
            percent: tokens.map(|t| t as f64 / window as f64 * 100.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiered() -> ModelCost {
        let tier = |above, input, output| CostTier {
            input_tokens_above: above,
            input,
            output,
            cache_read: 0.1,
            cache_write: 0.0,
        };
        ModelCost {
            input: 1.0,
            output: 2.0,
            cache_read: 0.05,
            cache_write: 0.0,
            tiers: vec![tier(200_000, 4.0, 8.0), tier(100_000, 2.0, 4.0)],
        }
    }

    #[test]
    fn the_highest_tier_passed_prices_the_whole_request() {
        let prices = tiered();
        assert_eq!(prices.rates_for(100_000), [1.0, 2.0, 0.05, 0.0], "at a threshold: not above it");
        assert_eq!(prices.rates_for(100_001), [2.0, 4.0, 0.1, 0.0]);
        assert_eq!(prices.rates_for(250_000), [4.0, 8.0, 0.1, 0.0]);
        // Cache reads count towards the input size, as pi counts them.
        let mut usage = Usage { input: 50_000, output: 1_000_000, cache_read: 60_000, ..Usage::default() };
        usage.finish(&prices);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(usage.cost.input, 0.1) && close(usage.cost.output, 4.0), "{:?}", usage.cost);
        assert!(close(usage.cost.cache_read, 0.006), "{:?}", usage.cost);
        let json = serde_json::to_value(&prices).unwrap();
        assert_eq!(
            json["tiers"][1],
            serde_json::json!({"inputTokensAbove": 100000, "input": 2.0, "output": 4.0, "cacheRead": 0.1, "cacheWrite": 0.0})
        );
        assert!(serde_json::to_value(ModelCost::default()).unwrap().get("tiers").is_none());
    }
}
