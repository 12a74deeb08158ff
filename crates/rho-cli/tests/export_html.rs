//! The HTML export end to end: session files written with rho-session in a temporary
//! directory, exported, and the page checked by structure (escaping, markdown and highlighting,
//! every branch in the embedded tree data, thinking and tool calls, summaries, the error texts).
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

use std::path::{Path, PathBuf};

use base64::Engine;
use rho_coding_agent::export_html::{
    ExportError, ExportOptions, ToolInfo, default_output_path, export_session, export_session_file, render_html,
};
use rho_session::{NewBranchSummary, NewCompaction, NewCustomMessage, Session};
use rho_types::types::{
    AssistantContent, AssistantMessage, ImageContent, StopReason, TextContent, ThinkingContent, ToolCall,
    ToolResultMessage, UserContent, UserMessage, UserMessageContent,
};
use rho_types::{AgentMessage, BashExecutionMessage, ThinkingLevel};
use serde_json::{Value, json};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::prompt(text, Vec::new()))
}

fn assistant(content: Vec<AssistantContent>) -> AgentMessage {
    let mut message = AssistantMessage::empty("anthropic-messages", "anthropic", "claude-test");
    message.content = content;
    message.usage.input = 1200;
    message.usage.output = 30;
    message.usage.cost.total = 0.00675;
    if message.tool_calls().next().is_some() {
        message.stop_reason = StopReason::ToolUse;
    }
    AgentMessage::Assistant(message)
}

fn text(t: &str) -> AssistantContent {
    AssistantContent::Text(TextContent::new(t))
}

fn tool_call(id: &str, name: &str, arguments: Value) -> AssistantContent {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
    AssistantContent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        thought_signature: None,
        intent: None,
    })
}

fn tool_result(id: &str, name: &str, content: Vec<UserContent>, is_error: bool) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content,
        details: None,
        is_error,
        is_warning: None,
        timestamp: 0,
    })
}

/// A session file in a fresh temporary directory.
fn new_session() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::create_at(&dir.path().join("2026-03-15T10-00-00-000Z_s.jsonl"), dir.path(), None).unwrap();
    (dir, session)
}

/// The JSON in the page's data block.
fn embedded_data(html: &str) -> Value {
    let start = html.find("<script type=\"application/json\" id=\"session-data\">").unwrap();
    let rest = &html[start..];
    let body = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    serde_json::from_str(body).unwrap()
}

/// The HTML between `<section id="messages">` and its end (the branch on show).
fn message_view(html: &str) -> &str {
    let start = html.find("<section id=\"messages\">").unwrap();
    let end = start + html[start..].find("</section>\n</main>").unwrap();
    &html[start..end]
}

/// The hidden store of the other branches.
fn entry_store(html: &str) -> &str {
    let start = html.find("<div id=\"entry-store\" hidden>").unwrap();
    let end = start + html[start..].find("<script").unwrap();
    &html[start..end]
}

