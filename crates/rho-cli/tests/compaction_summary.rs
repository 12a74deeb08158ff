//! Compaction and branch summaries against a real HTTP model server (rho-mock-llm speaking the
//! Anthropic Messages wire format): the requests rho sends and the summaries it builds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rho_ai::StreamOptions;
use rho_coding_agent::compaction::{
    BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, BranchSummaryOptions, CompactionError, CompactionSettings,
    SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, SummaryRequest, TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT, compact, entries_to_summarize, generate_branch_summary, prepare_compaction,
};
use rho_mock_llm::{MockServer, RecordedRequest, Script, Turn};
use rho_session::{NewCompaction, Session};
use rho_types::types::{
    AssistantContent, AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserContent, UserMessage,
    UserMessageContent,
};
use rho_types::{AgentMessage, InputKind, Model, ThinkingLevel};
use serde_json::{Value, json};

fn model(server: &MockServer, reasoning: bool) -> Model {
    Model {
        id: "mock-model".into(),
        name: "Mock".into(),
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        base_url: server.url(),
        reasoning,
        input: vec![InputKind::Text],
        cost: Default::default(),
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
        input_limits: None,
        sampling: None,
    }
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("test-key".into()), ..StreamOptions::default() }
}

/// A summary request to `model` at level high, without instructions or retries.
fn request(model: &Model) -> SummaryRequest<'_> {
    SummaryRequest { model, options: options(), custom_instructions: None, retry: None, thinking: ThinkingLevel::High }
}

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
        synthetic: None,
        attribution: None,
        timestamp: 1,
    })
}

fn assistant(content: Vec<AssistantContent>) -> AgentMessage {
    let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "mock-model");
    a.content = content;
    AgentMessage::Assistant(a)
}

fn text(s: &str) -> AssistantContent {
    AssistantContent::Text(TextContent::new(s))
}

fn call(name: &str, args: Value) -> AssistantContent {
    let Value::Object(arguments) = args else { panic!("arguments must be an object") };
    AssistantContent::ToolCall(ToolCall {
        id: format!("toolu_{name}"),
        name: name.into(),
        arguments,
        thought_signature: None,
        intent: None,
    })
}

fn result(name: &str, s: &str) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: format!("toolu_{name}"),
        tool_name: name.into(),
        content: vec![UserContent::text(s)],
        details: None,
        is_error: false,
        is_warning: None,
        timestamp: 3,
    })
}

fn session() -> Session {
    Session::in_memory(Path::new("/work"))
}

/// The system prompt, output cap, thinking option and single user text of a recorded request.
struct Sent {
    system: String,
    max_tokens: u64,
    thinking: Option<Value>,
    prompt: String,
}

fn sent(request: &RecordedRequest) -> Sent {
    let body = &request.body;
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "one user message: {body}");
    assert_eq!(messages[0]["role"], "user");
    assert!(body.get("tools").is_none());
    Sent {
        system: body["system"][0]["text"].as_str().expect("system").to_owned(),
        max_tokens: body["max_tokens"].as_u64().expect("max_tokens"),
        thinking: body.get("thinking").cloned(),
        prompt: messages[0]["content"][0]["text"].as_str().expect("user text").to_owned(),
    }
}

const SETTINGS: CompactionSettings = CompactionSettings { reserve_tokens: 16_384, keep_recent_tokens: 100 };

