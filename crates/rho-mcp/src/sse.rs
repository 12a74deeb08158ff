//! The older HTTP+SSE transport (MCP 2024-11-05, `type: "sse"`), which rmcp no longer ships:
//! a `GET` opens an event stream whose first `endpoint` event names the URL to `POST` messages
//! to; the server's messages arrive as `message` events on the stream.
//!
//! Built on rho's own HTTP client and the SSE decoder rho-ai's providers use, with no idle limit
//! (a server may say nothing for hours). The reader task ends with the stream; dropping the
//! transport stops it, which closes the `GET`.

use std::collections::BTreeMap;
use std::future::Future;

use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use rho_ai::sse::{Event, Interrupted, SseStream};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

/// A failed POST of a message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SseError(String);

pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: Url,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    _reader: AbortOnDropHandle<()>,
}

impl SseTransport {
    /// Opens the stream and waits for its `endpoint` event.
    pub(crate) async fn connect(url: &str, headers: &BTreeMap<String, String>) -> Result<Self, String> {
        // Shown without the credentials it may carry (an expanded `${TOKEN}`).
        let shown = rho_ai::redact::url(url);
        let base = Url::parse(url).map_err(|e| format!("invalid url \"{shown}\": {e}"))?;
        let headers = crate::connect::headers(headers)?.into_iter().collect();
        let client = rho_ai::http::client(|builder| builder.default_headers(headers))?;
        let response = client
            .get(base.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| format!("GET {shown} failed: {}", rho_ai::redact::reqwest_error(&e)))?;
        if !response.status().is_success() {
            return Err(format!("GET {shown} answered {}", response.status()));
        }
        let mut events = SseStream::new(response, Duration::MAX);
        let endpoint = loop {
            match next(&mut events).await {
                Some(Ok(event)) if event.event == "endpoint" => {
                    break base.join(event.data.trim()).map_err(|e| format!("bad endpoint \"{}\": {e}", event.data))?;
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(format!("the event stream of {shown} failed: {e}")),
                None => return Err(format!("the event stream of {shown} ended before naming its endpoint")),
            }
        };
        let (tx, incoming) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            while let Some(event) = next(&mut events).await {
                let Ok(event) = event else { break };
                if !(event.event.is_empty() || event.event == "message") {
                    continue;
                }
                match serde_json::from_str(&event.data) {
                    Ok(message) => {
                        if tx.send(message).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => tracing::warn!("MCP sse: skipping a message that is not JSON-RPC: {e}"),
                }
            }
        });
        Ok(Self { client, endpoint, incoming, _reader: AbortOnDropHandle::new(reader) })
    }
}

/// The stream's next event, `None` when it ended, or why it failed. Nothing cancels it: dropping
/// the transport does.
async fn next(events: &mut SseStream) -> Option<Result<Event, String>> {
    match events.next(&CancellationToken::new()).await {
        Ok(event) => event.map(Ok),
        Err(Interrupted::Failed(e)) => Some(Err(e.to_string())),
        Err(Interrupted::Cancelled) => None,
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = self.endpoint.clone();
        async move {
            let body = serde_json::to_vec(&item).map_err(|e| SseError(e.to_string()))?;
            let response = client
                .post(endpoint.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| SseError(format!("POST {endpoint} failed: {e}")))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseError(format!("POST {endpoint} answered {}", response.status())))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), SseError> {
        self.incoming.close();
        Ok(())
    }
}