fn export(session: &Session, options: &ExportOptions) -> String {
    let out = session.session_file().unwrap().with_extension("html");
    let written = export_session_file(session.session_file().unwrap(), Some(&out), options).unwrap();
    assert_eq!(written, out);
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn script_in_user_text_and_tool_output_is_escaped() {
    let (_dir, mut s) = new_session();
    s.append_message(&user("<script>alert('user')</script>")).unwrap();
    s.append_message(&assistant(vec![tool_call("c1", "bash", json!({"command": "cat x.html"}))])).unwrap();
    let output = UserContent::text("<script>alert('tool')</script>\n<img src=x onerror=alert(1)>");
    s.append_message(&tool_result("c1", "bash", vec![output], false)).unwrap();
    let html = export(&s, &ExportOptions::default());

    assert!(!html.contains("<script>alert"), "an injected script survived");
    assert!(!html.contains("<img src=x"), "an injected tag survived");
    assert!(html.contains("&lt;script&gt;alert(&#39;user&#39;)&lt;/script&gt;"));
    assert!(html.contains("&lt;script&gt;alert(&#39;tool&#39;)&lt;/script&gt;"));
    // Only the data block and the viewer are scripts.
    assert_eq!(html.matches("<script").count(), 2);
    assert_eq!(html.matches("</script>").count(), 2);
    assert_eq!(embedded_data(&html)["entries"][0]["message"]["content"][0]["text"], "<script>alert('user')</script>");
}

#[test]
fn markdown_is_rendered_and_code_highlighted() {
    let (_dir, mut s) = new_session();
    s.append_message(&user("Show me *main*")).unwrap();
    s.append_message(&assistant(vec![text(
        "# Heading\n\nSome `code`:\n\n```rust\nfn main() { println!(\"hi\"); }\n```\n",
    )]))
    .unwrap();
    let html = export(&s, &ExportOptions::default());
    let view = message_view(&html);
    assert!(view.contains("<p>Show me <em>main</em></p>"), "{view}");
    assert!(view.contains("<h1>Heading</h1>"), "{view}");
    assert!(view.contains("<code>code</code>"), "{view}");
    assert!(
        view.contains("<pre class=\"code sy-code\" data-lang=\"rust\"><code><span class=\"sy-source sy-rust\">"),
        "{view}"
    );
    assert!(html.contains(".sy-code {"), "the theme stylesheet is missing");
}

#[test]
fn pages_without_code_carry_no_theme_stylesheet() {
    let (_dir, mut s) = new_session();
    s.append_message(&user("hello")).unwrap();
    let html = export(&s, &ExportOptions::default());
    assert!(!html.contains(".sy-code"));
}

#[test]
fn every_branch_is_in_the_tree_data_and_the_leaf_is_marked() {
    let (_dir, mut s) = new_session();
    s.append_model_change("anthropic", "claude-test").unwrap();
    let q = s.append_message(&user("question")).unwrap();
    let first = s.append_message(&assistant(vec![text("first answer")])).unwrap();
    s.branch(q.as_str()).unwrap();
    let second = s.append_message(&assistant(vec![text("second answer")])).unwrap();
    let summary = s
        .branch_with_summary(
            Some(first.as_str()),
            NewBranchSummary { summary: "went back".into(), ..Default::default() },
        )
        .unwrap();
    let third = s.append_message(&user("third branch")).unwrap();
    s.branch(second.as_str()).unwrap();
    let leaf = s.leaf_id().unwrap().clone();
    assert_eq!(leaf, second);

    let html = export(&s, &ExportOptions::default());
    let data = embedded_data(&html);
    assert_eq!(data["leafId"], leaf.as_str());
    let tree = data["tree"].as_array().unwrap();
    let tree_ids: Vec<&str> = tree.iter().map(|n| n["id"].as_str().unwrap()).collect();
    let entry_ids: Vec<&str> = s.entries().iter().map(|e| e.id().as_str()).collect();
    assert_eq!(tree_ids.len(), entry_ids.len());
    for id in &entry_ids {
        assert!(tree_ids.contains(id), "{id} missing from the tree");
    }
    assert_eq!(data["entries"].as_array().unwrap().len(), entry_ids.len());
    let parent_of = |id: &str| tree.iter().find(|n| n["id"] == id).unwrap()["parentId"].clone();
    assert_eq!(parent_of(second.as_str()), q.as_str());
    assert_eq!(parent_of(summary.as_str()), first.as_str());
    assert_eq!(parent_of(third.as_str()), summary.as_str());
    assert_eq!(tree.iter().find(|n| n["id"] == q.as_str()).unwrap()["depth"], 0);
    assert_eq!(tree.iter().find(|n| n["id"] == second.as_str()).unwrap()["depth"], 1);

    // The current branch is on show, the others wait in the store.
    let (view, store) = (message_view(&html), entry_store(&html));
    let shown = |id: &str| view.contains(&format!("data-id=\"{id}\""));
    let stored = |id: &str| store.contains(&format!("data-id=\"{id}\""));
    assert!(shown(q.as_str()) && shown(second.as_str()));
    assert!(stored(first.as_str()) && stored(third.as_str()));
    assert!(!shown(first.as_str()) && !stored(second.as_str()));
    assert!(view.find("question").unwrap() < view.find("second answer").unwrap());
}

#[test]
fn thinking_tool_calls_and_results_are_shown() {
    let (_dir, mut s) = new_session();
    s.append_message(&user("list files")).unwrap();
    let thinking = ThinkingContent { thinking: "I should run ls".into(), thinking_signature: None, redacted: None };
    s.append_message(&assistant(vec![
        AssistantContent::Thinking(thinking),
        text("Listing."),
        tool_call("c1", "bash", json!({"command": "ls -la", "timeout": 10})),
        tool_call("c2", "write", json!({"path": "a.txt", "content": "line one\nline two"})),
    ]))
    .unwrap();
    let long_output: String = (1..=50).map(|i| format!("file{i}.txt\n")).collect();
    s.append_message(&tool_result("c1", "bash", vec![UserContent::text(long_output)], false)).unwrap();
    s.append_message(&tool_result("c2", "write", vec![UserContent::text("permission denied")], true)).unwrap();
    let html = export(&s, &ExportOptions::default());
    let view = message_view(&html);

    assert!(view.contains("<details class=\"thinking\"><summary>Thinking"), "{view}");
    assert!(view.contains("<div class=\"thinking-text\">I should run ls</div>"), "{view}");
    assert!(
        view.contains("<span class=\"tool-name\">bash</span>")
            && view.contains("<pre class=\"command\">$ ls -la</pre>")
    );
    assert!(view.contains("<dt>path</dt><dd><span class=\"arg-value\">a.txt</span></dd>"), "{view}");
    assert!(view.contains("<pre class=\"arg-text\">line one\nline two</pre>"), "{view}");
    // The long output is collapsed behind a preview; the error result is marked.
    assert!(
        view.contains("<details class=\"collapsible output\"><summary><span class=\"preview\">file1.txt\n"),
        "{view}"
    );
    assert!(view.contains("… 40 more lines"), "{view}");
    assert!(view.contains("<span class=\"badge error\">error</span>"), "{view}");
    // The toggles the keyboard drives are there.
    assert!(html.contains("id=\"toggle-thinking\"") && html.contains("id=\"toggle-output\""));
    assert!(html.contains("Download JSONL"));
}

#[test]
fn images_summaries_and_other_entries_are_rendered() {
    let (_dir, mut s) = new_session();
    s.append_thinking_level_change(ThinkingLevel::High).unwrap();
    let image = ImageContent { data: PNG.into(), mime_type: "image/png".into() };
    s.append_message(&AgentMessage::User(UserMessage::prompt("what is this?", vec![image.clone()]))).unwrap();
    let kept = s.append_message(&assistant(vec![text("a pixel")])).unwrap();
    s.append_message(&AgentMessage::BashExecution(BashExecutionMessage {
        command: "make test".into(),
        output: "FAILED".into(),
        exit_code: Some(2),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp: 0,
        exclude_from_context: None,
    }))
    .unwrap();
    s.append_custom_message(NewCustomMessage {
        custom_type: "reminder".into(),
        content: UserMessageContent::Text("**remember** the tests".into()),
        display: false,
        details: None,
        attribution: None,
    })
    .unwrap();
    s.append_compaction(NewCompaction {
        summary: "## Goal\nFix the build".into(),
        first_kept_entry_id: kept.to_string(),
        tokens_before: 50_000,
        ..Default::default()
    })
    .unwrap();
    s.append_model_change("openai", "gpt-test").unwrap();
    s.append_label(kept.as_str(), Some("checkpoint")).unwrap();
    s.append_message(&tool_result("c9", "read", vec![UserContent::Image(image)], false)).unwrap();
    let html = export(&s, &ExportOptions::default());
    let view = message_view(&html);

    let img = format!("<img class=\"image\" alt=\"image (image/png)\" src=\"data:image/png;base64,{PNG}\">");
    assert_eq!(view.matches(&img).count(), 2, "{view}");
    assert!(view.contains("Thinking: high"));
    assert!(view.contains("<pre class=\"command\">$ make test</pre>") && view.contains("exit code 2"), "{view}");
    assert!(view.contains("reminder (hidden in the app)") && view.contains("<strong>remember</strong>"), "{view}");
    assert!(view.contains("Earlier conversation summarized (50k tokens before)"), "{view}");
    assert!(view.contains("<h2>Goal</h2>"), "{view}");
    assert!(view.contains("Model: openai/gpt-test"));
    assert!(view.contains("<span class=\"badge label\">checkpoint</span>"), "{view}");
}

#[test]
fn header_counts_every_branch() {
    let (_dir, mut s) = new_session();
    let q = s.append_message(&user("q")).unwrap();
    s.append_message(&assistant(vec![text("a1"), tool_call("c1", "ls", json!({}))])).unwrap();
    s.branch(q.as_str()).unwrap();
    s.append_message(&assistant(vec![text("a2")])).unwrap();
    let html = export(&s, &ExportOptions::default());
    assert!(html.contains("<dd>1 user, 2 assistant, 0 tool results, 1 tool calls</dd>"), "{html}");
    assert!(html.contains("<dt>Model</dt><dd>anthropic/claude-test</dd>"));
    assert!(html.contains("<dd>↑2.4k ↓60 R0 W0</dd>"), "{html}");
    assert!(html.contains(&format!("<dt>Cost</dt><dd>${:.3}</dd>", 0.00675 + 0.00675)), "{html}");
    assert!(html.contains("3 in 2 branches"), "{html}");
    assert!(html.contains(&format!("<dd>{}</dd>", s.session_id())));
}

#[test]
fn system_prompt_and_tools_are_listed() {
    let (_dir, mut s) = new_session();
    s.append_message(&user("hi")).unwrap();
    let prompt: String = (1..=30).map(|i| format!("prompt line {i} <rules>\n")).collect();
    let tools = [ToolInfo {
        name: "read".into(),
        description: "Read a file.\nMore detail.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read"},
                "offset": {"type": "number"},
                "mode": {"type": "string", "enum": ["text", "<bin>"]}
            },
            "required": ["path"]
        }),
    }];
    let html = export(&s, &ExportOptions { system_prompt: Some(&prompt), tools: &tools });
    assert!(html.contains("<h2>System prompt</h2><details class=\"collapsible prompt\"><summary><span class=\"preview\">prompt line 1 &lt;rules&gt;\n"));
    assert!(html.contains("prompt line 10 &lt;rules&gt;</span><span class=\"more\">… 20 more lines</span>"), "{html}");
    assert!(html.contains("<h2>Tools (1)</h2>"));
    assert!(html.contains("<span class=\"tool-name\">read</span> <span class=\"tool-desc\">Read a file.</span>"));
    assert!(html.contains(
        "<dt><code>path</code> <span class=\"param-type\">string</span> <span class=\"badge\">required</span></dt><dd>File to read</dd>"
    ));
    assert!(html.contains("<dt><code>offset</code> <span class=\"param-type\">number</span></dt>"));
    assert!(html.contains("<dd> <span class=\"param-type\">one of: text, &lt;bin&gt;</span></dd>"), "{html}");
    // Without options, neither section.
    let plain = render_html(&s, &ExportOptions::default());
    assert!(!plain.contains("System prompt") && !plain.contains("class=\"tools\""));
}

