//! The one HTTP client and the one server-sent-events decoder every provider uses.
//!
//! A request is sent with [`send`], which turns an error status into [`ProviderError::Http`]
//! (the provider's own message extracted from its JSON error body, `Retry-After` honoured).
//! The body is then read with [`SseStream`], which regroups it into lines ([`lines`]) and
//! decodes them as events ([`events`]), stops when the cancellation token fires (dropping the
//! connection), and fails when no byte arrives within the idle timeout.
//!
//! Some servers write an error into a stream without SSE framing: Gemini aborts a stream that
//! already started (a quota `RESOURCE_EXHAUSTED`, an overload) by writing its error JSON, often
//! pretty-printed over several lines, straight into the body; some OpenAI-compatible proxies do
//! the same. Such a payload is passed on as one `data:` event, so each provider reads it like
//! an in-stream error chunk instead of the decoder dropping it as unknown fields.

use std::pin::Pin;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;

mod events;
mod lines;

pub use events::Event;
use events::{DecodeError, Events};
use lines::Lines;

/// The process-wide HTTP client (connection pooling, rho's TLS), or why it could not be built.
/// Built on first use so start-up does not pay for it.
pub fn client() -> Result<&'static reqwest::Client, ProviderError> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| crate::http::client(|builder| builder.connect_timeout(Duration::from_secs(30))))
        .as_ref()
        .map_err(|e| ProviderError::Connection(e.clone()))
}

/// Why a stream stopped early.
#[derive(Debug)]
pub enum Interrupted {
    Cancelled,
    Failed(ProviderError),
}

impl From<ProviderError> for Interrupted {
    fn from(e: ProviderError) -> Self {
        Self::Failed(e)
    }
}

/// Sends `request`, racing the cancellation token. A non-success status is read fully and
/// classified.
pub async fn send(
    request: reqwest::RequestBuilder,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, Interrupted> {
    send_observed(request, cancel, None).await
}

/// [`send`], telling `observe` the response's status and headers before anything else.
pub async fn send_observed(
    request: reqwest::RequestBuilder,
    cancel: &CancellationToken,
    observe: Option<&crate::stream::ResponseHook>,
) -> Result<reqwest::Response, Interrupted> {
    send_described(request, cancel, observe, |_, body| error_message_from_body(body)).await
}

/// [`send_observed`] for an API whose error text is not all in the body: `describe` makes it
/// from the response headers and the (capped) body.
pub async fn send_described(
    request: reqwest::RequestBuilder,
    cancel: &CancellationToken,
    observe: Option<&crate::stream::ResponseHook>,
    describe: fn(&reqwest::header::HeaderMap, &str) -> String,
) -> Result<reqwest::Response, Interrupted> {
    let response = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(Interrupted::Cancelled),
        r = request.send() => r.map_err(|e| ProviderError::Connection(crate::redact::reqwest_error(&e)))?,
    };
    let status = response.status();
    if let Some(observe) = observe {
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
            .collect();
        observe(status.as_u16(), headers);
    }
    if status.is_success() && !answers_without_events(&response) {
        return Ok(response);
    }
    let retry_after = retry_after(response.headers());
    let content_type = header_text(&response, reqwest::header::CONTENT_TYPE);
    let headers = if status.is_success() { reqwest::header::HeaderMap::new() } else { response.headers().clone() };
    let body = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(Interrupted::Cancelled),
        b = read_capped(response) => b,
    };
    if status.is_success() {
        // A server that ignored `stream: true`, or a proxy's page: say what came instead.
        let mut excerpt: String = body.trim().chars().take(500).collect();
        if excerpt.is_empty() {
            excerpt = "(empty body)".into();
        }
        return Err(Interrupted::Failed(ProviderError::Decode(format!(
            "expected an event stream, got {content_type}: {excerpt}"
        ))));
    }
    let code = error_code(&body);
    Err(Interrupted::Failed(
        ProviderError::Http { status: status.as_u16(), message: describe(&headers, &body), retry_after, code }.capped(),
    ))
}

/// The provider's own code in an error body (Anthropic's `error.details.error_code`).
fn error_code(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    value.pointer("/error/details/error_code")?.as_str().map(str::to_owned)
}

/// An error body is read up to this size; the rest is never held in memory.
const MAX_ERROR_BODY: usize = 1024 * 1024;

