//! The pi-family RPC protocol as Rust types: commands in, responses, events and sub-protocol
//! frames out, serialized exactly as the protocol writes them. rho's server and every Rust host
//! use these same types, and a checked-in JSON Schema generated from them fails a test when
//! they drift. Behind the `client` feature: an async client for `rho --mode rpc`.
#![deny(clippy::print_stdout)]

#[cfg(feature = "client")]
pub mod client;
pub mod command;
pub mod event;
pub mod frames;
pub mod response;
pub mod schema;
pub mod types;

pub use command::{
    HostToolResult, HostToolUpdate, HostUriResult, Inbound, RewindRestore, RpcCommand, StreamingBehavior, UiResponse,
    parse_line, parse_value,
};
pub use event::{AgentFrameEvent, CompactionReason, Event, SessionEvent};
pub use frames::{
    ExtensionError, HostToolCall, HostToolCancel, HostUriCancel, HostUriOperation, HostUriRequest, NotifyType,
    OutFrame, Ready, RpcChunk, RpcHostToolDefinition, UiMethod, UiRequest, WidgetPlacement,
};
pub use response::*;
pub use types::*;
