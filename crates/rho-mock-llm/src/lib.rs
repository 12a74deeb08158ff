//! A scripted model server for rho's tests and benchmarks.
//!
//! It speaks the real streaming wire formats of the provider APIs rho supports, at their real
//! paths, over HTTP on loopback: Anthropic Messages (`/v1/messages`), OpenAI Chat Completions
//! (`/v1/chat/completions`), OpenAI Responses (`/v1/responses`, also as Azure's and ChatGPT's
//! Codex paths), Gemini (`/v1beta/models/{model}:streamGenerateContent?alt=sse`, also at Vertex
//! AI's paths) and Amazon Bedrock (`/model/{model}/converse-stream`, AWS's binary event stream). Every request takes the next
//! matching turn of one shared [`Script`] and gets it rendered in the format of the path it hit:
//! a reply (thinking, text, tool calls, usage, stop reason), or a fault (an HTTP error, an
//! in-stream error, a dropped connection, a malformed event, a stall, a flood). Every request is
//! recorded for assertions.
//!
//! ChatGPT's Codex path also takes a websocket, as the Codex backend does: each
//! `response.create` message is a request, answered with the Responses events one message each
//! (see `websocket`).
//!
//! It also plays the token endpoints of the subscription logins (see `oauth`), so login and
//! token refresh can be tested the same way.
//!
//! It stands alone on purpose: it shares no code with rho's provider clients, so a test that
//! passes against it checks those clients against the wire formats, not against themselves.

#![deny(clippy::print_stdout)]

mod api;
mod handler;
mod oauth;
mod plan;
mod pump;
mod queue;
mod record;
mod reply;
mod script;
mod server;
mod threads;
mod websocket;
mod wire;

pub use api::Api;
pub use handler::EXHAUSTED;
pub use oauth::{
    CONTAINER_ACCESS_KEY_ID, CONTAINER_SESSION_TOKEN, IssuedTokens, OAuthGrants, WEB_IDENTITY_ACCESS_KEY_ID,
    WEB_IDENTITY_SESSION_TOKEN,
};
pub use record::RecordedRequest;
pub use script::{
    DEFAULT_CHUNK_SIZE, DEFAULT_THINKING_SIGNATURE, Flood, HttpError, Malformed, Match, Script, StopReason,
    StreamError, ToolCall, Turn, Usage,
};
pub use server::{MockOptions, MockServer};
pub use websocket::METHOD as WEBSOCKET_METHOD;