#[tokio::test]
async fn compaction_updates_the_previous_summary_with_a_focus() {
    let server = MockServer::start(Script::new(vec![Turn::text("## Goal\nShip the parser")])).await.unwrap();
    let model = model(&server, false);

    let mut s = session();
    let u0 = s.append_message(&user("Read the old code")).unwrap();
    s.append_message(&assistant(vec![call("read", json!({"path": "old.rs"}))])).unwrap();
    s.append_message(&result("read", "fn old() {}")).unwrap();
    s.append_compaction(NewCompaction {
        summary: "## Goal\nRead the old code".into(),
        first_kept_entry_id: u0.to_string(),
        tokens_before: 5000,
        details: Some(json!({"readFiles": ["old.rs"], "modifiedFiles": []})),
        ..NewCompaction::default()
    })
    .unwrap();
    s.append_message(&user("Fix the parser")).unwrap();
    s.append_message(&assistant(vec![
        text("Editing now."),
        call("edit", json!({"path": "src/parser.rs", "oldText": "a", "newText": "b"})),
    ]))
    .unwrap();
    s.append_message(&result("edit", "Successfully replaced text in src/parser.rs.")).unwrap();
    let kept = s.append_message(&user(&"q".repeat(400))).unwrap();
    s.append_message(&assistant(vec![text("working on it")])).unwrap();

    let preparation = prepare_compaction(&s.branch_entries(), SETTINGS).unwrap().expect("something to compact");
    assert_eq!(preparation.first_kept_entry_id, kept.as_str());
    assert!(!preparation.is_split_turn);

    let output = compact(&preparation, SummaryRequest { custom_instructions: Some("the parser"), ..request(&model) })
        .await
        .unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("test-key"));
    let sent = sent(&requests[0]);
    assert_eq!(sent.system, SUMMARIZATION_SYSTEM_PROMPT);
    assert_eq!(sent.max_tokens, 13_107);
    assert_eq!(sent.thinking, None);
    // The previous compaction kept its messages from u0 on: they are in the context, so they
    // are summarized again (its own entry is not).
    let conversation = concat!(
        "[User]: Read the old code\n\n",
        r#"[Assistant tool calls]: read(path="old.rs")"#,
        "\n\n[Tool result]: fn old() {}\n\n",
        "[User]: Fix the parser\n\n",
        "[Assistant]: Editing now.\n\n",
        r#"[Assistant tool calls]: edit(path="src/parser.rs", oldText="a", newText="b")"#,
        "\n\n[Tool result]: Successfully replaced text in src/parser.rs."
    );
    assert_eq!(
        sent.prompt,
        format!(
            "<conversation>\n{conversation}\n</conversation>\n\n<previous-summary>\n## Goal\nRead the old code\n</previous-summary>\n\n{UPDATE_SUMMARIZATION_PROMPT}\n\nAdditional focus: the parser"
        )
    );

    assert_eq!(
        output.summary,
        "## Goal\nShip the parser\n\n<read-files>\nold.rs\n</read-files>\n\n<modified-files>\nsrc/parser.rs\n</modified-files>"
    );
    assert_eq!(output.first_kept_entry_id, kept.as_str());
    assert_eq!(output.details, json!({"readFiles": ["old.rs"], "modifiedFiles": ["src/parser.rs"]}));
    assert!(output.tokens_before > 0);

    // Recorded, the compaction leaves the summary and the kept messages in context.
    s.append_compaction(output.clone().into_new_compaction()).unwrap();
    let context = s.build_context();
    let roles: Vec<&str> = context.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant"]);
    let AgentMessage::CompactionSummary(summary) = &context.messages[0] else { unreachable!() };
    assert_eq!(summary.summary, output.summary);
    // A second compaction right away has nothing new to do.
    assert_eq!(prepare_compaction(&s.branch_entries(), SETTINGS), Ok(None));
}

#[tokio::test]
async fn a_first_compaction_uses_the_initial_prompt() {
    let server = MockServer::start(Script::new(vec![Turn::text("S")])).await.unwrap();
    let model = model(&server, false);
    let mut s = session();
    s.append_message(&user("hello")).unwrap();
    s.append_message(&assistant(vec![text("hi")])).unwrap();
    s.append_message(&user(&"z".repeat(400))).unwrap();
    let preparation = prepare_compaction(&s.branch_entries(), SETTINGS).unwrap().unwrap();
    let output = compact(&preparation, request(&model)).await.unwrap();
    let sent = sent(&server.requests()[0]);
    assert_eq!(
        sent.prompt,
        format!("<conversation>\n[User]: hello\n\n[Assistant]: hi\n</conversation>\n\n{SUMMARIZATION_PROMPT}")
    );
    // No files touched: no file blocks.
    assert_eq!(output.summary, "S");
}

/// A turn whose end is kept and whose beginning is summarized apart: u0 a0 | u1 a1 r1 || a2.
fn split_turn_session(with_history: bool) -> Session {
    let mut s = session();
    if with_history {
        s.append_message(&user("Set up the project")).unwrap();
        s.append_message(&assistant(vec![text("Done.")])).unwrap();
    }
    s.append_message(&user("Refactor the lexer")).unwrap();
    s.append_message(&assistant(vec![call("read", json!({"path": "src/lexer.rs"}))])).unwrap();
    s.append_message(&result("read", "pub fn lex() {}")).unwrap();
    s.append_message(&assistant(vec![text(&"w".repeat(800))])).unwrap();
    s
}

