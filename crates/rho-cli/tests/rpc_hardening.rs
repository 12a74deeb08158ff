//! What hosts that embed rho rely on, through the real binary: no stdout line over the frame
//! bound (an `agent_end` that would be 5 MiB arrives truncated), U+2028/U+2029 escaped so a
//! JavaScript readline reader parses every frame, and a clean exit on stdin EOF or SIGTERM with
//! the session saved and no child process left behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Env, Rho, alive, read_jsonl};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

const MIB: usize = 1024 * 1024;

async fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A reply calling `read` 100 times on files of 60 KB: about 6 MB of tool results in one run.
async fn hundred_reads() -> Env {
    let calls: Vec<Turn> = vec![(0..100).fold(Turn::text("Reading."), |turn, i| {
        turn.with_tool_call("read", json!({"path": format!("big{}.txt", i % 2)}))
    })];
    let env = Env::new(calls.into_iter().chain([Turn::text("Done reading.")]).collect()).await;
    let line = "y".repeat(99) + "\n";
    std::fs::write(env.cwd.join("big0.txt"), line.repeat(600)).unwrap();
    std::fs::write(env.cwd.join("big1.txt"), line.repeat(600)).unwrap();
    env
}

#[tokio::test]
async fn an_agent_end_over_the_bound_keeps_the_newest_messages_that_fit() {
    let env = hundred_reads().await;
    let mut rho = Rho::start(&env, &["--no-session", "--rpc-max-frame-bytes", "1048576"]).await;
    rho.bound_lines(MIB);
    rho.send(json!({"type": "prompt", "message": "read them all"})).await;
    let mut streamed = 0;
    let agent_end = loop {
        let frame = rho.next().await;
        if frame["type"] == "message_end" {
            streamed += 1;
        }
        if frame["type"] == "agent_end" {
            break frame;
        }
    };
    assert_eq!(streamed, 1 + 1 + 1 + 100 + 1, "every message was streamed on its own");
    assert_eq!(agent_end["truncated"], true);
    assert_eq!(agent_end["messageCount"], 104);
    let kept = agent_end["messages"].as_array().unwrap();
    assert!(!kept.is_empty() && kept.len() < 104);
    assert_eq!(kept.last().unwrap()["content"][0]["text"], "Done reading.");
    // get_messages too answers with the newest messages, marked, each of them whole.
    let response = rho.request(json!({"type": "get_messages"})).await;
    assert_eq!(response["success"], true);
    assert_eq!((&response["data"]["truncated"], &response["data"]["messageCount"]), (&json!(true), &json!(104)));
    let messages = response["data"]["messages"].as_array().unwrap();
    assert!(!messages.is_empty() && messages.len() < 104);
    assert!(!response.to_string().contains("bytes omitted"), "no message was cut");
    assert_eq!(messages.last().unwrap()["content"][0]["text"], "Done reading.");
}

#[tokio::test]
async fn without_a_bound_agent_end_and_get_messages_carry_every_message_whole() {
    let env = hundred_reads().await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "read them all"})).await;
    let agent_end = rho.until_agent_end().await.pop().unwrap();
    assert!(agent_end.get("truncated").is_none());
    let messages = agent_end["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 104);
    let results = messages.iter().filter(|m| m["role"] == "toolResult");
    assert!(results.clone().count() == 100 && results.clone().all(|m| !m.to_string().contains("bytes omitted")));
    let all = rho.data(json!({"type": "get_messages"})).await;
    assert_eq!(all["messages"], agent_end["messages"]);
}

#[tokio::test]
async fn line_separators_are_escaped_and_a_node_readline_reader_parses_every_frame() {
    let env = Env::new(vec![Turn::text("one\u{2028}two\u{2029}three").with_chunk_size(4)]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "sep\u{2028}arate"})).await;
    let mut raw = String::from("{\"type\":\"ready\"}\n");
    loop {
        let line = rho.next_line().await;
        assert!(!line.contains('\u{2028}') && !line.contains('\u{2029}'), "raw separator in {line}");
        raw.push_str(&line);
        raw.push('\n');
        if line.contains("\"type\":\"agent_end\"") {
            break;
        }
    }
    assert!(raw.contains("one\\u2028two\\u2029three"));
    let file = env.dir.path().join("frames.jsonl");
    std::fs::write(&file, &raw).unwrap();
    let script = r#"
        const rl = require('readline').createInterface({input: require('fs').createReadStream(process.argv[1])});
        let n = 0, last;
        rl.on('line', (l) => { last = JSON.parse(l); n++; });
        rl.on('close', () => console.log(JSON.stringify({n, text: last.messages[2].content[0].text})));
    "#;
    let out = std::process::Command::new("node").arg("-e").arg(script).arg(&file).output().expect("node runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["n"], raw.lines().count());
    assert_eq!(report["text"], "one\u{2028}two\u{2029}three");
}

