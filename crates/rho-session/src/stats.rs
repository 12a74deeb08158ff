//! `get_session_stats`: message counts, token and cost totals over the current context messages
//! (after compaction only the kept part), serialized with the protocol's key order.
//!
//! Tokens and cost come from assistant messages plus the `details.usage` that the `task` tool
//! reports for its sub-agents.

use std::path::Path;

use rho_types::AgentMessage;
use rho_types::types::{ContextUsage, Usage};
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
    /// omp's: the reasoning tokens among `output` that providers reported (0 when none did).
    pub reasoning: u64,
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
    /// How full the model's context window is (absent when the model has no window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
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
        for message in messages {
            match message {
                AgentMessage::User(_) => stats.user_messages += 1,
                AgentMessage::Assistant(a) => {
                    stats.assistant_messages += 1;
                    stats.tool_calls += a.tool_calls().count() as u64;
                }
                AgentMessage::ToolResult(_) => stats.tool_results += 1,
                _ => {}
            }
        }
        let totals = UsageTotals::of(messages);
        stats.tokens = totals.tokens;
        stats.cost = totals.cost;
        stats.premium_requests = totals.premium_requests;
        stats
    }
}

/// Token, cost and premium-request totals of some messages.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UsageTotals {
    pub tokens: TokenStats,
    /// USD.
    pub cost: f64,
    pub premium_requests: f64,
}

impl TokenStats {
    fn add(&mut self, u: &Usage) {
        self.input += u.input;
        self.output += u.output;
        self.cache_read += u.cache_read;
        self.cache_write += u.cache_write;
        self.total += u.input + u.output + u.cache_read + u.cache_write;
        self.reasoning += u.reasoning.unwrap_or(0);
    }
}

impl SessionStats {
    /// Adds usage that is not a message's (pi 1.6's `usage` entries: cache warming, …).
    pub fn add_usage(&mut self, u: &Usage) {
        self.tokens.add(u);
        self.cost += u.cost.total;
        self.premium_requests += u.premium_requests.unwrap_or_default();
    }
}

impl UsageTotals {
    /// Adds usage that is not a message's (pi 1.6's `usage` entries: cache warming, …).
    pub fn add_usage(&mut self, u: &Usage) {
        self.tokens.add(u);
        self.cost += u.cost.total;
        self.premium_requests += u.premium_requests.unwrap_or_default();
    }