#[tokio::test]
async fn a_split_turn_sends_two_requests_at_once_and_merges_them() {
    let server = MockServer::start(Script::new(vec![
        Turn::text("PREFIX SUMMARY").when_body_contains("## Original Request"),
        Turn::text("HISTORY SUMMARY").when_body_contains("## Critical Context"),
    ]))
    .await
    .unwrap();
    let model = model(&server, true);
    let s = split_turn_session(true);
    let preparation = prepare_compaction(&s.branch_entries(), SETTINGS).unwrap().unwrap();
    assert!(preparation.is_split_turn);

    let output = compact(&preparation, request(&model)).await.unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let (prefix, history): (Vec<Sent>, Vec<Sent>) =
        requests.iter().map(sent).partition(|s| s.prompt.contains("## Original Request"));
    let (prefix, history) = (&prefix[0], &history[0]);

    assert_eq!(history.system, SUMMARIZATION_SYSTEM_PROMPT);
    assert_eq!(
        history.prompt,
        format!(
            "<conversation>\n[User]: Set up the project\n\n[Assistant]: Done.\n</conversation>\n\n{SUMMARIZATION_PROMPT}"
        )
    );
    // The model reasons: both summaries think at the session's level, high here, as pi 1.6 asks
    // (16384 budget tokens on top of each request's cap).
    let high = json!({"type": "enabled", "budget_tokens": 16_384, "display": "summarized"});
    assert_eq!(history.thinking, Some(high.clone()));
    assert_eq!(history.max_tokens, 13_107 + 16_384);

    assert_eq!(prefix.system, SUMMARIZATION_SYSTEM_PROMPT);
    assert_eq!(prefix.thinking, Some(high));
    assert_eq!(prefix.max_tokens, 8192 + 16_384);
    assert_eq!(
        prefix.prompt,
        format!(
            "<conversation>\n[User]: Refactor the lexer\n\n[Assistant tool calls]: read(path=\"src/lexer.rs\")\n\n[Tool result]: pub fn lex() {{}}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"
        )
    );

    assert_eq!(
        output.summary,
        "HISTORY SUMMARY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX SUMMARY\n\n<read-files>\nsrc/lexer.rs\n</read-files>"
    );
}

#[tokio::test]
async fn a_split_first_turn_has_no_prior_history() {
    let server = MockServer::start(Script::new(vec![Turn::text("PREFIX")])).await.unwrap();
    let model = model(&server, false);
    let s = split_turn_session(false);
    let preparation = prepare_compaction(&s.branch_entries(), SETTINGS).unwrap().unwrap();
    assert!(preparation.is_split_turn && preparation.messages_to_summarize.is_empty());
    let output = compact(&preparation, request(&model)).await.unwrap();
    assert_eq!(server.requests().len(), 1);
    assert!(sent(&server.requests()[0]).prompt.contains("## Original Request"));
    assert!(output.summary.starts_with("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"));
}

/// A split turn right after a compaction: nothing new before the turn, so the history part is the
/// previous summary as it stands; the caller's focus reaches the turn-prefix request.
#[tokio::test]
async fn a_split_turn_after_a_compaction_keeps_the_previous_summary() {
    let server = MockServer::start(Script::new(vec![Turn::text("PREFIX")])).await.unwrap();
    let model = model(&server, false);
    let s = split_turn_session(false);
    let mut preparation = prepare_compaction(&s.branch_entries(), SETTINGS).unwrap().unwrap();
    preparation.previous_summary = Some("## Goal\nOld work".into());
    let request = SummaryRequest { custom_instructions: Some("the lexer"), ..request(&model) };
    let output = compact(&preparation, request).await.unwrap();
    assert_eq!(server.requests().len(), 1);
    assert!(sent(&server.requests()[0]).prompt.ends_with("\n\nAdditional focus: the lexer"));
    assert!(output.summary.starts_with("## Goal\nOld work\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"));
}

#[tokio::test]
async fn an_error_reply_fails_the_compaction() {
    let server = MockServer::start(Script::new(vec![Turn::error(400, "the mock refuses")])).await.unwrap();
    let model = model(&server, false);
    let mut s = session();
    s.append_message(&user("a")).unwrap();
    s.append_message(&assistant(vec![text("b")])).unwrap();
    let preparation = prepare_compaction(&s.branch_entries(), SETTINGS).unwrap().unwrap();
    let error = compact(&preparation, request(&model)).await.unwrap_err();
    let CompactionError::Summarization(message) = &error else {
        panic!("expected a summarization failure, got {error:?}");
    };
    assert!(message.contains("the mock refuses"), "{message}");
    assert!(error.to_string().starts_with("Summarization failed: "));
}