/// The body as text, at most [`MAX_ERROR_BODY`] bytes of it.
async fn read_capped(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ERROR_BODY - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

fn header_text(response: &reqwest::Response, name: reqwest::header::HeaderName) -> String {
    response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("no content type").to_owned()
}

/// A successful answer that is plainly not an event stream (JSON or HTML) where one was asked
/// for. A missing or unusual content type is given the benefit of the doubt.
fn answers_without_events(response: &reqwest::Response) -> bool {
    let content_type = header_text(response, reqwest::header::CONTENT_TYPE).to_ascii_lowercase();
    content_type.starts_with("application/json") || content_type.starts_with("text/html")
}

/// The delay a server asked for: `retry-after-ms`, or `Retry-After` in seconds.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Some(Duration::from_millis(ms.max(0.0) as u64));
    }
    let secs = get("retry-after")?.parse::<f64>().ok()?;
    Some(Duration::from_millis((secs.max(0.0) * 1000.0) as u64))
}

/// The provider's own error text: `error.message` (or `message`, or `error` when a string) of a
/// JSON body, else the body itself, else `status code (no body)` (which the error's display
/// prefixes with the status).
pub fn error_message_from_body(body: &str) -> String {
    let trimmed = body.trim();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
        // Google wraps errors in an array on streaming endpoints.
        let value = value.as_array().and_then(|a| a.first()).unwrap_or(&value);
        let found = value
            .pointer("/error/message")
            .or_else(|| value.get("message"))
            .or_else(|| value.get("error").filter(|e| e.is_string()))
            .and_then(|m| m.as_str());
        if let Some(m) = found {
            return m.to_owned();
        }
    }
    if trimmed.is_empty() {
        // The reference's wording, which its context-overflow patterns expect for 400 and 413.
        return "status code (no body)".to_owned();
    }
    let mut text: String = trimmed.chars().take(2000).collect();
    if text.len() < trimmed.len() {
        text.push('…');
    }
    text
}

type EventResult = Result<Event, DecodeError<reqwest::Error>>;

/// A response body decoded as server-sent events.
pub struct SseStream {
    inner: Pin<Box<dyn Stream<Item = EventResult> + Send>>,
    idle: Duration,
    observer: Option<crate::stream::StreamEventHook>,
}

impl std::fmt::Debug for SseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseStream").field("idle", &self.idle).finish()
    }
}

impl SseStream {
    pub fn new(response: reqwest::Response, idle: Duration) -> Self {
        Self::from_bytes(response.bytes_stream(), idle)
    }

    /// Decodes SSE from any byte stream (used by the benchmarks and tests).
    pub fn from_bytes<S>(bytes: S, idle: Duration) -> Self
    where
        S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
    {
        Self { inner: Box::pin(Events::new(Lines::new(Box::pin(bytes)))), idle, observer: None }
    }

    /// Tells `observer` each event's data before it is handed on.
    pub fn observed(mut self, observer: Option<crate::stream::StreamEventHook>) -> Self {
        self.observer = observer;
        self
    }

    /// The next event; `Ok(None)` when the body ended.
    pub async fn next(&mut self, cancel: &CancellationToken) -> Result<Option<Event>, Interrupted> {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(Interrupted::Cancelled),
            r = tokio::time::timeout(self.idle, self.inner.next()) => r,
        };
        match next {
            Err(_) => Err(ProviderError::Idle(self.idle.as_millis() as u64).into()),
            Ok(None) => Ok(None),
            Ok(Some(Ok(event))) => {
                if let Some(observer) = &self.observer {
                    observer(&event.data);
                }
                Ok(Some(event))
            }
            Ok(Some(Err(DecodeError::Transport(e)))) => {
                Err(ProviderError::StreamEnded(format!(": {}", crate::redact::reqwest_error(&e))).into())
            }
            Ok(Some(Err(DecodeError::Utf8(e)))) => Err(ProviderError::Decode(format!("UTF8 error: {e}")).into()),
        }
    }
}

/// Parses an SSE data payload as JSON of type `T`.
pub fn parse_data<T: serde::de::DeserializeOwned>(event: &Event) -> Result<T, ProviderError> {
    parse_json(&event.data)
}

/// Parses one event's payload as JSON of type `T`; the error quotes the payload's start.
pub fn parse_json<T: serde::de::DeserializeOwned>(payload: &str) -> Result<T, ProviderError> {
    serde_json::from_str(payload).map_err(|e| {
        let mut data: String = payload.chars().take(200).collect();
        if data.len() < payload.len() {
            data.push('…');
        }
        ProviderError::Decode(format!("{e} in event data: {data}"))
    })
}

