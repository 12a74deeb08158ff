//! A turn resolved for one request: pieces cut into deltas, tool call ids given, usage and stop
//! reason defaulted, and the request facts the wire formats echo (model, ids, usage opt-in).
//! The wire renderers read only this, so every format tells the same story.

use serde_json::Value;

use crate::api::{Api, Route};
use crate::script::{DEFAULT_CHUNK_SIZE, DEFAULT_THINKING_SIGNATURE, Flood, StopReason, StreamError, Turn, Usage};

/// The facts of one request that a reply repeats back.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The request's number on this server, from 1; part of every id the reply makes.
    pub seq: u64,
    pub api: Api,
    /// The model the request named (body `model`, or the Gemini path), else `mock-model`.
    pub model: String,
    /// OpenAI Chat Completions `stream_options.include_usage`.
    pub include_usage: bool,
    /// Unix seconds.
    pub created: u64,
}

impl Exchange {
    pub fn new(seq: u64, route: &Route, body: &Value) -> Self {
        let model = route
            .path_model
            .clone()
            .or_else(|| body.get("model").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| "mock-model".to_owned());
        let include_usage = body.pointer("/stream_options/include_usage").and_then(Value::as_bool).unwrap_or(false);
        let created =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        Self { seq, api: route.api, model, include_usage, created }
    }
}

/// The reply's text: scripted deltas or a flood.
#[derive(Debug, Clone)]
pub enum TextBody<'a> {
    Deltas(&'a str, Vec<&'a str>),
    Flood(Flood),
}

