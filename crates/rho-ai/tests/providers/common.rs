//! What every provider must do, written once and run against each wire format: a scripted
//! mock server, a priced test model, a checker for the shape of an event stream, and the
//! behaviours shared by all four APIs.

use std::time::Duration;

use rho_ai::stream::ABORTED_MESSAGE;
use rho_ai::{AssistantMessageEvent as E, ErrorKind, ProviderError, StreamOptions};
use rho_mock_llm::{MockServer, Script};
use rho_types::model::{InputKind, ModelCost};
use rho_types::types::{
    AssistantContent, AssistantMessage, Context, Message, StopReason, ToolResultMessage, ToolSpec, UserContent,
    UserMessage,
};
use rho_types::{Model, ThinkingLevel};
use serde_json::{Value, json};

/// One wire API as the tests address it.
#[derive(Debug, Clone, Copy)]
pub struct Wire {
    pub api: &'static str,
    pub provider: &'static str,
    pub model_id: &'static str,
    /// Appended to the server URL to make the base URL.
    pub base_path: &'static str,
    /// Whether arguments stream in pieces (Gemini sends whole calls).
    pub streams_arguments: bool,
    /// Whether the API reports cache writes.
    pub reports_cache_write: bool,
}

pub const PRICES: ModelCost =
    ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, tiers: Vec::new() };

pub async fn serve(turns: Value) -> MockServer {
    let script = Script::from_value(json!({ "turns": turns })).expect("valid script");
    MockServer::start(script).await.expect("mock server starts")
}

pub fn model(wire: Wire, server: &MockServer) -> Model {
    Model {
        id: wire.model_id.into(),
        name: wire.model_id.into(),
        api: wire.api.into(),
        provider: wire.provider.into(),
        base_url: format!("{}{}", server.url(), wire.base_path),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: PRICES,
        context_window: 200_000,
        max_tokens: 64_000,
        headers: [("x-model-header".to_owned(), "from-model".to_owned())].into(),
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
        input_limits: None,
        sampling: None,
    }
}

pub fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("test-key".into()),
        headers: vec![("x-option-header".into(), "from-options".into())],
        session_id: Some("session-1".into()),
        ..Default::default()
    }
}

/// The model's and the caller's extra headers reached the server.
pub fn assert_extra_headers(request: &rho_mock_llm::RecordedRequest) {
    assert_eq!(request.header("x-model-header"), Some("from-model"));
    assert_eq!(request.header("x-option-header"), Some("from-options"));
    assert!(request.header("content-type").is_some_and(|c| c.starts_with("application/json")));
}

pub fn prompt(text: &str) -> Context {
    Context {
        system_prompt: Some("You are terse.".into()),
        messages: vec![Message::User(UserMessage::prompt(text, vec![]))],
        tools: vec![],
    }
}

pub fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to read"},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["path"]
        }),
    }
}

pub fn tool_result(id: &str, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
        is_warning: None,
        timestamp: 1,
    })
}

pub async fn collect(model: &Model, context: &Context, options: StreamOptions) -> Vec<E> {
    let mut stream = rho_ai::stream(model, context.clone(), options);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    check_shape(&events);
    events
}

pub fn final_message(events: &[E]) -> &AssistantMessage {
    match events.last() {
        Some(E::Done { message, .. }) => message,
        Some(E::Error { error, .. }) => error,
        other => panic!("no final event: {other:?}"),
    }
}

pub fn failure(events: &[E]) -> ProviderError {
    match events.last() {
        Some(E::Error { failure: Some(f), .. }) => (**f).clone(),
        other => panic!("expected a failure, got {other:?}"),
    }
}

pub fn types(events: &[E]) -> Vec<&'static str> {
    events.iter().map(E::type_name).collect()
}

/// The deltas of the block at `index`, concatenated.
pub fn deltas(events: &[E], index: usize) -> Vec<String> {
    events.iter().filter(|e| e.content_index() == Some(index)).filter_map(|e| e.delta().map(str::to_owned)).collect()
}

