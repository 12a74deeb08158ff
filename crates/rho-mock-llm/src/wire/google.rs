//! Gemini `streamGenerateContent?alt=sse`: unnamed events, each a whole
//! `GenerateContentResponse` (`candidates[0].content.parts`, `usageMetadata`, `modelVersion`,
//! `responseId`), lines ended with `\r\n` as Google's servers do. Thinking streams as parts with
//! `thought: true` (the last one carries the `thoughtSignature`), text as text parts, and tool
//! calls as whole `functionCall` parts in one chunk (Gemini streams no arguments and sends no
//! call ids; a call's `thoughtSignature` is on its part). The last chunk carries `finishReason`
//! and the full usage; there is no end marker. An in-stream failure is a chunk holding only
//! `error`, or that JSON written pretty-printed without framing, as Google aborts a stream. A
//! refused prompt is one chunk with `promptFeedback.blockReason` and no candidate.

use serde_json::{Value, json};

use crate::plan::{DELTA_MARK, Framing, Plan, PlanBuilder};
use crate::reply::{Exchange, Reply, TextBody};
use crate::script::{Flood, StopReason};

enum Chunk {
    Parts(Vec<Value>),
    Flood(Flood),
}

pub fn stream(reply: &Reply<'_>, ex: &Exchange) -> Plan {
    if let Some(reason) = reply.block_reason {
        let mut b = PlanBuilder::new(Framing::Crlf);
        b.event(None, &blocked(reply, ex, reason));
        let malformed = b.malformed_event(None);
        return b.finish(malformed);
    }
    let mut chunks: Vec<Chunk> = Vec::new();
    if let Some((_, deltas)) = &reply.thinking {
        let last = deltas.len().saturating_sub(1);
        for (i, d) in deltas.iter().enumerate() {
            let mut part = json!({"text": d, "thought": true});
            if i == last {
                part["thoughtSignature"] = json!(reply.signature);
            }
            chunks.push(Chunk::Parts(vec![part]));
        }
    }
    match &reply.text {
        Some(TextBody::Deltas(_, deltas)) => {
            chunks.extend(deltas.iter().map(|d| Chunk::Parts(vec![json!({"text": d})])));
        }
        Some(TextBody::Flood(flood)) => chunks.push(Chunk::Flood(*flood)),
        None => {}
    }
    if !reply.tool_calls.is_empty() {
        chunks.push(Chunk::Parts(function_calls(reply)));
    }

    let ends_normally = reply.stream_error.is_none();
    let finish = ends_normally.then(|| finish_reason(reply.stop));
    let mut b = PlanBuilder::new(Framing::Crlf);
    let count = chunks.len();
    for (i, chunk) in chunks.into_iter().enumerate() {
        let last = i + 1 == count;
        match chunk {
            Chunk::Parts(parts) => {
                let finish = if last { finish } else { None };
                b.event(None, &response(reply, ex, parts, finish));
            }
            Chunk::Flood(flood) => {
                let delta = || vec![json!({"text": DELTA_MARK})];
                let event = response(reply, ex, delta(), None);
                let end = match (last, finish) {
                    (true, Some(f)) => Some(response(reply, ex, delta(), Some(f))),
                    _ => None,
                };
                let template = b.flood_template(None, &event, end.as_ref(), (flood.count, flood.size), 0);
                b.flood(template);
            }
        }
    }
    match reply.stream_error {
        Some(error) => {
            let (code, status) = status_for_kind(&error.kind);
            let body = json!({"error": {"code": code, "message": error.message, "status": status}});
            if error.unframed { b.unframed(&body) } else { b.event(None, &body) }
        }
        None if count == 0 => b.event(None, &response(reply, ex, Vec::new(), finish)),
        None => {}
    }
    let malformed = b.malformed_event(None);
    b.finish(malformed)
}

/// The non-streaming `generateContent` answer: every part in one response.
pub fn whole(reply: &Reply<'_>, ex: &Exchange) -> Value {
    if let Some(reason) = reply.block_reason {
        return blocked(reply, ex, reason);
    }
    let mut parts = Vec::new();
    if let Some((full, _)) = &reply.thinking {
        parts.push(json!({"text": full, "thought": true, "thoughtSignature": reply.signature}));
    }
    if let Some(text) = &reply.text {
        parts.push(json!({"text": text.full()}));
    }
    parts.extend(function_calls(reply));
    response(reply, ex, parts, Some(finish_reason(reply.stop)))
}

