//! The script: the turns the server plays, one per request, as JSON or built in Rust.
//!
//! Every field is optional and camelCase in JSON; unknown fields are rejected so a typo in a
//! script fails loudly instead of silently serving a different reply. A turn is either a reply
//! (`thinking`, `text` or `flood`, `toolCalls`, in that order) or a fault (`error`); a reply may
//! end in a `streamError`, be cut by `disconnectAfter` or corrupted by `malformed`. A few
//! fields shape one API's rendering only (`phase` and `reasoningText` for Responses,
//! `blockReason` and a call's `thoughtSignature` for Gemini); the other APIs ignore them. The
//! builders at the bottom are the Rust spelling of the same thing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The signature sent with a thinking block when the turn gives none (base64, like the real
/// ones, so clients that decode it do not choke).
pub const DEFAULT_THINKING_SIGNATURE: &str = "bW9jay1sbG0tdGhpbmtpbmctc2lnbmF0dXJl";

/// Characters per text, thinking or arguments delta when the turn gives no `chunkSize`.
pub const DEFAULT_CHUNK_SIZE: usize = 8;

/// A whole script: the turns in the order they are served.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub turns: Vec<Turn>,
}

impl Script {
    pub fn new(turns: Vec<Turn>) -> Self {
        Self { turns }
    }

    pub fn from_json(s: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(s)
    }

    pub fn from_value(v: Value) -> Result<Self, serde_json::Error> {
        serde_json::from_value(v)
    }
}

/// One scripted answer to one request (or `repeat` requests).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Turn {
    /// A thinking / reasoning block, streamed first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// The thinking block's signature (Anthropic `signature`, Responses `encrypted_content`,
    /// Gemini `thoughtSignature`); [`DEFAULT_THINKING_SIGNATURE`] when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// The reply text, streamed in `chunkSize`-character deltas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls, streamed after the text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Defaults to `toolUse` when there are tool calls, else `stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Characters per delta (default 8); 0 sends each piece whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_size: Option<usize>,
    /// Stall this long before sending the status line and headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Pause this long between two SSE events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_delay_ms: Option<u64>,
    /// Serve this turn only to a request it matches.
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<Match>,
    /// Serve this turn n times before it is consumed (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Answer with an HTTP error instead of a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<HttpError>,
    /// After the reply's content, an in-stream error event, then the end of the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_error: Option<StreamError>,
    /// Send this many SSE events, then drop the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disconnect_after: Option<usize>,
    /// Insert an event whose data is not JSON, then end the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malformed: Option<Malformed>,
    /// A text reply of `count` deltas of `size` ASCII bytes, in place of `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flood: Option<Flood>,
    /// Responses: the `phase` of the output message (`commentary`, `final_answer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Responses: the thinking streams as raw `reasoning_text` content, as gpt-oss servers send
    /// it, instead of a reasoning summary.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reasoning_text: bool,
    /// Codex: while this is the next turn, a websocket upgrade is refused (`426`), so the client
    /// falls back to its event stream, which this turn then answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refuse_websocket: bool,
    /// Gemini: the prompt is refused with this `promptFeedback.blockReason` (`SAFETY`,
    /// `PROHIBITED_CONTENT`, …) and nothing else is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_reason: Option<String>,
}

/// A tool call the model makes.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCall {
    /// Defaults to `toolu_mock_<n>` (Anthropic) or `call_mock_<n>` (OpenAI); Gemini sends none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    /// The arguments object. A JSON string is sent verbatim as the arguments text (so a script
    /// can send arguments that are not valid JSON).
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// Gemini: the `thoughtSignature` on the call's `functionCall` part (Gemini 3 signs calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Token counts, reported in each API's own usage fields. `input` excludes cached tokens
/// (the APIs that count cached tokens inside the prompt count get `input + cacheRead`);
/// `reasoning` is the part of `output` spent thinking (reported where the API reports it).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self { input: 100, output: 50, cache_read: 0, cache_write: 0, reasoning: 0 }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    /// The provider's content filter stopped the reply (Anthropic `refusal`, OpenAI
    /// `content_filter`, Gemini `SAFETY`).
    Safety,
}

