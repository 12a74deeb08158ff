//! An abort reaches everything read before it: a `prompt` and an `abort` (or `abort_and_prompt`)
//! written in one write, before the prompt had its turn to start a run. The run starts
//! cancelled, ends with `agent_end`, and the abort is answered right after it; floods of aborts
//! leave no command unanswered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{Env, Rho, types};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// A reply that takes about 20 s: a run that is not aborted cannot end within the test.
fn endless() -> Turn {
    Turn::text("word ".repeat(200)).with_chunk_size(1).with_chunk_delay_ms(20)
}

fn line(frame: Value) -> String {
    let mut line = frame.to_string();
    line.push('\n');
    line
}

/// The frame types without the streamed deltas.
fn shape(frames: &[Value]) -> Vec<String> {
    types(frames).into_iter().filter(|t| !t.starts_with("message_update")).collect()
}

#[tokio::test]
async fn a_prompt_and_an_abort_in_one_write_never_lose_the_abort() {
    let env = Env::new((0..200).map(|_| endless()).collect()).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    for i in 0..200 {
        let write = line(json!({"id": format!("p{i}"), "type": "prompt", "message": "go"}))
            + &line(json!({"id": format!("a{i}"), "type": "abort"}));
        rho.send_raw(write.as_bytes()).await;
        let frames = rho.until(|f| f["id"] == format!("a{i}")).await;
        // The first run declares the prompt (a `system` message); the conversation goes on, so
        // later runs have nothing new to declare.
        let declared: &[&str] = if i == 0 { &["message_start", "message_end"] } else { &[] };
        let expected: Vec<&str> = ["response:prompt", "agent_start", "turn_start"]
            .into_iter()
            .chain(declared.iter().copied())
            .chain(["message_start", "message_end", "message_start", "message_end", "turn_end"])
            .chain(["agent_end", "agent_settled", "response:abort"])
            .collect();
        assert_eq!(shape(&frames), expected, "round {i}");
        let end = frames.iter().find(|f| f["type"] == "agent_end").unwrap();
        let reply = end["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(reply["stopReason"], "aborted", "round {i}: {end}");
        assert_eq!(frames.last().unwrap()["success"], true);
    }
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], false);
}

#[tokio::test]
async fn abort_and_prompt_in_the_same_write_as_a_prompt_replaces_it() {
    let rounds = 50;
    // Each round in a new conversation: the old prompt's request (when it is made before the
    // abort is read) gets an endless reply, the new one's a short one.
    let mut turns = Vec::new();
    for i in 0..rounds {
        turns.push(Turn::text("Answer.").when_body_contains(&format!("new-{i}.")));
        turns.push(endless().when_body_contains(&format!("old-{i}.")));
    }
    let env = Env::new(turns).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    for i in 0..rounds {
        rho.data(json!({"type": "new_session"})).await;
        let write = line(json!({"id": format!("p{i}"), "type": "prompt", "message": format!("old-{i}.")}))
            + &line(json!({"id": format!("ap{i}"), "type": "abort_and_prompt", "message": format!("new-{i}.")}));
        rho.send_raw(write.as_bytes()).await;
        let first = rho.until(|f| f["type"] == "agent_end").await;
        assert_eq!(first.iter().find(|f| f["type"] == "response").unwrap()["id"], format!("p{i}"));
        let end = first.last().unwrap();
        assert_eq!(end["messages"][0]["role"], "system");
        assert_eq!(end["messages"][1]["content"][0]["text"], format!("old-{i}."));
        assert_eq!(end["messages"][2]["stopReason"], "aborted", "round {i}: {end}");
        let second = rho.until(|f| f["type"] == "agent_end").await;
        let ack = second.iter().find(|f| f["type"] == "response").unwrap();
        assert_eq!(
            ack,
            &json!({"id": format!("ap{i}"), "type": "response", "command": "abort_and_prompt", "success": true,
                "data": {"disposition": "started"}})
        );
        let end = second.last().unwrap();
        // The transcript declared the prompt in the aborted run: this run declares nothing.
        assert_eq!(end["messages"][0]["content"][0]["text"], format!("new-{i}."));
        assert_eq!(end["messages"][1]["stopReason"], "stop", "round {i}: {end}");
        assert_eq!(end["messages"][1]["content"][0]["text"], "Answer.", "round {i}");
    }
}

#[tokio::test]
async fn a_flood_of_aborts_and_prompts_leaves_nothing_unanswered() {
    let env = Env::new((0..50).map(|_| endless()).collect()).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let mut write = String::new();
    let mut ids = Vec::new();
    for i in 0..300 {
        let (id, frame) = match i % 3 {
            0 => (format!("p{i}"), json!({"type": "prompt", "message": "go"})),
            1 => (format!("ap{i}"), json!({"type": "abort_and_prompt", "message": "again"})),
            _ => (format!("a{i}"), json!({"type": "abort"})),
        };
        let mut frame = frame;
        frame["id"] = json!(id);
        write.push_str(&line(frame));
        ids.push(id);
    }
    write.push_str(&line(json!({"id": "last", "type": "get_state"})));
    ids.push("last".into());
    rho.send_raw(write.as_bytes()).await;
    // Runs that were not aborted stream for minutes: this would wait for them. An abort and
    // the get_state after it wait for the same thing, so either may be answered first.
    let mut unanswered: std::collections::HashSet<String> = ids.into_iter().collect();
    let mut frames = Vec::new();
    let mut last = Value::Null;
    tokio::time::timeout(Duration::from_secs(60), async {
        while !unanswered.is_empty() {
            let frame = rho.next().await;
            if frame["type"] == "response" {
                unanswered.remove(frame["id"].as_str().unwrap());
                if frame["id"] == "last" {
                    last = frame.clone();
                }
            }
            frames.push(frame);
        }
    })
    .await
    .unwrap_or_else(|_| panic!("unanswered after 60 s: {unanswered:?}"));
    let before_state = &frames[..frames.iter().position(|f| f["id"] == "last").unwrap()];
    let starts = before_state.iter().filter(|f| f["type"] == "agent_start").count();
    let ends = before_state.iter().filter(|f| f["type"] == "agent_end").count();
    assert_eq!(starts, ends, "every run that started ended before get_state was answered");
    assert_eq!(last["data"]["isStreaming"], false);
}
