//! rho's model layer: the provider-neutral conversation types, the model catalog, and streaming
//! clients for the Anthropic Messages, OpenAI Chat Completions, OpenAI Responses and Google
//! Generative AI APIs, all over one HTTP client and one SSE decoder.
#![deny(clippy::print_stdout)]

pub mod error;
pub mod event;
pub mod json;
pub mod model;
pub mod partial_json;
mod providers;
pub mod sse;
pub mod stream;
pub mod transform;
pub mod types;

pub use error::{ErrorKind, ProviderError};
pub use event::{
    AssistantMessageEvent, EventWithPartial, PartialMessage, WireAssistantMessageEvent,
};
pub use model::{InputKind, Model, ThinkingLevel};
pub use stream::{
    AssistantMessageStream, StreamOptions, ThinkingBudgets, ToolChoice, complete, stream,
};
pub use types::*;
