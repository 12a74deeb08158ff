//! Bad input through the real binary: malformed lines, unknown commands, wrong field types,
//! invalid UTF-8, blank lines, a 10 MB prompt and a 10,000-command burst. Each gets its precise
//! answer, the process stays up and answers what follows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, redact};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

#[tokio::test]
async fn malformed_and_unknown_lines_get_their_error_frames_and_reading_goes_on() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send_raw(b"{not json\n").await;
    rho.send_raw(b"   \n").await;
    rho.send_raw(b"{\"id\":\"u1\",\"type\":\"frobnicate\"}\n").await;
    rho.send_raw(b"{\"id\":\"u2\"}\n").await;
    rho.send_raw(b"[1,2]\n").await;
    rho.send_raw(b"null\n").await;
    rho.send_raw(b"{\"id\":\"w1\",\"type\":\"prompt\",\"message\":5}\n").await;
    rho.send_raw(b"{\"id\":\"w2\",\"type\":\"set_session_name\"}\n").await;
    rho.send_raw(b"{\"id\":\"w3\",\"type\":\"set_steering_mode\",\"mode\":\"sometimes\"}\n").await;
    rho.send_raw(b"{\"id\":\"w4\",\"type\":\"set_thinking_level\",\"level\":\"extreme\"}\n").await;
    rho.send_raw(b"{\"type\":\"get_state\",\"id\":\"x\"}\xff\n").await;
    rho.send_raw(b"{\"id\":\"ok\",\"type\":\"get_last_assistant_text\"}\r\n").await;
    let frames = rho.until(|f| f["id"] == "ok").await;
    insta::assert_json_snapshot!(redact(&Value::Array(frames)));
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send_raw(&[b'{', 0xc3, 0x28, b'}', b'\n']).await;
    let frame = rho.next().await;
    assert_eq!(frame["command"], "parse");
    assert!(frame["error"].as_str().unwrap().starts_with("Failed to parse command: input is not valid UTF-8"));
    assert!(frame.get("id").is_none());
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], false);
}

#[tokio::test]
async fn a_ten_megabyte_prompt_line_is_accepted() {
    let env = Env::new(vec![Turn::text("Got it.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let big = "x".repeat(10 * 1024 * 1024);
    rho.send(json!({"id": "big", "type": "prompt", "message": big})).await;
    let frames = rho.until_agent_end().await;
    assert_eq!(
        frames[0],
        json!({"id": "big", "type": "response", "command": "prompt", "success": true,
        "data": {"disposition": "started"}})
    );
    let request = &env.server.requests()[0];
    let sent = &request.body;
    assert_eq!(sent["messages"][0]["content"][0]["text"].as_str().unwrap().len(), 10 * 1024 * 1024);
    // Serialized while it was sent, with its length given up front rather than in chunks.
    let length = serde_json::to_vec(sent).unwrap().len().to_string();
    assert_eq!((request.header("content-length"), request.header("transfer-encoding")), (Some(length.as_str()), None));
    // Echoed whole, as pi echoes it.
    let agent_end = frames.last().unwrap();
    assert_eq!(agent_end["messages"][1]["content"][0]["text"].as_str().unwrap().len(), 10 * 1024 * 1024);
}

#[tokio::test]
async fn ten_thousand_commands_in_one_burst_are_all_answered_in_order() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let kinds = ["get_state", "get_messages", "get_session_stats", "nope", "get_last_assistant_text"];
    let mut burst = String::new();
    for i in 0..10_000 {
        if i % 997 == 0 {
            burst.push_str("{broken\n");
        }
        burst.push_str(&json!({"id": format!("b{i}"), "type": kinds[i % kinds.len()]}).to_string());
        burst.push('\n');
    }
    rho.send_raw(burst.as_bytes()).await;
    let mut next = 0;
    let mut parse_errors = 0;
    while next < 10_000 {
        let frame = rho.next().await;
        assert_eq!(frame["type"], "response");
        if frame["command"] == "parse" {
            parse_errors += 1;
            continue;
        }
        assert_eq!(frame["id"], json!(format!("b{next}")), "responses come in arrival order");
        assert_eq!(frame["success"], kinds[next % kinds.len()] != "nope");
        next += 1;
    }
    assert_eq!(parse_errors, 11);
}
