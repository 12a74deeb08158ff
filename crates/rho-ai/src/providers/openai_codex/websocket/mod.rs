//! ChatGPT's Codex backend over a websocket, as the reference reaches it by default
//! (`transport: auto`): each request is a `response.create` message on the session's socket
//! (kept open between requests, see [`cache`]), answered with the same Responses events the
//! event stream carries, one per message. A request that continues the previous one on the same
//! socket sends only its new input ([`continuation`]).
//!
//! A websocket that cannot be opened, or fails before its first event, gives way to the event
//! stream for this request and the rest of the session; one that fails after its first event
//! fails the request (its events were already shown). Errors the server reports (an `error`
//! event, `response.failed`) are the request's answer, never a reason to switch.

mod cache;
mod connect;
mod continuation;
mod proxy;

use reqwest::header::HeaderMap;
use serde_json::{Map, Value};

use super::super::openai_responses::{format, stream};
use crate::error::ProviderError;
use crate::model::Model;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions};
use crate::types::StopReason;

/// What the websocket made of a request.
pub(super) enum Outcome {
    /// The request's answer, or its failure.
    Done(Result<StopReason, Interrupted>),
    /// The websocket could not carry it; nothing was shown. The event stream takes over.
    Unavailable(ProviderError),
}

/// Whether `session`'s requests go over the event stream because its websocket failed.
pub(super) fn failed_before(session: Option<&str>) -> bool {
    cache::sse_only(session)
}

/// Sends `body` over the session's websocket at `url` and reads the answer into `emitter`.
pub(super) async fn run(
    model: &Model,
    url: &str,
    body: &Map<String, Value>,
    headers: HeaderMap,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Outcome {
    let session = options.session_id.as_deref().filter(|s| !s.is_empty());
    let cancel = &options.cancel;
    let unavailable = |error: ProviderError| {
        cache::record_failure(session);
        Outcome::Unavailable(error)
    };
    let mut lease = match cache::acquire(session, url, headers, cancel).await {
        Ok(lease) => lease,
        Err(Interrupted::Failed(error)) => return unavailable(error),
        Err(Interrupted::Cancelled) => return Outcome::Done(Err(Interrupted::Cancelled)),
    };
    let deltas = options.transport.sends_deltas() && lease.is_cached();
    let print = deltas.then(|| continuation::fingerprint(body));
    let continues = print.as_ref().zip(lease.continuation.as_ref()).and_then(|(p, c)| continuation::delta(p, c));
    tracing::debug!(reused = lease.reused, continues = continues.is_some(), "codex websocket request");
    let message = match continuation::create_message(body, continues) {
        Ok(message) => message,
        Err(e) => {
            cache::release(lease, true, None);
            return Outcome::Done(Err(ProviderError::Request(e.to_string()).into()));
        }
    };
    if let Err(e) = connect::send(&mut lease.socket, message, cancel).await {
        cache::release(lease, false, None);
        return match e {
            Interrupted::Failed(error) => unavailable(error),
            cancelled => Outcome::Done(Err(cancelled)),
        };
    }
    let mut replies = connect::Replies::new(&mut lease.socket, options.idle_timeout);
    let result = stream::consume(&mut replies, emitter, cancel).await;
    let (started, broke) = (replies.started, replies.broke);
    match result {
        Ok(stop) => {
            let reply = emitter.message();
            let next = print
                .zip(reply.response_id.clone())
                .map(|(print, id)| continuation::after(print, &format::reply_items(model, reply), id));
            cache::release(lease, true, next);
            Outcome::Done(Ok(stop))
        }
        Err(Interrupted::Failed(error)) if broke && !started => {
            cache::release(lease, false, None);
            unavailable(error)
        }
        Err(e) => {
            if broke {
                cache::record_failure(session);
            }
            cache::release(lease, false, None);
            Outcome::Done(Err(e))
        }
    }
}

/// The websocket address of an `http(s)://` endpoint.
pub(super) fn websocket_url(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        url.to_owned()
    }
}