#[tokio::test]
async fn a_failed_turn_prefix_request_names_the_turn_prefix() {
    let server = MockServer::start(Script::new(vec![
        Turn::stream_error("api_error", "prefix went wrong").when_body_contains("## Original Request"),
        Turn::text("HISTORY").when_body_contains("## Critical Context"),
    ]))
    .await
    .unwrap();
    let model = model(&server, false);
    let s = split_turn_session(true);
    let preparation = prepare_compaction(&s.branch_entries(), SETTINGS).unwrap().unwrap();
    let error = compact(&preparation, request(&model)).await.unwrap_err();
    assert!(error.to_string().starts_with("Turn prefix summarization failed: "), "{error}");
    assert!(error.to_string().contains("prefix went wrong"), "{error}");
}

#[tokio::test]
async fn cancelling_mid_request_cancels_the_compaction() {
    let server = MockServer::start(Script::new(vec![Turn::text("late").with_delay_ms(30_000)])).await.unwrap();
    let model = model(&server, false);
    let mut s = session();
    s.append_message(&user("a")).unwrap();
    s.append_message(&assistant(vec![text("b")])).unwrap();
    let preparation = prepare_compaction(&s.branch_entries(), SETTINGS).unwrap().unwrap();
    let options = options();
    let cancel = options.cancel.clone();
    let task = tokio::spawn(async move { compact(&preparation, SummaryRequest { options, ..request(&model) }).await });
    // Cancel once the request has reached the server.
    while server.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    cancel.cancel();
    let outcome = task.await.unwrap();
    assert_eq!(outcome, Err(CompactionError::Cancelled));
    assert_eq!(outcome.unwrap_err().to_string(), "Compaction cancelled");
}

#[tokio::test]
async fn branch_summary_request_and_stored_text() {
    let server =
        MockServer::start(Script::new(vec![Turn::text("## Goal\nTry another approach"), Turn::text("REPLACED")]))
            .await
            .unwrap();
    let model = model(&server, true);
    let mut s = session();
    let root = s.append_message(&user("Start")).unwrap();
    s.append_message(&assistant(vec![text("ok")])).unwrap();
    s.append_message(&user("Try it with a trie")).unwrap();
    s.append_message(&assistant(vec![call("write", json!({"path": "trie.rs", "content": "x"}))])).unwrap();
    let leaf = s.append_message(&result("write", "Successfully wrote 1 bytes to trie.rs")).unwrap();

    let abandoned = entries_to_summarize(&s, Some(leaf.as_str()), Some(root.as_str()));
    assert_eq!(abandoned.len(), 4);
    let output = generate_branch_summary(
        &abandoned,
        SummaryRequest { custom_instructions: Some("the trie"), thinking: ThinkingLevel::Off, ..request(&model) },
        BranchSummaryOptions::default(),
    )
    .await
    .unwrap();

    let sent_first = sent(&server.requests()[0]);
    assert_eq!(sent_first.system, SUMMARIZATION_SYSTEM_PROMPT);
    assert_eq!(sent_first.max_tokens, 2048);
    // The session's level is off: thinking is turned off although the model reasons, as pi 1.6
    // says it.
    assert_eq!(sent_first.thinking, Some(json!({"type": "disabled"})));
    assert_eq!(
        sent_first.prompt,
        format!(
            "<conversation>\n[Assistant]: ok\n\n[User]: Try it with a trie\n\n[Assistant tool calls]: write(path=\"trie.rs\", content=\"x\")\n</conversation>\n\n{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: the trie"
        )
    );
    assert_eq!(
        output.summary,
        format!(
            "{BRANCH_SUMMARY_PREAMBLE}## Goal\nTry another approach\n\n<modified-files>\ntrie.rs\n</modified-files>"
        )
    );
    assert_eq!(output.modified_files, ["trie.rs"]);

    // Replacing the instructions sends the caller's text alone.
    let replaced = generate_branch_summary(
        &abandoned,
        SummaryRequest {
            custom_instructions: Some("Just list the files."),
            thinking: ThinkingLevel::Off,
            ..request(&model)
        },
        BranchSummaryOptions { replace_instructions: true, ..BranchSummaryOptions::default() },
    )
    .await
    .unwrap();
    let sent_second = sent(&server.requests()[1]);
    assert!(sent_second.prompt.ends_with("</conversation>\n\nJust list the files."));
    assert!(replaced.summary.starts_with(BRANCH_SUMMARY_PREAMBLE));

    // Recorded, the summary carries its file lists for the next one.
    let entry = s.branch_with_summary(Some(root.as_str()), output.into_new_branch_summary()).unwrap();
    let stored = s.get_entry(entry.as_str()).unwrap();
    let rho_session::SessionEntry::BranchSummary(b) = stored else { unreachable!() };
    assert_eq!(b.details, Some(json!({"readFiles": [], "modifiedFiles": ["trie.rs"]})));
}
