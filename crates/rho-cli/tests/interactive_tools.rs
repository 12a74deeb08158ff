//! How interactive mode draws tool calls and results, through the real `rho` in a
//! pseudo-terminal against rho-mock-llm: `read` results and `write` contents highlighted by the
//! file's extension (folded as any result is), and the compact forms of `task` and `todo_write`
//! results, live and when the session is resumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use common::Env;
use interactive_support::{Terminal, keys};
use rho_mock_llm::Turn;
use serde_json::json;

/// The terminal's background is dark (a `COLORFGBG` of the outer terminal would pick light).
const DARK_BACKGROUND: (&str, &str) = ("COLORFGBG", "15;0");
/// pi's dark theme: syntaxKeyword #569CD6, toolOutput #808080.
const KEYWORD: vt100::Color = vt100::Color::Rgb(0x56, 0x9c, 0xd6);
const TOOL_OUTPUT: vt100::Color = vt100::Color::Rgb(0x80, 0x80, 0x80);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_result_is_highlighted_by_the_file_extension_and_stays_folded() {
    let env = Env::new(vec![
        Turn::tool_call("read", json!({"path": "notes.txt"})),
        Turn::tool_call("read", json!({"path": "lib.rs"})),
        Turn::text("read both"),
    ])
    .await;
    let rust: String = (1..=10).map(|i| format!("fn step_{i}() {{}}\n")).collect();
    std::fs::write(env.cwd.join("lib.rs"), rust).unwrap();
    std::fs::write(env.cwd.join("notes.txt"), "fn is a plain word here\n").unwrap();
    let term = Terminal::start_with(&env, &[], &[DARK_BACKGROUND]);
    term.ready().await;
    term.submit("read the files");
    let screen = term.wait_idle_with("read both").await;
    assert_eq!(term.fg_of("fn step_1()"), KEYWORD);
    assert!(screen.contains("fn step_6() {}\n  … 4 more lines (Ctrl+O to expand)"), "{screen}");
    assert!(!screen.contains("step_7"), "{screen}");
    // An extension syntect does not highlight: the plain tool output colour.
    assert_eq!(term.fg_of("fn is a plain word"), TOOL_OUTPUT);

    // Ctrl+O shows the result whole where it is, still highlighted.
    term.send(keys::CTRL_O);
    let screen = term.wait_for("fn step_10() {}").await;
    assert!(screen.contains("fn step_6() {}\n  fn step_7() {}"), "{screen}");
    assert!(screen.contains("Tool output expanded"), "{screen}");
    assert_eq!(term.fg_of("fn step_10()"), KEYWORD);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_call_shows_its_content_highlighted() {
    let content = "def greet():\n    return 'hi'\n";
    let env = Env::new(vec![
        Turn::tool_call("write", json!({"path": "hello.py", "content": content})),
        Turn::text("wrote it"),
    ])
    .await;
    let term = Terminal::start_with(&env, &[], &[DARK_BACKGROUND]);
    term.ready().await;
    term.submit("write a file");
    let screen = term.wait_idle_with("wrote it").await;
    assert!(screen.contains("● write hello.py\n  def greet():\n      return 'hi'"), "{screen}");
    assert_eq!(term.fg_of("def greet"), KEYWORD);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_and_todo_results_are_compact_live_and_on_resume() {
    let plan = json!({"ops": [{"op": "replace", "phases": [{"name": "Fix", "tasks": [
        {"content": "Read the failing test", "status": "completed"},
        {"content": "Fix the parser", "status": "in_progress"},
        {"content": "Run the tests"}]}]}]});
    let task = json!({"agent": "task", "tasks": [
        {"id": "Alpha", "description": "look around", "assignment": "SUB-MARK: answer"}]});
    let env = Env::new(vec![
        Turn::tool_call("todo_write", plan),
        Turn::tool_call("task", task),
        Turn::text("sub-agent answer").when_body_contains("SUB-MARK"),
        Turn::text("Both done."),
    ])
    .await;
    let args = ["--tools", "+todo_write,+task", "--setting", "todo.reminders=false"];
    let mut first = Terminal::start(&env, &args);
    first.ready().await;
    first.submit("plan and delegate");
    let screen = first.wait_idle_with("Both done.").await;
    check_compact(&screen);
    first.send(keys::CTRL_D);
    assert_eq!(first.exit_code().await, 0);

    let second = Terminal::start(&env, &["-c", args[0], args[1], args[2], args[3]]);
    let screen = second.wait_idle_with("Both done.").await;
    check_compact(&screen);
}

fn check_compact(screen: &str) {
    // The call, its one line, then the next call: none of the result's text.
    assert!(screen.contains("● todo_write replace\n  Todos: 1/3 done, → Fix the parser\n\n● task"), "{screen}");
    assert!(screen.contains("✓ Alpha [task] look around · completed"), "{screen}");
    assert!(!screen.contains("<task-summary>"), "{screen}");
}

/// An edit's diff, collapsed, shows what changed: two 3-line replacements far apart show their
/// `-` and `+` lines with `...` for the rest, not the first lines of one long diff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collapsed_edit_shows_every_change_of_two_far_apart() {
    let file: String = (1..=60).map(|i| format!("line {i}\n")).collect();
    let edits = json!([
        {"oldText": "line 10\nline 11\nline 12\n", "newText": "ten\neleven\ntwelve\n"},
        {"oldText": "line 50\nline 51\nline 52\n", "newText": "fifty\nfifty-one\nfifty-two\n"}
    ]);
    let env =
        Env::new(vec![Turn::tool_call("edit", json!({"path": "f.txt", "edits": edits})), Turn::text("edited")]).await;
    std::fs::write(env.cwd.join("f.txt"), file).unwrap();
    let term = Terminal::start_with(&env, &[], &[DARK_BACKGROUND]);
    term.ready().await;
    term.submit("edit the file");
    let screen = term.wait_idle_with("edited").await;
    for changed in ["-10 line 10", "+12 twelve", "-50 line 50", "+52 fifty-two"] {
        assert!(screen.contains(changed), "{changed} in:\n{screen}");
    }
    assert!(!screen.contains(" 30 line 30"), "{screen}");
}

/// Two calls of one reply, the first finishing last: each output is drawn under its own call,
/// live and when the session is continued (pi's order), not both calls then both outputs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_output_is_under_its_own_call_live_and_on_continue() {
    let slow = json!({"command": "sleep 0.5; echo slow-output"});
    let quick = json!({"command": "echo quick-output"});
    let env = Env::new(vec![Turn::tool_call("bash", slow).with_tool_call("bash", quick), Turn::text("both ran")]).await;
    let mut first = Terminal::start(&env, &[]);
    first.ready().await;
    first.submit("run both");
    let screen = first.wait_idle_with("both ran").await;
    check_order(&screen);
    first.send(keys::CTRL_D);
    assert_eq!(first.exit_code().await, 0);

    let second = Terminal::start(&env, &["-c"]);
    let screen = second.wait_idle_with("both ran").await;
    check_order(&screen);
}

