//! What the forks added, through the real binary: todo reminders (and their limit) when a run
//! stops with tasks open, auto-clear of finished tasks, and a time-traveling stream rule that
//! cuts a stream short, is injected, and makes the turn run again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

fn plan(status: &str) -> Value {
    json!({"ops": [{"op": "replace", "phases": [{"name": "Work", "tasks": [
        {"content": "Write the parser", "status": status}]}]}]})
}

#[tokio::test]
async fn a_run_that_stops_with_open_todos_is_reminded_up_to_the_limit() {
    let env = Env::new(vec![
        Turn::tool_call("todo_write", plan("in_progress")),
        Turn::text("I will stop here."),
        Turn::text("Still stopping."),
        Turn::text("Stopping again."),
    ])
    .await;
    let mut rho =
        Rho::start(&env, &["--no-session", "--tools", "+todo_write", "--setting", "todo.reminders.max=2"]).await;
    rho.send(json!({"type": "prompt", "message": "write the parser"})).await;
    let frames = rho.until_agent_end().await;
    // The host's next prompt, sent as soon as it read agent_end, starts a run.
    rho.send(json!({"id": "next", "type": "prompt", "message": "and now the lexer"})).await;
    let after = rho.until(|f| f["id"] == "next").await;
    assert_eq!(after[0], json!({"type": "agent_settled", "aborted": false}));
    assert_eq!(after.last().unwrap()["data"], json!({"disposition": "started"}), "{after:?}");
    let reminders: Vec<Value> = frames.iter().filter(|f| f["type"] == "todo_reminder").cloned().collect();
    assert_eq!(
        reminders,
        [1, 2]
            .map(|attempt| json!({"type": "todo_reminder", "todos": [
                {"id": "task-1", "content": "Write the parser", "status": "in_progress"}], "attempt": attempt, "maxAttempts": 2}))
            .to_vec()
    );
    // The reminders are turns of the prompt's one run: every host reads its one agent_end as the
    // end, and nothing more follows it.
    let kinds: Vec<&str> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "agent_start").count(), 1);
    assert_eq!(kinds.iter().filter(|k| **k == "turn_start").count(), 4);
    let end = frames.last().unwrap();
    assert_eq!((&end["willRetry"], &end["isTerminal"]), (&json!(false), &json!(true)));
    // The reminder went to the model as a hidden message.
    let third = &env.request_bodies()[2]["messages"];
    let last = third.as_array().unwrap().last().unwrap();
    let text = last["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("<system-reminder>") && text.contains("Write the parser"), "{text}");
    assert!(text.contains("(Reminder 1/2)"), "{text}");
    assert!(env.request_bodies().len() >= 4);
}

/// A host's own list (`set_todos`) with pi's tools: the model has no `todo_write` to mark a task
/// done, so it is not reminded; the prompt is one request.
#[tokio::test]
async fn no_reminder_for_a_model_without_todo_write() {
    let env = Env::new(vec![Turn::text("Done."), Turn::text("Not expected.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let phases = json!([{"name": "P", "tasks": [{"content": "still open"}]}]);
    rho.data(json!({"type": "set_todos", "phases": phases})).await;
    rho.send(json!({"type": "prompt", "message": "go"})).await;
    let frames = rho.until(|f| f["type"] == "agent_settled").await;
    assert!(!frames.iter().any(|f| f["type"] == "todo_reminder"), "{frames:?}");
    assert_eq!(env.request_bodies().len(), 1);
}

#[tokio::test]
async fn finished_todos_are_cleared_after_the_delay() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session", "--setting", "tasks.todoClearDelay=0"]).await;
    let phases = json!([{"name": "P", "tasks": [
        {"content": "done already", "status": "completed"}, {"content": "still open"}]}]);
    rho.send(json!({"id": "t", "type": "set_todos", "phases": phases})).await;
    let frames = rho.until(|f| f["type"] == "todo_auto_clear").await;
    assert!(frames.iter().any(|f| f["id"] == "t"));
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(
        state["todoPhases"],
        json!([{"id": "phase-1", "name": "P", "tasks": [{"id": "task-2", "content": "still open", "status": "pending"}]}])
    );
}

#[tokio::test]
async fn a_stream_rule_interrupts_the_reply_injects_itself_and_the_turn_runs_again() {
    let env = Env::with_no_todos_rule().await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "do it"})).await;
    let mut frames = rho.until_agent_end().await;
    frames.extend(rho.until_agent_end().await);
    let triggered = frames.iter().find(|f| f["type"] == "ttsr_triggered").unwrap();
    assert_eq!(triggered["rules"][0]["name"], "no-todos");
    assert_eq!(triggered["rules"][0]["content"], "Never leave TODO comments; finish the work.");
    let cut = frames.iter().find(|f| f["type"] == "message_end" && f["message"]["stopReason"] == "aborted").unwrap();
    assert!(!cut["message"]["content"][0]["text"].as_str().unwrap().contains("move on"));
    assert_eq!(frames.last().unwrap()["messages"][0]["content"][0]["text"], "Done properly, no placeholders.");

    let retry = &env.request_bodies()[1]["messages"];
    let sent: Vec<&Value> = retry.as_array().unwrap().iter().collect();
    assert_eq!(sent.len(), 2, "the prompt and the injection, not the cut-off reply: {retry}");
    let injection = sent[1]["content"][0]["text"].as_str().unwrap();
    assert!(injection.starts_with("<system-interrupt reason=\"rule_violation\" rule=\"no-todos\""), "{injection}");
}
