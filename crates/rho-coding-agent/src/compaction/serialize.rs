//! The conversation as plain text for a summary request.
//!
//! Sending the conversation as messages would invite the model to continue it; as one block of
//! labelled text it is material to summarize. Each message becomes one or more parts joined by
//! a blank line: `[User]: `, `[Assistant thinking]: `, `[Assistant]: `,
//! `[Assistant tool calls]: name(key=<json>, …); …` and `[Tool result]: ` (cut at
//! [`TOOL_RESULT_MAX_CHARS`]). Images are left out; application roles arrive here already
//! turned into user text by `to_llm`.

use rho_types::types::{AssistantContent, Message, UserContent};

/// Tool results longer than this many characters are cut in the serialized conversation.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// `text` cut to `max` characters with a notice of how many were left out.
fn truncate_for_summary(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let dropped = text[cut..].chars().count();
            format!("{}\n\n[... {dropped} more characters truncated]", &text[..cut])
        }
    }
}

fn joined_text(blocks: &[UserContent]) -> String {
    blocks.iter().filter_map(UserContent::as_text).collect()
}

/// Serializes `messages` (what `to_llm` produced) for a summary request.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match message {
            Message::User(u) => {
                let text = joined_text(&u.content.blocks());
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(a) => {
                let mut text = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) => text.push(t.text.as_str()),
                        AssistantContent::Thinking(t) => thinking.push(t.thinking.as_str()),
                        AssistantContent::ToolCall(call) => {
                            let args: Vec<String> = call.arguments.iter().map(|(k, v)| format!("{k}={v}")).collect();
                            calls.push(format!("{}({})", call.name, args.join(", ")));
                        }
                        AssistantContent::RedactedThinking(_) => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(r) => {
                let text = joined_text(&r.content);
                if !text.is_empty() {
                    let text = truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS);
                    parts.push(format!("[Tool result]: {text}"));
                }
            }
        }
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::test_support::*;
    use rho_types::AgentMessage;
    use rho_types::CompactionSummaryMessage;
    use rho_types::convert_to_llm;
    use rho_types::types::{ImageContent, TextContent, ThinkingContent, ToolResultMessage};
    use serde_json::json;

    #[test]
    fn every_role_has_its_label() {
        let a = assistant(vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "think 1".into(),
                thinking_signature: None,
                redacted: None,
            }),
            AssistantContent::Text(TextContent::new("first")),
            AssistantContent::Thinking(ThinkingContent {
                thinking: "think 2".into(),
                thinking_signature: None,
                redacted: None,
            }),
            AssistantContent::Text(TextContent::new("second")),
            tool_call("read", json!({"path": "a.rs", "offset": 10})),
            tool_call("bash", json!({"command": "echo \"hi\"", "env": {"A": [1, null]}})),
        ]);
        let messages = vec![
            user("Fix the bug"),
            AgentMessage::Assistant(a),
            tool_result("file contents"),
            bash("ls", "a\nb"),
            AgentMessage::CompactionSummary(CompactionSummaryMessage {
                summary: "S".into(),
                short_summary: None,
                tokens_before: 1,
                timestamp: 0,
            }),
        ];
        let text = serialize_conversation(&convert_to_llm(&messages));
        let expected = [
            "[User]: Fix the bug",
            "[Assistant thinking]: think 1\nthink 2",
            "[Assistant]: first\nsecond",
            r#"[Assistant tool calls]: read(path="a.rs", offset=10); bash(command="echo \"hi\"", env={"A":[1,null]})"#,
            "[Tool result]: file contents",
            "[User]: Ran `ls`\n```\na\nb\n```",
            "[User]: The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>",
        ]
        .join("\n\n");
        assert_eq!(text, expected);
    }

    #[test]
    fn empty_parts_and_images_are_left_out() {
        let image = UserContent::Image(ImageContent { data: "AAAA".into(), mime_type: "image/png".into() });
        let mut only_image = rho_types::types::UserMessage::prompt("", vec![]);
        only_image.content = rho_types::types::UserMessageContent::Blocks(vec![image.clone()]);
        let result = AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "read".into(),
            content: vec![UserContent::text("a"), image, UserContent::text("b")],
            details: None,
            is_error: false,
            is_warning: None,
            timestamp: 0,
        });
        let messages = vec![AgentMessage::User(only_image), AgentMessage::Assistant(assistant(vec![])), result];
        assert_eq!(serialize_conversation(&convert_to_llm(&messages)), "[Tool result]: ab");
    }

    #[test]
    fn long_tool_results_are_cut_at_2000_characters() {
        let long = format!("{}{}", "a".repeat(2000), "b".repeat(500));
        let text = serialize_conversation(&convert_to_llm(&[tool_result(&long)]));
        assert_eq!(text, format!("[Tool result]: {}\n\n[... 500 more characters truncated]", "a".repeat(2000)));
        let exact = "c".repeat(2000);
        let text = serialize_conversation(&convert_to_llm(&[tool_result(&exact)]));
        assert_eq!(text, format!("[Tool result]: {exact}"));
        // Multi-byte characters are counted as characters and never split.
        let wide = "é".repeat(2001);
        let text = serialize_conversation(&convert_to_llm(&[tool_result(&wide)]));
        assert!(text.ends_with("\n\n[... 1 more characters truncated]"));
        assert!(text.starts_with(&format!("[Tool result]: {}\n", "é".repeat(2000))));
    }
}
