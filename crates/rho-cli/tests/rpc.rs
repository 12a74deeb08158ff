//! The `rho` binary driven the way hosts drive it: RPC mode over stdio (every command, event,
//! sub-protocol and fault), print mode, logins, the sandbox, permission rules and project trust,
//! each against rho-mock-llm on 127.0.0.1. One test binary, one module per area.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod anthropic_threads;
mod background_jobs;
mod behind_a_proxy;
mod cache_warming;
mod claude_hooks;
mod compaction_summary;
mod export_html;
mod logins;
mod model_input_fields;
mod permissions;
mod pi16_cli;
mod pi_user;
mod print_mode;
mod process_lifetime;
mod project_trust;
mod prompt_system;
mod rewind;
mod rpc_abort_race;
mod rpc_client;
mod rpc_dispatch_fuzz;
mod rpc_durability;
mod rpc_errors;
mod rpc_forks;
mod rpc_frame_bound;
mod rpc_hardening;
mod rpc_host_defects;
mod rpc_host_uris;
mod rpc_mcp;
mod rpc_models;
mod rpc_omp;
mod rpc_pi16;
mod rpc_pi16_sessions;
mod rpc_prompts;
mod rpc_retry_compaction;
mod rpc_run_control;
mod rpc_seed_flows;
mod rpc_sessions;
mod rpc_subprotocols;
mod rpc_task;
mod rpc_tool_search;
mod rpc_transcript;
mod sandbox;
mod sandbox_escapes;
mod telemetry;
mod web_fetch;
mod web_search;
