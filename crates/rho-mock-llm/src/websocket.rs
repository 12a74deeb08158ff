//! ChatGPT's Codex backend over a websocket: `GET …/codex/responses` with an upgrade. Each text
//! message is a `response.create` request, recorded like an HTTP request (method `WEBSOCKET`,
//! the upgrade's headers, the message without its `type` as the body) and answered from the
//! script with the Responses events, one message each. The socket stays open for the next
//! request.
//!
//! A turn's faults, as a websocket shows them: `error` is an `error` event carrying the status
//! and the error; `delayMs` stalls before the first event and `chunkDelayMs` between two;
//! `disconnectAfter: n` sends n events and drops the connection without a close; `malformed`
//! sends a message that is not JSON in event n's place (or last) and closes. While the next
//! turn has `refuseWebsocket`, an upgrade is refused with `426`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bytes::BytesMut;
use serde_json::{Value, json};

use crate::api::{self, Api, Route};
use crate::handler::{EXHAUSTED, plain_error, stall};
use crate::plan::Piece;
use crate::record::RecordedRequest;
use crate::reply::{Exchange, Reply};
use crate::script::Turn;
use crate::server::Shared;
use crate::wire;

/// The method requests over a websocket are recorded with.
pub const METHOD: &str = "WEBSOCKET";

/// Whether `headers` ask to upgrade the connection to a websocket.
pub(crate) fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.get(header::UPGRADE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Accepts (or refuses) the upgrade and serves the socket's requests.
pub(crate) async fn upgrade(shared: Arc<Shared>, mut parts: Parts) -> Response {
    let Some(route) = api::route(parts.uri.path()).filter(|r| r.api == Api::OpenAiResponses) else {
        return plain_error(StatusCode::NOT_FOUND, &format!("mock-llm: no websocket at {}", parts.uri.path()));
    };
    if shared.queue.lock().next_refuses_websocket() {
        let record = RecordedRequest::new("GET", &parts.uri, &parts.headers, &[], Api::OpenAiResponses.as_str());
        shared.recorder.push(record);
        shared.requests_seen.fetch_add(1, Ordering::SeqCst);
        return plain_error(StatusCode::UPGRADE_REQUIRED, "mock-llm: this turn refuses websockets");
    }
    let upgrade = match WebSocketUpgrade::from_request_parts(&mut parts, &shared).await {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let (uri, headers) = (parts.uri, parts.headers);
    upgrade.on_upgrade(move |socket| serve(shared, socket, uri, headers, route))
}

async fn serve(shared: Arc<Shared>, mut socket: WebSocket, uri: Uri, headers: HeaderMap, route: Route) {
    let mut shutdown = shared.shutdown.clone();
    loop {
        let message = tokio::select! {
            message = socket.recv() => message,
            _ = shutdown.wait_for(|down| *down) => return,
        };
        let text = match message {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_)) | Err(_)) | None => return,
            Some(Ok(_)) => continue,
        };
        let Some(body) = request_body(text.as_str()) else {
            let error = error_event(400, "mock-llm: expected a response.create message");
            if socket.send(Message::text(error.to_string())).await.is_err() {
                return;
            }
            continue;
        };
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let api_name = Api::OpenAiResponses.as_str();
        shared.recorder.push(RecordedRequest::new(METHOD, &uri, &headers, &bytes, api_name));
        let seq = shared.requests_seen.fetch_add(1, Ordering::SeqCst) + 1;
        let turn = shared.queue.lock().take(api_name, &String::from_utf8_lossy(&bytes));
        let Some(turn) = turn else {
            eprintln!("{EXHAUSTED}: {METHOD} {uri} #{seq}");
            let error = error_event(500, EXHAUSTED);
            if socket.send(Message::text(error.to_string())).await.is_err() {
                return;
            }
            continue;
        };
        if !answer(&shared, &mut socket, &turn, &Exchange::new(seq, &route, &body)).await {
            return;
        }
    }
}

/// The message's request: everything but its `type`, which must be `response.create`.
fn request_body(text: &str) -> Option<Value> {
    let mut message: Value = serde_json::from_str(text).ok()?;
    let fields = message.as_object_mut()?;
    (fields.remove("type")?.as_str()? == "response.create").then_some(message)
}

/// An `error` event for an HTTP-like failure.
fn error_event(status: u16, message: &str) -> Value {
    let kind = if status == 429 { "rate_limit_exceeded" } else { "server_error" };
    json!({"type": "error", "status": status, "error": {"type": kind, "code": kind, "message": message}})
}

/// Sends the turn's events; false when the connection is gone (or was dropped on purpose).
async fn answer(shared: &Shared, socket: &mut WebSocket, turn: &Turn, exchange: &Exchange) -> bool {
    if let Some(ms) = turn.delay_ms
        && !stall(shared, Duration::from_millis(ms)).await
    {
        return false;
    }
    if let Some(error) = &turn.error {
        let message = error.message.clone().unwrap_or_else(|| wire::default_message(error.status));
        return socket.send(Message::text(error_event(error.status, &message).to_string())).await.is_ok();
    }
    let reply = Reply::new(turn, Api::OpenAiResponses, || shared.ids_made.fetch_add(1, Ordering::SeqCst) + 1);
    let plan = wire::render_messages(&reply, exchange);
    let mut messages = Vec::new();
    for piece in plan.pieces {
        match piece {
            Piece::Event(bytes) => messages.push(bytes),
            Piece::Flood(template) => {
                for i in 0..template.count {
                    let mut out = BytesMut::new();
                    template.write(i, &mut out);
                    messages.push(out.freeze());
                }
            }
        }
    }
    let malformed_at = turn.malformed.and_then(|m| m.after()).map(|n| n.min(messages.len()));
    for (i, message) in messages.into_iter().enumerate() {
        if turn.disconnect_after == Some(i) {
            return false;
        }
        if malformed_at == Some(i) {
            break;
        }
        if i > 0
            && let Some(ms) = turn.chunk_delay_ms
            && !stall(shared, Duration::from_millis(ms)).await
        {
            return false;
        }
        let text = String::from_utf8_lossy(&message).into_owned();
        if socket.send(Message::text(text)).await.is_err() {
            return false;
        }
    }
    if malformed_at.is_some() {
        let bad = Message::text(String::from_utf8_lossy(&plan.malformed).into_owned());
        let _ = socket.send(bad).await;
        let _ = socket.send(Message::Close(None)).await;
        return false;
    }
    true
}