/// Which requests a turn may answer.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Match {
    /// The raw request body (JSON text as sent, so escaped) contains this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_contains: Option<String>,
    /// The request is for this API (`anthropic-messages`, `openai-completions`,
    /// `openai-responses`, `google-generative-ai`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
}

/// An HTTP error answer.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpError {
    pub status: u16,
    /// Carried in the provider's error JSON; a default text for the status when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Sent verbatim instead of the provider's error JSON (a string as is, anything else as
    /// JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// `Retry-After` header, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<f64>,
    /// `retry-after-ms` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

/// An error reported inside a stream that already started.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StreamError {
    /// The error type in Anthropic's words (`overloaded_error`, `api_error`, ...); mapped to
    /// each API's own code.
    #[serde(rename = "type", default = "overloaded_error")]
    pub kind: String,
    #[serde(default = "overloaded")]
    pub message: String,
    /// The API's error JSON written straight into the body, pretty-printed and without SSE
    /// framing, as Gemini aborts a stream (and some proxies report errors).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unframed: bool,
    /// Responses: an `error` event (`code`, `message` at the top) instead of `response.failed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub error_event: bool,
}

impl Default for StreamError {
    fn default() -> Self {
        Self { kind: overloaded_error(), message: overloaded(), unframed: false, error_event: false }
    }
}

fn overloaded_error() -> String {
    "overloaded_error".into()
}

fn overloaded() -> String {
    "Overloaded".into()
}

/// `true`: the malformed event comes after the first [`Malformed::DEFAULT_AFTER`] events; a
/// number: after that many.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Malformed {
    Flag(bool),
    After(usize),
}

impl Malformed {
    pub const DEFAULT_AFTER: usize = 3;

    /// How many good events precede the malformed one, or `None` when off.
    pub fn after(self) -> Option<usize> {
        match self {
            Self::Flag(true) => Some(Self::DEFAULT_AFTER),
            Self::Flag(false) => None,
            Self::After(n) => Some(n),
        }
    }
}

/// A large text reply for throughput measurements.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Flood {
    pub count: usize,
    pub size: usize,
}

impl Turn {
    /// A text reply.
    pub fn text(s: impl Into<String>) -> Self {
        Self { text: Some(s.into()), ..Self::default() }
    }

    /// A reply that only thinks.
    pub fn thinking(s: impl Into<String>) -> Self {
        Self { thinking: Some(s.into()), ..Self::default() }
    }

