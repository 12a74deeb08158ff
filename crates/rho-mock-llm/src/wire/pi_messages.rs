//! pi's own message protocol (`pi-messages`, the Radius gateway's): `data:` lines of pi's
//! assistant-message events without their `partial` (`start`; `thinking_*`, `text_*`,
//! `toolcall_*` by `contentIndex`, each `*_end` with the block's whole content), ending in `done`
//! with the stop reason and usage, or `error` with `errorMessage`. An HTTP error is
//! `{"error":{"message","code"}}`.

use serde_json::{Value, json};

use crate::plan::{DELTA_MARK, Framing, Plan, PlanBuilder};
use crate::reply::{Exchange, Reply, TextBody};
use crate::script::StopReason;

pub fn stream(reply: &Reply<'_>, ex: &Exchange) -> Plan {
    let mut b = PlanBuilder::new(Framing::Lf);
    b.event(None, &json!({"type": "start"}));
    let mut index = 0;
    if let Some((whole, deltas)) = &reply.thinking {
        b.event(None, &json!({"type": "thinking_start", "contentIndex": index}));
        for d in deltas {
            b.event(None, &json!({"type": "thinking_delta", "contentIndex": index, "delta": d}));
        }
        b.event(
            None,
            &json!({"type": "thinking_end", "contentIndex": index, "content": whole, "contentSignature": reply.signature}),
        );
        index += 1;
    }
    match &reply.text {
        Some(TextBody::Deltas(whole, deltas)) => {
            b.event(None, &json!({"type": "text_start", "contentIndex": index}));
            for d in deltas {
                b.event(None, &json!({"type": "text_delta", "contentIndex": index, "delta": d}));
            }
            if reply.stream_error.is_none() {
                b.event(None, &json!({"type": "text_end", "contentIndex": index, "content": whole}));
            }
            index += 1;
        }
        Some(TextBody::Flood(flood)) => {
            b.event(None, &json!({"type": "text_start", "contentIndex": index}));
            let event = json!({"type": "text_delta", "contentIndex": index, "delta": DELTA_MARK});
            let template = b.flood_template(None, &event, None, (flood.count, flood.size), 0);
            b.flood(template);
            // The whole text again would double the flood; pi's end carries it, so an end
            // without `content` stands for "what the deltas said".
            b.event(None, &json!({"type": "text_end", "contentIndex": index}));
            index += 1;
        }
        None => {}
    }
    for call in &reply.tool_calls {
        let id = call.id.clone().unwrap_or_default();
        b.event(None, &json!({"type": "toolcall_start", "contentIndex": index, "id": id, "toolName": call.name}));
        for d in &call.deltas {
            b.event(None, &json!({"type": "toolcall_delta", "contentIndex": index, "delta": d}));
        }
        let tool_call = json!({"type": "toolCall", "id": id, "name": call.name, "arguments": call.arguments_value});
        b.event(None, &json!({"type": "toolcall_end", "contentIndex": index, "toolCall": tool_call}));
        index += 1;
    }
    let usage = usage(reply);
    match reply.stream_error {
        Some(error) => {
            let body = json!({"type": "error", "reason": "error", "usage": usage, "errorMessage": error.message,
                              "responseId": format!("msg_mock_{}", ex.seq)});
            if error.unframed {
                b.unframed(&json!({"error": {"message": error.message, "code": error.kind}}))
            } else {
                b.event(None, &body)
            }
        }
        None => {
            let reason = match reply.stop {
                StopReason::Stop | StopReason::Safety => "stop",
                StopReason::Length => "length",
                StopReason::ToolUse => "toolUse",
            };
            b.event(
                None,
                &json!({"type": "done", "reason": reason, "usage": usage, "responseId": format!("msg_mock_{}", ex.seq),
                        "responseModel": ex.model}),
            );
        }
    }
    let malformed = b.malformed_event(None);
    b.finish(malformed)
}

fn usage(reply: &Reply<'_>) -> Value {
    let u = reply.usage;
    json!({
        "input": u.input, "output": u.output, "cacheRead": u.cache_read, "cacheWrite": u.cache_write,
        "totalTokens": u.input + u.output + u.cache_read + u.cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    })
}

/// `{"error":{"message","code"}}`, the shape pi reads from a failed pi-messages request.
pub fn error_body(status: u16, message: &str) -> Value {
    let code = match status {
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        429 => "rate_limited",
        s if s >= 500 => "server_error",
        _ => "invalid_request",
    };
    json!({"error": {"message": message, "code": code}})
}
