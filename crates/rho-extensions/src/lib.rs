//! pi's extensions in rho. Extensions are TypeScript modules written against pi's API; rho runs
//! them in a Node.js process of their own, the extension host (`host/`, loaded with pi's own
//! loader and runner from pi's published package), started only when some extension is
//! configured. This crate is rho's half of that: finding the extensions ([`discover`]), getting
//! the host onto the machine ([`install`]), the process and its channel ([`host`]), the messages
//! on it ([`protocol`], described as one JSON Schema by [`schema`]), and the extensions' tools as
//! rho tools ([`tool`]). What the session does with the host (hooks, actions, dialogs) is
//! rho-coding-agent's.
#![deny(clippy::print_stdout)]

pub mod discover;
pub mod host;
pub mod install;
pub mod protocol;
mod registrations;
pub mod schema;
pub mod tool;

pub use host::{Answer, ExtensionHost, HostCommand, HostError, HostOutput, Incoming, UpdateSink};
pub use install::{InstallError, PI_VERSION, Runtime};
pub use protocol::{
    Action, ComponentFrame, ComponentKind, ExtensionFault, FlagValue, McpServerRegistration, Registrations,
    RenderRequest, RouteRequest, SessionSync, TerminalSize, ToHost, VirtualModelDefinition,
};
pub use tool::{ExtensionTool, ToolHost};
