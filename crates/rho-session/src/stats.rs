//! `get_session_stats`: message counts, token and cost totals over the current context messages
//! (after compaction only the kept part), serialized with the protocol's key order.
//!
//! Tokens and cost come from assistant messages plus the `details.usage` that the `task` tool
//! reports for its sub-agents.

use std::path::Path;

use rho_agent::AgentMessage;
use rho_ai::types::Usage;
use serde::{Deserialize, Serialize};

/// Token totals; `total` is the sum of the four buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenStats {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total: u64,
}

/// The `get_session_stats` payload.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    /// Absent for an in-memory session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    pub user_messages: u64,
    pub assistant_messages: u64,
    /// Tool-call blocks in assistant messages.
    pub tool_calls: u64,
    pub tool_results: u64,
    /// Messages of every role.
    pub total_messages: u64,
    pub tokens: TokenStats,
    /// USD.
    pub cost: f64,
    #[serde(default)]
    pub premium_requests: f64,
}

impl SessionStats {
    /// Computes the stats of `messages` for the session `session_id` stored at `session_file`.
    pub fn compute(messages: &[AgentMessage], session_file: Option<&Path>, session_id: &str) -> Self {
        let mut stats = Self {
            session_file: session_file.map(|p| p.to_string_lossy().into_owned()),
            session_id: session_id.to_owned(),
            total_messages: messages.len() as u64,
            ..Self::default()
        };
        let mut usage = Usage::default();
        let mut premium = 0.0;
        let mut add = |u: &Usage| {
            usage.add(u);
            premium += u.premium_requests.unwrap_or_default();
        };
        for message in messages {
            match message {
                AgentMessage::User(_) => stats.user_messages += 1,
                AgentMessage::Assistant(a) => {
                    stats.assistant_messages += 1;
                    stats.tool_calls += a.tool_calls().count() as u64;
                    add(&a.usage);
                }
                AgentMessage::ToolResult(t) => {
                    stats.tool_results += 1;
                    if t.tool_name == "task" {
                        let task_usage =
                            t.details.as_ref().and_then(|d| d.get("usage")).and_then(|u| Usage::deserialize(u).ok());
                        if let Some(u) = task_usage {
                            add(&u);
                        }
                    }
                }
                _ => {}
            }
        }
        stats.tokens = TokenStats {
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            total: usage.input + usage.output + usage.cache_read + usage.cache_write,
        };
        stats.cost = usage.cost.total;
        stats.premium_requests = premium;
        stats
    }
}
