//! What a host must never lose, each found by driving rho as hosts do: an `"id":null` echoed,
//! a retry chain that never started never "ends", an `abort_bash` that also stops the `bash`
//! queued behind the running one, a full disk that the host hears about (and a file with no
//! torn line) and plain stderr for the host's logs, one writer per session file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Stdio;

use common::{Env, Rho, read_jsonl};
use rho_mock_llm::Turn;
use serde_json::json;

#[tokio::test]
async fn a_null_id_is_echoed() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"id": null, "type": "get_state"})).await;
    let response = rho.next().await;
    assert_eq!(response.as_object().unwrap().keys().next().map(String::as_str), Some("id"));
    assert_eq!(response["id"], serde_json::Value::Null);
    rho.send(json!({"id": null, "type": "no_such_command"})).await;
    assert_eq!(
        rho.next().await,
        json!({"id": null, "type": "response", "command": "no_such_command", "success": false,
               "error": "Unknown command: no_such_command"})
    );
}

#[tokio::test]
async fn a_retry_after_too_long_to_wait_ends_no_chain_that_never_started() {
    let env = Env::new(vec![Turn::error(429, "Rate limited").with_retry_after(90.0)]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    let frames = rho.until_agent_end().await;
    let retry_frames: Vec<&str> =
        frames.iter().filter_map(|f| f["type"].as_str()).filter(|t| t.starts_with("auto_retry")).collect();
    assert!(retry_frames.is_empty(), "{retry_frames:?}");
    let end = frames.last().unwrap();
    assert_eq!(end["messages"][2]["errorMessage"], "429 Rate limited");
}

#[tokio::test]
async fn abort_bash_also_stops_a_bash_waiting_its_turn() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let write = [
        json!({"id": "b1", "type": "bash", "command": "touch started.txt; sleep 30"}),
        json!({"id": "b2", "type": "bash", "command": "touch ran.txt"}),
    ]
    .iter()
    .map(|f| f.to_string() + "\n")
    .collect::<String>();
    rho.send_raw(write.as_bytes()).await;
    // Once b1 runs (b2 waits behind it), abort_bash stops both.
    while !env.cwd.join("started.txt").exists() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    rho.send(json!({"id": "k", "type": "abort_bash"})).await;
    let frames = rho.until(|f| f["id"] == "b2").await;
    let b1 = frames.iter().find(|f| f["id"] == "b1").unwrap();
    assert_eq!(b1["data"]["cancelled"], true);
    let b2 = frames.last().unwrap();
    assert_eq!(
        b2["data"],
        json!({"output": "", "cancelled": true, "truncated": false,
               "totalLines": 0, "totalBytes": 0, "outputLines": 0, "outputBytes": 0})
    );
    assert!(!env.cwd.join("ran.txt").exists(), "the queued command ran");
    // A bash read after the abort runs.
    let ran = rho.data(json!({"type": "bash", "command": "echo fine"})).await;
    assert_eq!(ran["output"], "fine\n");
}

#[tokio::test]
async fn a_full_disk_is_reported_and_leaves_no_torn_line() {
    let env = Env::new(vec![Turn::text("Short answer.")]).await;
    let session = env.dir.path().join("limited.jsonl");
    let session_arg = session.to_str().unwrap().to_owned();
    // `ulimit -f 8`: no file of rho's may grow past 8 KiB.
    let mut bash = tokio::process::Command::new("bash");
    bash.arg("-c").arg("ulimit -f 8; exec \"$0\" \"$@\"").arg(env!("CARGO_BIN_EXE_rho"));
    bash.args(["--mode", "rpc", "--model", "mock/mock-model", "--session", &session_arg]);
    let mut rho = Rho::start_command(env.configure(bash)).await;

    let big = "w".repeat(20_000);
    rho.send(json!({"id": "p", "type": "prompt", "message": big})).await;
    let frames = rho.until_agent_end().await;
    let notices: Vec<_> = frames.iter().filter(|f| f["type"] == "notice").collect();
    assert!(!notices.is_empty(), "no notice of the failed write");
    assert_eq!(notices[0]["level"], "error");
    assert_eq!(notices[0]["source"], "session-persistence");
    assert!(notices[0]["message"].as_str().unwrap().starts_with("Session file not saved: "), "{}", notices[0]);
    assert_eq!(frames.last().unwrap()["messages"][2]["content"][0]["text"], "Short answer.");

    // A change the host asks for is not reported as done while the file lags.
    let named = rho.request(json!({"type": "set_session_name", "name": "x"})).await;
    assert_eq!(named["success"], false, "{named}");

    rho.close_stdin();
    assert!(rho.wait().await.success());
    // The host's log gets the error as plain text: no colour codes when stderr is a pipe.
    let mut stderr = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut rho.child.stderr.take().unwrap(), &mut stderr).await.unwrap();
    assert!(stderr.contains("Session file not saved: "), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    // Every line of the file is whole JSON: the failed writes left nothing behind.
    let lines = read_jsonl(&session);
    assert!(lines.iter().all(|l| l["message"]["role"] != "user"), "the 20 KB prompt cannot have fit");
}

#[tokio::test]
async fn a_second_rho_on_the_same_session_file_is_refused() {
    let env = Env::new(vec![]).await;
    let session = env.dir.path().join("shared.jsonl");
    let path = session.to_str().unwrap().to_owned();
    let mut first = Rho::start(&env, &["--session", &path]).await;
    first.data(json!({"type": "get_state"})).await;
    let second = env
        .command(&["--mode", "rpc", "--model", "mock/mock-model", "--session", &path])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8(second.stderr).unwrap();
    assert_eq!(stderr.trim(), format!("Error: Session file is in use by another process: {path}"));
    assert!(second.stdout.is_empty());
}