/// Every stream: `start` first; exactly one `done`/`error`, last; blocks numbered from 0 in
/// the order they open; every delta and end belongs to an open block of its kind; an end
/// carries what its deltas built.
pub fn check_shape(events: &[E]) {
    assert!(matches!(events.first(), Some(E::Start { .. })), "{:?}", types(events));
    let finals = events.iter().filter(|e| matches!(e, E::Done { .. } | E::Error { .. })).count();
    assert_eq!(finals, 1, "{:?}", types(events));
    assert!(matches!(events.last(), Some(E::Done { .. } | E::Error { .. })));
    assert_eq!(events.iter().filter(|e| matches!(e, E::Start { .. })).count(), 1);
    // (index, kind, accumulated deltas)
    let mut open: Vec<(usize, &str, String)> = Vec::new();
    let mut next = 0;
    for event in events {
        let kind = match event.type_name() {
            t if t.starts_with("text") => "text",
            t if t.starts_with("thinking") => "thinking",
            t if t.starts_with("toolcall") => "toolcall",
            _ => continue,
        };
        let index = event.content_index().expect("block events carry an index");
        if event.type_name().ends_with("_start") {
            assert_eq!(index, next, "blocks open in order: {:?}", types(events));
            next += 1;
            open.push((index, kind, String::new()));
            continue;
        }
        let pos = open
            .iter()
            .position(|(i, k, _)| *i == index && *k == kind)
            .unwrap_or_else(|| panic!("{} for a block that is not open", event.type_name()));
        match event {
            E::TextDelta { .. } | E::ThinkingDelta { .. } | E::ToolCallDelta { .. } => {
                open[pos].2.push_str(event.delta().unwrap_or_default())
            }
            E::TextEnd { content, .. } | E::ThinkingEnd { content, .. } => {
                assert_eq!(*content, open[pos].2);
                open.remove(pos);
            }
            E::ToolCallEnd { tool_call, .. } => {
                let parsed: Value = serde_json::from_str(&open[pos].2).expect("arguments JSON");
                assert_eq!(Value::Object(tool_call.arguments.clone()), parsed);
                open.remove(pos);
            }
            _ => unreachable!(),
        }
    }
    if matches!(events.last(), Some(E::Done { .. })) {
        assert!(open.is_empty(), "blocks left open: {open:?}");
    }
}

pub async fn text_streams_in_order(wire: Wire) {
    let server = serve(json!([{"text": "Hello, streaming world!", "chunkSize": 5}])).await;
    let events = collect(&model(wire, &server), &prompt("hi"), options()).await;
    assert_eq!(
        types(&events),
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    assert_eq!(deltas(&events, 0), ["Hello", ", str", "eamin", "g wor", "ld!"]);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.text(), "Hello, streaming world!");
    assert_eq!(message.api, wire.api);
    assert_eq!(message.model, wire.model_id);
    // Bedrock's stream names no response (its request id is a header, which pi does not keep).
    assert_eq!(message.response_id.is_some(), wire.api != "bedrock-converse-stream");
    let E::Done { reason, .. } = events.last().unwrap() else { unreachable!() };
    assert_eq!(*reason, StopReason::Stop);
}

/// Thinking streams as its own block before the text (closed first, or, on Chat Completions,
/// as pi's provider closes blocks: all at the end, in content order); returns the final message
/// for the API's own checks of the signature.
pub async fn thinking_then_text(wire: Wire, signature: &str) -> AssistantMessage {
    let server = serve(json!([{
        "thinking": "First, consider the question.",
        "thinkingSignature": signature,
        "text": "The answer.",
        "chunkSize": 10
    }]))
    .await;
    let mut opts = options();
    opts.thinking = ThinkingLevel::Medium;
    let events = collect(&model(wire, &server), &prompt("why?"), opts).await;
    let kinds = types(&events);
    assert_eq!(kinds[1], "thinking_start");
    let thinking_end = kinds.iter().position(|t| *t == "thinking_end").unwrap();
    let text_start = kinds.iter().position(|t| *t == "text_start").unwrap();
    if wire.api == "openai-completions" {
        assert!(text_start < thinking_end, "{kinds:?}");
        assert_eq!(kinds[thinking_end + 1], "text_end", "{kinds:?}");
    } else {
        assert_eq!(text_start, thinking_end + 1, "{kinds:?}");
    }
    assert_eq!(events[text_start].content_index(), Some(1));
    assert_eq!(deltas(&events, 0).concat(), "First, consider the question.");
    assert!(deltas(&events, 0).len() >= 3);
    let message = final_message(&events).clone();
    assert_eq!(message.text(), "The answer.");
    let AssistantContent::Thinking(t) = &message.content[0] else { panic!("thinking first: {:?}", message.content) };
    assert_eq!(t.thinking, "First, consider the question.");
    message
}

