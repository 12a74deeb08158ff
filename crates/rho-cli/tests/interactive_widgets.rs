//! Interactive mode's live widgets, driven through the real `rho` in a pseudo-terminal against
//! rho-mock-llm: the todo list above the editor, a line per running sub-agent of the task tool
//! and their summary, budget warnings with the budget in the footer, and stream-rule notices.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use common::Env;
use interactive_support::Terminal;
use regex::Regex;
use rho_mock_llm::{Turn, Usage};
use serde_json::json;

/// The screen with what changes from run to run made steady: the spinner's frame and the
/// times (`3s`, `1m05s`).
fn steady(screen: &str) -> String {
    let spinner = Regex::new("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]").unwrap();
    let times = Regex::new(r"\b\d+(m\d\d)?s\b").unwrap();
    times.replace_all(&spinner.replace_all(screen, "⠋"), "Ns").into_owned()
}

/// Waits until the screen shows `text` and, made steady, reads the same twice in a row (a frame
/// is written in pieces, so one read can catch it half drawn).
async fn wait_settled(term: &Terminal, text: &str) -> String {
    let mut last = String::new();
    loop {
        let screen = steady(&term.wait_for(text).await);
        if screen == last {
            return screen;
        }
        last = screen;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The part of the screen under the last line containing `text`.
fn below<'a>(screen: &'a str, text: &str) -> &'a str {
    &screen[screen.rfind(text).unwrap()..]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_todo_list_is_drawn_above_the_editor_until_every_task_is_done() {
    let plan = json!({"ops": [{"op": "replace", "phases": [{"name": "Fix", "tasks": [
        {"content": "Read the failing test", "status": "completed"},
        {"content": "Fix the parser", "status": "in_progress"},
        {"content": "Run the tests"}]}]}]});
    let finish = json!({"ops": [
        {"op": "update", "id": "task-2", "status": "completed"},
        {"op": "update", "id": "task-3", "status": "completed"}]});
    let env = Env::new(vec![
        Turn::tool_call("todo_write", plan),
        Turn::text("Working on the parser."),
        Turn::tool_call("todo_write", finish),
        Turn::text("All done."),
    ])
    .await;
    // No reminder continues the run while tasks are open: it stops with the list on screen.
    let term = Terminal::start(&env, &["--tools", "+todo_write", "--setting", "todo.reminders=false"]);
    term.ready().await;
    term.submit("fix it");
    let screen = term.wait_idle_with("Working on the parser.").await;
    let widget = below(&screen, "Working on the parser.");
    assert!(
        widget.contains("\n\nTodos 1/3\n  ✓ Read the failing test\n  → Fix the parser\n  ○ Run the tests"),
        "{screen}"
    );
    insta::assert_snapshot!("todo_widget", screen);

    term.submit("finish");
    let screen = term.wait_idle_with("All done.").await;
    assert!(!below(&screen, "All done.").contains("Todos"), "the finished list is not drawn:\n{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_sub_agent_has_a_live_line_and_leaves_a_summary() {
    let gate = tempfile::tempdir().unwrap();
    let release = gate.path().join("release");
    let wait = format!("while [ ! -e '{}' ]; do sleep 0.05; done; echo released", release.display());
    let task = json!({"agent": "task", "tasks": [
        {"id": "Alpha", "description": "wait at the gate", "assignment": "GATE-MARK: run the command"}]});
    let usage = Usage { input: 1000, output: 10, ..Usage::default() };
    let env = Env::new(vec![
        Turn::tool_call("task", task),
        Turn::tool_call("bash", json!({"command": wait})).when_body_contains("GATE-MARK").with_usage(usage),
        Turn::text("passed the gate").when_body_contains("GATE-MARK"),
        Turn::text("The sub-agent is done."),
    ])
    .await;
    let term = Terminal::start(&env, &["--tools", "+task"]);
    term.ready().await;
    term.submit("delegate");
    // The sub-agent waits in its bash call until the gate opens.
    let screen = wait_settled(&term, "Alpha [task] wait at the gate · ▸ bash").await;
    assert!(screen.contains("● Alpha [task] wait at the gate · ▸ bash · 1 tool · 1.0k tok"), "{screen}");
    insta::assert_snapshot!("subagent_running", screen);

    std::fs::write(&release, "").unwrap();
    let screen = term.wait_idle_with("The sub-agent is done.").await;
    assert!(screen.contains("✓ Alpha [task] wait at the gate · completed"), "{screen}");
    assert!(!screen.contains("▸ bash"), "the live line is gone:\n{screen}");
    insta::assert_snapshot!("subagent_summary", steady(&screen));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_warning_is_shown_and_the_footer_tracks_the_budget() {
    let env =
        Env::new(vec![Turn::tool_call("bash", json!({"command": "echo spent"})), Turn::text("One call made.")]).await;
    let term = Terminal::start(&env, &["--setting", "task.budget.maxToolCalls=1"]);
    term.ready().await;
    term.wait_for("budget tools 0/1").await;
    term.submit("spend");
    let screen = term.wait_idle_with("One call made.").await;
    assert!(screen.contains("⚠ Budget warning: tool calls 1 of 1"), "{screen}");
    assert!(term.is_coloured("⚠ Budget warning"));
    insta::assert_snapshot!("budget_warning", screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exceeded_budget_is_shown_and_the_next_prompt_is_refused() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "echo one"})),
        Turn::tool_call("bash", json!({"command": "echo two"})),
        Turn::text("Two calls made."),
    ])
    .await;
    let term = Terminal::start(&env, &["--setting", "task.budget.maxToolCalls=1"]);
    term.ready().await;
    term.submit("spend");
    term.wait_for("✗ Budget exceeded: tool calls 2 of 1; new prompts are refused").await;
    assert!(term.is_coloured("✗ Budget exceeded"));
    term.wait_idle_with("Budget exceeded").await;
    term.submit("more");
    let screen = term.wait_idle_with("Budget exceeded: tool_calls").await;
    assert!(screen.contains("budget tools 2/1"), "{screen}");
    assert!(term.is_coloured("budget tools 2/1"), "the footer's budget is coloured once exceeded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_todo_reminder_says_why_the_run_goes_on() {
    let plan = json!({"ops": [{"op": "replace", "phases": [{"name": "Work", "tasks": [
        {"content": "Only step", "status": "in_progress"}]}]}]});
    let finish = json!({"ops": [{"op": "update", "id": "task-1", "status": "completed"}]});
    let env = Env::new(vec![
        Turn::tool_call("todo_write", plan),
        Turn::text("Stopping early."),
        Turn::tool_call("todo_write", finish),
        Turn::text("Now it is finished."),
    ])
    .await;
    let term = Terminal::start(&env, &["--tools", "+todo_write"]);
    term.ready().await;
    term.submit("work");
    let screen = term.wait_idle_with("Now it is finished.").await;
    assert!(screen.contains("↻ Todo reminder (1/3): 1 task still open"), "{screen}");
    assert!(!below(&screen, "Now it is finished.").contains("Todos"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_rule_that_fires_is_named_in_its_own_line() {
    let env = Env::with_no_todos_rule().await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("do it");
    let screen = term.wait_idle_with("Done properly, no placeholders.").await;
    assert!(screen.contains("⚑ Stream rule no-todos: No placeholders"), "{screen}");
    assert!(term.is_coloured("⚑ Stream rule"));
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_being_verified_says_so_and_its_summary_says_verified() {
    let gate = tempfile::tempdir().unwrap();
    let release = gate.path().join("release");
    let env = Env::new(vec![
        Turn::tool_call(
            "task",
            json!({"agent": "task", "isolated": true, "verify": "check",
                   "tasks": [{"id": "Fix", "description": "fix lib", "assignment": "FIX-MARK: fix lib.txt"}]}),
        ),
        Turn::tool_call("write", json!({"path": "lib.txt", "content": "fixed\n"})).when_body_contains("FIX-MARK"),
        Turn::text("Fixed it.").when_body_contains("FIX-MARK"),
        Turn::text("Verified and merged."),
    ])
    .await;
    git(&env.cwd, &["init", "-q", "-b", "main"]);
    git(&env.cwd, &["config", "user.name", "Test"]);
    git(&env.cwd, &["config", "user.email", "test@example.com"]);
    std::fs::write(env.cwd.join("lib.txt"), "broken\n").unwrap();
    git(&env.cwd, &["add", "lib.txt"]);
    git(&env.cwd, &["commit", "-q", "-m", "init"]);
    // The check waits at the gate, then passes when the fix is there.
    let check = format!("while [ ! -e '{}' ]; do sleep 0.05; done; grep -q fixed lib.txt", release.display());
    let profiles =
        format!("task.verification.profiles={}", json!({"check": {"commands": [{"name": "gate", "command": check}]}}));
    let term = Terminal::start(
        &env,
        &[
            "--tools",
            "+task",
            "--setting",
            "task.isolation.mode=worktree",
            "--setting",
            "task.verification.enabled=true",
            "--setting",
            &profiles,
        ],
    );
    term.ready().await;
    term.submit("fix it");
    let screen = wait_settled(&term, "Fix [task] fix lib · verifying: gate").await;
    assert!(screen.contains("● Fix [task] fix lib · verifying: gate · 1 tool"), "{screen}");

    std::fs::write(&release, "").unwrap();
    let screen = term.wait_idle_with("Verified and merged.").await;
    assert!(screen.contains("✓ Fix [task] fix lib · completed · verified"), "{screen}");
    assert_eq!(std::fs::read_to_string(env.cwd.join("lib.txt")).unwrap(), "fixed\n");
}
