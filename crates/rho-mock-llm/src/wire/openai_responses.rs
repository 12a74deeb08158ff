//! OpenAI Responses streaming: named events, each with an increasing `sequence_number`.
//! `response.created` and `response.in_progress`, then one output item per block — a
//! `reasoning` item (summary part and `reasoning_summary_text` deltas, `encrypted_content` on
//! the finished item), a `message` item (content part and `output_text` deltas), one
//! `function_call` item per call (`function_call_arguments` deltas) — each opened by
//! `response.output_item.added` and closed by `response.output_item.done`; then
//! `response.completed` (or `response.incomplete` for a length stop) with the usage. An
//! in-stream failure is `response.failed` carrying the error, an `error` event, or the error
//! JSON without framing, as the turn asks. With `reasoningText` the reasoning item streams raw
//! `reasoning_text` content (`response.reasoning_text.delta`s) as gpt-oss servers do, and a
//! turn's `phase` is on its message item.

use serde_json::{Value, json};

use crate::plan::{DELTA_MARK, Framing, Plan, PlanBuilder, SEQ_MARK};
use crate::reply::{Exchange, Reply, TextBody};
use crate::script::StopReason;

const TEXT_DELTA: &str = "response.output_text.delta";

pub fn stream(reply: &Reply<'_>, ex: &Exchange) -> Plan {
    framed(reply, ex, Framing::Lf)
}

