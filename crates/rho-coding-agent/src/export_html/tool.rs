//! Tool calls (inside assistant messages) and tool results (their own entries).
//!
//! Arguments are shown per key rather than as one JSON blob, so a `write`'s content or an
//! `edit`'s old and new text read as text; `bash` commands read as a shell line. Long values and
//! long outputs are collapsed behind a preview. An `edit` result's diff (`details.diff`) is
//! coloured line by line.

use rho_types::types::{ToolCall, ToolResultMessage, UserContent};
use serde_json::Value;

use super::escape::push_escaped;
use super::fragments::{push_image, push_long_text};

/// Lines of a long tool output shown before it is collapsed.
pub const OUTPUT_PREVIEW_LINES: usize = 10;
/// Lines of a long argument shown before it is collapsed.
const ARGUMENT_PREVIEW_LINES: usize = 12;
/// A one-line string argument longer than this is shown as a block.
const INLINE_ARGUMENT_CHARS: usize = 160;

/// Appends one tool call: its name and its arguments.
pub fn push_tool_call(out: &mut String, call: &ToolCall) {
    out.push_str("<div class=\"tool-call\" data-call-id=\"");
    push_escaped(out, &call.id);
    out.push_str("\"><div class=\"tool-head\"><span class=\"tool-name\">");
    push_escaped(out, &call.name);
    out.push_str("</span>");
    if let Some(intent) = call.intent.as_deref().filter(|i| !i.is_empty()) {
        out.push_str(" <span class=\"tool-intent\">");
        push_escaped(out, intent);
        out.push_str("</span>");
    }
    out.push_str("</div>");
    if call.name == "bash"
        && let Some(Value::String(command)) = call.arguments.get("command")
    {
        push_long_text(out, &format!("$ {command}"), "command", ARGUMENT_PREVIEW_LINES);
        push_arguments(out, call.arguments.iter().filter(|(k, _)| k.as_str() != "command"));
    } else {
        push_arguments(out, call.arguments.iter());
    }
    out.push_str("</div>");
}

fn push_arguments<'a>(out: &mut String, arguments: impl Iterator<Item = (&'a String, &'a Value)>) {
    let mut opened = false;
    for (key, value) in arguments {
        if !opened {
            out.push_str("<dl class=\"arguments\">");
            opened = true;
        }
        out.push_str("<dt>");
        push_escaped(out, key);
        out.push_str("</dt><dd>");
        match value {
            Value::String(s) if !s.contains('\n') && s.chars().count() <= INLINE_ARGUMENT_CHARS => {
                out.push_str("<span class=\"arg-value\">");
                push_escaped(out, s);
                out.push_str("</span>");
            }
            Value::String(s) => push_long_text(out, s, "arg-text", ARGUMENT_PREVIEW_LINES),
            other => {
                let compact = other.to_string();
                if compact.chars().count() <= INLINE_ARGUMENT_CHARS {
                    out.push_str("<code class=\"arg-json\">");
                    push_escaped(out, &compact);
                    out.push_str("</code>");
                } else {
                    let pretty = serde_json::to_string_pretty(other).unwrap_or(compact);
                    push_long_text(out, &pretty, "arg-text", ARGUMENT_PREVIEW_LINES);
                }
            }
        }
        out.push_str("</dd>");
    }
    if opened {
        out.push_str("</dl>");
    }
}

/// Appends a tool result: the tool's name, its text (collapsed when long), its images, and an
/// `edit` diff when the details carry one.
pub fn push_tool_result(out: &mut String, result: &ToolResultMessage) {
    out.push_str("<div class=\"tool-head\"><span class=\"tool-name\">");
    push_escaped(out, &result.tool_name);
    out.push_str("</span>");
    if result.is_error {
        out.push_str(" <span class=\"badge error\">error</span>");
    } else if result.is_warning == Some(true) {
        out.push_str(" <span class=\"badge warning\">warning</span>");
    }
    out.push_str("</div>");
    let text = result.text();
    if text.is_empty() && result.content.iter().all(|c| matches!(c, UserContent::Text(_))) {
        out.push_str("<div class=\"note\">(no output)</div>");
    } else if !text.is_empty() {
        push_long_text(out, &text, "output", OUTPUT_PREVIEW_LINES);
    }
    for block in &result.content {
        if let UserContent::Image(image) = block {
            push_image(out, image);
        }
    }
    if let Some(diff) = result.details.as_ref().and_then(|d| d.get("diff")).and_then(Value::as_str) {
        push_diff(out, diff);
    }
}

/// Appends a diff in the `edit` tool's format (`+`, `-` or space, line number, text).
pub fn push_diff(out: &mut String, diff: &str) {
    out.push_str("<pre class=\"diff\">");
    for line in diff.lines() {
        let class = match line.as_bytes().first() {
            Some(b'+') => "add",
            Some(b'-') => "del",
            _ => "ctx",
        };
        out.push_str("<span class=\"");
        out.push_str(class);
        out.push_str("\">");
        push_escaped(out, line);
        out.push_str("</span>\n");
    }
    out.push_str("</pre>");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, args: Value) -> ToolCall {
        let Value::Object(arguments) = args else { panic!("arguments must be an object") };
        ToolCall { id: "call_1".into(), name: name.into(), arguments, thought_signature: None, intent: None }
    }

    #[test]
    fn bash_calls_read_as_a_shell_line() {
        let mut out = String::new();
        push_tool_call(&mut out, &call("bash", json!({"command": "ls <dir>", "timeout": 5})));
        insta::assert_snapshot!(out, @r#"<div class="tool-call" data-call-id="call_1"><div class="tool-head"><span class="tool-name">bash</span></div><pre class="command">$ ls &lt;dir&gt;</pre><dl class="arguments"><dt>timeout</dt><dd><code class="arg-json">5</code></dd></dl></div>"#);
    }

    #[test]
    fn multi_line_arguments_are_blocks() {
        let mut out = String::new();
        push_tool_call(&mut out, &call("write", json!({"path": "a.txt", "content": "one\ntwo"})));
        assert!(out.contains("<dt>path</dt><dd><span class=\"arg-value\">a.txt</span></dd>"), "{out}");
        assert!(out.contains("<dt>content</dt><dd><pre class=\"arg-text\">one\ntwo</pre></dd>"), "{out}");
    }

    #[test]
    fn diffs_are_coloured_per_line() {
        let mut out = String::new();
        push_diff(&mut out, " 1 a\n-2 <b>\n+2 c");
        assert_eq!(
            out,
            "<pre class=\"diff\"><span class=\"ctx\"> 1 a</span>\n<span class=\"del\">-2 &lt;b&gt;</span>\n<span class=\"add\">+2 c</span>\n</pre>"
        );
    }
}