#[test]
fn the_page_loads_nothing_and_admits_only_its_own_script() {
    let (_dir, mut s) = new_session();
    s.append_message(&user("see https://example.com and ![x](https://example.com/p.png)")).unwrap();
    let html = render_html(&s, &ExportOptions::default());
    for external in ["<link", "<script src", "@import", "url(", "<iframe", "<img src=\"http"] {
        assert!(!html.contains(external), "{external} in the page");
    }
    let csp_start = html.find("content=\"default-src 'none'; script-src 'sha256-").unwrap();
    let csp = &html[csp_start..csp_start + html[csp_start..].find('>').unwrap()];
    let script_start = html.rfind("<script>").unwrap() + "<script>".len();
    let script = &html[script_start..script_start + html[script_start..].find("</script>").unwrap()];
    let digest = ring::digest::digest(&ring::digest::SHA256, script.as_bytes());
    let hash = base64::engine::general_purpose::STANDARD.encode(digest.as_ref());
    assert!(csp.contains(&format!("'sha256-{hash}'")), "the policy does not admit the viewer script: {csp}");
    assert!(csp.contains("img-src data:;"));
}

#[test]
fn a_large_session_renders_every_entry() {
    let (_dir, mut s) = new_session();
    let mut ids = Vec::new();
    for i in 0..500 {
        ids.push(s.append_message(&user(&format!("question {i}"))).unwrap());
        s.append_message(&assistant(vec![text(&format!("answer {i}\n\n```python\nprint({i})\n```"))])).unwrap();
        s.append_message(&assistant(vec![tool_call(&format!("c{i}"), "read", json!({"path": "f.py"}))])).unwrap();
        s.append_message(&tool_result(&format!("c{i}"), "read", vec![UserContent::text("x = 1\n")], false)).unwrap();
    }
    s.branch(ids[250].as_str()).unwrap();
    s.append_message(&assistant(vec![text("a branch")])).unwrap();
    let html = render_html(&s, &ExportOptions::default());
    let data = embedded_data(&html);
    assert_eq!(data["tree"].as_array().unwrap().len(), s.entries().len());
    assert_eq!(html.matches("<article class=\"entry").count(), s.entries().len() - 1); // the leaf marker has none
}

