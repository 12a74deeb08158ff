//! rho, the application: the command line, settings, the system prompt, AgentSession (the one
//! API every mode uses), compaction, retry, and the print, JSON and RPC modes.
#![deny(clippy::print_stdout)]

pub mod compaction;
pub mod config;
pub mod export_html;
pub mod prompt;
pub mod todo;
pub mod ttsr;
