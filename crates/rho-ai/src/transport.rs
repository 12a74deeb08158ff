//! How a request reaches a provider that can be reached two ways (today ChatGPT's Codex
//! backend): the event stream over HTTP, or a websocket kept open for the session. The user's
//! `transport` setting, with the reference's four values.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Transport {
    /// Server-sent events over an HTTP POST per request (rho-ai's default when no one says).
    #[default]
    #[serde(rename = "sse")]
    Sse,
    /// A websocket per session, each request sent whole; the event stream when it fails.
    #[serde(rename = "websocket")]
    WebSocket,
    /// A websocket per session, a request that continues the previous one sending only what is
    /// new with the previous response's id; the event stream when it fails.
    #[serde(rename = "websocket-cached")]
    WebSocketCached,
    /// What the reference does when nothing is set: `websocket-cached`.
    #[serde(rename = "auto")]
    Auto,
}

impl Transport {
    /// Whether a websocket is tried first.
    pub fn tries_websocket(self) -> bool {
        self != Transport::Sse
    }

    /// Whether a request that continues the previous one on the same connection sends only its
    /// new input.
    pub fn sends_deltas(self) -> bool {
        matches!(self, Transport::WebSocketCached | Transport::Auto)
    }
}
