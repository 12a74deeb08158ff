//! The exporters' HTTP client: rho's own reqwest client (its rustls set-up, so no second HTTP or
//! TLS stack comes in), each request run as a task on rho's tokio runtime. The SDK exports from
//! threads of its own, which are not the runtime's; they only wait for the task. A collector
//! that cannot be reached is said once on the log when it starts failing, and once when it
//! answers again, never on every export.

use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

#[derive(Debug)]
pub(crate) struct RuntimeClient {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
    /// The last export failed (reported already).
    failing: AtomicBool,
}

impl RuntimeClient {
    pub(crate) fn new(client: reqwest::Client, runtime: tokio::runtime::Handle) -> Self {
        Self { client, runtime, failing: AtomicBool::new(false) }
    }

    fn report(&self, uri: &str, outcome: Result<u16, &str>) {
        match outcome {
            Ok(status) if (200..300).contains(&status) => {
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::warn!("telemetry: the collector at {uri} takes exports again");
                }
            }
            Ok(status) => {
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!("telemetry: the collector at {uri} answered an export with HTTP {status}");
                }
            }
            Err(e) => {
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!("telemetry: cannot export to {uri}: {e}");
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for RuntimeClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let uri = request.uri().to_string();
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move { client.send_bytes(request).await });
        let response = match sent.await {
            Ok(response) => response,
            // The runtime is shutting down: the export is dropped.
            Err(e) => Err(Box::new(e) as HttpError),
        };
        match &response {
            Ok(response) => self.report(&uri, Ok(response.status().as_u16())),
            Err(e) => self.report(&uri, Err(&error_chain(e.as_ref()))),
        }
        response
    }
}

/// An error with its causes (reqwest's own says only "error sending request").
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
