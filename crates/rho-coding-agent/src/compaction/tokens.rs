//! Token accounting for compaction: a cheap per-message estimate (characters / 4, an
//! overestimate for most text) and the context size, which prefers what the model last
//! reported over estimates.
//!
//! Characters are counted as UTF-16 code units, the unit the reference counts in, so a session
//! compacts at the same point in rho as in pi.

use rho_types::AgentMessage;
use rho_types::types::{AssistantContent, Usage, UserContent, UserMessageContent};

/// What an image counts for, in characters (1200 tokens).
const IMAGE_CHARS: u64 = 4800;

/// The length of `s` in UTF-16 code units (JavaScript's `length`).
pub(crate) fn js_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

fn chars_to_tokens(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// The context size a usage reports: `totalTokens`, or the sum of the four buckets when the
/// provider left the total at zero.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    usage.context_tokens()
}

/// Whether a context of `context_tokens` leaves less than `reserve_tokens` of the window free.
pub fn should_compact(context_tokens: u64, context_window: u64, reserve_tokens: u64) -> bool {
    i128::from(context_tokens) > i128::from(context_window) - i128::from(reserve_tokens)
}

fn text_chars(content: &UserMessageContent) -> u64 {
    match content {
        UserMessageContent::Text(s) => js_len(s),
        UserMessageContent::Blocks(blocks) => blocks.iter().filter_map(UserContent::as_text).map(js_len).sum(),
    }
}

fn blocks_with_images_chars(blocks: &[UserContent]) -> u64 {
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => js_len(&t.text),
            UserContent::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

/// Estimated tokens of one message: `ceil(chars / 4)` over what the model would read of it.
///
/// User text (images not counted); assistant text, thinking and tool calls (`name` plus the
/// arguments' JSON); tool-result and custom text with each image as 4800 characters; a bash
/// execution's command and output; a summary's text.
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    let chars = match message {
        AgentMessage::User(m) | AgentMessage::Developer(m) => text_chars(&m.content),
        AgentMessage::Assistant(a) => a
            .content
            .iter()
            .map(|block| match block {
                AssistantContent::Text(t) => js_len(&t.text),
                AssistantContent::Thinking(t) => js_len(&t.thinking),
                AssistantContent::ToolCall(call) => {
                    let args = serde_json::to_string(&call.arguments).unwrap_or_default();
                    js_len(&call.name) + js_len(&args)
                }
                AssistantContent::RedactedThinking(_) => 0,
            })
            .sum(),
        AgentMessage::ToolResult(r) => blocks_with_images_chars(&r.content),
        AgentMessage::Custom(c) | AgentMessage::HookMessage(c) => match &c.content {
            UserMessageContent::Text(s) => js_len(s),
            UserMessageContent::Blocks(blocks) => blocks_with_images_chars(blocks),
        },
        AgentMessage::BashExecution(b) => js_len(&b.command) + js_len(&b.output),
        AgentMessage::BranchSummary(s) => js_len(&s.summary),
        AgentMessage::CompactionSummary(s) => js_len(&s.summary),
        // The declared prompt and tools are counted with the system prompt, not the messages.
        AgentMessage::System(_) => 0,
    };
    chars_to_tokens(chars)
}

/// The context size of a conversation and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextEstimate {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// What the last usable assistant message reported (0 when none).
    pub usage_tokens: u64,
    /// Estimates of the messages after it (of all messages when none).
    pub trailing_tokens: u64,
    /// The index of that assistant message.
    pub last_usage_index: Option<usize>,
}

/// The context size of `messages`: the usage of the last assistant message that did not fail
/// (aborted and error replies carry no reliable usage) and reported any, plus estimates of everything after it;
/// the sum of estimates when no such message exists.
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> ContextEstimate {
    let last_usage = messages.iter().enumerate().rev().find_map(|(i, m)| match m {
        // A reply with no usage at all (servers that never report it) says nothing about the
        // context size: estimate past it rather than count the context as empty.
        AgentMessage::Assistant(a) if !a.is_failed() && calculate_context_tokens(&a.usage) > 0 => Some((i, &a.usage)),
        _ => None,
    });
    match last_usage {
        Some((index, usage)) => {
            let usage_tokens = calculate_context_tokens(usage);
            let trailing_tokens = messages[index + 1..].iter().map(estimate_tokens).sum();
            ContextEstimate {
                tokens: usage_tokens + trailing_tokens,
                usage_tokens,
                trailing_tokens,
                last_usage_index: Some(index),
            }
        }
        None => {
            let trailing_tokens = messages.iter().map(estimate_tokens).sum();
            ContextEstimate { tokens: trailing_tokens, usage_tokens: 0, trailing_tokens, last_usage_index: None }
        }
    }
}

