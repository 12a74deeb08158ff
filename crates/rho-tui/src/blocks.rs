//! The blocks the history is made of, as lines: a user message, an assistant message (when a
//! session is replayed), a tool call with its arguments, its result (truncated unless expanded,
//! an edit's diff coloured), and one-line notices (errors, retries, compaction). Colours are the
//! theme's tokens (`toolDiffAdded`, `toolDiffRemoved`, `toolDiffContext`, `toolOutput`, …).

use ratatui::text::{Line, Span};
use rho_types::AgentMessage;
use rho_types::types::{AssistantContent, AssistantMessage, StopReason, UserContent};
use serde_json::{Map, Value};

use super::{diff, highlight, markdown, style, tool_blocks};

/// Lines of a tool result shown before the rest is folded away.
pub const FOLDED_RESULT_LINES: usize = 6;
/// An edit's diff, collapsed: its changed lines first (see `diff::collapsed`).
const FOLDED_DIFF_LINES: usize = 16;
/// Lines of a tool result shown at most, even expanded.
const EXPANDED_RESULT_LINES: usize = 2000;

/// A blank line, then the user's message.
pub fn user(text: &str) -> Vec<Line<'static>> {
    let mut lines = vec![Line::default()];
    for (i, line) in text.lines().enumerate() {
        let marker = if i == 0 { "› " } else { "  " };
        lines.push(Line::from(vec![
            Span::styled(marker, style::user()),
            Span::styled(line.to_owned(), style::user_text().patch(style::bold())),
        ]));
    }
    lines.push(Line::default());
    lines
}

/// A finished thinking block, dimmed.
pub fn thinking(text: &str) -> Vec<Line<'static>> {
    text.trim().lines().map(|l| Line::styled(l.to_owned(), style::thinking())).collect()
}

/// How an assistant message ended, when that is worth a line.
pub fn stop_notice(message: &AssistantMessage) -> Option<Line<'static>> {
    match message.stop_reason {
        StopReason::Error => {
            let text = message.error_message.clone().unwrap_or_else(|| "Request failed".to_owned());
            Some(error(&format!("Error: {text}")))
        }
        StopReason::Aborted => Some(notice("Aborted")),
        _ => None,
    }
}

pub fn error(text: &str) -> Line<'static> {
    Line::styled(text.to_owned(), style::error())
}

pub fn warning(text: &str) -> Line<'static> {
    Line::styled(text.to_owned(), style::warning())
}

/// A custom message an extension sent (`display: true`), as pi shows one without a renderer:
/// its `[customType]`, then its text as markdown.
pub fn custom(message: &rho_types::CustomMessage) -> Vec<Line<'static>> {
    let mut lines =
        vec![Line::default(), Line::styled(format!("[{}]", message.custom_type), style::accent().patch(style::bold()))];
    lines.extend(markdown::render(&message.content.text_joined("\n")));
    lines
}

pub fn notice(text: &str) -> Line<'static> {
    Line::styled(text.to_owned(), style::dim())
}

/// `● name summary`: a tool call as it starts; a `write` call's content follows, highlighted by
/// the file's extension and folded unless `expanded`.
pub fn tool_call(name: &str, args: &Map<String, Value>, expanded: bool) -> Vec<Line<'static>> {
    let summary = args_summary(name, args);
    let mut spans = vec![Span::styled("● ", style::accent()), Span::styled(name.to_owned(), style::tool())];
    if !summary.is_empty() {
        spans.push(Span::raw(" "));
        spans.push(Span::raw(summary));
    }
    let mut lines = vec![Line::default(), Line::from(spans)];
    if name == "write"
        && let Some(write) = rho_tools::params::read::<rho_tools::params::WriteParams>(args)
    {
        let lang = highlight::lang_of_path(&write.path);
        lines.extend(text_lines(&write.content, lang.as_deref(), false, expanded, false).0);
    }
    lines
}