/// A tool call's arguments arrive in pieces and are parsed at the end.
pub async fn tool_call_arguments_stream(wire: Wire) {
    let server = serve(json!([{
        "text": "Reading.",
        "toolCalls": [{"id": "call_1", "name": "read",
                       "arguments": {"path": "src/main.rs", "limit": 10}}],
        "chunkSize": 6
    }]))
    .await;
    let mut context = prompt("read it");
    context.tools = vec![read_tool()];
    let events = collect(&model(wire, &server), &context, options()).await;
    let kinds = types(&events);
    let start = kinds.iter().position(|t| *t == "toolcall_start").unwrap();
    let end = kinds.iter().position(|t| *t == "toolcall_end").unwrap();
    // (On Chat Completions the text block, open until the end, closes just before the call.)
    let between: Vec<&str> = kinds[start + 1..end].iter().copied().filter(|t| *t != "text_end").collect();
    assert!(between.iter().all(|t| *t == "toolcall_delta"), "{kinds:?}");
    let pieces = deltas(&events, 1);
    if wire.streams_arguments {
        assert!(pieces.len() >= 3, "arguments in pieces: {pieces:?}");
    } else {
        assert_eq!(pieces.len(), 1);
    }
    let E::ToolCallStart { name, id, .. } = &events[start] else { unreachable!() };
    assert_eq!(name, "read");
    assert!(!id.is_empty());
    let E::ToolCallEnd { tool_call, .. } = &events[end] else { unreachable!() };
    assert_eq!(Value::Object(tool_call.arguments.clone()), json!({"path": "src/main.rs", "limit": 10}));
    let E::Done { reason, message } = events.last().unwrap() else { panic!("{kinds:?}") };
    assert_eq!(*reason, StopReason::ToolUse);
    assert_eq!(message.tool_calls().count(), 1);
}

