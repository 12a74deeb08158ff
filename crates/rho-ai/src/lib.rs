//! rho's model layer: the provider-neutral conversation types, the model catalog, and streaming
//! clients for the Anthropic Messages, OpenAI Chat Completions, OpenAI Responses and Google
//! Generative AI APIs, all over one HTTP client and one SSE decoder.
#![deny(clippy::print_stdout)]

pub mod auth;
pub mod catalog;
mod cloudflare;
mod config_error;
pub mod error;
pub mod event;
pub mod http;
pub mod models_json;
pub mod oauth;
pub mod partial_json;
mod providers;
pub mod redact;
pub mod registry;
pub mod resolve;
pub mod sse;
pub mod stream;
pub mod transform;
pub mod transport;

// The shared types live in rho-types and are named from there everywhere else; these paths
// are rho-ai's own.
use rho_types::{model, types};

pub use auth::{ApiKeys, EnvLookup, env_var_for};
pub use config_error::ConfigError;
pub use error::{ErrorKind, ProviderError};
pub use event::{AssistantMessageEvent, EventWithPartial, PartialMessage, WireAssistantMessageEvent};
pub use registry::ModelRegistry;
pub use resolve::{ResolveError, ResolvedModel, Scope, ScopedModel, filter_models, resolve_model, resolve_scope};
pub use stream::{
    AssistantMessageStream, CacheRetention, CustomProvider, Emitter, HeadersHook, PayloadHook, RequestHooks,
    ResponseHook, StreamEventHook, StreamOptions, ThinkingBudgets, ToolChoice, complete, stream, stream_sse,
};
pub use transport::Transport;
