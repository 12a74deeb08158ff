//! The session file survives a hard kill: `rho --mode rpc` is SIGKILLed while a slow reply
//! streams, and the file it leaves is whole JSON lines (the last one may be torn) holding the
//! user's message. A new `rho --mode rpc --continue` in the same directory answers `get_state`
//! and `get_messages` with that conversation, reports a torn last line on stderr at most, and
//! appends the next prompt cleanly after it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::task::JoinHandle;

/// A reply slow enough (about four seconds) to be killed in the middle of.
fn slow_reply() -> Turn {
    Turn::text("This answer streams one character at a time and never ends.").with_chunk_size(1).with_chunk_delay_ms(70)
}

/// Starts rho, prompts, waits until the reply is streaming, SIGKILLs the process and returns
/// the session file it was writing.
async fn kill_mid_stream(env: &Env) -> PathBuf {
    let mut rho = Rho::start(env, &[]).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    let file = PathBuf::from(state["sessionFile"].as_str().unwrap());
    rho.send(json!({"type": "prompt", "message": "remember this"})).await;
    rho.until(|f| f["type"] == "message_update" && f["assistantMessageEvent"]["type"] == "text_delta").await;

    let pid = rho.child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill").args(["-KILL", &pid]).status().unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(10), rho.child.wait()).await.unwrap().unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");
    file
}

/// The lines of `path`: every line but possibly the last must be whole JSON. Returns the
/// parsed lines and whether the last one was torn.
fn whole_lines(path: &Path) -> (Vec<Value>, bool) {
    let raw = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = raw.lines().collect();
    let mut parsed = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_str::<Value>(line) {
            Ok(v) => parsed.push(v),
            Err(_) if i + 1 == lines.len() && !raw.ends_with('\n') => return (parsed, true),
            Err(e) => panic!("line {} is not whole JSON ({e}): {line}", i + 1),
        }
    }
    (parsed, false)
}

fn roles(lines: &[Value]) -> Vec<String> {
    lines.iter().filter_map(|l| l["message"]["role"].as_str()).map(str::to_owned).collect()
}

/// Spawns `rho --mode rpc --continue` with its stderr collected, past its `ready` frame.
async fn continue_session(env: &Env) -> (Rho, JoinHandle<String>) {
    let mut rho = Rho::spawn(env, &["--continue"]).await;
    let mut stderr = rho.child.stderr.take().unwrap();
    let collected = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    let ready = rho.next().await;
    assert_eq!(ready["type"], "ready", "first frame: {ready}");
    (rho, collected)
}

/// Checks the resumed process: it reports the conversation and answers a new prompt.
async fn resume_and_prompt(rho: &mut Rho, file: &Path) {
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["sessionFile"], json!(file));
    assert_eq!(state["messageCount"], 2);
    assert_eq!(state["isStreaming"], false);
    let messages = rho.data(json!({"type": "get_messages"})).await;
    let messages = messages["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
    assert_eq!(messages[1]["content"][0]["text"], "remember this");

    rho.send(json!({"type": "prompt", "message": "and now?"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.last().unwrap();
    let texts: Vec<&str> =
        end["messages"].as_array().unwrap().iter().filter_map(|m| m["content"][0]["text"].as_str()).collect();
    assert_eq!(texts.last(), Some(&"Resumed."), "{end}");
    let messages = rho.data(json!({"type": "get_messages"})).await;
    assert_eq!(messages["messages"].as_array().unwrap().len(), 4);
}

/// Closes the resumed process and returns what it wrote on stderr.
async fn finish(mut rho: Rho, stderr: JoinHandle<String>) -> String {
    rho.close_stdin();
    let status = rho.wait().await;
    assert!(status.success(), "{status}");
    let stderr = stderr.await.unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[tokio::test]
async fn a_sigkill_mid_stream_keeps_the_conversation_and_continue_resumes_it() {
    let env = Env::new(vec![slow_reply(), Turn::text("Resumed.")]).await;
    let file = kill_mid_stream(&env).await;

    // Whole lines; the user's message is there, the reply in flight is not (nothing is being
    // written while a reply streams, so not even the last line is torn).
    let (lines, torn) = whole_lines(&file);
    assert!(!torn);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(roles(&lines), ["system", "user"]);
    let user_line = lines.iter().find(|l| l["message"]["role"] == "user").unwrap();
    assert_eq!(user_line["message"]["content"][0]["text"], "remember this");
    let size_after_kill = std::fs::metadata(&file).unwrap().len();

    let (mut rho, stderr) = continue_session(&env).await;
    resume_and_prompt(&mut rho, &file).await;
    let stderr = finish(rho, stderr).await;
    assert!(!stderr.contains("Warning"), "{stderr}");

    // The new entries follow the old ones on whole lines; the file was not rewritten.
    let (lines, torn) = whole_lines(&file);
    assert!(!torn);
    assert!(std::fs::metadata(&file).unwrap().len() > size_after_kill);
    assert_eq!(roles(&lines), ["system", "user", "user", "assistant"]);
    assert_eq!(env.session_files(), std::slice::from_ref(&file));
    let second_request = &env.request_bodies()[1];
    let sent: Vec<&str> = second_request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"][0]["text"].as_str())
        .collect();
    assert_eq!(sent, ["remember this", "and now?"]);
    // The new prompt hangs under the old conversation.
    let (session, warnings) = rho_session::Session::open(&file).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let context = session.build_context();
    let context_roles: Vec<&str> = context.messages.iter().map(|m| m.role()).collect();
    assert_eq!(context_roles, ["system", "user", "user", "assistant"]);
}

#[tokio::test]
async fn a_torn_last_line_is_reported_and_the_next_prompt_appends_after_it() {
    let env = Env::new(vec![slow_reply(), Turn::text("Resumed.")]).await;
    let file = kill_mid_stream(&env).await;
    // The kill landed in the middle of a write: half a line at the end of the file.
    let (lines, torn) = whole_lines(&file);
    assert!(!torn);
    let user_id = lines.iter().find(|l| l["message"]["role"] == "user").unwrap()["id"].as_str().unwrap().to_owned();
    let half = format!(r#"{{"type":"message","id":"0badf00d","parentId":"{user_id}","timestamp":"2026-03-15T10:0"#);
    std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(half.as_bytes()).unwrap();
    let before = std::fs::read(&file).unwrap();
    let (_, torn) = whole_lines(&file);
    assert!(torn);

    let (mut rho, stderr) = continue_session(&env).await;
    resume_and_prompt(&mut rho, &file).await;
    let stderr = finish(rho, stderr).await;
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("Warning")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains("incomplete last line"), "{stderr}");

    // The torn bytes stay where they were; everything after them is on lines of its own.
    let after = std::fs::read(&file).unwrap();
    assert!(after.starts_with(&before), "the file was rewritten");
    assert_eq!(after[before.len()], b'\n');
    let raw = String::from_utf8(after).unwrap();
    let all: Vec<&str> = raw.lines().collect();
    let torn_at = all.iter().position(|l| *l == half).unwrap();
    for line in all.iter().enumerate().filter(|(i, _)| *i != torn_at).map(|(_, l)| l) {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("not whole JSON ({e}): {line}"));
    }
    assert!(torn_at + 1 < all.len());

    let (session, warnings) = rho_session::Session::open(&file).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].line, torn_at + 1);
    let context_roles: Vec<&str> = session.build_context().messages.iter().map(|m| m.role()).collect();
    assert_eq!(context_roles, ["system", "user", "user", "assistant"]);
}
