//! TTSR, time-traveling stream rules: markdown rule files whose regex conditions are matched
//! against the assistant's output while it streams; when one matches, the session aborts the
//! stream, emits `ttsr_triggered`, injects the rule and continues, so the violating output is
//! never kept.
//!
//! How the session uses it:
//! - at start: [`load_ttsr_rules`] with the session's [`crate::config::ConfigPaths`] (report the
//!   diagnostics on stderr), then [`TtsrMatcher::new`] with `ttsr.*` settings and the cwd;
//!   [`TtsrMatcher::restore_injected`] with the names from a resumed session's
//!   `ttsr_injection` entries;
//! - on `turn_start` / `turn_end`: [`TtsrMatcher::turn_start`] / [`TtsrMatcher::turn_end`];
//! - on each `message_update`: [`TtsrMatcher::on_event`]. A [`TtsrMatch`] with `interrupt`
//!   means: abort now, emit `ttsr_triggered` with [`TtsrMatch::rpc_rules`], and after ~50 ms
//!   drop the partial message (`contextMode: discard`), append [`injection_message`] and
//!   continue. Without `interrupt`, append the injection after the message completes. Either
//!   way, call [`TtsrMatcher::mark_injected`] once the injection is appended (and persist the
//!   names).

mod args_stream;
mod compile;
mod discover;
mod inject;
mod matcher;
mod parse;
mod rule;
mod scope;

pub use compile::{Compiled, CompiledRule, compile_rule};
pub use discover::{RuleDiscovery, discover_rules, load_ttsr_rules, project_dirs};
pub use inject::{INJECTION_CUSTOM_TYPE, injection_message, injection_text, rule_injection};
pub use matcher::{MATCH_WINDOW, TtsrMatch, TtsrMatcher, interrupts};
pub use parse::{is_likely_file_glob, parse_rule, split_tokens};
pub use rule::{Rule, RuleLevel, RuleSource, interrupt_mode_name, parse_interrupt_mode};
pub use scope::StreamSource;
