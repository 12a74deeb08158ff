//! pi 1.6's actionable boundaries through the fixture `boundaries.ts`: `turn_end` handlers chain
//! their proposals, the entries they propose are appended (a `context_edit` leaves the first
//! answer out of what the model is sent next, a `custom_message` goes in) and `continue` makes
//! one more request; `agent_before_settle` adds a reminder and one more run before
//! `agent_settled`, and a continuation with nothing to continue from is refused and reported.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho, message_texts, read_jsonl};

/// A request's messages as `role: text`.
fn sent(body: &Value) -> Vec<String> {
    message_texts(body).into_iter().map(|(role, text)| format!("{role}: {text}")).collect()
}

#[tokio::test]
async fn boundary_handlers_append_entries_and_ask_for_one_more_request() {
    let Some(host) = pi_host("boundary_handlers_append_entries_and_ask_for_one_more_request") else { return };
    let turns = vec![Turn::text("First answer."), Turn::text("Second answer."), Turn::text("Reviewed.")];
    let env = Env::new(turns).await.with_extension_host(host);
    let mut rho = Rho::start(&env, &["-e", &fixture("boundaries.ts")]).await;

    rho.send(json!({"type": "prompt", "id": "p", "message": "hello"})).await;
    let frames = rho.until(|f| f["type"] == "agent_settled").await;

    // Three requests: the first answer left out of the second, the reminder in the third.
    let requests: Vec<Vec<String>> = env.request_bodies().iter().map(sent).collect();
    assert_eq!(
        requests,
        [
            vec!["user: hello"],
            vec!["user: hello", "user: Answer again using the persisted user request."],
            vec![
                "user: hello",
                "user: Answer again using the persisted user request.",
                "assistant: Second answer.",
                "user: Review the final diff before replying.",
            ],
        ]
    );
    // Two runs; the second `continue` had nothing to continue from.
    let ends = frames.iter().filter(|f| f["type"] == "agent_end").count();
    assert_eq!(ends, 2);
    let refused: Vec<&Value> = frames.iter().filter(|f| f["type"] == "extension_error").collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(
        (&refused[0]["event"], &refused[0]["error"]),
        (
            &json!("agent_before_settle"),
            &json!("agent_before_settle requested continuation without runnable model context")
        )
    );

    // The entries, as the session file holds them.
    let entries = read_jsonl(&env.session_files().pop().unwrap());
    let first_answer = entries
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["content"][0]["text"] == "First answer.")
        .unwrap();
    let edit = entries.iter().find(|e| e["type"] == "context_edit").unwrap();
    assert_eq!((&edit["targetId"], &edit["replacement"]), (&first_answer["id"], &Value::Null));
    let seen: Vec<&Value> = entries.iter().filter(|e| e["customType"] == "turn-seen").map(|e| &e["data"]).collect();
    insta::assert_json_snapshot!("boundary_turns_seen", seen);
    let reminders: Vec<(&Value, &Value)> =
        entries.iter().filter(|e| e["type"] == "custom_message").map(|e| (&e["customType"], &e["display"])).collect();
    assert_eq!(
        reminders,
        [(&json!("replacement-instruction"), &json!(false)), (&json!("review-reminder"), &json!(false))]
    );
    // Each appended entry was announced.
    let announced = frames.iter().filter(|f| f["type"] == "entry_appended").count();
    assert_eq!(announced, 3 + 1 + 2, "three turn-seen entries, the edit and two messages");
}

#[tokio::test]
async fn a_boundary_context_lists_the_messages_still_waiting() {
    let Some(host) = pi_host("a_boundary_context_lists_the_messages_still_waiting") else { return };
    let turns =
        vec![Turn::text("A slow first answer.").with_chunk_size(2).with_chunk_delay_ms(50), Turn::text("Steered.")];
    let env = Env::new(turns).await.with_extension_host(host);
    let mut rho = Rho::start(&env, &["-e", &fixture("pending.ts")]).await;

    rho.send(json!({"type": "prompt", "id": "p", "message": "hello"})).await;
    rho.until(|f| f["type"] == "message_update").await;
    rho.send(json!({"type": "steer", "id": "s", "message": "also this"})).await;
    rho.until(|f| f["type"] == "agent_end").await;

    let entries = read_jsonl(&env.session_files().pop().unwrap());
    let seen: Vec<&Value> = entries.iter().filter(|e| e["customType"] == "pending-seen").map(|e| &e["data"]).collect();
    // The steering message waits at the first turn's end and is delivered by the second; the
    // event itself keeps pi's fields.
    assert_eq!(
        seen,
        [&json!({"pending": ["also this"], "hasField": false}), &json!({"pending": [], "hasField": false})]
    );
}
