//! The provider clients against `rho-mock-llm` over loopback HTTP: streaming, thinking, tool
//! calls, usage and cost, failures and their classification, abort, and the requests they send.
// The shared scenarios are helper functions, not `#[test]`s, so clippy's test allowance does
// not reach them; a failed unwrap there is a failed test like any other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod common;
#[macro_use]
mod errors;

mod anthropic;
mod bedrock;
mod google;
mod openai_codex;
mod openai_codex_websocket;
mod openai_completions;
mod openai_responses;
mod pi_messages;