/// The events framed as `framing` says (SSE, or one websocket message each).
pub fn framed(reply: &Reply<'_>, ex: &Exchange, framing: Framing) -> Plan {
    let mut s = Events { b: PlanBuilder::new(framing), seq: 0 };
    s.send("response.created", json!({"response": response(ex, "in_progress", &[], None)}));
    s.send("response.in_progress", json!({"response": response(ex, "in_progress", &[], None)}));
    let mut output: Vec<Value> = Vec::new();
    let item_id = |kind: &str, index: usize| format!("{kind}_mock_{}_{index}", ex.seq);

    if let (Some((full, deltas)), true) = (&reply.thinking, reply.reasoning_text) {
        let oi = output.len();
        let rs_id = item_id("rs", oi);
        let at = json!({"item_id": rs_id, "output_index": oi, "content_index": 0});
        let part = |text: &str| json!({"type": "reasoning_text", "text": text});
        s.send(
            "response.output_item.added",
            json!({"output_index": oi, "item": {"id": rs_id, "type": "reasoning", "summary": []}}),
        );
        s.send("response.content_part.added", with(&at, json!({"part": part("")})));
        for d in deltas {
            s.send("response.reasoning_text.delta", with(&at, json!({"delta": d})));
        }
        s.send("response.reasoning_text.done", with(&at, json!({"text": full})));
        s.send("response.content_part.done", with(&at, json!({"part": part(full)})));
        let item = json!({
            "id": rs_id, "type": "reasoning", "summary": [], "content": [part(full)],
            "encrypted_content": reply.signature,
        });
        s.send("response.output_item.done", json!({"output_index": oi, "item": item}));
        output.push(item);
    } else if let Some((full, deltas)) = &reply.thinking {
        let oi = output.len();
        let at = json!({"item_id": item_id("rs", oi), "output_index": oi, "summary_index": 0});
        s.send(
            "response.output_item.added",
            json!({"output_index": oi, "item": {"id": item_id("rs", oi), "type": "reasoning", "summary": []}}),
        );
        let part = |text: &str| json!({"type": "summary_text", "text": text});
        s.send("response.reasoning_summary_part.added", with(&at, json!({"part": part("")})));
        for d in deltas {
            s.send("response.reasoning_summary_text.delta", with(&at, json!({"delta": d})));
        }
        s.send("response.reasoning_summary_text.done", with(&at, json!({"text": full})));
        s.send("response.reasoning_summary_part.done", with(&at, json!({"part": part(full)})));
        let item = json!({
            "id": item_id("rs", oi), "type": "reasoning",
            "summary": [part(full)], "encrypted_content": reply.signature,
        });
        s.send("response.output_item.done", json!({"output_index": oi, "item": item}));
        output.push(item);
    }

    if let Some(text) = &reply.text {
        let oi = output.len();
        let msg_id = item_id("msg", oi);
        let at = json!({"item_id": msg_id, "output_index": oi, "content_index": 0});
        let part = |t: &str| json!({"type": "output_text", "annotations": [], "logprobs": [], "text": t});
        let mut added =
            json!({"id": msg_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"});
        if let Some(phase) = reply.phase {
            added["phase"] = json!(phase);
        }
        s.send("response.output_item.added", json!({"output_index": oi, "item": added}));
        s.send("response.content_part.added", with(&at, json!({"part": part("")})));
        match text {
            TextBody::Deltas(_, deltas) => {
                for d in deltas {
                    s.send(TEXT_DELTA, with(&at, json!({"delta": d, "logprobs": []})));
                }
            }
            TextBody::Flood(flood) => {
                let mut event = json!({"type": TEXT_DELTA, "sequence_number": SEQ_MARK});
                merge(&mut event, &with(&at, json!({"delta": DELTA_MARK, "logprobs": []})));
                let template = s.b.flood_template(Some(TEXT_DELTA), &event, None, (flood.count, flood.size), s.seq);
                s.b.flood(template);
                s.seq += flood.count as u64;
            }
        }
        let full = text.full();
        s.send("response.output_text.done", with(&at, json!({"text": full, "logprobs": []})));
        s.send("response.content_part.done", with(&at, json!({"part": part(&full)})));
        let mut item = json!({
            "id": msg_id, "type": "message", "status": "completed",
            "content": [part(&full)], "role": "assistant",
        });
        if let Some(phase) = reply.phase {
            item["phase"] = json!(phase);
        }
        s.send("response.output_item.done", json!({"output_index": oi, "item": item}));
        output.push(item);
    }

    for call in &reply.tool_calls {
        let oi = output.len();
        let fc_id = item_id("fc", oi);
        let item = |status: &str, arguments: &str| {
            json!({
                "id": fc_id, "type": "function_call", "status": status,
                "arguments": arguments, "call_id": call.id, "name": call.name,
            })
        };
        let at = json!({"item_id": fc_id, "output_index": oi});
        s.send("response.output_item.added", json!({"output_index": oi, "item": item("in_progress", "")}));
        for d in &call.deltas {
            s.send("response.function_call_arguments.delta", with(&at, json!({"delta": d})));
        }
        s.send(
            "response.function_call_arguments.done",
            with(&at, json!({"name": call.name, "arguments": call.arguments})),
        );
        let done = item("completed", &call.arguments);
        s.send("response.output_item.done", json!({"output_index": oi, "item": done}));
        output.push(done);
    }

    let usage = usage(reply);
    match reply.stream_error {
        Some(error) if error.unframed => {
            let body = json!({"error": {"message": error.message, "type": error.kind, "param": null, "code": null}});
            s.b.unframed(&body);
        }
        Some(error) if error.error_event => {
            s.send("error", json!({"code": error.kind, "message": error.message, "param": null}));
        }
        Some(error) => {
            let mut failed = response(ex, "failed", &output, Some(usage));
            failed["error"] = json!({"code": error.kind, "message": error.message});
            s.send("response.failed", json!({"response": failed}));
        }
        None if matches!(reply.stop, StopReason::Length | StopReason::Safety) => {
            let reason = if reply.stop == StopReason::Length { "max_output_tokens" } else { "content_filter" };
            let mut incomplete = response(ex, "incomplete", &output, Some(usage));
            incomplete["incomplete_details"] = json!({"reason": reason});
            s.send("response.incomplete", json!({"response": incomplete}));
        }
        None => {
            let completed = response(ex, "completed", &output, Some(usage));
            s.send("response.completed", json!({"response": completed}));
        }
    }
    let malformed = s.b.malformed_event(Some(TEXT_DELTA));
    s.b.finish(malformed)
}

struct Events {
    b: PlanBuilder,
    seq: u64,
}

impl Events {
    /// Sends `name` with `fields` after its `type` and `sequence_number`.
    fn send(&mut self, name: &str, fields: Value) {
        let mut event = json!({"type": name, "sequence_number": self.seq});
        merge(&mut event, &fields);
        self.seq += 1;
        self.b.event(Some(name), &event);
    }
}

fn merge(into: &mut Value, from: &Value) {
    if let (Some(into), Some(from)) = (into.as_object_mut(), from.as_object()) {
        for (k, v) in from {
            into.insert(k.clone(), v.clone());
        }
    }
}

fn with(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    merge(&mut out, &extra);
    out
}

fn response(ex: &Exchange, status: &str, output: &[Value], usage: Option<Value>) -> Value {
    json!({
        "id": format!("resp_mock_{}", ex.seq),
        "object": "response",
        "created_at": ex.created,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": ex.model,
        "output": output,
        "parallel_tool_calls": true,
        "usage": usage,
    })
}

fn usage(reply: &Reply<'_>) -> Value {
    let u = reply.usage;
    let input = u.input + u.cache_read;
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": u.reasoning},
        "total_tokens": input + u.output,
    })
}