fn function_calls(reply: &Reply<'_>) -> Vec<Value> {
    reply
        .tool_calls
        .iter()
        .map(|c| {
            let mut part = json!({"functionCall": {"name": c.name, "args": c.arguments_value}});
            if let Some(signature) = &c.thought_signature {
                part["thoughtSignature"] = json!(signature);
            }
            part
        })
        .collect()
}

/// A refused prompt: `promptFeedback.blockReason`, the prompt's usage, and no candidate.
fn blocked(reply: &Reply<'_>, ex: &Exchange, reason: &str) -> Value {
    let prompt = reply.usage.input + reply.usage.cache_read;
    json!({
        "promptFeedback": {"blockReason": reason},
        "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt},
        "modelVersion": ex.model,
        "responseId": format!("mock-{}", ex.seq),
    })
}

fn finish_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Stop | StopReason::ToolUse => "STOP",
        StopReason::Length => "MAX_TOKENS",
        StopReason::Safety => "SAFETY",
    }
}

/// A `GenerateContentResponse`; the final one (with a finish reason) has the full usage, the
/// others the prompt count only, as the API streams them.
fn response(reply: &Reply<'_>, ex: &Exchange, parts: Vec<Value>, finish: Option<&str>) -> Value {
    let u = reply.usage;
    let prompt = u.input + u.cache_read;
    let content = if parts.is_empty() { json!({"role": "model"}) } else { json!({"parts": parts, "role": "model"}) };
    let mut candidate = json!({"content": content});
    let usage = match finish {
        Some(reason) => {
            candidate["finishReason"] = json!(reason);
            let mut usage = json!({
                "promptTokenCount": prompt,
                "candidatesTokenCount": u.output.saturating_sub(u.reasoning),
                "totalTokenCount": prompt + u.output,
            });
            if u.cache_read > 0 {
                usage["cachedContentTokenCount"] = json!(u.cache_read);
            }
            if u.reasoning > 0 {
                usage["thoughtsTokenCount"] = json!(u.reasoning);
            }
            usage
        }
        None => json!({"promptTokenCount": prompt, "totalTokenCount": prompt}),
    };
    candidate["index"] = json!(0);
    json!({
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": ex.model,
        "responseId": format!("mock-{}", ex.seq),
    })
}

/// The HTTP code and status name for an in-stream error type given in Anthropic's words (or
/// directly as a Google status name).
pub fn status_for_kind(kind: &str) -> (u16, &str) {
    match kind {
        "overloaded_error" => (503, "UNAVAILABLE"),
        "rate_limit_error" => (429, "RESOURCE_EXHAUSTED"),
        "invalid_request_error" => (400, "INVALID_ARGUMENT"),
        "authentication_error" => (401, "UNAUTHENTICATED"),
        "permission_error" => (403, "PERMISSION_DENIED"),
        "not_found_error" => (404, "NOT_FOUND"),
        "timeout_error" => (504, "DEADLINE_EXCEEDED"),
        other => STATUSES
            .iter()
            .find(|(_, name)| *name == other)
            .map(|(code, name)| (*code, *name))
            .unwrap_or((500, "INTERNAL")),
    }
}

const STATUSES: [(u16, &str); 8] = [
    (400, "INVALID_ARGUMENT"),
    (401, "UNAUTHENTICATED"),
    (403, "PERMISSION_DENIED"),
    (404, "NOT_FOUND"),
    (429, "RESOURCE_EXHAUSTED"),
    (500, "INTERNAL"),
    (503, "UNAVAILABLE"),
    (504, "DEADLINE_EXCEEDED"),
];

/// `{"error":{"code","message","status"}}` with Google's status name for `status`.
pub fn error_body(status: u16, message: &str) -> Value {
    let name = STATUSES.iter().find(|(code, _)| *code == status).map(|(_, name)| *name).unwrap_or(match status {
        529 => "UNAVAILABLE",
        s if s >= 500 => "INTERNAL",
        _ => "FAILED_PRECONDITION",
    });
    json!({"error": {"code": status, "message": message, "status": name}})
}