    /// The totals of `messages`: assistant messages' usage and what `task` calls report for
    /// their sub-agents.
    pub fn of<'a>(messages: impl IntoIterator<Item = &'a AgentMessage>) -> Self {
        let mut usage = Usage::default();
        let mut premium = 0.0;
        let mut add = |u: &Usage| {
            usage.add(u);
            premium += u.premium_requests.unwrap_or_default();
        };
        for message in messages {
            match message {
                AgentMessage::Assistant(a) => add(&a.usage),
                AgentMessage::ToolResult(t) if t.tool_name == "task" => {
                    let task_usage =
                        t.details.as_ref().and_then(|d| d.get("usage")).and_then(|u| Usage::deserialize(u).ok());
                    if let Some(u) = task_usage {
                        add(&u);
                    }
                }
                _ => {}
            }
        }
        Self {
            tokens: TokenStats {
                input: usage.input,
                output: usage.output,
                cache_read: usage.cache_read,
                cache_write: usage.cache_write,
                total: usage.input + usage.output + usage.cache_read + usage.cache_write,
                reasoning: usage.reasoning.unwrap_or(0),
            },
            cost: usage.cost.total,
            premium_requests: premium,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_types::types::{
        AssistantContent, AssistantMessage, Cost, TextContent, ToolCall, ToolResultMessage, UserContent, UserMessage,
        UserMessageContent,
    };
    use rho_types::{BashExecutionMessage, CompactionSummaryMessage};
    use serde_json::{Map, json};

    fn user() -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: UserMessageContent::Text("q".into()),
            synthetic: None,
            attribution: None,
            timestamp: 1,
        })
    }

    fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64, cost: f64) -> Usage {
        Usage {
            input,
            output,
            cache_read,
            cache_write,
            total_tokens: input + output + cache_read + cache_write,
            cost: Cost { total: cost, ..Cost::default() },
            ..Usage::default()
        }
    }

    fn assistant(calls: usize, usage: Usage) -> AgentMessage {
        let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "m");
        a.content.push(AssistantContent::Text(TextContent::new("a")));
        for i in 0..calls {
            a.content.push(AssistantContent::ToolCall(ToolCall {
                id: format!("c{i}"),
                name: "read".into(),
                arguments: Map::new(),
                thought_signature: None,
                intent: None,
            }));
        }
        a.usage = usage;
        AgentMessage::Assistant(a)
    }

    fn tool_result(tool: &str, details: Option<serde_json::Value>) -> AgentMessage {
        AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: "c0".into(),
            tool_name: tool.into(),
            content: vec![UserContent::text("r")],
            details,
            is_error: false,
            is_warning: None,
            timestamp: 2,
        })
    }

    #[test]
    fn counts_roles_tool_calls_tokens_and_cost() {
        let messages = vec![
            AgentMessage::CompactionSummary(CompactionSummaryMessage {
                summary: "s".into(),
                short_summary: None,
                tokens_before: 9,
                timestamp: 0,
            }),
            user(),
            assistant(2, usage(100, 10, 50, 5, 0.25)),
            tool_result("read", None),
            tool_result("read", None),
            assistant(0, usage(200, 20, 0, 0, 0.5)),
            AgentMessage::BashExecution(BashExecutionMessage {
                command: "ls".into(),
                output: String::new(),
                exit_code: Some(0),
                cancelled: false,
                truncated: false,
                full_output_path: None,
                timestamp: 3,
                exclude_from_context: None,
            }),
        ];
        let stats = SessionStats::compute(&messages, Some(Path::new("/s/x.jsonl")), "sid");
        assert_eq!(stats.session_file.as_deref(), Some("/s/x.jsonl"));
        assert_eq!(stats.session_id, "sid");
        assert_eq!(
            (stats.user_messages, stats.assistant_messages, stats.tool_calls, stats.tool_results, stats.total_messages),
            (1, 2, 2, 2, 7)
        );
        assert_eq!(
            stats.tokens,
            TokenStats { input: 300, output: 30, cache_read: 50, cache_write: 5, total: 385, reasoning: 0 }
        );
        assert!((stats.cost - 0.75).abs() < 1e-12);
    }

    #[test]
    fn a_task_result_adds_its_sub_agents_usage() {
        let mut sub = usage(1000, 100, 0, 0, 1.5);
        sub.premium_requests = Some(2.0);
        let details = json!({"usage": serde_json::to_value(sub).unwrap()});
        let messages = vec![
            assistant(1, usage(10, 1, 0, 0, 0.01)),
            tool_result("task", Some(details.clone())),
            // Another tool's `details.usage` is not sub-agent spend.
            tool_result("read", Some(details)),
            tool_result("task", Some(json!({"usage": "not a usage"}))),
        ];
        let stats = SessionStats::compute(&messages, None, "sid");
        assert_eq!((stats.tokens.input, stats.tokens.output, stats.tokens.total), (1010, 101, 1111));
        assert!((stats.cost - 1.51).abs() < 1e-12);
        assert!((stats.premium_requests - 2.0).abs() < f64::EPSILON);
        assert_eq!(stats.tool_results, 3);
    }

    #[test]
    fn serializes_with_the_protocols_keys() {
        let stats = SessionStats::compute(&[user()], None, "sid");
        let value = serde_json::to_value(&stats).unwrap();
        let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "sessionId",
                "userMessages",
                "assistantMessages",
                "toolCalls",
                "toolResults",
                "totalMessages",
                "tokens",
                "cost",
                "premiumRequests"
            ]
        );
        assert_eq!(value["tokens"], json!({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"reasoning":0}));
    }
}