fn check_order(screen: &str) {
    let at = |text: &str| screen.find(text).unwrap_or_else(|| panic!("{text} in:\n{screen}"));
    let order =
        [at("sleep 0.5; echo slow-output"), at("\n  slow-output"), at("echo quick-output"), at("\n  quick-output")];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?} in:\n{screen}");
}

/// A continued session is drawn with the spacing it had live: a blank line between thinking and
/// text, and between a tool's output and the text after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_session_keeps_the_blank_lines_it_had_live() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "echo tool-output"})).with_thinking("pondering-first"),
        Turn::text("final-words").with_thinking("pondering-again"),
    ])
    .await;
    let mut first = Terminal::start(&env, &[]);
    first.ready().await;
    first.submit("go");
    let live = first.wait_idle_with("final-words").await;
    first.send(keys::CTRL_D);
    assert_eq!(first.exit_code().await, 0);
    let second = Terminal::start(&env, &["-c"]);
    let resumed = second.wait_idle_with("final-words").await;
    let part = |screen: &str| -> String {
        let from = screen.find("pondering-first").unwrap();
        let to = screen.find("final-words").unwrap() + "final-words".len();
        screen[from..to].to_owned()
    };
    assert_eq!(part(&resumed), part(&live), "live:\n{live}\nresumed:\n{resumed}");
}

/// `/jobs` lists the commands the model started in the background.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_lists_the_background_commands() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "sleep 30", "run_in_background": true})),
        Turn::text("started it"),
    ])
    .await;
    let term = Terminal::start(&env, &["--tools", "+bash_output,+kill_bash"]);
    term.ready().await;
    term.submit("/jobs");
    term.wait_for("No background commands").await;
    term.submit("start a server");
    term.wait_idle_with("started it").await;
    term.submit("/jobs");
    let screen = term.wait_for("Background commands:").await;
    assert!(screen.contains("bash_1  running") && screen.contains("sleep 30"), "{screen}");
}
