//! OpenTelemetry for rho: a session's prompts, model requests and tool calls as OTLP traces and
//! metrics, sent over HTTP to the collector the standard `OTEL_*` variables (or rho's
//! `telemetry.*` settings) name. Off unless configured: then [`start`] builds nothing, no
//! exporting thread runs and no session observes its events ([`SessionObserver::new`] is
//! `None`).
#![deny(clippy::print_stdout)]

mod attributes;
mod config;
mod http;
mod instruments;
mod observer;
mod pipeline;

pub use config::{Config, Export, FileSettings, Protocol, Temporality};
pub use observer::SessionObserver;
pub use pipeline::{StartError, enabled, shutdown, start};
