//! Amazon Bedrock `ConverseStream`: AWS's binary event stream (each frame a prelude, headers,
//! a JSON payload and CRCs), as the service sends it. `messageStart`; thinking as
//! `reasoningContent` deltas ending with one that carries the signature; text deltas (no
//! `contentBlockStart` for either); each tool call as `contentBlockStart` with its
//! `toolUse` id and name, `toolUse.input` deltas; a `contentBlockStop` per block;
//! `messageStop` with the stop reason; `metadata` with the usage. An in-stream failure is an
//! `exception` frame (`:exception-type` such as `throttlingException`, payload `{"message"}`).
//! An HTTP error names its exception in `x-amzn-errortype`.

use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::plan::{Framing, Plan, PlanBuilder};
use crate::reply::{Exchange, Reply, TextBody};
use crate::script::StopReason;

pub fn stream(reply: &Reply<'_>, _ex: &Exchange) -> Plan {
    // The plan's framing is unused: every piece is a binary frame.
    let mut b = PlanBuilder::new(Framing::Lf);
    b.bytes(event("messageStart", &json!({"role": "assistant"})));
    let mut index = 0u64;
    if let Some((_, deltas)) = &reply.thinking {
        for d in deltas {
            b.bytes(delta(index, json!({"reasoningContent": {"text": d}})));
        }
        b.bytes(delta(index, json!({"reasoningContent": {"signature": reply.signature}})));
        b.bytes(stop(index));
        index += 1;
    }
    match &reply.text {
        Some(TextBody::Deltas(_, deltas)) => {
            for d in deltas {
                b.bytes(delta(index, json!({"text": d})));
            }
            b.bytes(stop(index));
            index += 1;
        }
        Some(TextBody::Flood(flood)) => {
            let payload = crate::plan::flood_payload(flood.size);
            let text = String::from_utf8_lossy(&payload);
            for _ in 0..flood.count {
                b.bytes(delta(index, json!({"text": text})));
            }
            b.bytes(stop(index));
            index += 1;
        }
        None => {}
    }
    for call in &reply.tool_calls {
        b.bytes(event(
            "contentBlockStart",
            &json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": call.id, "name": call.name}}}),
        ));
        for d in &call.deltas {
            b.bytes(delta(index, json!({"toolUse": {"input": d}})));
        }
        b.bytes(stop(index));
        index += 1;
    }
    match reply.stream_error {
        Some(error) => b.bytes(exception(exception_for_kind(&error.kind), &error.message)),
        None => {
            let reason = match reply.stop {
                StopReason::Stop => "end_turn",
                StopReason::Length => "max_tokens",
                StopReason::ToolUse => "tool_use",
                StopReason::Safety => "content_filtered",
            };
            b.bytes(event("messageStop", &json!({"stopReason": reason})));
            let u = reply.usage;
            b.bytes(event(
                "metadata",
                &json!({
                    "usage": {
                        "inputTokens": u.input,
                        "outputTokens": u.output,
                        "cacheReadInputTokens": u.cache_read,
                        "cacheWriteInputTokens": u.cache_write,
                        "totalTokens": u.input + u.output + u.cache_read + u.cache_write,
                    },
                    "metrics": {"latencyMs": 1},
                }),
            ));
        }
    }
    let malformed = frame(
        vec![
            Header::new(":message-type", HeaderValue::String("event".into())),
            Header::new(":event-type", HeaderValue::String("contentBlockDelta".into())),
        ],
        Bytes::from_static(br#"{"contentBlockIndex": 0, "delta": {"te"#),
    );
    b.finish(malformed)
}

fn delta(index: u64, delta: Value) -> Bytes {
    event("contentBlockDelta", &json!({"contentBlockIndex": index, "delta": delta}))
}

fn stop(index: u64) -> Bytes {
    event("contentBlockStop", &json!({"contentBlockIndex": index}))
}

fn event(kind: &'static str, payload: &Value) -> Bytes {
    frame(
        vec![
            Header::new(":event-type", HeaderValue::String(kind.into())),
            Header::new(":content-type", HeaderValue::String("application/json".into())),
            Header::new(":message-type", HeaderValue::String("event".into())),
        ],
        Bytes::from(payload.to_string()),
    )
}

fn exception(kind: &'static str, message: &str) -> Bytes {
    frame(
        vec![
            Header::new(":exception-type", HeaderValue::String(kind.into())),
            Header::new(":content-type", HeaderValue::String("application/json".into())),
            Header::new(":message-type", HeaderValue::String("exception".into())),
        ],
        Bytes::from(json!({"message": message}).to_string()),
    )
}

fn frame(headers: Vec<Header>, payload: Bytes) -> Bytes {
    let mut out = Vec::new();
    if let Err(e) = write_message_to(&Message::new_from_parts(headers, payload), &mut out) {
        tracing::warn!("mock-llm: could not encode an event-stream frame: {e}");
    }
    Bytes::from(out)
}

/// The event-stream exception for an error type in Anthropic's words.
fn exception_for_kind(kind: &str) -> &'static str {
    match kind {
        "overloaded_error" => "serviceUnavailableException",
        "rate_limit_error" => "throttlingException",
        "invalid_request_error" => "validationException",
        "api_error" => "internalServerException",
        _ => "modelStreamErrorException",
    }
}

/// The exception Bedrock names for an HTTP error status.
pub fn exception_for_status(status: u16) -> &'static str {
    match status {
        400 => "ValidationException",
        401 | 403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 | 529 => "ServiceUnavailableException",
        _ => "InternalServerException",
    }
}
