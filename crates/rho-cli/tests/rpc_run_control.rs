//! Controlling a run through the real binary: prompt while streaming (rejected without
//! `streamingBehavior`, queued with it), steer and follow_up, abort and abort_and_prompt during a
//! slow stream, and the user `bash` command with abort_bash.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{Env, Rho, types};
use rho_mock_llm::Turn;
use serde_json::json;

/// A reply slow enough to act during it (about 2 s).
fn slow(text: &str) -> Turn {
    Turn::text(text).with_chunk_size(1).with_chunk_delay_ms(100)
}

#[tokio::test]
async fn a_prompt_while_streaming_needs_a_streaming_behavior() {
    let env =
        Env::new(vec![slow("one two three four five six"), Turn::text("Steered."), Turn::text("Followed.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"id": "p1", "type": "prompt", "message": "start"})).await;
    rho.until(|f| f["type"] == "message_update").await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], true);

    rho.send(json!({"id": "p2", "type": "prompt", "message": "again"})).await;
    // One response, the refusal (a second one with the same id breaks pi's client).
    let refusal = rho.until(|f| f["type"] == "response").await.pop().unwrap();
    assert_eq!(
        refusal,
        json!({"id": "p2", "type": "response", "command": "prompt", "success": false,
               "error": "Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion."})
    );

    rho.send(json!({"id": "p3", "type": "prompt", "message": "go left", "streamingBehavior": "steer"})).await;
    let mut frames = rho.until(|f| f["type"] == "response").await;
    assert_eq!(
        frames.last().unwrap(),
        &json!({"id": "p3", "type": "response", "command": "prompt", "success": true,
        "data": {"disposition": "queued"}})
    );
    rho.send(json!({"id": "f1", "type": "follow_up", "message": "then tidy up"})).await;
    frames.extend(rho.until_agent_end().await);
    let queue_updates: Vec<_> = frames.iter().filter(|f| f["type"] == "queue_update").collect();
    assert_eq!(queue_updates[0], &json!({"type": "queue_update", "steering": ["go left"], "followUp": []}));
    assert_eq!(
        queue_updates[1],
        &json!({"type": "queue_update", "steering": ["go left"], "followUp": ["then tidy up"]})
    );
    // A queue_update that takes messages from the queue comes once their turn has started,
    // right before their message_start (pi's order).
    let order: Vec<String> = types(&frames).into_iter().filter(|t| !t.starts_with("message_update")).collect();
    let deliveries: Vec<usize> =
        order.iter().enumerate().filter(|(_, t)| *t == "queue_update").map(|(i, _)| i).skip(2).collect();
    assert_eq!(deliveries.len(), 2, "{order:?}");
    for at in deliveries {
        assert_eq!((order[at - 1].as_str(), order[at + 1].as_str()), ("turn_start", "message_start"), "{order:?}");
    }
    let users: Vec<&str> = frames
        .iter()
        .filter(|f| f["type"] == "message_start" && f["message"]["role"] == "user")
        .map(|f| f["message"]["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["go left", "then tidy up"]);
    let answers: Vec<String> = frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
        .map(|f| f["message"]["content"][0]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(answers, ["one two three four five six", "Steered.", "Followed."]);
    assert_eq!(rho.data(json!({"type": "get_state"})).await["queuedMessageCount"], 0);
}

#[tokio::test]
async fn abort_ends_a_slow_stream_with_an_aborted_message_then_answers() {
    let env = Env::new(vec![slow("a long answer that never gets finished"), Turn::text("Fresh start.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "start"})).await;
    rho.until(|f| f["type"] == "message_update").await;
    rho.send(json!({"id": "a1", "type": "abort"})).await;
    let frames = rho.until(|f| f["id"] == "a1").await;
    let tail: Vec<String> = types(&frames).into_iter().filter(|t| !t.starts_with("message_update")).collect();
    assert_eq!(tail, ["message_end", "turn_end", "agent_end", "agent_settled", "response:abort"]);
    assert_eq!(frames[frames.len() - 2], json!({"type": "agent_settled", "aborted": true}));
    let end = frames.iter().find(|f| f["type"] == "message_end").unwrap();
    assert_eq!(end["message"]["stopReason"], "aborted");
    assert_eq!(end["message"]["errorMessage"], "Request was aborted");

    // The conversation goes on.
    rho.send(json!({"type": "prompt", "message": "again"})).await;
    let frames = rho.until_agent_end().await;
    let last = frames.last().unwrap();
    assert_eq!(last["messages"][1]["content"][0]["text"], "Fresh start.");
}

#[tokio::test]
async fn abort_and_prompt_replaces_the_running_task() {
    let env = Env::new(vec![slow("the old task keeps going and going"), Turn::text("New task done.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "old"})).await;
    rho.until(|f| f["type"] == "message_update").await;
    rho.send(json!({"id": "ap", "type": "abort_and_prompt", "message": "new"})).await;
    let frames = rho.until(|f| f["id"] == "ap").await;
    let aborted = frames.iter().rev().find(|f| f["type"] == "agent_end").unwrap();
    assert_eq!(aborted["messages"][2]["stopReason"], "aborted");
    let frames = rho.until_agent_end().await;
    assert_eq!(frames.last().unwrap()["messages"][1]["content"][0]["text"], "New task done.");
}

#[tokio::test]
async fn bash_runs_in_the_cwd_and_reaches_the_next_prompt() {
    let env = Env::new(vec![Turn::text("Noted.")]).await;
    std::fs::write(env.cwd.join("marker.txt"), "").unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let result = rho.data(json!({"type": "bash", "command": "ls; echo done; exit 3"})).await;
    assert_eq!(
        result,
        json!({"output": "marker.txt\ndone\n", "exitCode": 3, "cancelled": false, "truncated": false,
               "totalLines": 3, "totalBytes": 16, "outputLines": 3, "outputBytes": 16,
               "workingDir": env.cwd.to_string_lossy()})
    );
    let messages = rho.data(json!({"type": "get_messages"})).await;
    assert_eq!(messages["messages"][0]["role"], "bashExecution");
    rho.send(json!({"type": "prompt", "message": "what happened?"})).await;
    rho.until_agent_end().await;
    let sent = env.request_bodies()[0]["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(sent.starts_with("Ran `ls; echo done; exit 3`\n```\nmarker.txt\ndone\n"), "{sent}");
    assert!(sent.ends_with("Command exited with code 3"), "{sent}");
}

#[tokio::test]
async fn abort_bash_kills_a_running_command_without_waiting_behind_it() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"id": "b1", "type": "bash", "command": "touch started.txt; sleep 30"})).await;
    while !env.cwd.join("started.txt").exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    rho.send(json!({"id": "k1", "type": "abort_bash"})).await;
    // The abort is answered at once and the command's answer follows, in either order.
    let mut frames = rho.until(|f| f["id"] == "b1").await;
    if !frames.iter().any(|f| f["id"] == "k1") {
        frames.extend(rho.until(|f| f["id"] == "k1").await);
    }
    assert!(frames.iter().any(|f| f["id"] == "k1" && f["success"] == true));
    let result = &frames.iter().find(|f| f["id"] == "b1").unwrap()["data"];
    assert_eq!(result["cancelled"], true);
    assert!(result.get("exitCode").is_none());
}

#[tokio::test]
async fn prompt_images_follow_the_text_to_the_model() {
    let env = Env::new(vec![Turn::text("A red pixel.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    rho.send(json!({"type": "prompt", "message": "what is this?", "images": [{"type": "image", "data": png, "mimeType": "image/png"}]}))
        .await;
    let frames = rho.until_agent_end().await;
    let user = &frames.last().unwrap()["messages"][1];
    assert_eq!(user["content"][1], json!({"type": "image", "data": png, "mimeType": "image/png"}));
    let sent = &env.request_bodies()[0]["messages"][0]["content"];
    assert_eq!(sent[0]["text"], "what is this?");
    assert_eq!(sent[1]["type"], "image");
    assert_eq!(sent[1]["source"]["data"], png);
}

#[tokio::test]
async fn bash_environment_from_the_settings_reaches_every_shell_command() {
    let env =
        Env::new(vec![Turn::tool_call("bash", json!({"command": "echo tool:$GREETING"})), Turn::text("ok")]).await;
    std::fs::create_dir_all(env.cwd.join(".rho")).unwrap();
    std::fs::write(env.cwd.join(".rho/settings.json"), r#"{"bash": {"environment": {"GREETING": "hello"}}}"#).unwrap();
    // A project's bash.environment counts only in a trusted project.
    let mut rho = Rho::start(&env, &["--no-session", "--trust-project"]).await;
    let result = rho.data(json!({"type": "bash", "command": "echo user:$GREETING"})).await;
    assert_eq!(result["output"], "user:hello\n");
    rho.send(json!({"type": "prompt", "message": "greet"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "tool:hello\n");
}