#[test]
fn error_texts_are_the_reference_ones() {
    let dir = tempfile::tempdir().unwrap();
    let in_memory = Session::in_memory(dir.path());
    let err = export_session(&in_memory, None, &ExportOptions::default()).unwrap_err();
    assert!(matches!(err, ExportError::InMemorySession));
    assert_eq!(err.to_string(), "Cannot export in-memory session to HTML");

    let missing = dir.path().join("missing.jsonl");
    let err = export_session_file(&missing, None, &ExportOptions::default()).unwrap_err();
    assert_eq!(err.to_string(), format!("File not found: {}", missing.display()));

    let header_only = dir.path().join("header-only.jsonl");
    let session = Session::create_at(&header_only, dir.path(), None).unwrap();
    let out = dir.path().join("out.html");
    let err = export_session_file(&header_only, Some(&out), &ExportOptions::default()).unwrap_err();
    assert_eq!(err.to_string(), "Nothing to export yet - start a conversation first");
    let err = export_session(&session, Some(&out), &ExportOptions::default()).unwrap_err();
    assert_eq!(err.to_string(), "Nothing to export yet - start a conversation first");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let err = export_session_file(&empty, Some(&out), &ExportOptions::default()).unwrap_err();
    assert!(matches!(err, ExportError::NothingToExport));
    assert!(!out.exists());

    let mut session = session;
    session.append_message(&user("hi")).unwrap();
    let unwritable = dir.path().join("no-such-dir").join("out.html");
    let err = export_session(&session, Some(&unwritable), &ExportOptions::default()).unwrap_err();
    assert!(err.to_string().starts_with(&format!("Cannot write {}: ", unwritable.display())), "{err}");
}

#[test]
fn an_open_session_exports_to_the_given_path() {
    let (dir, mut s) = new_session();
    s.append_message(&user("hello")).unwrap();
    let out = dir.path().join("page.html");
    assert_eq!(export_session(&s, Some(&out), &ExportOptions::default()).unwrap(), out);
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("<!DOCTYPE html>"));
}

#[test]
fn default_output_path_is_named_after_the_session_file() {
    let file = Path::new("/home/me/.rho/agent/sessions/--x--/2026-03-15T10-00-00-000Z_5b0c8f0e.jsonl");
    assert_eq!(default_output_path(file), PathBuf::from("rho-session-2026-03-15T10-00-00-000Z_5b0c8f0e.html"));
    assert!(default_output_path(file).is_relative());
}
