//! The body of each conversation message: user text, assistant text with its thinking and tool
//! calls, a user's shell command, custom messages and the two kinds of summaries.
//!
//! Text the model or the user wrote is markdown; thinking, commands and outputs are shown as
//! written. Thinking is a closed `<details class="thinking">` that the page's thinking toggle
//! hides altogether.

use rho_types::types::{AssistantContent, AssistantMessage, StopReason, UserMessageContent};
use rho_types::{AgentMessage, BashExecutionMessage};

use super::fragments::{Html, format_cost, format_tokens, one_line, push_long_text};
use super::tool::{OUTPUT_PREVIEW_LINES, push_tool_call, push_tool_result};

/// The CSS class naming a message's kind (`user`, `assistant`, `tool-result`, …).
pub fn message_class(message: &AgentMessage) -> &'static str {
    match message {
        AgentMessage::User(_) => "user",
        AgentMessage::Developer(_) => "developer",
        AgentMessage::Assistant(_) => "assistant",
        AgentMessage::ToolResult(_) => "tool-result",
        AgentMessage::BashExecution(_) => "bash",
        AgentMessage::Custom(_) | AgentMessage::HookMessage(_) => "custom",
        AgentMessage::BranchSummary(_) => "branch-summary",
        AgentMessage::CompactionSummary(_) => "compaction",
        AgentMessage::System(_) => "system",
    }
}

/// Appends the body of `message`.
pub fn push_message(html: &mut Html, message: &AgentMessage) {
    match message {
        AgentMessage::User(u) => html.user_content(&u.content.blocks()),
        AgentMessage::Developer(d) => {
            html.push("<div class=\"role-note\">developer instruction</div>");
            html.user_content(&d.content.blocks());
        }
        AgentMessage::Assistant(a) => push_assistant(html, a),
        AgentMessage::ToolResult(t) => push_tool_result(&mut html.out, t),
        AgentMessage::BashExecution(b) => push_bash(html, b),
        AgentMessage::Custom(c) | AgentMessage::HookMessage(c) => {
            push_custom(html, &c.custom_type, &c.content, c.display);
        }
        AgentMessage::BranchSummary(b) => push_summary(html, "Branch summary", &b.summary),
        AgentMessage::CompactionSummary(c) => {
            push_summary(html, &format!("Compaction of {} tokens", format_tokens(c.tokens_before)), &c.summary);
        }
        AgentMessage::System(s) => {
            html.push("<div class=\"role-note\">");
            html.text(&format!("system {}", s.summary()));
            html.push("</div>");
        }
    }
}

fn push_assistant(html: &mut Html, message: &AssistantMessage) {
    for block in &message.content {
        match block {
            AssistantContent::Text(t) => html.markdown(&t.text),
            AssistantContent::Thinking(t) if t.redacted == Some(true) => {
                html.push("<div class=\"thinking redacted\">[redacted thinking]</div>");
            }
            AssistantContent::Thinking(t) => {
                html.push("<details class=\"thinking\"><summary>Thinking <span class=\"preview-line\">");
                html.text(&one_line(&t.thinking, 100));
                html.push("</span></summary><div class=\"thinking-text\">");
                html.text(&t.thinking);
                html.push("</div></details>");
            }
            AssistantContent::RedactedThinking(_) => {
                html.push("<div class=\"thinking redacted\">[redacted thinking]</div>");
            }
            AssistantContent::ToolCall(call) => push_tool_call(&mut html.out, call),
        }
    }
    if message.is_failed() {
        let what = if message.stop_reason == StopReason::Aborted { "Aborted" } else { "Error" };
        html.push("<div class=\"error-message\">");
        html.text(what);
        if let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) {
            html.text(": ");
            html.text(text);
        }
        html.push("</div>");
    } else if message.stop_reason == StopReason::Length {
        html.push("<div class=\"note\">(stopped at the output token limit)</div>");
    }
    let u = &message.usage;
    html.push("<div class=\"meta\">");
    html.text(&format!("{}/{}", message.provider, message.model));
    if u.input + u.output + u.cache_read + u.cache_write > 0 {
        html.text(&format!(
            " · ↑{} ↓{} R{} W{}",
            format_tokens(u.input),
            format_tokens(u.output),
            format_tokens(u.cache_read),
            format_tokens(u.cache_write)
        ));
    }
    if u.cost.total > 0.0 {
        html.text(&format!(" · {}", format_cost(u.cost.total)));
    }
    html.push("</div>");
}

fn push_bash(html: &mut Html, bash: &BashExecutionMessage) {
    push_long_text(&mut html.out, &format!("$ {}", bash.command), "command", OUTPUT_PREVIEW_LINES);
    if bash.output.is_empty() {
        html.push("<div class=\"note\">(no output)</div>");
    } else {
        push_long_text(&mut html.out, &bash.output, "output", OUTPUT_PREVIEW_LINES);
    }
    let mut notes = Vec::new();
    if bash.cancelled {
        notes.push("command cancelled".to_owned());
    } else if let Some(code) = bash.exit_code.filter(|c| *c != 0) {
        notes.push(format!("exit code {code}"));
    }
    if bash.truncated {
        match &bash.full_output_path {
            Some(path) => notes.push(format!("output truncated, full output: {path}")),
            None => notes.push("output truncated".to_owned()),
        }
    }
    if bash.exclude_from_context == Some(true) {
        notes.push("not sent to the model".to_owned());
    }
    if !notes.is_empty() {
        html.push("<div class=\"note\">");
        html.text(&notes.join(" · "));
        html.push("</div>");
    }
}

/// Appends a custom (extension-injected) message; `display: false` ones are marked, since the
/// app does not show them but the model saw them.
pub fn push_custom(html: &mut Html, custom_type: &str, content: &UserMessageContent, display: bool) {
    html.push("<div class=\"role-note\">");
    html.text(custom_type);
    if !display {
        html.text(" (hidden in the app)");
    }
    html.push("</div>");
    html.user_content(&content.blocks());
}

/// Appends a compaction or branch summary: a title and the markdown summary, collapsed.
pub fn push_summary(html: &mut Html, title: &str, summary: &str) {
    html.push("<details class=\"summary\"><summary>");
    html.text(title);
    html.push("</summary>");
    html.markdown(summary);
    html.push("</details>");
}