/// Two calls in one reply: each its own block, numbered after the text, with its own deltas,
/// id and arguments (the agent runs them concurrently and pairs results by id).
pub async fn two_tool_calls_get_their_own_blocks(wire: Wire) {
    let server = serve(json!([{
        "text": "Both.",
        "toolCalls": [
            {"name": "read", "arguments": {"path": "a.txt"}},
            {"name": "read", "arguments": {"path": "b.txt", "limit": 3}}
        ],
        "chunkSize": 5
    }]))
    .await;
    let mut context = prompt("read both");
    context.tools = vec![read_tool()];
    let events = collect(&model(wire, &server), &context, options()).await;
    let calls: Vec<(usize, &rho_types::types::ToolCall)> = events
        .iter()
        .filter_map(|e| match e {
            E::ToolCallEnd { content_index, tool_call } => Some((*content_index, tool_call)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2, "{:?}", types(&events));
    assert_eq!((calls[0].0, calls[1].0), (1, 2));
    assert_eq!(Value::Object(calls[0].1.arguments.clone()), json!({"path": "a.txt"}));
    assert_eq!(Value::Object(calls[1].1.arguments.clone()), json!({"path": "b.txt", "limit": 3}));
    assert_ne!(calls[0].1.id, calls[1].1.id);
    assert_eq!(deltas(&events, 1).concat(), r#"{"path":"a.txt"}"#);
    assert_eq!(deltas(&events, 2).concat(), r#"{"path":"b.txt","limit":3}"#);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let ids: Vec<&str> = message.tool_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, [calls[0].1.id.as_str(), calls[1].1.id.as_str()]);
}

pub async fn usage_is_priced(wire: Wire) {
    let server = serve(json!([{
        "text": "ok",
        "usage": {"input": 1000, "output": 500, "cacheRead": 2000, "cacheWrite": 400}
    }]))
    .await;
    let events = collect(&model(wire, &server), &prompt("hi"), options()).await;
    let usage = final_message(&events).usage;
    let cache_write = if wire.reports_cache_write { 400 } else { 0 };
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.cache_write), (1000, 500, 2000, cache_write));
    assert_eq!(usage.total_tokens, 3500 + cache_write);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(usage.cost.input, 0.003), "{:?}", usage.cost);
    assert!(close(usage.cost.output, 0.0075));
    assert!(close(usage.cost.cache_read, 0.0006));
    assert!(close(usage.cost.cache_write, 3.75e-6 * cache_write as f64));
    assert!(close(usage.cost.total, 0.003 + 0.0075 + 0.0006 + 3.75e-6 * cache_write as f64));
}

pub async fn http_errors_are_classified(wire: Wire) {
    let server = serve(json!([
        {"error": {"status": 429, "message": "Slow down there", "retryAfter": 7}},
        {"error": {"status": 401, "message": "invalid x-api-key"}},
        {"error": {"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"}},
        {"error": {"status": 503}}
    ]))
    .await;
    let m = model(wire, &server);
    let context = prompt("hi");
    let run = || collect(&m, &context, options());

    let events = run().await;
    assert_eq!(types(&events), ["start", "error"]);
    let error = failure(&events);
    assert_eq!(error.kind(), ErrorKind::Retryable);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(7)));
    assert!(matches!(error, ProviderError::Http { status: 429, .. }));
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(message.error_message.as_deref().unwrap().contains("Slow down there"), "{:?}", message.error_message);

    let error = failure(&run().await);
    assert_eq!(error.kind(), ErrorKind::Auth);
    assert!(error.to_string().contains("invalid x-api-key"));

    let error = failure(&run().await);
    assert_eq!(error.kind(), ErrorKind::ContextOverflow);
    assert!(error.to_string().contains("prompt is too long"));

    let error = failure(&run().await);
    assert_eq!(error.kind(), ErrorKind::Retryable);
    assert_eq!(error.retry_after(), None);
}

/// A connection dropped mid-stream fails retryably and keeps what arrived.
pub async fn disconnect_is_retryable(wire: Wire) {
    let server = serve(json!([{
        "text": "This reply will be cut off somewhere in the middle.",
        "chunkSize": 4,
        "disconnectAfter": 5
    }]))
    .await;
    let events = collect(&model(wire, &server), &prompt("hi"), options()).await;
    let error = failure(&events);
    assert_eq!(error.kind(), ErrorKind::Retryable, "{error:?}");
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(!message.text().is_empty());
    assert!(message.text().len() < 51);
}

pub async fn stream_error_is_classified(wire: Wire) {
    let server = serve(json!([{
        "text": "partial",
        "streamError": {"type": "overloaded_error", "message": "Overloaded"}
    }]))
    .await;
    let events = collect(&model(wire, &server), &prompt("hi"), options()).await;
    let error = failure(&events);
    assert_eq!(error.kind(), ErrorKind::Retryable, "{error:?}");
    let message = final_message(&events);
    let text = message.error_message.as_deref().unwrap().to_lowercase();
    assert!(text.contains("overloaded"), "{text}");
    assert_eq!(message.text(), "partial");
}

pub async fn malformed_data_is_a_decode_error(wire: Wire) {
    let server = serve(json!([{"text": "some text here", "malformed": true}])).await;
    let events = collect(&model(wire, &server), &prompt("hi"), options()).await;
    let error = failure(&events);
    assert!(matches!(error, ProviderError::Decode(_)), "{error:?}");
    assert_eq!(error.kind(), ErrorKind::Other);
}

