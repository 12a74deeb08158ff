//! OpenAI Chat Completions streaming: `chat.completion.chunk` objects, the first carrying the
//! role, then `reasoning_content` deltas (the field reasoning servers use), `content` deltas and
//! `tool_calls[i]` deltas (id, type and name first, then `function.arguments` pieces), a chunk
//! with the `finish_reason`, the usage chunk (empty `choices`) only when the request asked with
//! `stream_options.include_usage`, and `data: [DONE]`. An in-stream failure is a chunk carrying
//! `error` (or that JSON without framing, when the turn asks), after which the body ends
//! without `[DONE]`. The Responses API shares the error JSON.

use serde_json::{Map, Value, json};

use crate::plan::{DELTA_MARK, Framing, Plan, PlanBuilder};
use crate::reply::{Exchange, Reply, TextBody};
use crate::script::StopReason;

pub fn stream(reply: &Reply<'_>, ex: &Exchange) -> Plan {
    let chunks = Chunks { ex };
    let mut b = PlanBuilder::new(Framing::Lf);
    b.event(None, &chunks.delta(json!({"role": "assistant", "content": ""}), None));
    if let Some((_, deltas)) = &reply.thinking {
        for d in deltas {
            b.event(None, &chunks.delta(json!({"reasoning_content": d}), None));
        }
    }
    match &reply.text {
        Some(TextBody::Deltas(_, deltas)) => {
            for d in deltas {
                b.event(None, &chunks.delta(json!({"content": d}), None));
            }
        }
        Some(TextBody::Flood(flood)) => {
            let event = chunks.delta(json!({"content": DELTA_MARK}), None);
            let template = b.flood_template(None, &event, None, (flood.count, flood.size), 0);
            b.flood(template);
        }
        None => {}
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let head = json!({"tool_calls": [{
            "index": i, "id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]});
        b.event(None, &chunks.delta(head, None));
        for d in &call.deltas {
            let piece = json!({"tool_calls": [{"index": i, "function": {"arguments": d}}]});
            b.event(None, &chunks.delta(piece, None));
        }
    }
    match reply.stream_error {
        Some(error) => {
            let body = json!({"error": {"message": error.message, "type": error.kind, "param": null, "code": null}});
            if error.unframed { b.unframed(&body) } else { b.event(None, &body) }
        }
        None => {
            let finish = match reply.stop {
                StopReason::Stop => "stop",
                StopReason::Length => "length",
                StopReason::ToolUse => "tool_calls",
                StopReason::Safety => "content_filter",
            };
            b.event(None, &chunks.delta(json!({}), Some(finish)));
            if ex.include_usage {
                b.event(None, &chunks.usage(reply));
            }
            b.raw(None, "[DONE]");
        }
    }
    let malformed = b.malformed_event(None);
    b.finish(malformed)
}

struct Chunks<'a> {
    ex: &'a Exchange,
}

impl Chunks<'_> {
    fn base(&self) -> Map<String, Value> {
        let mut chunk = Map::new();
        chunk.insert("id".into(), format!("chatcmpl-mock-{}", self.ex.seq).into());
        chunk.insert("object".into(), "chat.completion.chunk".into());
        chunk.insert("created".into(), self.ex.created.into());
        chunk.insert("model".into(), self.ex.model.clone().into());
        chunk.insert("system_fingerprint".into(), "fp_mock".into());
        chunk
    }

    fn delta(&self, delta: Value, finish: Option<&str>) -> Value {
        let mut chunk = self.base();
        chunk
            .insert("choices".into(), json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]));
        if self.ex.include_usage {
            chunk.insert("usage".into(), Value::Null);
        }
        Value::Object(chunk)
    }

    fn usage(&self, reply: &Reply<'_>) -> Value {
        let u = reply.usage;
        let prompt = u.input + u.cache_read;
        let mut chunk = self.base();
        chunk.insert("choices".into(), json!([]));
        chunk.insert(
            "usage".into(),
            json!({
                "prompt_tokens": prompt,
                "completion_tokens": u.output,
                "total_tokens": prompt + u.output,
                "prompt_tokens_details": {"cached_tokens": u.cache_read, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": u.reasoning, "audio_tokens": 0},
            }),
        );
        Value::Object(chunk)
    }
}

/// `{"error":{"message","type","param","code"}}` with the type and code OpenAI uses for
/// `status`.
pub fn error_body(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        401 => ("invalid_request_error", Some("invalid_api_key")),
        403 => ("permission_error", None),
        404 => ("invalid_request_error", Some("model_not_found")),
        429 => ("requests", Some("rate_limit_exceeded")),
        s if s >= 500 => ("server_error", None),
        _ => ("invalid_request_error", None),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}