/// Where a provider's events come from, one payload at a time: an SSE event's data, or a
/// websocket's text message. `Ok(None)` when the source ended.
pub(crate) trait EventSource: Send {
    fn next_payload<'a>(
        &'a mut self,
        cancel: &'a CancellationToken,
    ) -> impl Future<Output = Result<Option<String>, Interrupted>> + Send + 'a;
}

impl EventSource for SseStream {
    async fn next_payload(&mut self, cancel: &CancellationToken) -> Result<Option<String>, Interrupted> {
        Ok(self.next(cancel).await?.map(|event| event.data))
    }
}

impl<T: EventSource> EventSource for &mut T {
    fn next_payload<'a>(
        &'a mut self,
        cancel: &'a CancellationToken,
    ) -> impl Future<Output = Result<Option<String>, Interrupted>> + Send + 'a {
        (**self).next_payload(cancel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One 16 MB `data:` line in 16 KB reads decodes in linear time (it took tens of seconds
    /// when the decoder reparsed its buffer on every read).
    #[tokio::test]
    async fn a_16_mb_line_in_many_reads_decodes() {
        let payload = "x".repeat(16 * 1024 * 1024);
        let body = format!("data: {payload}\n\n").into_bytes();
        let reads: Vec<Result<Bytes, reqwest::Error>> =
            body.chunks(16 * 1024).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
        let mut sse = SseStream::from_bytes(futures::stream::iter(reads), Duration::from_secs(60));
        let event = sse.next(&CancellationToken::new()).await.unwrap().unwrap();
        assert_eq!(event.data.len(), payload.len());
    }

    async fn decode(chunks: Vec<&'static [u8]>) -> Vec<(String, String)> {
        let source = futures::stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c))));
        let mut sse = SseStream::from_bytes(source, Duration::from_secs(5));
        let cancel = CancellationToken::new();
        let mut out = Vec::new();
        while let Some(event) = sse.next(&cancel).await.unwrap() {
            out.push((event.event, event.data));
        }
        out
    }

    /// Error JSON written into the body without framing (pretty-printed, as Gemini writes it when
    /// it aborts a stream) becomes one `data:` event, wherever the reads cut it; JSON without
    /// an `error` and text that never becomes JSON are dropped as before, and a field line ends
    /// a gathering that went nowhere.
    #[tokio::test]
    async fn error_json_without_framing_becomes_one_event() {
        let body: &'static [u8] = b"data: {\"n\":1}\r\n\r\n{\n  \"error\": {\n    \"code\": 429,\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n";
        let expected = vec![
            ("message".to_owned(), "{\"n\":1}".to_owned()),
            ("message".to_owned(), r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}"#.to_owned()),
        ];
        assert_eq!(decode(vec![body]).await, expected);
        for cut in 1..body.len() {
            assert_eq!(decode(vec![&body[..cut], &body[cut..]]).await, expected, "cut at {cut}");
        }
        // No newline at the very end, and Google's array wrapping.
        let wrapped = decode(vec![b"[{\"error\": {\"code\": 503}}]"]).await;
        assert_eq!(wrapped, [("message".to_owned(), r#"{"error":{"code":503}}"#.to_owned())]);
        let other = decode(vec![b"{\"note\": 1}\n{ not json\ndata: x\n\n{\"error\"\n"]).await;
        assert_eq!(other, [("message".to_owned(), "x".to_owned())]);
    }

    /// Many events in one read, events cut anywhere across reads, CRLF and multi-line data all
    /// decode the same.
    #[tokio::test]
    async fn decodes_whatever_the_reads_look_like() {
        let body: &'static [u8] = b"event: a\ndata: {\"n\":1}\n\n: comment\r\nevent: b\r\ndata: x\r\ndata: y\r\n\r\ndata: \xc3\xa9t\xc3\xa9\n\n";
        let expected = vec![
            ("a".to_owned(), "{\"n\":1}".to_owned()),
            ("b".to_owned(), "x\ny".to_owned()),
            ("message".to_owned(), "été".to_owned()),
        ];
        assert_eq!(decode(vec![body]).await, expected);
        for cut in 1..body.len() {
            assert_eq!(decode(vec![&body[..cut], &body[cut..]]).await, expected, "cut at {cut}");
        }
        let bytes: Vec<&'static [u8]> = body.chunks(1).collect();
        assert_eq!(decode(bytes).await, expected);
    }
}