impl TextBody<'_> {
    /// The whole text (a flood written out).
    pub fn full(&self) -> String {
        match self {
            TextBody::Deltas(full, _) => (*full).to_owned(),
            TextBody::Flood(f) => {
                let payload = crate::plan::flood_payload(f.size);
                let one = String::from_utf8_lossy(&payload);
                one.repeat(f.count)
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct CallReply {
    /// `None` only for Gemini, which sends no ids.
    pub id: Option<String>,
    pub name: String,
    /// The arguments' JSON text, as streamed.
    pub arguments: String,
    /// The same as a value (Gemini sends the object): parsed text, or the text itself when it
    /// is not JSON.
    pub arguments_value: Value,
    pub deltas: Vec<String>,
    /// Gemini: the `thoughtSignature` on the call's part.
    pub thought_signature: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Reply<'a> {
    /// The whole thinking text and its deltas.
    pub thinking: Option<(&'a str, Vec<&'a str>)>,
    pub signature: &'a str,
    pub text: Option<TextBody<'a>>,
    pub tool_calls: Vec<CallReply>,
    pub usage: Usage,
    pub stop: StopReason,
    /// When set, the stream ends with this error instead of its normal end.
    pub stream_error: Option<&'a StreamError>,
    /// Responses: the output message's `phase`.
    pub phase: Option<&'a str>,
    /// Responses: thinking as `reasoning_text` content instead of a summary.
    pub reasoning_text: bool,
    /// Gemini: the prompt is refused with this reason.
    pub block_reason: Option<&'a str>,
}

impl<'a> Reply<'a> {
    /// Resolves `turn`; `next_id` gives the number of each generated tool call id.
    pub fn new(turn: &'a Turn, api: Api, mut next_id: impl FnMut() -> u64) -> Self {
        let size = turn.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE);
        let prefix = match api {
            Api::AnthropicMessages => Some("toolu_mock_"),
            Api::OpenAiCompletions | Api::OpenAiResponses => Some("call_mock_"),
            Api::GoogleGenerativeAi => None,
            Api::BedrockConverseStream => Some("tooluse_mock_"),
            Api::PiMessages => Some("call_mock_"),
        };
        let text = match (turn.flood, &turn.text) {
            (Some(flood), _) => Some(TextBody::Flood(flood)),
            (None, Some(text)) => Some(TextBody::Deltas(text, chunks(text, size))),
            (None, None) => None,
        };
        let tool_calls = turn
            .tool_calls
            .iter()
            .map(|call| {
                let arguments = match &call.arguments {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                let arguments_value = match &call.arguments {
                    Value::String(raw) => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone())),
                    other => other.clone(),
                };
                let id = prefix.map(|p| call.id.clone().unwrap_or_else(|| format!("{p}{}", next_id())));
                CallReply {
                    id,
                    name: call.name.clone(),
                    deltas: chunks(&arguments, size).into_iter().map(str::to_owned).collect(),
                    arguments,
                    arguments_value,
                    thought_signature: call.thought_signature.clone(),
                }
            })
            .collect();
        Self {
            thinking: turn.thinking.as_deref().map(|t| (t, chunks(t, size))),
            signature: turn.thinking_signature.as_deref().unwrap_or(DEFAULT_THINKING_SIGNATURE),
            text,
            tool_calls,
            usage: turn.usage.unwrap_or_default(),
            stop: turn.effective_stop_reason(),
            stream_error: turn.stream_error.as_ref(),
            phase: turn.phase.as_deref(),
            reasoning_text: turn.reasoning_text,
            block_reason: turn.block_reason.as_deref(),
        }
    }
}

/// `text` cut into pieces of `size` characters (on char boundaries); 0 means one piece. An
/// empty text is one empty piece, so a block is still opened and closed.
pub fn chunks(text: &str, size: usize) -> Vec<&str> {
    if size == 0 || text.is_empty() {
        return vec![text];
    }
    let mut out = Vec::with_capacity(text.len() / size + 1);
    let mut start = 0;
    let mut count = 0;
    for (i, _) in text.char_indices() {
        if count == size {
            out.push(&text[start..i]);
            start = i;
            count = 0;
        }
        count += 1;
    }
    out.push(&text[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chunks_split_on_characters() {
        assert_eq!(chunks("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(chunks("héllo wörld", 4), ["héll", "o wö", "rld"]);
        assert_eq!(chunks("abc", 0), ["abc"]);
        assert_eq!(chunks("", 8), [""]);
        assert_eq!(chunks("abcdef", 3), ["abc", "def"]);
    }

    #[test]
    fn resolves_ids_arguments_and_defaults() {
        let turn = Turn::default()
            .with_tool_call("read", json!({"path": "src/main.rs"}))
            .with_tool_call_id("mine", "ls", json!({}))
            .with_tool_call("bad", Value::String("{\"path\":".into()))
            .with_chunk_size(5);
        let mut n = 0;
        let reply = Reply::new(&turn, Api::AnthropicMessages, || {
            n += 1;
            n
        });
        let ids: Vec<_> = reply.tool_calls.iter().map(|c| c.id.clone().unwrap()).collect();
        assert_eq!(ids, ["toolu_mock_1", "mine", "toolu_mock_2"]);
        let first = &reply.tool_calls[0];
        assert_eq!(first.deltas.concat(), r#"{"path":"src/main.rs"}"#);
        assert!(first.deltas.len() > 1);
        assert_eq!(reply.tool_calls[2].arguments, "{\"path\":");
        assert_eq!(reply.stop, StopReason::ToolUse);
        assert_eq!(reply.usage, Usage::default());
        assert_eq!(reply.signature, DEFAULT_THINKING_SIGNATURE);
        let gemini = Reply::new(&turn, Api::GoogleGenerativeAi, || 0);
        assert!(gemini.tool_calls.iter().all(|c| c.id.is_none()));
        assert_eq!(gemini.tool_calls[0].arguments_value, json!({"path": "src/main.rs"}));
    }

    #[test]
    fn exchange_reads_model_and_usage_opt_in() {
        let route = crate::api::route("/v1/chat/completions").unwrap();
        let ex = Exchange::new(4, &route, &json!({"model": "gpt-x", "stream_options": {"include_usage": true}}));
        assert_eq!((ex.model.as_str(), ex.include_usage, ex.seq), ("gpt-x", true, 4));
        let gemini = crate::api::route("/v1beta/models/gem:streamGenerateContent").unwrap();
        assert_eq!(Exchange::new(1, &gemini, &json!({})).model, "gem");
        assert_eq!(Exchange::new(1, &route, &json!("x")).model, "mock-model");
    }
}
