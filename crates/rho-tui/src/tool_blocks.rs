//! How a finished tool call's result is drawn, by tool, live and on resume alike: a `task`
//! call's sub-agents as one summary line each, a `todo_write` call as one line of counts (the
//! widget above the editor shows the list), a `read` result highlighted by the file's extension,
//! anything else as its text (an edit's diff coloured). Errors and expanded output (Ctrl+O)
//! show the full text.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use rho_rpc::{TodoPhase, TodoStatus};
use rho_types::types::UserContent;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{blocks, highlight, style, subagents};
use rho_coding_agent::todo::TODO_WRITE_TOOL_NAME;

/// The tool whose sub-agents leave summary lines.
pub const TASK_TOOL: &str = "task";

/// A finished tool call: the tool, its call's arguments when known, and its result.
#[derive(Debug, Clone, Copy)]
pub struct Finished<'a> {
    pub name: &'a str,
    pub args: Option<&'a Map<String, Value>>,
    pub content: &'a [UserContent],
    pub details: Option<&'a Value>,
    pub is_error: bool,
}

/// The history's lines for a finished call: the tool's compact form (folded to it unless
/// `expanded` or failed), else its text folded to a few lines unless `expanded`.
pub fn result(r: &Finished<'_>, expanded: bool) -> Vec<Line<'static>> {
    let compact = match r.name {
        TASK_TOOL => subagents::summary(r.details),
        TODO_WRITE_TOOL_NAME if !r.is_error => todo_line(r.details).into_iter().collect(),
        _ => Vec::new(),
    };
    let mut lines = compact;
    if lines.is_empty() || r.is_error || expanded {
        lines.extend(text(r, expanded));
    }
    lines
}

/// The result's text (Ctrl+O shows the last one whole); a shell command's folded to its end.
pub fn text(r: &Finished<'_>, expanded: bool) -> Vec<Line<'static>> {
    if r.name == "bash" && r.details.and_then(|d| d.get("diff")).is_none() {
        return blocks::shell_output(r.content, r.is_error, expanded);
    }
    let lang = match r.name {
        "read" => r
            .args
            .and_then(rho_tools::params::read::<rho_tools::params::ReadParams>)
            .and_then(|read| highlight::lang_of_path(&read.path)),
        _ => None,
    };
    blocks::tool_result(r.content, r.details, r.is_error, expanded, lang.as_deref()).0
}

/// `Todos: 2/5 done, → the task in progress` from a `todo_write` result's `details.phases`.
fn todo_line(details: Option<&Value>) -> Option<Line<'static>> {
    let phases = Vec::<TodoPhase>::deserialize(details?.get("phases")?).ok()?;
    let tasks: Vec<_> = phases.iter().flat_map(|p| &p.tasks).collect();
    let mut spans = vec![Span::styled("  Todos: ", style::dim())];
    if tasks.is_empty() {
        spans.push(Span::styled("cleared", style::dim()));
        return Some(Line::from(spans));
    }
    let done = tasks.iter().filter(|t| !t.status.is_open()).count();
    spans.push(Span::styled(format!("{done}/{} done", tasks.len()), style::dim()));
    if let Some(current) = tasks.iter().find(|t| t.status == TodoStatus::InProgress) {
        let content = current.content.lines().next().unwrap_or_default().to_owned();
        spans.push(Span::styled(", ", style::dim()));
        spans.push(Span::styled("→ ", style::accent()));
        spans.push(Span::styled(content, style::accent().add_modifier(Modifier::BOLD)));
    }
    Some(Line::from(spans))
}

/// The arguments of the call the message at `index` answers, when it is a tool result and the assistant
/// message before it (past the other results of that message) has the call.
pub fn call_args(messages: &[rho_types::AgentMessage], index: usize) -> Option<&Map<String, Value>> {
    use rho_types::AgentMessage;
    use rho_types::types::AssistantContent;
    let AgentMessage::ToolResult(result) = messages.get(index)? else { return None };
    let assistant = messages[..index].iter().rev().find(|m| !matches!(m, AgentMessage::ToolResult(_)))?;
    let AgentMessage::Assistant(assistant) = assistant else { return None };
    assistant.content.iter().find_map(|block| match block {
        AssistantContent::ToolCall(call) if call.id == result.tool_call_id => Some(&call.arguments),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::markdown::plain;

    fn finished<'a>(name: &'a str, content: &'a [UserContent], details: Option<&'a Value>) -> Finished<'a> {
        Finished { name, args: None, content, details, is_error: false }
    }

    #[test]
    fn a_todo_write_result_is_one_line_of_counts() {
        let details = json!({"phases": [{"id": "p", "name": "Fix", "tasks": [
            {"id": "t1", "content": "Read", "status": "completed"},
            {"id": "t2", "content": "Fix the parser\nmore", "status": "in_progress"},
            {"id": "t3", "content": "Test", "status": "pending"}]}]});
        let content = [UserContent::text("Todo list:\n- [x] Read\n- [>] Fix the parser\n- [ ] Test")];
        let lines = result(&finished("todo_write", &content, Some(&details)), false);
        assert_eq!(plain(&lines), "  Todos: 1/3 done, → Fix the parser");
        // Expanded, the text follows.
        let expanded = plain(&result(&finished("todo_write", &content, Some(&details)), true));
        assert!(expanded.starts_with("  Todos: 1/3 done, → Fix the parser\n  Todo list:"), "{expanded}");
        let empty = json!({"phases": []});
        assert_eq!(plain(&result(&finished("todo_write", &content, Some(&empty)), false)), "  Todos: cleared");
        // No details (an error, an old session): the text.
        assert!(plain(&result(&finished("todo_write", &content, None), false)).starts_with("  Todo list:"));
    }

    #[test]
    fn a_task_result_is_its_summary_lines() {
        let details = json!({"projectAgentsDir": null, "totalDurationMs": 2000, "results": [
            {"index": 0, "id": "Alpha", "agent": "explore", "agentSource": "bundled", "task": "look", "exitCode": 0,
             "output": "found", "stderr": "", "truncated": false, "durationMs": 2000, "tokens": 0}]});
        let content = [UserContent::text("<task-summary>\n<header>1 agent</header>\n</task-summary>")];
        let lines = plain(&result(&finished(TASK_TOOL, &content, Some(&details)), false));
        assert_eq!(lines, "✓ Alpha [explore] · completed · 2s");
        let failed = Finished { is_error: true, ..finished(TASK_TOOL, &content, Some(&details)) };
        assert!(plain(&result(&failed, false)).contains("<task-summary>"));
    }
}
