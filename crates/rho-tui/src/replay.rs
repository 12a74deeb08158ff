//! Replaying a conversation into the scrollback (on resume, `-c`, `/tree`): the newest messages,
//! a bounded number of lines, so a 10,000-message session opens at once. Terminals keep a few
//! thousand lines of scrollback (tmux 2,000 by default); writing more only costs time.

use ratatui::text::Line;
use rho_types::AgentMessage;

use super::transcript::Entry;
use super::{blocks, style, tool_blocks};

/// The most lines of history a replay renders (the message that crosses it is kept whole).
pub const MAX_LINES: usize = 3_000;

/// The newest messages as history entries, oldest first, under a note of how many earlier ones
/// were left out.
pub fn tail(messages: &[AgentMessage]) -> Vec<Entry> {
    let mut kept = Vec::new();
    let mut count = 0;
    let mut start = messages.len();
    while start > 0 && count < MAX_LINES {
        start -= 1;
        let args = tool_blocks::call_args(messages, start);
        let message = without_answered_calls(messages, start);
        count += blocks::message_after(&message, args, false).len();
        kept.push(Entry::Message(Box::new(message), args.cloned()));
    }
    let mut out = Vec::with_capacity(kept.len() + 1);
    if start > 0 {
        let noun = if start == 1 { "message" } else { "messages" };
        out.push(Entry::Lines(vec![
            Line::styled(
                format!("… {start} earlier {noun} not shown (/tree lists them, /export writes them all)"),
                style::dim(),
            ),
            Line::default(),
        ]));
    }
    out.extend(kept.into_iter().rev());
    out
}

/// The message at `index`; an assistant message without the tool calls the results after it
/// answer, since each result is drawn under its own call (pi's order), not all calls first.
fn without_answered_calls(messages: &[AgentMessage], index: usize) -> AgentMessage {
    use rho_types::types::AssistantContent;
    let AgentMessage::Assistant(assistant) = &messages[index] else { return messages[index].clone() };
    let answered: Vec<&str> = messages[index + 1..]
        .iter()
        .map_while(|m| match m {
            AgentMessage::ToolResult(r) => Some(r.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut shown = assistant.clone();
    shown
        .content
        .retain(|block| !matches!(block, AssistantContent::ToolCall(call) if answered.contains(&call.id.as_str())));
    AgentMessage::Assistant(shown)
}

#[cfg(test)]
mod tests {
    use rho_types::types::UserMessage;

    use super::*;

    fn user(text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage::prompt(text, Vec::new()))
    }

    fn text(entries: &[Entry]) -> Vec<String> {
        let lines = entries.iter().flat_map(|e| e.lines(Default::default()));
        lines.map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn a_short_conversation_is_replayed_whole_in_order() {
        let lines = text(&tail(&[user("first"), user("second")]));
        let first = lines.iter().position(|l| l.contains("first")).unwrap();
        let second = lines.iter().position(|l| l.contains("second")).unwrap();
        assert!(first < second);
        assert!(!lines.iter().any(|l| l.contains("earlier")));
    }

    #[test]
    fn a_long_conversation_keeps_its_newest_lines_and_says_how_many_messages_are_left_out() {
        let messages: Vec<_> = (0..MAX_LINES * 2).map(|i| user(&format!("message {i}"))).collect();
        let lines = text(&tail(&messages));
        let last = format!("message {}", messages.len() - 1);
        assert!(lines.iter().any(|l| l.contains(&last)));
        assert!(!lines.iter().any(|l| l == "› message 0"));
        let note = &lines[0];
        let shown = lines.iter().filter(|l| l.contains("message ") && !l.contains("earlier")).count();
        assert_eq!(
            note,
            &format!(
                "… {} earlier messages not shown (/tree lists them, /export writes them all)",
                messages.len() - shown
            )
        );
        assert!(lines.len() <= MAX_LINES + 2 + 10, "{} lines", lines.len());
    }
}
