//! One request: record it, route it by path, pick its turn, and answer in the format of the
//! path that was hit (a stream, an HTTP error, or Gemini's whole JSON).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use crate::api::{self, Api, Route};
use crate::plan::{Framing, PlanBuilder};
use crate::pump::{Pacing, body_stream};
use crate::record::RecordedRequest;
use crate::reply::{Exchange, Reply};
use crate::script::{HttpError, Turn};
use crate::server::Shared;
use crate::wire;

/// Request bodies above this are refused (far above any real conversation).
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// The message of the error sent when no turn is left for a request.
pub const EXHAUSTED: &str = "mock-llm: script exhausted";

/// Radius's artifact upload (`/share`): a signed-in `POST` gets an artifact address back.
const ARTIFACTS_PATH: &str = "/v1/artifacts";

pub(crate) async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    if crate::websocket::is_upgrade(&parts.headers) {
        return crate::websocket::upgrade(shared, parts).await;
    }
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(e) => return plain_error(StatusCode::BAD_REQUEST, &format!("mock-llm: {e}")),
    };
    if crate::oauth::is_sts_path(parts.uri.path()) {
        let record =
            RecordedRequest::new(parts.method.as_str(), &parts.uri, &parts.headers, &body, crate::oauth::API_LABEL);
        shared.recorder.push(record);
        shared.requests_seen.fetch_add(1, Ordering::SeqCst);
        let (status, xml) = crate::oauth::sts_answer(&body);
        let mut response = Response::new(Body::from(xml));
        *response.status_mut() = status;
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/xml"));
        return response;
    }
    if crate::oauth::is_token_path(parts.uri.path()) {
        let record =
            RecordedRequest::new(parts.method.as_str(), &parts.uri, &parts.headers, &body, crate::oauth::API_LABEL);
        shared.recorder.push(record);
        shared.requests_seen.fetch_add(1, Ordering::SeqCst);
        let (status, answer) = {
            let mut grants = shared.oauth.lock();
            crate::oauth::answer(&mut grants, &parts.method, parts.uri.path(), &parts.headers, &body)
        };
        return json_response(status, answer.to_string());
    }
    if parts.uri.path() == ARTIFACTS_PATH {
        let record = RecordedRequest::new(parts.method.as_str(), &parts.uri, &parts.headers, &body, "radius");
        shared.recorder.push(record);
        let seq = shared.requests_seen.fetch_add(1, Ordering::SeqCst) + 1;
        let signed_in = parts.headers.get(header::AUTHORIZATION).is_some_and(|v| v.as_bytes().starts_with(b"Bearer "));
        return match (parts.method == Method::POST, signed_in) {
            (true, true) => json_response(
                StatusCode::CREATED,
                serde_json::json!({"artifact": {"canonical_url": format!("https://radius.example/artifacts/{seq}")}})
                    .to_string(),
            ),
            _ => json_response(StatusCode::UNAUTHORIZED, r#"{"error":"not signed in"}"#.to_owned()),
        };
    }
    let route = api::route(parts.uri.path());
    let api_name = route.as_ref().map_or("unknown", |r| r.api.as_str());
    let record = RecordedRequest::new(parts.method.as_str(), &parts.uri, &parts.headers, &body, api_name);
    let body_json = record.body.clone();
    shared.recorder.push(record);
    let seq = shared.requests_seen.fetch_add(1, Ordering::SeqCst) + 1;
    tracing::debug!("mock-llm: #{seq} {} {}", parts.method, parts.uri);

    let Some(route) = route else {
        let message = format!("mock-llm: no route for {} {}", parts.method, parts.uri.path());
        return plain_error(StatusCode::NOT_FOUND, &message);
    };
    if parts.method != Method::POST {
        let message = format!("mock-llm: {} {} takes POST", parts.method, parts.uri.path());
        return plain_error(StatusCode::METHOD_NOT_ALLOWED, &message);
    }
    if route.api == Api::AnthropicMessages
        && let Err((status, error)) = shared.threads.lock().admit(&body_json, seq)
    {
        return json_response(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), error.to_string());
    }
    let turn = {
        let text = String::from_utf8_lossy(&body);
        let mut queue = shared.queue.lock();
        let turn = queue.take(route.api.as_str(), &text);
        (turn, queue.len())
    };
    let turn = match turn {
        (Some(turn), _) => turn,
        (None, left) => {
            let detail = if left == 0 {
                "no turns left".to_owned()
            } else {
                format!("none of the {left} remaining turns matches this request")
            };
            eprintln!("{EXHAUSTED}: {} {} #{seq} ({detail})", parts.method, parts.uri);
            let error = HttpError {
                status: 500,
                message: Some(format!("{EXHAUSTED} ({detail})")),
                body: None,
                retry_after: None,
                retry_after_ms: None,
            };
            return error_response(route.api, &error);
        }
    };
    if let Some(ms) = turn.delay_ms
        && !stall(&shared, Duration::from_millis(ms)).await
    {
        return plain_error(StatusCode::SERVICE_UNAVAILABLE, "mock-llm: server shut down");
    }
    if let Some(error) = &turn.error {
        return error_response(route.api, error);
    }
    let exchange = Exchange::new(seq, &route, &body_json);
    let reply = Reply::new(&turn, route.api, || shared.ids_made.fetch_add(1, Ordering::SeqCst) + 1);
    if route.whole {
        return whole_response(&shared, &turn, &route, &reply, &exchange);
    }
    let plan = wire::render_stream(&reply, &exchange);
    let pacing = Pacing {
        chunk_delay: turn.chunk_delay_ms.map(Duration::from_millis),
        disconnect_after: turn.disconnect_after,
        malformed_after: turn.malformed.and_then(|m| m.after()),
    };
    let stream = body_stream(plan, pacing, shared.shutdown.clone());
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(wire::stream_content_type(route.api)));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(id) = HeaderValue::from_str(&format!("req_mock_{seq}")) {
        let name = match route.api {
            Api::AnthropicMessages => "request-id",
            Api::BedrockConverseStream => "x-amzn-requestid",
            _ => "x-request-id",
        };
        headers.insert(name, id);
    }
    response
}