/// The one argument that says what a built-in tool does, else the arguments as JSON.
fn args_summary(name: &str, args: &Map<String, Value>) -> String {
    let field = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    let picked = match name {
        "bash" => field("command"),
        "read" | "write" | "edit" | "ls" => field("path"),
        "todo_write" => args
            .get("ops")
            .and_then(Value::as_array)
            .map(|ops| ops.iter().filter_map(|op| op.get("op").and_then(Value::as_str)).collect::<Vec<_>>().join(", ")),
        "grep" | "find" => field("pattern").map(|p| match field("path") {
            Some(path) => format!("{p} in {path}"),
            None => p,
        }),
        _ => None,
    };
    let text =
        picked.unwrap_or_else(|| if args.is_empty() { String::new() } else { Value::Object(args.clone()).to_string() });
    let first: String = text.lines().next().unwrap_or_default().chars().take(200).collect();
    if text.lines().count() > 1 || text.chars().count() > 200 { format!("{first} …") } else { first }
}

/// A tool's result: an edit's diff coloured, else the text (highlighted as `lang`, a `read`
/// file's extension, when syntect knows it); folded to a few lines unless `expanded`.
pub fn tool_result(
    content: &[UserContent],
    details: Option<&Value>,
    is_error: bool,
    expanded: bool,
    lang: Option<&str>,
) -> (Vec<Line<'static>>, bool) {
    let diff = details.and_then(|d| d.get("diff")).and_then(Value::as_str).filter(|_| !is_error);
    match diff {
        Some(diff) if expanded => {
            // Only the lines shown are styled (a diff may be very long).
            let all = diff::render(diff.trim_end());
            let total = all.len();
            indented(all.into_iter().take(EXPANDED_RESULT_LINES).collect(), total, EXPANDED_RESULT_LINES, true)
        }
        Some(diff) => {
            // Collapsed, the changes stay and the context goes first, as far as it must.
            let (kept, stands_for) = diff::collapsed(diff.trim_end(), FOLDED_DIFF_LINES);
            let shown = diff::render(&kept);
            let total = shown.len();
            let (lines, cut) =
                indented(shown.into_iter().take(FOLDED_DIFF_LINES).collect(), total, FOLDED_DIFF_LINES, false);
            (lines, cut || stands_for > total)
        }
        None => {
            let text = content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n");
            let (mut lines, folded) = text_lines(&text, lang, is_error, expanded, false);
            if lines.is_empty() && is_error {
                lines.push(error("  (error)"));
            }
            (lines, folded)
        }
    }
}

/// A shell command's output (the `bash` tool's, a `!` command's): folded to its last lines,
/// where a failure says why, as pi folds it.
pub fn shell_output(content: &[UserContent], is_error: bool, expanded: bool) -> Vec<Line<'static>> {
    let text = content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n");
    let (mut lines, _) = text_lines(&text, None, is_error, expanded, true);
    if lines.is_empty() && is_error {
        lines.push(error("  (error)"));
    }
    lines
}

/// `text`'s lines, indented and folded unless `expanded` (to the first lines, or with `tail` to
/// the last): highlighted as `lang` when syntect knows it, else in `toolOutput` (`error` for an
/// error). Only the lines shown are styled.
fn text_lines(
    text: &str,
    lang: Option<&str>,
    is_error: bool,
    expanded: bool,
    tail: bool,
) -> (Vec<Line<'static>>, bool) {
    let limit = if expanded { EXPANDED_RESULT_LINES } else { FOLDED_RESULT_LINES };
    let all: Vec<&str> = text.trim_end().lines().collect();
    let kept = if tail { &all[all.len().saturating_sub(limit)..] } else { &all[..all.len().min(limit)] };
    // Tabs as three spaces, as pi shows them (a terminal cell has no tab width).
    let shown: Vec<String> = kept.iter().map(|l| l.replace('\t', "   ")).collect();
    let highlighted = lang.filter(|_| !is_error && !shown.is_empty()).and_then(|lang| {
        let code: String = shown.iter().flat_map(|l| [l.as_str(), "\n"]).collect();
        highlight::highlight(&code, lang)
    });
    let spans = highlighted.unwrap_or_else(|| {
        let styled = if is_error { style::error() } else { style::tool_output() };
        shown.into_iter().map(|l| vec![Span::styled(l, styled)]).collect()
    });
    if tail {
        return earlier_lines(spans, all.len(), limit, expanded);
    }
    indented(spans, all.len(), limit, expanded)
}

