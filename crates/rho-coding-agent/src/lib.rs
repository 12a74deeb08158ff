//! rho, the application: the command line, settings, the system prompt, AgentSession (the one
//! API every mode uses), compaction, retry, and the print, JSON and RPC modes.
#![deny(clippy::print_stdout)]

pub mod agent_session;
pub mod budget;
pub mod checkpoints;
pub mod claude_hooks;
pub mod cli;
pub mod compaction;
pub mod config;
pub mod export_html;
pub mod export_jsonl;
pub mod extensions;
pub mod list_models;
pub mod login;
pub mod mcp_command;
pub mod modes;
pub mod packages;
pub mod permissions;
pub mod prompt;
mod share;
pub mod startup;
pub mod task;
pub mod telemetry;
pub mod todo;
pub mod tools;
pub mod ttsr;
pub mod ui;

pub use agent_session::{AgentSession, AgentSessionEvent, SessionOptions};