/// Cancelling mid-stream ends the stream at once with `aborted`: no later delta of the slow
/// reply arrives (each is 200 ms apart), only the closing error (Chat Completions ends its open
/// blocks first, as pi's provider does).
pub async fn abort_stops_promptly(wire: Wire) {
    let server = serve(json!([{
        "text": "a slow reply that takes a long time to arrive in full",
        "chunkSize": 2,
        "chunkDelayMs": 200
    }]))
    .await;
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = rho_ai::stream(&model(wire, &server), prompt("hi"), opts);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        let first_delta = matches!(event, E::TextDelta { .. });
        events.push(event);
        if first_delta {
            break;
        }
    }
    let before = events.len();
    cancel.cancel();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    let expected: &[&str] = if wire.api == "openai-completions" { &["text_end", "error"] } else { &["error"] };
    assert_eq!(types(&events[before..]), expected, "the stream went on after the abort");
    check_shape(&events);
    let E::Error { reason, error, failure } = events.last().unwrap() else { panic!("{:?}", types(&events)) };
    assert_eq!(*reason, StopReason::Aborted);
    assert_eq!(error.stop_reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some(ABORTED_MESSAGE));
    assert!(failure.is_none());
    assert!(!error.text().is_empty(), "keeps the text that arrived");
}

/// The conversation a second request carries after a first reply that thought and called a
/// tool: the prompt, that reply, and the tool's result.
pub fn continuation(first: &AssistantMessage, call_id: &str) -> Context {
    Context {
        system_prompt: Some("You are terse.".into()),
        messages: vec![
            Message::User(UserMessage::prompt("Read a.txt", vec![])),
            Message::Assistant(first.clone()),
            tool_result(call_id, "file contents"),
        ],
        tools: vec![read_tool()],
    }
}

/// Runs a first turn that thinks (with `signature`) and calls `read`, then a second turn that
/// continues after the tool result at `level`; returns the first reply and the second request.
pub async fn round_trip(
    wire: Wire,
    signature: &str,
    level: ThinkingLevel,
) -> (AssistantMessage, rho_mock_llm::RecordedRequest) {
    let server = serve(json!([
        {
            "thinking": "I need the file.",
            "thinkingSignature": signature,
            "toolCalls": [{"id": "call_7", "name": "read", "arguments": {"path": "a.txt"}}]
        },
        {"text": "It says: file contents."}
    ]))
    .await;
    let m = model(wire, &server);
    let mut opts = options();
    opts.thinking = level;
    let mut first_context = prompt("Read a.txt");
    first_context.tools = vec![read_tool()];
    let events = collect(&m, &first_context, opts.clone()).await;
    let first = final_message(&events).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let call_id = first.tool_calls().next().unwrap().id.clone();
    let events = collect(&m, &continuation(&first, &call_id), opts).await;
    assert_eq!(final_message(&events).text(), "It says: file contents.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    (first, requests[1].clone())
}

/// The behaviours every API shares, as tests of `$wire` (with the error scenarios of
/// `errors`).
macro_rules! shared_tests {
    ($wire:expr) => {
        error_tests!($wire);

        #[tokio::test]
        async fn text_streams_in_order() {
            crate::common::text_streams_in_order($wire).await;
        }

        #[tokio::test]
        async fn tool_call_arguments_stream() {
            crate::common::tool_call_arguments_stream($wire).await;
        }

        #[tokio::test]
        async fn two_tool_calls_get_their_own_blocks() {
            crate::common::two_tool_calls_get_their_own_blocks($wire).await;
        }

        #[tokio::test]
        async fn usage_is_priced() {
            crate::common::usage_is_priced($wire).await;
        }

        #[tokio::test]
        async fn http_errors_are_classified() {
            crate::common::http_errors_are_classified($wire).await;
        }

        #[tokio::test]
        async fn disconnect_is_retryable() {
            crate::common::disconnect_is_retryable($wire).await;
        }

        #[tokio::test]
        async fn stream_error_is_classified() {
            crate::common::stream_error_is_classified($wire).await;
        }

        #[tokio::test]
        async fn malformed_data_is_a_decode_error() {
            crate::common::malformed_data_is_a_decode_error($wire).await;
        }

        #[tokio::test]
        async fn abort_stops_promptly() {
            crate::common::abort_stops_promptly($wire).await;
        }
    };
}