/// The last lines shown, indented, after how many came before them when `total` passes `limit`.
fn earlier_lines(
    shown: Vec<Vec<Span<'static>>>,
    total: usize,
    limit: usize,
    expanded: bool,
) -> (Vec<Line<'static>>, bool) {
    let folded = total > limit;
    let mut lines = Vec::with_capacity(shown.len() + 1);
    if folded {
        let hint = if expanded { "" } else { ", Ctrl+O to expand" };
        lines.push(notice(&format!("  … ({} earlier lines{hint})", total - limit)));
    }
    lines.extend(indent(shown));
    (lines, folded)
}

/// The lines shown, indented, and how many more there are when `total` passes `limit`.
fn indented(shown: Vec<Vec<Span<'static>>>, total: usize, limit: usize, expanded: bool) -> (Vec<Line<'static>>, bool) {
    let mut lines = indent(shown);
    let folded = total > limit;
    if folded {
        let hint = if expanded { "" } else { " (Ctrl+O to expand)" };
        lines.push(notice(&format!("  … {} more lines{hint}", total - limit)));
    }
    (lines, folded)
}

fn indent(shown: Vec<Vec<Span<'static>>>) -> Vec<Line<'static>> {
    shown
        .into_iter()
        .map(|line| {
            let mut spans = vec![Span::styled("  ", style::dim())];
            spans.extend(line);
            Line::from(spans)
        })
        .collect()
}

/// `!command`: the command and its output (folded unless `expanded`), and how it ended.
pub fn bash(
    command: &str,
    output: &str,
    exit_code: Option<i32>,
    cancelled: bool,
    expanded: bool,
) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::default(),
        Line::from(vec![Span::styled("$ ", style::accent()), Span::styled(command.to_owned(), style::bold())]),
    ];
    lines.extend(shell_output(&[UserContent::text(output)], false, expanded));
    if cancelled {
        lines.push(notice("  (cancelled)"));
    } else if let Some(code) = exit_code.filter(|c| *c != 0) {
        lines.push(error(&format!("  exit code {code}")));
    }
    lines
}

