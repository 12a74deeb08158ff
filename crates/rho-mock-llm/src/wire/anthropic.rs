//! Anthropic Messages streaming: `message_start`, then per content block
//! `content_block_start` / `content_block_delta`* / `content_block_stop` (a `ping` after the
//! first start, as the API does), then `message_delta` with the stop reason and output tokens
//! and `message_stop`. Thinking blocks end with a `signature_delta`; tool input streams as
//! `input_json_delta`. An in-stream failure is `event: error`.

use serde_json::{Value, json};

use crate::plan::{DELTA_MARK, Framing, Plan, PlanBuilder};
use crate::reply::{Exchange, Reply, TextBody};
use crate::script::StopReason;

const DELTA: &str = "content_block_delta";

pub fn stream(reply: &Reply<'_>, ex: &Exchange) -> Plan {
    let mut b = PlanBuilder::new(Framing::Lf);
    let usage = reply.usage;
    b.event(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{}", ex.seq),
            "type": "message",
            "role": "assistant",
            "model": ex.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": {
                "input_tokens": usage.input,
                "cache_creation_input_tokens": usage.cache_write,
                "cache_read_input_tokens": usage.cache_read,
                "output_tokens": usage.output.min(1),
            },
        }}),
    );
    let mut blocks = Blocks { b, next: 0 };
    if let Some((_, deltas)) = &reply.thinking {
        let index = blocks.start(json!({"type": "thinking", "thinking": "", "signature": ""}));
        for d in deltas {
            blocks.delta(index, json!({"type": "thinking_delta", "thinking": d}));
        }
        blocks.delta(index, json!({"type": "signature_delta", "signature": reply.signature}));
        blocks.stop(index);
    }
    match &reply.text {
        Some(TextBody::Deltas(_, deltas)) => {
            let index = blocks.start(json!({"type": "text", "text": ""}));
            for d in deltas {
                blocks.delta(index, json!({"type": "text_delta", "text": d}));
            }
            blocks.stop(index);
        }
        Some(TextBody::Flood(flood)) => {
            let index = blocks.start(json!({"type": "text", "text": ""}));
            let event = delta_event(index, json!({"type": "text_delta", "text": DELTA_MARK}));
            let template = blocks.b.flood_template(Some(DELTA), &event, None, (flood.count, flood.size), 0);
            blocks.b.flood(template);
            blocks.stop(index);
        }
        None => {}
    }
    for call in &reply.tool_calls {
        let index = blocks.start(json!({
            "type": "tool_use", "id": call.id, "name": call.name, "input": {},
        }));
        for d in &call.deltas {
            blocks.delta(index, json!({"type": "input_json_delta", "partial_json": d}));
        }
        blocks.stop(index);
    }
    let mut b = blocks.b;
    match reply.stream_error {
        Some(error) => {
            let body = json!({"type": "error", "error": {"type": error.kind, "message": error.message}});
            if error.unframed { b.unframed(&body) } else { b.event(Some("error"), &body) }
        }
        None => {
            let stop = match reply.stop {
                StopReason::Stop => "end_turn",
                StopReason::Length => "max_tokens",
                StopReason::ToolUse => "tool_use",
                StopReason::Safety => "refusal",
            };
            b.event(
                Some("message_delta"),
                &json!({"type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": null},
                    "usage": {"output_tokens": usage.output}}),
            );
            b.event(Some("message_stop"), &json!({"type": "message_stop"}));
        }
    }
    let malformed = b.malformed_event(Some(DELTA));
    b.finish(malformed)
}

struct Blocks {
    b: PlanBuilder,
    next: u64,
}

impl Blocks {
    fn start(&mut self, block: Value) -> u64 {
        let index = self.next;
        self.next += 1;
        self.b.event(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": block}),
        );
        if index == 0 {
            self.b.event(Some("ping"), &json!({"type": "ping"}));
        }
        index
    }

    fn delta(&mut self, index: u64, delta: Value) {
        self.b.event(Some(DELTA), &delta_event(index, delta));
    }

    fn stop(&mut self, index: u64) {
        self.b.event(Some("content_block_stop"), &json!({"type": "content_block_stop", "index": index}));
    }
}

fn delta_event(index: u64, delta: Value) -> Value {
    json!({"type": DELTA, "index": index, "delta": delta})
}

/// `{"type":"error","error":{"type":...,"message":...}}` with the type the API uses for
/// `status`.
pub fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "invalid_request_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
