//! The session API through the fixture `session.ts`: a command that writes a custom entry,
//! names the session and notifies the host; a command that sends a user message; a flag from
//! the command line; and a tool that reads it all back through `ctx`.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho, read_jsonl, redact};

#[tokio::test]
async fn commands_entries_flags_and_the_session_as_extensions_see_it() {
    let Some(host) = pi_host("commands_entries_flags_and_the_session_as_extensions_see_it") else { return };
    let env = Env::new(vec![Turn::tool_call("session_info", json!({})), Turn::text("Seen."), Turn::text("Asked.")])
        .await
        .with_extension_host(host);
    let mut rho = Rho::start(&env, &["-e", &fixture("session.ts"), "--greeting", "ahoy"]).await;

    let commands = rho.data(json!({"type": "get_commands"})).await;
    let extension: Vec<Value> =
        commands["commands"].as_array().unwrap().iter().filter(|c| c["source"] == "extension").map(redact).collect();
    insta::assert_json_snapshot!("session_commands", extension);

    // Answered once the command finished: what it did comes first.
    rho.send(json!({"type": "prompt", "id": "note", "message": "/note first"})).await;
    let mut notices = rho.until(|f| f["type"] == "response" && f["id"] == "note").await;
    let response = notices.pop().unwrap();
    assert_eq!(response["success"], true, "{response}");
    assert!(notices.iter().any(|f| f["method"] == "setStatus"), "{notices:?}");
    // pi 1.6: the host hears of the entry the command appended.
    let appended = notices.iter().find(|f| f["type"] == "entry_appended").expect("entry_appended");
    assert_eq!(
        (&appended["entry"]["type"], &appended["entry"]["customType"], &appended["entry"]["data"]),
        (&json!("custom"), &json!("note"), &json!({"text": "first"}))
    );
    let notices: Vec<Value> = notices.iter().filter(|f| f["type"] == "extension_ui_request").map(redact).collect();
    insta::assert_json_snapshot!("session_note_notices", notices);

    rho.send(json!({"type": "prompt", "id": "p", "message": "what do you see?"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    let info = &end["result"]["details"];
    assert_eq!(info["greeting"], "ahoy");
    assert_eq!(info["notes"], json!(["first"]));
    assert_eq!(info["name"], "Notes: first");
    assert_eq!(info["model"], "mock/mock-model");
    assert_eq!(info["hasUI"], true);
    assert_eq!(info["idle"], false);
    assert!(info["activeTools"].as_array().unwrap().contains(&json!("session_info")), "{info}");
    // The declared prompt and the user message of this run were recorded before the tool ran.
    assert_eq!(info["messages"], 3, "{info}");
    let system = env.request_bodies()[0]["system"].to_string();
    assert!(system.contains("- session_info: Report what the extension sees of the session"), "{system}");
    assert!(system.contains("Use session_info when asked about the session."), "{system}");

    // A command that sends a user message starts a run with it.
    rho.send(json!({"type": "prompt", "id": "ask", "message": "/ask-model the time"})).await;
    let frames = rho.until_agent_end().await;
    let user = frames
        .iter()
        .find(|f| f["type"] == "message_end" && f["message"]["role"] == "user")
        .map(|f| f["message"]["content"][0]["text"].clone());
    assert_eq!(user, Some(json!("Extension asks: the time")));

    rho.close_stdin();
    rho.wait().await;
    let entries = read_jsonl(&env.session_files()[0]);
    // Each run's first turn: its mark (written by a slow turn_start handler), then its user
    // message.
    let order: Vec<String> = entries
        .iter()
        .filter_map(|e| match (e["type"].as_str(), e["customType"].as_str(), e["message"]["role"].as_str()) {
            (Some("custom"), Some("turn-mark"), _) => Some(format!("mark {}", e["data"]["turnIndex"])),
            (Some("message"), _, Some(role)) => Some(role.to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        // The declared prompt opens the first run's messages, after its turn started.
        ["mark 0", "system", "user", "assistant", "toolResult", "mark 1", "assistant", "mark 0", "user", "assistant"],
        "{entries:?}"
    );
    let custom: Vec<Value> = entries
        .iter()
        .filter(|e| e["customType"] != "turn-mark" && (e["type"] == "custom" || e["type"] == "session_info"))
        .map(redact)
        .collect();
    insta::assert_json_snapshot!("session_custom_entries", custom);
}