/// A whole message of a replayed session; a tool result with the arguments of its call, when
/// they are known (a `read` result is highlighted by the file's extension).
pub fn message_after(
    message: &AgentMessage,
    call_args: Option<&Map<String, Value>>,
    expanded: bool,
) -> Vec<Line<'static>> {
    match message {
        AgentMessage::User(u) => user(&u.text()),
        AgentMessage::Assistant(a) => {
            let mut lines = Vec::new();
            for block in &a.content {
                match block {
                    AssistantContent::Text(t) => lines.extend(markdown::render(&t.text)),
                    // Set apart by blank lines, as when it streamed.
                    AssistantContent::Thinking(t) => {
                        lines.push(Line::default());
                        lines.extend(thinking(&t.thinking));
                        lines.push(Line::default());
                    }
                    AssistantContent::ToolCall(call) => lines.extend(tool_call(&call.name, &call.arguments, expanded)),
                    AssistantContent::RedactedThinking(_) => lines.push(notice("(thinking redacted)")),
                }
            }
            lines.extend(stop_notice(a));
            lines
        }
        AgentMessage::ToolResult(r) => {
            let result = tool_blocks::Finished {
                name: &r.tool_name,
                args: call_args,
                content: &r.content,
                details: r.details.as_ref(),
                is_error: r.is_error,
            };
            // Under its own call, when the call is known (a replay draws the call here).
            let mut lines = call_args.map(|args| tool_call(&r.tool_name, args, expanded)).unwrap_or_default();
            lines.extend(tool_blocks::result(&result, expanded));
            lines
        }
        AgentMessage::BashExecution(b) => bash(&b.command, &b.output, b.exit_code, b.cancelled, expanded),
        AgentMessage::CompactionSummary(_) => vec![Line::default(), notice("(earlier messages compacted)")],
        AgentMessage::BranchSummary(_) => vec![notice("(branch summary)")],
        AgentMessage::Custom(c) if c.display => custom(c),
        AgentMessage::Custom(_)
        | AgentMessage::HookMessage(_)
        | AgentMessage::Developer(_)
        | AgentMessage::System(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::plain;

    #[test]
    fn a_collapsed_diff_keeps_every_change_and_drops_context_first() {
        // Two changes far apart, each a 3-line replacement with its context.
        let mut diff = vec!["    ...".to_owned()];
        for (at, name) in [(10, "a"), (40, "b")] {
            diff.extend((at - 4..at).map(|n| format!(" {n:>2} keep {n}")));
            diff.extend((at..at + 3).map(|n| format!("-{n:>2} old {name}{n}")));
            diff.extend((at..at + 3).map(|n| format!("+{n:>2} new {name}{n}")));
            diff.extend((at + 3..at + 7).map(|n| format!(" {n:>2} keep {n}")));
            diff.push("    ...".to_owned());
        }
        let details = serde_json::json!({"diff": diff.join("\n")});
        let (folded, was_folded) = tool_result(&[], Some(&details), false, false, None);
        assert!(was_folded);
        let shown = plain(&folded);
        for n in [10, 11, 12, 40, 41, 42] {
            assert!(shown.contains(&format!("new {}{n}", if n < 40 { "a" } else { "b" })), "{shown}");
        }
        assert!(!shown.contains("keep"), "{shown}");
        assert!(!shown.contains("more lines"), "{shown}");
        let (expanded, _) = tool_result(&[], Some(&details), false, true, None);
        assert_eq!(plain(&expanded).lines().count(), diff.len());
    }

    #[test]
    fn long_results_fold_and_expand() {
        let text = (1..=10).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
        let content = vec![UserContent::text(text)];
        let (folded, was_folded) = tool_result(&content, None, false, false, None);
        assert!(was_folded);
        assert_eq!(folded.len(), FOLDED_RESULT_LINES + 1);
        assert!(markdown::plain(&folded).ends_with("… 4 more lines (Ctrl+O to expand)"));
        let (expanded, _) = tool_result(&content, None, false, true, None);
        assert_eq!(plain(&expanded).lines().count(), 10);
    }

    #[test]
    fn shell_output_folds_to_its_last_lines() {
        let text = (1..=10).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
        let folded = plain(&shell_output(&[UserContent::text(text.clone())], false, false));
        assert_eq!(
            folded,
            "  … (4 earlier lines, Ctrl+O to expand)\n  line 5\n  line 6\n  line 7\n  line 8\n  line 9\n  line 10"
        );
        assert_eq!(plain(&shell_output(&[UserContent::text(text)], false, true)).lines().count(), 10);
        assert_eq!(plain(&shell_output(&[UserContent::text("short")], false, false)), "  short");
    }

    #[test]
    fn tabs_show_as_spaces_and_a_known_extension_is_highlighted() {
        let content = vec![UserContent::text("fn main() {\n\tlet x = 1;\n}")];
        let (plain_lines, _) = tool_result(&content, None, false, false, None);
        assert_eq!(plain(&plain_lines), "  fn main() {\n     let x = 1;\n  }");
        let (highlighted, _) = tool_result(&content, None, false, false, Some("rs"));
        assert_eq!(plain(&highlighted), plain(&plain_lines));
        if !style::no_color() {
            assert!(highlighted[0].spans.len() > 2, "{:?}", highlighted[0]);
        }
    }

    #[test]
    fn a_write_call_shows_its_content_folded() {
        let mut args = Map::new();
        args.insert("path".into(), Value::from("notes.md"));
        args.insert("content".into(), Value::from((1..=8).map(|i| format!("line {i}\n")).collect::<String>()));
        let lines = plain(&tool_call("write", &args, false));
        assert!(lines.starts_with("\n● write notes.md\n  line 1\n"), "{lines}");
        assert!(lines.ends_with("  line 6\n  … 2 more lines (Ctrl+O to expand)"), "{lines}");
    }

    #[test]
    fn a_bash_call_shows_its_command() {
        let mut args = Map::new();
        args.insert("command".into(), Value::from("ls -la"));
        assert_eq!(plain(&tool_call("bash", &args, false)), "\n● bash ls -la");
    }
}
