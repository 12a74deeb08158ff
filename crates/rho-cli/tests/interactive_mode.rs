//! Interactive mode, driven as a person drives it: the real `rho` in a pseudo-terminal against
//! rho-mock-llm, keys typed, the screen read back through a terminal emulator.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use common::Env;
use interactive_support::{Terminal, keys};
use rho_mock_llm::Turn;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_its_markdown_answer_into_the_history() {
    let env = Env::new(vec![Turn::text(
        "# Plan\n\nFirst a **bold** step, then `code`:\n\n```rust\nfn main() {}\n```\n\n- one\n- two\n",
    )])
    .await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("make a plan");
    let screen = term.wait_idle_with("• two").await;
    insta::assert_snapshot!("streamed_answer", screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_runs_and_shows_its_command_and_output() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "echo tool-ran-here"})),
        Turn::text("The command ran."),
    ])
    .await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("run it");
    let screen = term.wait_idle_with("The command ran.").await;
    assert!(screen.contains("● bash echo tool-ran-here"), "{screen}");
    assert!(screen.contains("  tool-ran-here"), "{screen}");
    insta::assert_snapshot!("tool_call", screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_aborts_the_run() {
    let slow = Turn {
        chunk_size: Some(2),
        chunk_delay_ms: Some(200),
        ..Turn::text("a slow answer that takes a long while to arrive")
    };
    let env = Env::new(vec![slow]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("go slowly");
    term.wait_for("Esc to abort").await;
    term.send(keys::ESCAPE);
    let screen = term.wait_idle_with("Aborted").await;
    assert!(!screen.contains("takes a long while"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_while_working_queues_a_steering_message() {
    let slow = Turn {
        chunk_size: Some(4),
        chunk_delay_ms: Some(150),
        ..Turn::text("first answer, streamed slowly to the end")
    };
    let env = Env::new(vec![slow, Turn::text("second answer")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("first");
    term.wait_for("Esc to abort").await;
    term.submit("also this");
    term.wait_for("Steering: also this").await;
    let screen = term.wait_idle_with("second answer").await;
    assert!(screen.contains("› also this"), "the steering message is delivered as a user message:\n{screen}");
    assert!(!screen.contains("Steering:"), "{screen}");
    assert_eq!(env.request_bodies().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_selector_switches_the_model() {
    let env = Env::new(vec![]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("/mo");
    term.wait_for("/model").await;
    term.send(keys::TAB);
    term.send(keys::ENTER);
    term.wait_for("Select a model").await;
    term.send("small");
    term.wait_for("1/2").await;
    term.send(keys::ENTER);
    let screen = term.wait_for("Model: mock/mock-small").await;
    assert!(screen.lines().last().unwrap().ends_with("mock/mock-small"), "the footer names the model:\n{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_argument_is_sent_at_start_and_ctrl_d_quits() {
    let env = Env::new(vec![Turn::text("answer to the argument")]).await;
    let mut term = Terminal::start(&env, &["hello from the command line"]);
    term.wait_idle_with("answer to the argument").await;
    term.send(keys::CTRL_D);
    assert_eq!(term.exit_code().await, 0);
    // The viewport (editor and footer) is cleared on exit; the history stays.
    let screen = term.wait_until("the footer gone", |s| !s.contains("$0.0")).await;
    assert!(screen.contains("› hello from the command line"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_clears_then_quits_twice() {
    let env = Env::new(vec![]).await;
    let mut term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("draft text");
    term.wait_for("› draft text").await;
    term.send(keys::CTRL_C);
    term.wait_until("the editor cleared", |s| !s.contains("draft text")).await;
    term.send(keys::CTRL_C);
    term.wait_for("Press Ctrl+C again to quit").await;
    term.send(keys::CTRL_C);
    assert_eq!(term.exit_code().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newline_keys_make_a_multi_line_prompt() {
    let env = Env::new(vec![Turn::text("got both lines")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("line one");
    term.send(keys::SHIFT_ENTER);
    term.send("line two");
    term.send(keys::CTRL_J);
    term.send("line three");
    term.wait_for("line three").await;
    term.send(keys::ENTER);
    term.wait_idle_with("got both lines").await;
    let body = env.request_bodies().pop().unwrap();
    let sent = body["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(sent, "line one\nline two\nline three");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_lists_matching_files_and_inserts_the_chosen_path() {
    let env = Env::new(vec![Turn::text("read it")]).await;
    std::fs::create_dir_all(env.cwd.join("src")).unwrap();
    std::fs::create_dir_all(env.cwd.join("target")).unwrap();
    std::fs::write(env.cwd.join(".gitignore"), "target/\n").unwrap();
    for file in ["src/main_loop.rs", "src/mail.rs", "target/mainfile.rs"] {
        std::fs::write(env.cwd.join(file), "fn main() {}\n").unwrap();
    }
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("read @ma");
    let screen = term.wait_for("@src/main_loop.rs").await;
    let list: Vec<&str> = screen.lines().filter(|l| l.contains("  @") || l.contains("→ @")).collect();
    assert_eq!(list, vec!["→ @src/mail.rs", "  @src/main_loop.rs"], "{screen}");
    assert!(!screen.contains("mainfile"), "ignored files are not listed:\n{screen}");
    term.send(keys::DOWN);
    term.wait_for("→ @src/main_loop.rs").await;
    term.send(keys::ENTER);
    term.send("now");
    let screen = term.wait_for("› read @src/main_loop.rs now").await;
    assert!(!screen.contains("@src/mail.rs"), "the list is closed:\n{screen}");
    term.send(keys::ENTER);
    term.wait_idle_with("read it").await;
    let body = env.request_bodies().pop().unwrap();
    let sent = body["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(sent, "read @src/main_loop.rs now", "the mention is sent as typed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_closes_the_at_list() {
    let env = Env::new(vec![]).await;
    std::fs::write(env.cwd.join("notes.md"), "").unwrap();
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("@no");
    term.wait_for("→ @notes.md").await;
    term.send(keys::ESCAPE);
    let screen = term.wait_until("the list closed", |s| !s.contains("→ @notes.md")).await;
    assert!(screen.contains("› @no"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tab_completes_a_path_and_lists_the_choices() {
    let env = Env::new(vec![]).await;
    std::fs::create_dir_all(env.cwd.join("src")).unwrap();
    for file in ["src/alpha_one.rs", "src/alpha_two.rs", "src/beta.rs"] {
        std::fs::write(env.cwd.join(file), "").unwrap();
    }
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("see ./sr");
    term.wait_for("› see ./sr").await;
    term.send(keys::TAB);
    term.wait_until("the directory completed", |s| s.lines().any(|l| l == "› see ./src/")).await;
    term.send("al");
    term.send(keys::TAB);
    let screen = term.wait_for("  alpha_two.rs").await;
    assert!(screen.lines().any(|l| l == "› see ./src/alpha_"), "the common prefix:\n{screen}");
    assert!(screen.lines().any(|l| l == "  alpha_one.rs"), "{screen}");
    assert!(!screen.contains("beta.rs"), "{screen}");
    term.send("t");
    term.send(keys::TAB);
    let screen = term.wait_until("the file completed", |s| s.lines().any(|l| l == "› see ./src/alpha_two.rs")).await;
    assert!(!screen.contains("alpha_one.rs"), "the choices are gone:\n{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_picks_a_session_and_shows_its_conversation() {
    let env = Env::new(vec![Turn::text("the earlier answer")]).await;
    let mut first = Terminal::start(&env, &["an earlier question"]);
    first.wait_idle_with("the earlier answer").await;
    first.send(keys::CTRL_D);
    assert_eq!(first.exit_code().await, 0);

    let second = Terminal::start(&env, &["-r"]);
    second.wait_for("Resume a session").await;
    let picker = second.wait_for("an earlier question").await;
    assert!(picker.contains("1/1"), "{picker}");
    second.send(keys::ENTER);
    let screen = second.wait_for("the earlier answer").await;
    assert!(screen.contains("Enter send"), "{screen}");
    assert_eq!(env.session_files().len(), 1, "resuming writes to the same file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_name_and_show_the_session() {
    let env = Env::new(vec![]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("/name my work");
    term.wait_for("Session named: my work").await;
    term.submit("/session");
    let screen = term.wait_for("Messages").await;
    assert!(screen.contains("Name          my work"), "{screen}");
    term.submit("/hotkeys");
    term.wait_for("/quit                     Quit rho").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_enter_while_working_queues_a_follow_up() {
    let slow = Turn {
        chunk_size: Some(4),
        chunk_delay_ms: Some(150),
        ..Turn::text("first answer, streamed slowly to the end")
    };
    let env = Env::new(vec![slow, Turn::text("follow-up answer")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("first");
    term.wait_for("Esc to abort").await;
    term.send("and then this");
    term.send(keys::ALT_ENTER);
    term.wait_for("Follow-up: and then this").await;
    let screen = term.wait_idle_with("follow-up answer").await;
    assert!(screen.contains("first answer, streamed slowly to the end"), "the first run was not cut short:\n{screen}");
    assert!(screen.contains("› and then this"), "{screen}");
    assert_eq!(env.request_bodies().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_errors_and_retries_are_shown() {
    let env = Env::with_api(
        vec![
            Turn::text("the answer").with_thinking("pondering the question"),
            Turn::error(500, "the server broke"),
            Turn::error(500, "the server broke"),
            Turn::error(500, "the server broke"),
        ],
        "anthropic-messages",
        true,
    )
    .await;
    let term = Terminal::start(&env, &["--setting", "retry.maxRetries=2", "--setting", "retry.baseDelayMs=10"]);
    term.ready().await;
    term.submit("think");
    let screen = term.wait_idle_with("the answer").await;
    assert!(screen.contains("pondering the question"), "{screen}");
    term.submit("fail");
    let screen = term.wait_idle_with("Gave up after 2 retries").await;
    // The error once; the retries that fail the same way say so in a short line.
    assert_eq!(screen.matches("Error: 500 the server broke\n").count(), 1, "{screen}");
    assert_eq!(screen.matches("Error: the same as the last attempt").count(), 2, "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_replays_the_last_session() {
    let env = Env::new(vec![Turn::text("remembered answer")]).await;
    let mut first = Terminal::start(&env, &["what to remember"]);
    first.wait_idle_with("remembered answer").await;
    first.send(keys::CTRL_D);
    assert_eq!(first.exit_code().await, 0);
    let second = Terminal::start(&env, &["-c"]);
    let screen = second.wait_idle_with("remembered answer").await;
    assert!(screen.contains("› what to remember"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resize_redraws_the_viewport_at_the_new_width() {
    let env = Env::new(vec![]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.resize(24, 60);
    term.send("x");
    let rule = "─".repeat(60);
    let screen = term.wait_until("a 60-column rule", |s| s.lines().any(|l| l == rule)).await;
    assert!(!screen.contains(&"─".repeat(61)), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_color_drops_the_colours() {
    let env = Env::new(vec![]).await;
    let coloured = Terminal::start(&env, &[]);
    coloured.ready().await;
    assert!(coloured.is_coloured("mock/mock-model"));
    let plain = Terminal::start_with(&env, &["--no-session"], &[("NO_COLOR", "1")]);
    plain.ready().await;
    assert!(!plain.is_coloured("mock/mock-model"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ask_tool_opens_a_list_and_an_input_in_the_terminal() {
    let env = Env::new(vec![
        Turn::tool_call("ask", json!({"question": "Which colour?", "options": ["red", "green"]})),
        Turn::tool_call("ask", json!({"question": "Why?"})),
        Turn::text("noted"),
    ])
    .await;
    let term = Terminal::start(&env, &["--tools", "+ask"]);
    term.ready().await;
    term.submit("ask me");
    // The list itself (the tool call's line above it names the options too).
    term.wait_for("→ red").await;
    term.send(keys::DOWN);
    term.wait_for("→ green").await;
    term.send(keys::ENTER);
    term.wait_for("User answered: green").await;
    term.wait_for("? Why? (Enter answers, Esc dismisses)").await;
    term.submit("it is calm");
    let screen = term.wait_idle_with("noted").await;
    assert!(screen.contains("User answered: it is calm"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_p_cycles_the_model_and_shift_tab_the_thinking_level() {
    let env = Env::with_api(vec![], "anthropic-messages", true).await;
    let term = Terminal::start(&env, &["--thinking", "low"]);
    term.ready().await;
    term.wait_for("mock/mock-model • low").await;
    term.send("\x1b[Z");
    term.wait_for("Thinking: medium").await;
    term.wait_for("mock/mock-model • medium").await;
    term.send("\x10");
    let screen = term.wait_for("Model: mock/mock-small").await;
    assert!(screen.lines().last().unwrap().ends_with("mock/mock-small"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_puts_the_queued_messages_back_into_the_editor() {
    let slow = Turn {
        chunk_size: Some(2),
        chunk_delay_ms: Some(200),
        ..Turn::text("a slow answer that takes a long while to arrive")
    };
    let env = Env::new(vec![slow, Turn::text("never asked for")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("go slowly");
    term.wait_for("Esc to abort").await;
    term.submit("queued words");
    term.wait_for("Steering: queued words").await;
    term.send(keys::ESCAPE);
    term.wait_idle_with("Aborted").await;
    // The editor holds the queued message, which is no longer queued.
    let screen = term.wait_for("› queued words").await;
    assert!(!screen.contains("Steering:"), "{screen}");
    assert_eq!(env.request_bodies().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bang_command_runs_in_the_shell_and_joins_the_conversation() {
    let env = Env::new(vec![Turn::text("seen it")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("!echo from-the-shell; exit 3");
    let screen = term.wait_for("exit code 3").await;
    assert!(screen.contains("$ echo from-the-shell; exit 3"), "{screen}");
    assert!(screen.contains("  from-the-shell"), "{screen}");
    term.submit("what did it say?");
    term.wait_idle_with("seen it").await;
    let body = env.request_bodies().pop().unwrap().to_string();
    assert!(body.contains("from-the-shell"), "the model sees the output: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_t_hides_thinking_blocks() {
    let env = Env::with_api(
        vec![Turn::text("the visible answer").with_thinking("secret pondering")],
        "anthropic-messages",
        true,
    )
    .await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("\x14");
    term.wait_for("Thinking blocks hidden").await;
    term.submit("think quietly");
    let screen = term.wait_idle_with("the visible answer").await;
    assert!(screen.contains("Thinking hidden (Ctrl+T shows it)"), "{screen}");
    assert!(!screen.contains("secret pondering"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_export_new_and_compact_commands() {
    let env = Env::new(vec![Turn::text("an answer worth keeping"), Turn::text("## Summary\nthe summary")]).await;
    let term = Terminal::start(&env, &["--setting", "compaction.keepRecentTokens=1"]);
    term.ready().await;
    // Too short to compact with the default keepRecentTokens; with it at 1 the answer is cut off.
    term.submit("first question");
    term.wait_idle_with("an answer worth keeping").await;

    term.submit("/copy");
    term.wait_for("Copied the last answer to the clipboard").await;
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode("an answer worth keeping");
    assert!(term.raw_output().contains(&format!("\x1b]52;c;{encoded}\x07")), "an OSC 52 sequence with the answer");
    // pi 1.6's Ctrl+X (`app.message.copy`) does the same.
    term.send("\x18");
    term.wait_until("a second copy", |screen| screen.matches("Copied the last answer to the clipboard").count() == 2)
        .await;

    term.submit("/export out.html");
    term.wait_for("Exported to:").await;
    let html = std::fs::read_to_string(env.cwd.join("out.html")).unwrap();
    assert!(html.contains("an answer worth keeping"));

    term.submit("/compact keep it short");
    term.wait_idle_with("Compacted the conversation").await;
    let summary_request = env.request_bodies().pop().unwrap().to_string();
    assert!(summary_request.contains("keep it short"), "the instructions reach the summary request");

    term.submit("/new");
    term.wait_for("── New session ──").await;
    assert_eq!(env.session_files().len(), 2, "a second session file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_paste_is_folded_in_the_editor_and_sent_whole() {
    let env = Env::new(vec![Turn::text("got the paste")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    let pasted: Vec<String> = (1..=12).map(|i| format!("pasted line {i}")).collect();
    term.send("look: ");
    term.send(&format!("\x1b[200~{}\x1b[201~", pasted.join("\n")));
    term.wait_for("› look: [paste #1 +12 lines]").await;
    term.send(keys::ENTER);
    term.wait_idle_with("got the paste").await;
    let body = env.request_bodies().pop().unwrap();
    let sent = body["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(sent, format!("look: {}", pasted.join("\n")));
}

/// The messages of the last request the mock received, as JSON text.
fn last_request_messages(env: &Env) -> String {
    env.request_bodies().pop().unwrap()["messages"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_starts_a_new_session_before_an_earlier_message() {
    let env =
        Env::new(vec![Turn::text("first answer"), Turn::text("second answer"), Turn::text("forked answer")]).await;
    let term = Terminal::start(&env, &[]);
    term.two_exchanges().await;

    term.submit("/fork");
    let list = term.wait_for("Fork from a message").await;
    let (newest, oldest) = (list.find("→ second question").unwrap(), list.find("  first question").unwrap());
    assert!(newest < oldest, "newest first:\n{list}");
    term.send("second");
    term.wait_for("1/2").await;
    term.send(keys::ENTER);
    let screen = term.wait_for("Forked into a new session:").await;
    assert_eq!(env.session_files().len(), 2, "the fork is a new session file");
    // Below the line, the branch now followed: what came before the message, not what followed.
    let below = &screen[screen.find("Forked into a new session:").unwrap()..];
    assert!(below.contains("first answer") && !below.contains("second answer"), "{screen}");

    // The message is back in the editor, to edit and send again.
    term.send(" again");
    term.wait_for("› second question again").await;
    term.send(keys::ENTER);
    term.wait_idle_with("forked answer").await;
    let sent = last_request_messages(&env);
    assert!(sent.contains("first answer"), "{sent}");
    assert!(sent.contains("second question again"), "{sent}");
    assert!(!sent.contains("second answer"), "the fork holds only what came before the message: {sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_moves_the_leaf_and_the_next_prompt_branches_there() {
    let env =
        Env::new(vec![Turn::text("first answer"), Turn::text("second answer"), Turn::text("branch answer")]).await;
    let term = Terminal::start(&env, &[]);
    term.two_exchanges().await;

    term.submit("/tree");
    let tree = term.wait_for("Session tree").await;
    assert!(tree.contains("→ assistant: second answer  ← current"), "the leaf is selected:\n{tree}");
    term.send(keys::UP);
    term.send(keys::UP);
    term.wait_for("→ assistant: first answer").await;
    term.send(keys::ENTER);
    term.wait_for("→ No summary").await;
    term.send(keys::ENTER);
    let screen = term.wait_for("── Continuing from the selected entry ──").await;
    // The footer counts what every branch spent, not only the branch continued.
    assert!(screen.contains("↑200 ↓100 "), "{screen}");

    term.submit("branch question");
    let screen = term.wait_idle_with("branch answer").await;
    assert!(screen.contains("↑300 ↓150 "), "{screen}");
    let sent = last_request_messages(&env);
    assert!(sent.contains("first answer") && sent.contains("branch question"), "{sent}");
    assert!(!sent.contains("second question"), "the prompt branches from the first answer: {sent}");
    assert_eq!(env.session_files().len(), 1, "navigating stays in the same file");

    // Escape twice on the empty editor opens the tree: the first answer now has two children.
    term.send(keys::ESCAPE);
    term.wait_for("Press Escape again for the session tree").await;
    term.send(keys::ESCAPE);
    let tree = term.wait_for("Session tree").await;
    assert!(tree.contains("    user: second question"), "{tree}");
    assert!(tree.contains("→   assistant: branch answer  ← current"), "{tree}");
    term.send(keys::ESCAPE);
    term.wait_until("the tree closed", |s| !s.contains("Session tree")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clone_continues_in_a_copy_of_the_session() {
    let env = Env::new(vec![Turn::text("first answer"), Turn::text("answer in the clone")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("first question");
    term.wait_idle_with("first answer").await;

    term.submit("/clone");
    term.wait_for("Cloned into a new session:").await;
    let files = env.session_files();
    assert_eq!(files.len(), 2, "a second session file");
    term.submit("after the clone");
    term.wait_idle_with("answer in the clone").await;
    assert!(last_request_messages(&env).contains("first answer"), "the clone holds the conversation");
    let holding: Vec<_> =
        files.iter().filter(|f| std::fs::read_to_string(f).unwrap().contains("after the clone")).collect();
    assert_eq!(holding.len(), 1, "only the clone goes on: {files:?}");
    assert!(std::fs::read_to_string(holding[0]).unwrap().contains("first question"));

    term.submit("/hotkeys");
    let keys = term.wait_for("Duplicate the session into a new file").await;
    assert!(keys.contains("/fork") && keys.contains("/tree") && keys.contains("/clone"), "{keys}");
}

/// `/import <path>` (pi 1.6): confirmed, a session file from elsewhere is copied next to the
/// current session and opened, its conversation drawn and continued; the original stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_copies_a_session_in_and_continues_it() {
    let env = Env::new(vec![Turn::text("answer from elsewhere"), Turn::text("continued here")]).await;
    let mut first = Terminal::start(&env, &["a question from elsewhere"]);
    first.wait_idle_with("answer from elsewhere").await;
    first.send(keys::CTRL_D);
    assert_eq!(first.exit_code().await, 0);
    // The session moves out of rho's folders, as a file someone sent.
    let elsewhere = env.dir.path().join("shared.jsonl");
    std::fs::rename(&env.session_files()[0], &elsewhere).unwrap();

    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("hello");
    term.wait_idle_with("continued here").await;
    term.submit(&format!("/import {}", elsewhere.display()));
    term.wait_for("Import session: Replace current session with").await;
    term.send(keys::ENTER);
    let screen = term.wait_for("Session imported from:").await;
    let below = &screen[screen.find("Session imported from:").unwrap()..];
    assert!(below.contains("a question from elsewhere") && below.contains("answer from elsewhere"), "{screen}");
    assert!(elsewhere.exists(), "the original stays");
    let copies: Vec<_> = env.session_files().into_iter().filter(|f| f.ends_with("shared.jsonl")).collect();
    assert_eq!(copies.len(), 1, "{:?}", env.session_files());
}
