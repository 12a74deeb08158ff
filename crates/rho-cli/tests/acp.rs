//! ACP mode (`rho --mode acp`) driven by the official Agent Client Protocol SDK as an editor
//! would: sessions, prompts, tool calls, permissions, terminals, MCP servers. One test binary, one
//! module per area.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp_client;
mod common;

mod acp_mcp;
mod acp_mode;
mod acp_rewind;
mod acp_sdk;
