//! The agent loop end to end: a real [`rho_agent::Agent`] with rho's real built-in tools working
//! in a temporary directory, talking HTTP to a real `rho-mock-llm` server on loopback. Covers the
//! event sequence of a run, parallel tool calls and their reporting order, writes to one file,
//! steering in both interrupt modes, follow-ups in both queue modes, and abort while streaming
//! and while a command runs.
// The shared helpers are plain functions, not `#[test]`s, so clippy's test allowance does not
// reach them; a failed unwrap there is a failed test like any other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod abort;
mod edges;
mod events;
mod follow_up;
mod parallel;
mod steering;
