//! `openai-codex-responses` over the Codex backend's websocket (`transport: auto`, pi's
//! default), against the mock's websocket at `/backend-api/codex/responses`: the handshake's
//! headers, `response.create` messages, a session's socket reused with only the new input,
//! the event stream when the websocket is refused, and failures after the first event.

use pretty_assertions::assert_eq;
use rho_ai::{StreamOptions, Transport};
use rho_mock_llm::{RecordedRequest, WEBSOCKET_METHOD};
use rho_types::types::StopReason;
use serde_json::json;

use crate::common::*;
use crate::openai_codex::{WIRE, token};

/// Options for a ChatGPT login over `transport`, in a session of its own (sockets are kept per
/// session for the whole process).
fn over(transport: Transport, session: &str) -> StreamOptions {
    let access = token(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-42"}}));
    StreamOptions { api_key: Some(access), transport, session_id: Some(session.into()), ..options() }
}

fn methods(requests: &[RecordedRequest]) -> Vec<&str> {
    requests.iter().map(|r| r.method.as_str()).collect()
}

#[tokio::test]
async fn a_request_goes_over_the_websocket_with_pis_headers() {
    let server = serve(json!([{"text": "over the socket"}])).await;
    let m = model(WIRE, &server);
    let mut context = prompt("hi");
    context.tools = vec![read_tool()];
    let events = collect(&m, &context, over(Transport::Auto, "ws-headers")).await;
    assert_eq!(final_message(&events).text(), "over the socket");
    assert_eq!(final_message(&events).stop_reason, StopReason::Stop);

    let request = server.last_request().unwrap();
    assert_eq!((request.method.as_str(), request.path.as_str()), (WEBSOCKET_METHOD, "/backend-api/codex/responses"));
    assert!(request.header("authorization").is_some_and(|a| a.starts_with("Bearer ")));
    assert_eq!(request.header("chatgpt-account-id"), Some("acct-42"));
    assert_eq!(request.header("originator"), Some("pi"));
    assert_eq!(request.header("openai-beta"), Some("responses_websockets=2026-02-06"));
    assert_eq!(request.header("session_id"), Some("ws-headers"));
    assert_eq!(request.header("x-client-request-id"), Some("ws-headers"));
    assert_eq!(request.header("x-model-header"), Some("from-model"));
    assert_eq!(request.header("x-option-header"), Some("from-options"));
    assert_eq!((request.header("accept"), request.header("content-type")), (None, None));
    assert!(request.header("user-agent").is_some_and(|a| a.starts_with("pi (")));
    // The body is the event stream's, without `type` (the message's) and without a previous id.
    let body = &request.body;
    // The system prompt leads the input, for the prompt cache (pi 1.6); no `instructions`.
    assert_eq!(body.get("instructions"), None);
    assert_eq!(
        body["input"],
        json!([
            {"role": "developer", "content": "You are terse."},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ])
    );
    assert_eq!((&body["store"], &body["stream"]), (&json!(false), &json!(true)));
    assert_eq!(body["prompt_cache_key"], json!("ws-headers"));
    assert_eq!(body.get("previous_response_id"), None);
}

#[tokio::test]
async fn a_request_without_a_session_gets_a_request_id_of_its_own() {
    let server = serve(json!([{"text": "a"}, {"text": "b"}])).await;
    let m = model(WIRE, &server);
    let options = StreamOptions { session_id: None, ..over(Transport::Auto, "unused") };
    for _ in 0..2 {
        collect(&m, &prompt("hi"), options.clone()).await;
    }
    let requests = server.requests();
    assert_eq!(methods(&requests), [WEBSOCKET_METHOD, WEBSOCKET_METHOD]);
    let ids: Vec<&str> = requests.iter().map(|r| r.header("x-client-request-id").unwrap()).collect();
    assert_ne!(ids[0], ids[1], "each request is its own");
    assert_eq!(ids[0].len(), 36, "a UUID: {}", ids[0]);
    assert_eq!(requests[0].header("session_id"), Some(ids[0]));
    assert_eq!(requests[0].body.get("prompt_cache_key"), None);
}

/// A reply with a tool call, then the request that follows its result: over one socket, the
/// second sends only the tool's output, continuing the first response.
#[tokio::test]
async fn a_request_that_continues_the_last_sends_only_its_new_input() {
    let server = serve(json!([
        {"toolCalls": [{"id": "call_7", "name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "It says: file contents."},
        {"text": "fresh"},
    ]))
    .await;
    let m = model(WIRE, &server);
    let options = over(Transport::Auto, "ws-continues");
    let mut first_context = prompt("Read a.txt");
    first_context.tools = vec![read_tool()];
    let first = final_message(&collect(&m, &first_context, options.clone()).await).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let response_id = first.response_id.clone().expect("the reply names its response");
    let call_id = first.tool_calls().next().unwrap().id.clone();

    let events = collect(&m, &continuation(&first, &call_id), options.clone()).await;
    assert_eq!(final_message(&events).text(), "It says: file contents.");
    let second = server.last_request().unwrap();
    assert_eq!(second.method, WEBSOCKET_METHOD);
    assert_eq!(second.body["previous_response_id"], json!(response_id));
    assert_eq!(
        second.body["input"],
        json!([{"type": "function_call_output", "call_id": "call_7", "output": "file contents"}])
    );
    assert_eq!(second.body.get("instructions"), None, "the system prompt was in the first input");

    // A history that does not extend the last request goes whole.
    let events = collect(&m, &prompt("something else"), options).await;
    assert_eq!(final_message(&events).text(), "fresh");
    let third = server.last_request().unwrap();
    assert_eq!(third.body.get("previous_response_id"), None);
    assert_eq!(third.body["input"][1]["content"][0]["text"], json!("something else"));
}

#[tokio::test]
async fn websocket_without_caching_sends_every_request_whole() {
    let server = serve(json!([
        {"toolCalls": [{"id": "call_7", "name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "done"},
    ]))
    .await;
    let m = model(WIRE, &server);
    let options = over(Transport::WebSocket, "ws-whole");
    let mut first_context = prompt("Read a.txt");
    first_context.tools = vec![read_tool()];
    let first = final_message(&collect(&m, &first_context, options.clone()).await).clone();
    let call_id = first.tool_calls().next().unwrap().id.clone();
    collect(&m, &continuation(&first, &call_id), options).await;
    let second = server.last_request().unwrap();
    assert_eq!(second.method, WEBSOCKET_METHOD);
    assert_eq!(second.body.get("previous_response_id"), None);
    assert_eq!(second.body["input"].as_array().map(Vec::len), Some(4), "{}", second.body["input"]);
}

#[tokio::test]
async fn a_refused_websocket_gives_way_to_the_event_stream_for_the_rest_of_the_session() {
    let server = serve(json!([{"text": "over sse", "refuseWebsocket": true}, {"text": "still sse"}])).await;
    let m = model(WIRE, &server);
    let options = over(Transport::Auto, "ws-refused");
    let events = collect(&m, &prompt("hi"), options.clone()).await;
    assert_eq!(final_message(&events).text(), "over sse");
    assert_eq!(types(&events).iter().filter(|t| **t == "start").count(), 1, "nothing was shown twice");
    let events = collect(&m, &prompt("again"), options).await;
    assert_eq!(final_message(&events).text(), "still sse");

    let requests = server.requests();
    assert_eq!(methods(&requests), ["GET", "POST", "POST"], "the refused upgrade, then the event stream twice");
    assert_eq!(requests[0].header("upgrade"), Some("websocket"));
    assert_eq!(requests[1].header("accept"), Some("text/event-stream"));
    assert_eq!(requests[1].header("openai-beta"), Some("responses=experimental"));
}

#[tokio::test]
async fn a_websocket_that_breaks_after_its_first_event_fails_the_request() {
    let server =
        serve(json!([{"text": "partial reply here", "chunkSize": 4, "disconnectAfter": 4}, {"text": "x"}])).await;
    let m = model(WIRE, &server);
    let events = collect(&m, &prompt("hi"), over(Transport::Auto, "ws-broken")).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.as_deref().unwrap();
    assert!(error.starts_with("Connection error: WebSocket"), "{error}");
    assert_eq!(failure(&events).kind(), rho_ai::ErrorKind::Retryable);
    assert_eq!(methods(&server.requests()), [WEBSOCKET_METHOD], "no second request behind the shown events");
}

#[tokio::test]
async fn an_error_the_server_reports_is_the_answer_not_a_reason_to_switch() {
    let server =
        serve(json!([{"error": {"status": 429, "message": "You have hit your ChatGPT usage limit"}}, {"text": "x"}]))
            .await;
    let m = model(WIRE, &server);
    let events = collect(&m, &prompt("hi"), over(Transport::Auto, "ws-error")).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.error_message.as_deref(), Some("You have hit your ChatGPT usage limit"));
    assert_eq!(methods(&server.requests()), [WEBSOCKET_METHOD]);
}

#[tokio::test]
async fn an_aborted_request_closes_its_socket() {
    let server = serve(json!([
        {"text": "a slow reply that takes a long time to arrive in full", "chunkSize": 2, "chunkDelayMs": 200},
        {"toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "a.txt"}}]},
    ]))
    .await;
    let m = model(WIRE, &server);
    let options = over(Transport::Auto, "ws-abort");
    let cancel = options.cancel.clone();
    let mut stream = rho_ai::stream(&m, prompt("hi"), options.clone());
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        let first_delta = matches!(event, rho_ai::AssistantMessageEvent::TextDelta { .. });
        events.push(event);
        if first_delta {
            cancel.cancel();
        }
    }
    assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);

    // The next request opens a new socket: nothing to continue from, the whole body goes.
    let options = StreamOptions { cancel: Default::default(), ..options };
    let events = collect(&m, &prompt("hi"), options).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::ToolUse);
    let requests = server.requests();
    assert_eq!(methods(&requests), [WEBSOCKET_METHOD, WEBSOCKET_METHOD]);
    assert_eq!(requests[1].body.get("previous_response_id"), None);
}

#[tokio::test]
async fn transport_sse_never_opens_a_websocket() {
    let server = serve(json!([{"text": "ok"}])).await;
    let m = model(WIRE, &server);
    collect(&m, &prompt("hi"), over(Transport::Sse, "ws-never")).await;
    assert_eq!(methods(&server.requests()), ["POST"]);
}

#[tokio::test]
async fn a_socket_the_server_closed_while_idle_is_replaced_not_given_up() {
    let server = serve(json!([{"text": "first"}])).await;
    let addr = server.addr();
    let m = model(WIRE, &server);
    let options = over(Transport::Auto, "ws-idle-closed");
    collect(&m, &prompt("hi"), options.clone()).await;
    // The server goes away, closing the idle socket, and comes back on the same port.
    drop(server);
    let script = rho_mock_llm::Script::from_value(json!({"turns": [{"text": "second"}]})).unwrap();
    // The port is free again once the old server's listener is gone.
    let mut tries = 0;
    let server = loop {
        match rho_mock_llm::MockServer::start_on(addr, script.clone()).await {
            Ok(server) => break server,
            Err(e) => {
                tries += 1;
                assert!(tries < 300, "the port stayed taken: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    };

    let events = collect(&m, &prompt("hi"), options).await;
    assert_eq!(final_message(&events).text(), "second");
    let requests = server.requests();
    assert_eq!(methods(&requests), [WEBSOCKET_METHOD], "a new socket, not the event stream");
    assert_eq!(requests[0].body.get("previous_response_id"), None);
}