/// Gemini `generateContent`: the reply as one JSON object. The stream faults have whole-body
/// counterparts: `streamError` is an HTTP error, `malformed` a body cut mid-JSON, and
/// `disconnectAfter` a connection dropped halfway through the body.
fn whole_response(shared: &Shared, turn: &Turn, route: &Route, reply: &Reply<'_>, exchange: &Exchange) -> Response {
    if let Some(error) = &turn.stream_error {
        let status = wire::google_stream_error_status(&error.kind);
        let http = HttpError {
            status,
            message: Some(error.message.clone()),
            body: None,
            retry_after: None,
            retry_after_ms: None,
        };
        return error_response(route.api, &http);
    }
    let text = wire::render_whole_google(reply, exchange).to_string();
    let body = if turn.malformed.and_then(|m| m.after()).is_some() {
        Body::from(text.get(..text.len() / 2).unwrap_or_default().to_owned())
    } else if turn.disconnect_after.is_some() {
        let mut plan = PlanBuilder::new(Framing::Lf);
        let half = text.len() / 2;
        plan.raw(None, text.get(..half).unwrap_or_default());
        let plan = plan.finish(Bytes::new());
        let pacing = Pacing { disconnect_after: Some(1), ..Pacing::default() };
        Body::from_stream(body_stream(plan, pacing, shared.shutdown.clone()))
    } else {
        Body::from(text)
    };
    let mut response = Response::new(body);
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=UTF-8"));
    response
}

/// Sleeps `delay`; false when the server shut down first.
pub(crate) async fn stall(shared: &Shared, delay: Duration) -> bool {
    let mut shutdown = shared.shutdown.clone();
    tokio::select! {
        () = tokio::time::sleep(delay) => true,
        _ = shutdown.wait_for(|down| *down) => false,
    }
}

/// An HTTP error in `api`'s own error JSON (or the scripted body), with the retry headers.
fn error_response(api: Api, error: &HttpError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or_else(|_| {
        tracing::warn!("mock-llm: status {} is not valid; sending 500", error.status);
        StatusCode::INTERNAL_SERVER_ERROR
    });
    let message = error.message.clone().unwrap_or_else(|| wire::default_message(error.status));
    let body = match &error.body {
        Some(Value::String(raw)) => raw.clone(),
        Some(other) => other.to_string(),
        None => wire::error_body(api, error.status, &message).to_string(),
    };
    let mut response = json_response(status, body);
    let headers = response.headers_mut();
    if let Some(secs) = error.retry_after
        && let Ok(v) = HeaderValue::from_str(&format_seconds(secs))
    {
        headers.insert(header::RETRY_AFTER, v);
    }
    if let Some(ms) = error.retry_after_ms {
        headers.insert("retry-after-ms", HeaderValue::from(ms));
    }
    for (name, value) in wire::error_headers(api, error.status) {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    response
}

/// Seconds as header text: an integer when whole.
fn format_seconds(secs: f64) -> String {
    if secs.fract() == 0.0 && secs.abs() < 1e15 { format!("{}", secs as i64) } else { format!("{secs}") }
}

/// An error of the server itself (no route, wrong method), not of a provider.
pub(crate) fn plain_error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"type": "mock_llm_error", "message": message}});
    json_response(status, body.to_string())
}

fn json_response(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_integers_when_whole() {
        assert_eq!(format_seconds(2.0), "2");
        assert_eq!(format_seconds(0.5), "0.5");
    }
}