#[tokio::test]
async fn stdin_closed_mid_stream_exits_zero_with_the_session_saved() {
    let env =
        Env::new(vec![Turn::text("a slow answer that is cut short").with_chunk_size(1).with_chunk_delay_ms(50)]).await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "keep me"})).await;
    rho.until(|f| f["type"] == "message_update").await;
    rho.close_stdin();
    let status = rho.wait().await;
    assert!(status.success(), "{status}");
    let rest = rho.rest().await;
    assert!(rest.iter().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()), "whole lines only");
    assert!(rest.iter().any(|l| l.contains("\"type\":\"agent_end\"")), "the run ended with agent_end");
    let lines = read_jsonl(&env.session_files()[0]);
    let roles: Vec<&str> = lines.iter().filter_map(|l| l["message"]["role"].as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    assert_eq!(lines.last().unwrap()["message"]["stopReason"], "aborted");
}

#[tokio::test]
async fn sigterm_during_a_long_bash_call_exits_and_leaves_no_child() {
    let env = Env::new(vec![Turn::tool_call("bash", json!({"command": "sleep 30 & echo $! > sleep.pid; wait"}))]).await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "wait a while"})).await;
    rho.until(|f| f["type"] == "tool_execution_start").await;
    let pid: u32 = wait_for_file(&env.cwd.join("sleep.pid")).await.trim().parse().unwrap();
    assert!(alive(pid));
    let status = std::process::Command::new("kill").args(["-TERM", &rho.child.id().unwrap().to_string()]).status();
    assert!(status.unwrap().success());
    let exit = rho.wait().await;
    // A clean exit that says it was signalled (128 + SIGTERM), as pi's RPC mode.
    assert_eq!(exit.code(), Some(143), "{exit}");
    // The group was killed before rho exited; the orphan is reaped by init soon after.
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "the sleep child survived");
    // The aborted call has its result, and the run ended with an aborted reply.
    let lines = read_jsonl(&env.session_files()[0]);
    let roles: Vec<&str> = lines.iter().filter_map(|l| l["message"]["role"].as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "toolResult", "assistant"]);
    assert_eq!(lines.last().unwrap()["message"]["stopReason"], "aborted");
}

#[tokio::test]
async fn a_hangup_ends_rpc_and_acp_mode_as_signalled_processes() {
    let env = Env::new(Vec::new()).await;
    // RPC: SIGHUP, as pi's (129).
    let mut rho = Rho::start(&env, &[]).await;
    let pid = rho.child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap().success());
    assert_eq!(rho.wait().await.code(), Some(129));

    // ACP: SIGTERM once the client has its first answer.
    let mut acp = env.command(&["--mode", "acp"]).spawn().unwrap();
    let mut stdin = acp.stdin.take().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    tokio::io::AsyncWriteExt::write_all(&mut stdin, format!("{initialize}\n").as_bytes()).await.unwrap();
    let mut stdout = tokio::io::BufReader::new(acp.stdout.take().unwrap());
    let mut answer = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut answer).await.unwrap();
    assert!(answer.contains("\"id\":1"), "{answer}");
    let pid = acp.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = tokio::time::timeout(Duration::from_secs(10), acp.wait()).await.unwrap().unwrap();
    assert_eq!(status.code(), Some(143), "{status}");
}

#[tokio::test]
async fn an_acp_line_that_is_not_utf8_is_answered_and_the_next_one_too() {
    let env = Env::new(Vec::new()).await;
    let mut acp = env.command(&["--mode", "acp"]).spawn().unwrap();
    let mut stdin = acp.stdin.take().unwrap();
    let mut lines = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"in\xffit\"}\n".to_vec();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    lines.extend_from_slice(format!("{initialize}\n").as_bytes());
    tokio::io::AsyncWriteExt::write_all(&mut stdin, &lines).await.unwrap();
    let mut stdout = tokio::io::BufReader::new(acp.stdout.take().unwrap());
    let mut first = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut first).await.unwrap();
    // The bad byte reads as U+FFFD: a method that does not exist, answered as such.
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first, json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "Method not found"}}));
    let mut second = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut second).await.unwrap();
    let second: Value = serde_json::from_str(&second).unwrap();
    assert_eq!((second["id"].clone(), second["result"]["protocolVersion"].clone()), (json!(1), json!(1)));
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), acp.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
}