/// The context size before a request, as pi 1.6 projects it: [`estimate_context_tokens`], unless
/// the reply whose usage it starts from is older than the conversation's compaction summary (that
/// usage measured the context the compaction replaced): then every message is estimated.
pub fn estimate_projected_tokens(messages: &[AgentMessage]) -> u64 {
    let estimate = estimate_context_tokens(messages);
    let compacted_at = messages.iter().find_map(|m| match m {
        AgentMessage::CompactionSummary(c) => Some(c.timestamp),
        _ => None,
    });
    let stale = match (estimate.last_usage_index.map(|i| &messages[i]), compacted_at) {
        (Some(AgentMessage::Assistant(reply)), Some(at)) => reply.timestamp <= at,
        _ => false,
    };
    if stale { messages.iter().map(estimate_tokens).sum() } else { estimate.tokens }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::test_support::*;
    use rho_types::BashExecutionMessage;
    use rho_types::BranchSummaryMessage;
    use rho_types::CompactionSummaryMessage;
    use rho_types::CustomMessage;
    use rho_types::types::{AssistantMessage, ImageContent, StopReason, TextContent, ThinkingContent, UserMessage};
    use serde_json::json;

    fn image() -> UserContent {
        UserContent::Image(ImageContent { data: "AAAA".into(), mime_type: "image/png".into() })
    }

    fn with_usage(mut a: AssistantMessage, total: u64, stop: StopReason) -> AgentMessage {
        a.usage.total_tokens = total;
        a.stop_reason = stop;
        AgentMessage::Assistant(a)
    }

    #[test]
    fn user_text_counts_and_images_do_not() {
        let mut m = UserMessage::prompt("x".repeat(9), vec![]);
        assert_eq!(estimate_tokens(&AgentMessage::User(m.clone())), 3);
        m.content = UserMessageContent::Blocks(vec![UserContent::text("abcd"), image()]);
        assert_eq!(estimate_tokens(&AgentMessage::User(m.clone())), 1);
        m.content = UserMessageContent::Text("abcde".into());
        assert_eq!(estimate_tokens(&AgentMessage::User(m)), 2);
    }

    #[test]
    fn assistant_counts_text_thinking_and_tool_calls() {
        let a = assistant(vec![
            AssistantContent::Text(TextContent::new("12345678")),
            AssistantContent::Thinking(ThinkingContent {
                thinking: "1234".into(),
                thinking_signature: Some("ignored signature".into()),
                redacted: None,
            }),
            // "read" (4) + {"path":"a.rs"} (15)
            tool_call("read", json!({"path": "a.rs"})),
        ]);
        assert_eq!(estimate_tokens(&AgentMessage::Assistant(a)), (8 + 4 + 4 + 15_u64).div_ceil(4));
    }

    #[test]
    fn tool_results_and_custom_count_images_as_4800_chars() {
        let AgentMessage::ToolResult(mut r) = tool_result("abc") else { unreachable!() };
        r.content.push(image());
        assert_eq!(estimate_tokens(&AgentMessage::ToolResult(r)), (3 + 4800_u64).div_ceil(4));
        let custom = CustomMessage {
            custom_type: "x".into(),
            content: UserMessageContent::Blocks(vec![UserContent::text("12"), image()]),
            display: true,
            details: None,
            attribution: None,
            timestamp: 0,
        };
        assert_eq!(estimate_tokens(&AgentMessage::Custom(custom)), 1201);
    }

    #[test]
    fn bash_and_summaries() {
        let bash = BashExecutionMessage {
            command: "ls".into(),
            output: "abcdefg".into(),
            exit_code: Some(0),
            cancelled: false,
            truncated: false,
            full_output_path: None,
            timestamp: 0,
            exclude_from_context: None,
        };
        assert_eq!(estimate_tokens(&AgentMessage::BashExecution(bash)), 3);
        let branch = BranchSummaryMessage { summary: "x".repeat(40), from_id: "root".into(), timestamp: 0 };
        assert_eq!(estimate_tokens(&AgentMessage::BranchSummary(branch)), 10);
        let compaction =
            CompactionSummaryMessage { summary: "x".repeat(41), short_summary: None, tokens_before: 5, timestamp: 0 };
        assert_eq!(estimate_tokens(&AgentMessage::CompactionSummary(compaction)), 11);
    }

    #[test]
    fn characters_are_utf16_units() {
        // One astral character is two UTF-16 units; "é" is one.
        assert_eq!(js_len("😀é"), 3);
        assert_eq!(estimate_tokens(&user("😀😀😀")), 2);
    }

    #[test]
    fn calculate_context_tokens_prefers_total() {
        let mut usage = Usage { input: 10, output: 20, cache_read: 30, cache_write: 40, ..Usage::default() };
        assert_eq!(calculate_context_tokens(&usage), 100);
        usage.total_tokens = 7;
        assert_eq!(calculate_context_tokens(&usage), 7);
    }

    #[test]
    fn context_estimate_uses_last_good_usage_plus_trailing_estimates() {
        let messages = vec![
            user("x".repeat(400).as_str()),
            with_usage(assistant(vec![]), 1000, StopReason::Stop),
            user("y".repeat(40).as_str()),
            with_usage(assistant(vec![]), 5000, StopReason::Error),
            tool_result(&"z".repeat(8)),
        ];
        let estimate = estimate_context_tokens(&messages);
        assert_eq!(estimate.last_usage_index, Some(1));
        assert_eq!(estimate.usage_tokens, 1000);
        assert_eq!(estimate.trailing_tokens, 10 + 2);
        assert_eq!(estimate.tokens, 1012);

        let none = estimate_context_tokens(&messages[2..3]);
        assert_eq!(none.last_usage_index, None);
        assert_eq!(none.tokens, 10);
        assert_eq!(estimate_context_tokens(&[]).tokens, 0);
    }

    #[test]
    fn should_compact_when_the_reserve_is_eaten() {
        assert!(!should_compact(100_000, 128_000, 16_384));
        assert!(!should_compact(111_616, 128_000, 16_384));
        assert!(should_compact(111_617, 128_000, 16_384));
        // A reserve larger than the window: any context is too much.
        assert!(should_compact(0, 1000, 2000));
    }
}