    /// A reply with one tool call.
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self::default().with_tool_call(name, arguments)
    }

    /// An HTTP error with `message` in the provider's error JSON.
    pub fn error(status: u16, message: &str) -> Self {
        Self {
            error: Some(HttpError {
                status,
                message: Some(message.to_owned()),
                body: None,
                retry_after: None,
                retry_after_ms: None,
            }),
            ..Self::default()
        }
    }

    /// A reply whose stream fails at once with an in-stream error.
    pub fn stream_error(kind: &str, message: &str) -> Self {
        Self::default().with_stream_error(kind, message)
    }

    /// A text reply of `count` deltas of `size` bytes.
    pub fn flood(count: usize, size: usize) -> Self {
        Self { flood: Some(Flood { count, size }), ..Self::default() }
    }

    pub fn with_thinking(mut self, s: impl Into<String>) -> Self {
        self.thinking = Some(s.into());
        self
    }

    pub fn with_thinking_signature(mut self, s: impl Into<String>) -> Self {
        self.thinking_signature = Some(s.into());
        self
    }

    pub fn with_text(mut self, s: impl Into<String>) -> Self {
        self.text = Some(s.into());
        self
    }

    pub fn with_tool_call(mut self, name: &str, arguments: Value) -> Self {
        self.tool_calls.push(ToolCall { id: None, name: name.to_owned(), arguments, thought_signature: None });
        self
    }

    pub fn with_tool_call_id(mut self, id: &str, name: &str, arguments: Value) -> Self {
        let id = Some(id.to_owned());
        self.tool_calls.push(ToolCall { id, name: name.to_owned(), arguments, thought_signature: None });
        self
    }

    /// Gemini: signs the last tool call added.
    pub fn with_call_signature(mut self, signature: &str) -> Self {
        if let Some(call) = self.tool_calls.last_mut() {
            call.thought_signature = Some(signature.to_owned());
        }
        self
    }

    /// Responses: the output message's `phase`.
    pub fn with_phase(mut self, phase: &str) -> Self {
        self.phase = Some(phase.to_owned());
        self
    }

    /// Responses: thinking as `reasoning_text` content instead of a summary.
    pub fn with_reasoning_text(mut self) -> Self {
        self.reasoning_text = true;
        self
    }

    /// Gemini: a prompt refused with `reason`.
    pub fn blocked(reason: &str) -> Self {
        Self { block_reason: Some(reason.to_owned()), ..Self::default() }
    }

    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    pub fn with_stop_reason(mut self, reason: StopReason) -> Self {
        self.stop_reason = Some(reason);
        self
    }

    pub fn with_chunk_size(mut self, n: usize) -> Self {
        self.chunk_size = Some(n);
        self
    }

    pub fn with_delay_ms(mut self, ms: u64) -> Self {
        self.delay_ms = Some(ms);
        self
    }

    pub fn with_chunk_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = Some(ms);
        self
    }

    /// Serve only to a request whose raw body contains `text`.
    pub fn when_body_contains(mut self, text: &str) -> Self {
        self.matcher.get_or_insert_with(Match::default).body_contains = Some(text.to_owned());
        self
    }

    /// Serve only to requests for `api` (e.g. `"openai-responses"`).
    pub fn when_api(mut self, api: &str) -> Self {
        self.matcher.get_or_insert_with(Match::default).api = Some(api.to_owned());
        self
    }

    pub fn repeat(mut self, n: u32) -> Self {
        self.repeat = Some(n);
        self
    }

    /// Adds `Retry-After: secs` to an error turn.
    pub fn with_retry_after(mut self, secs: f64) -> Self {
        if let Some(error) = &mut self.error {
            error.retry_after = Some(secs);
        }
        self
    }

    /// Adds `retry-after-ms: ms` to an error turn.
    pub fn with_retry_after_ms(mut self, ms: u64) -> Self {
        if let Some(error) = &mut self.error {
            error.retry_after_ms = Some(ms);
        }
        self
    }

    pub fn with_stream_error(mut self, kind: &str, message: &str) -> Self {
        let error = StreamError { kind: kind.to_owned(), message: message.to_owned(), ..StreamError::default() };
        self.stream_error = Some(error);
        self
    }

    /// Writes the stream error without SSE framing.
    pub fn unframed(mut self) -> Self {
        if let Some(error) = &mut self.stream_error {
            error.unframed = true;
        }
        self
    }

    /// Responses: the stream error as an `error` event.
    pub fn as_error_event(mut self) -> Self {
        if let Some(error) = &mut self.stream_error {
            error.error_event = true;
        }
        self
    }

    pub fn disconnect_after(mut self, events: usize) -> Self {
        self.disconnect_after = Some(events);
        self
    }

    pub fn malformed(mut self) -> Self {
        self.malformed = Some(Malformed::Flag(true));
        self
    }

    pub fn malformed_after(mut self, events: usize) -> Self {
        self.malformed = Some(Malformed::After(events));
        self
    }

    /// How many times the turn is served before it is consumed.
    pub fn times(&self) -> u32 {
        self.repeat.unwrap_or(1).max(1)
    }

    /// Whether this turn may answer a request for `api` whose raw body is `body`.
    pub fn matches(&self, api: &str, body: &str) -> bool {
        let Some(m) = &self.matcher else {
            return true;
        };
        m.body_contains.as_deref().is_none_or(|t| body.contains(t)) && m.api.as_deref().is_none_or(|a| a == api)
    }

    /// The stop reason sent: the scripted one, else `toolUse` when there are tool calls.
    pub fn effective_stop_reason(&self) -> StopReason {
        self.stop_reason.unwrap_or(if self.tool_calls.is_empty() { StopReason::Stop } else { StopReason::ToolUse })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_field() {
        let script = Script::from_value(json!({"turns": [
            {"thinking": "hmm", "thinkingSignature": "sig", "text": "hi",
             "toolCalls": [{"name": "read", "arguments": {"path": "a"}, "thoughtSignature": "c2ln"},
                           {"id": "x", "name": "ls"}],
             "usage": {"input": 1, "cacheRead": 2}, "stopReason": "length", "chunkSize": 3,
             "delayMs": 4, "chunkDelayMs": 5, "match": {"bodyContains": "needle"}, "repeat": 2,
             "streamError": {"type": "api_error", "unframed": true, "errorEvent": true},
             "disconnectAfter": 6, "malformed": true,
             "flood": {"count": 7, "size": 8}, "phase": "commentary", "reasoningText": true,
             "blockReason": "SAFETY"},
            {"error": {"status": 429, "retryAfter": 1.5, "retryAfterMs": 10, "body": {"x": 1}}},
            {"malformed": 9}
        ]}))
        .unwrap();
        let t = &script.turns[0];
        assert_eq!(t.tool_calls[1].arguments, json!({}));
        assert_eq!(t.tool_calls[1].id.as_deref(), Some("x"));
        assert_eq!(t.tool_calls[0].thought_signature.as_deref(), Some("c2ln"));
        let usage = t.usage.unwrap();
        assert_eq!((usage.input, usage.output, usage.cache_read), (1, 50, 2));
        assert_eq!(t.stop_reason, Some(StopReason::Length));
        assert_eq!(t.stream_error.as_ref().unwrap().message, "Overloaded");
        assert!(t.stream_error.as_ref().is_some_and(|e| e.unframed && e.error_event));
        assert_eq!((t.phase.as_deref(), t.reasoning_text), (Some("commentary"), true));
        assert_eq!(t.block_reason.as_deref(), Some("SAFETY"));
        assert_eq!(t.malformed.and_then(Malformed::after), Some(3));
        assert_eq!(script.turns[2].malformed.and_then(Malformed::after), Some(9));
        assert_eq!(script.turns[1].error.as_ref().unwrap().retry_after, Some(1.5));
    }

    #[test]
    fn rejects_unknown_fields() {
        let err = Script::from_json(r#"{"turns":[{"txt":"hi"}]}"#).unwrap_err();
        assert!(err.to_string().contains("txt"), "{err}");
    }

    #[test]
    fn round_trips_through_json() {
        let turn = Turn::text("a")
            .with_thinking("b")
            .with_tool_call("read", json!({"path": "x"}))
            .when_body_contains("q")
            .repeat(2);
        let value = serde_json::to_value(&turn).unwrap();
        assert_eq!(value["match"], json!({"bodyContains": "q"}));
        let back: Turn = serde_json::from_value(value).unwrap();
        assert_eq!(back, turn);
    }

    #[test]
    fn stop_reason_defaults_follow_tool_calls() {
        assert_eq!(Turn::text("a").effective_stop_reason(), StopReason::Stop);
        let call = Turn::tool_call("ls", json!({}));
        assert_eq!(call.effective_stop_reason(), StopReason::ToolUse);
        let capped = call.with_stop_reason(StopReason::Length);
        assert_eq!(capped.effective_stop_reason(), StopReason::Length);
    }

    #[test]
    fn matching_uses_body_and_api() {
        let turn = Turn::text("a").when_body_contains("agent-2").when_api("openai-responses");
        assert!(turn.matches("openai-responses", r#"{"x":"agent-2"}"#));
        assert!(!turn.matches("anthropic-messages", r#"{"x":"agent-2"}"#));
        assert!(!turn.matches("openai-responses", r#"{"x":"agent-1"}"#));
        assert!(Turn::text("b").matches("anything", ""));
    }
}
