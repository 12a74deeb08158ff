//! Streaming costs without the network: (1) the SSE decoder's throughput over a large body
//! arriving in network-sized pieces, and (2) the per-event cost of turning each API's recorded
//! chunks into `AssistantMessageEvent`s (the provider's streaming half, the emitter, and the
//! channel to the consumer).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rho_ai::sse::SseStream;
use rho_ai::{StreamOptions, stream_sse};
use rho_types::Model;
use rho_types::model::{InputKind, ModelCost, api};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

/// Text deltas per recorded reply.
const DELTAS: usize = 5_000;
/// Argument pieces of the tool call at the end of each reply.
const ARG_PIECES: usize = 500;
/// Bytes per read, as a socket would hand them over.
const READ_SIZE: usize = 16 * 1024;

fn sse(events: impl IntoIterator<Item = (Option<&'static str>, Value)>) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str("event: ");
            out.push_str(name);
            out.push('\n');
        }
        out.push_str("data: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
    }
    out
}

fn word(i: usize) -> String {
    format!("word{} ", i % 97)
}

fn arg_piece(i: usize) -> String {
    if i == 0 {
        "{\"text\":\"".into()
    } else if i + 1 == ARG_PIECES {
        "end\"}".into()
    } else {
        "abcdefgh".into()
    }
}

fn anthropic_body() -> String {
    let mut events = vec![(
        Some("message_start"),
        json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )];
    events.push((
        Some("content_block_start"),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ));
    for i in 0..DELTAS {
        events.push((
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word(i)}}),
        ));
    }
    events.push((Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})));
    events.push((
        Some("content_block_start"),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}}),
    ));
    for i in 0..ARG_PIECES {
        events.push((
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": arg_piece(i)}}),
        ));
    }
    events.push((Some("content_block_stop"), json!({"type": "content_block_stop", "index": 1})));
    events.push((
        Some("message_delta"),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 6000}}),
    ));
    events.push((Some("message_stop"), json!({"type": "message_stop"})));
    sse(events)
}

fn completions_body() -> String {
    let chunk = |delta: Value, finish: Value| {
        (
            None,
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let mut events = Vec::new();
    for i in 0..DELTAS {
        events.push(chunk(json!({"content": word(i)}), Value::Null));
    }
    events.push(chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "write", "arguments": ""}}]}),
        Value::Null,
    ));
    for i in 0..ARG_PIECES {
        events.push(chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": arg_piece(i)}}]}), Value::Null));
    }
    events.push(chunk(json!({}), json!("tool_calls")));
    events.push((
        None,
        json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 6000}}),
    ));
    let mut body = sse(events);
    body.push_str("data: [DONE]\n\n");
    body
}

fn responses_body() -> String {
    let mut events = vec![
        (Some("response.created"), json!({"type": "response.created", "response": {"id": "resp_1"}})),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "item": {"id": "msg_1", "type": "message", "content": []}}),
        ),
    ];
    for i in 0..DELTAS {
        events.push((
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": word(i)}),
        ));
    }
    events.push((
        Some("response.output_item.done"),
        json!({"type": "response.output_item.done", "item": {"id": "msg_1", "type": "message"}}),
    ));
    events.push((
        Some("response.output_item.added"),
        json!({"type": "response.output_item.added", "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "write", "arguments": ""}}),
    ));
    for i in 0..ARG_PIECES {
        events.push((
            Some("response.function_call_arguments.delta"),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": arg_piece(i)}),
        ));
    }
    events.push((
        Some("response.output_item.done"),
        json!({"type": "response.output_item.done", "item": {"id": "fc_1", "type": "function_call"}}),
    ));
    events.push((
        Some("response.completed"),
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
               "usage": {"input_tokens": 10, "output_tokens": 6000}}}),
    ));
    sse(events)
}

fn google_body() -> String {
    let chunk = |parts: Value, finish: Option<&str>| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(f) = finish {
            candidate["finishReason"] = json!(f);
        }
        (None, json!({"candidates": [candidate], "usageMetadata": {"promptTokenCount": 10}, "responseId": "r1"}))
    };
    let mut events = Vec::new();
    for i in 0..DELTAS {
        events.push(chunk(json!([{"text": word(i)}]), None));
    }
    events.push(chunk(json!([{"functionCall": {"name": "write", "args": {"text": "x".repeat(4000)}}}]), Some("STOP")));
    sse(events)
}

fn model(api: &str) -> Model {
    Model {
        id: "bench".into(),
        name: "bench".into(),
        api: api.into(),
        provider: "bench".into(),
        base_url: "http://127.0.0.1:1".into(),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, tiers: Vec::new() },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
        input_limits: None,
        sampling: None,
    }
}

/// `body` cut into socket-sized reads.
fn pieces(body: &Bytes) -> Vec<Result<Bytes, reqwest::Error>> {
    (0..body.len()).step_by(READ_SIZE).map(|start| Ok(body.slice(start..(start + READ_SIZE).min(body.len())))).collect()
}

fn sse_stream(body: &Bytes) -> SseStream {
    SseStream::from_bytes(futures::stream::iter(pieces(body)), Duration::from_secs(60))
}

fn sse_decoder(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let body = Bytes::from(anthropic_body().repeat(4));
    let mut group = c.benchmark_group("sse_decode");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function(format!("{} KiB", body.len() / 1024), |b| {
        b.iter(|| {
            rt.block_on(async {
                let cancel = CancellationToken::new();
                let mut stream = sse_stream(&body);
                let mut n = 0usize;
                while let Some(event) = stream.next(&cancel).await.expect("decodes") {
                    n += event.data.len();
                }
                black_box(n)
            })
        });
    });
    group.finish();
}

fn provider_events(c: &mut Criterion) {
    let rt = Runtime::new().expect("runtime");
    let cases = [
        (api::ANTHROPIC_MESSAGES, anthropic_body()),
        (api::OPENAI_COMPLETIONS, completions_body()),
        (api::OPENAI_RESPONSES, responses_body()),
        (api::GOOGLE_GENERATIVE_AI, google_body()),
    ];
    let mut group = c.benchmark_group("provider_events");
    for (api, body) in cases {
        let body = Bytes::from(body);
        let m = model(api);
        // Count the events once, so throughput is in events delivered to the consumer.
        let count = rt.block_on(async {
            let mut stream = stream_sse(&m, sse_stream(&body), StreamOptions::default());
            let mut n = 0u64;
            while let Some(event) = stream.next().await {
                assert_ne!(event.type_name(), "error", "{api} body decodes cleanly");
                n += 1;
            }
            n
        });
        group.throughput(Throughput::Elements(count));
        group.bench_function(api, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut stream = stream_sse(&m, sse_stream(&body), StreamOptions::default());
                    let mut n = 0u64;
                    while let Some(event) = stream.next().await {
                        black_box(&event);
                        n += 1;
                    }
                    n
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, sse_decoder, provider_events);
criterion_main!(benches);
