//! Server lifecycle over real stdio children: parallel start, failures that block nothing and
//! are reported once, exit and restart on next use, abort and timeout cancelling the request
//! on the server, env/cwd/stderr, disabled servers, shutdown ending the processes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use rho_agent::tool::OPERATION_ABORTED;
use rho_mcp::{McpConfig, McpManager, ServerState, StdioServer, Transport};
use serde_json::json;
use support::*;
use tokio_util::sync::CancellationToken;

fn failed_reason(state: &ServerState) -> &str {
    match state {
        ServerState::Failed(reason) => reason,
        other => panic!("expected failed, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_fails_to_start_is_reported_once_and_blocks_no_other() {
    let (_guard, dir) = temp();
    let mut missing = fixture("missing", &dir, &[]);
    if let Some(Transport::Stdio(stdio)) = &mut missing.transport {
        stdio.command = dir.join("no-such-binary").display().to_string();
    }
    let servers = vec![fixture("good", &dir, &[]), fixture("broken", &dir, &["--fail-start"]), missing];
    let manager = McpManager::start(McpConfig::from_servers(servers), options(&dir));
    // `start` returned before anything connected.
    assert!(manager.status().iter().all(|s| s.state == ServerState::Starting));
    tokio::time::timeout(Duration::from_secs(30), manager.settled()).await.unwrap();

    let status = manager.status();
    let names: Vec<&str> = status.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["broken", "good", "missing"]);
    assert!(!failed_reason(&status[0].state).is_empty());
    assert_eq!(status[1].state, ServerState::Ready);
    assert_eq!(status[1].tool_count, FIXTURE_TOOLS);
    assert!(failed_reason(&status[2].state).contains("cannot run"), "{:?}", status[2].state);
    assert!(manager.tools().iter().all(|t| t.name().starts_with("mcp__good__")));

    let diagnostics = manager.take_diagnostics();
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    let text: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    assert!(text.iter().any(|d| d.starts_with("MCP server \"broken\": could not be started")), "{text:?}");
    assert!(text.iter().any(|d| d.starts_with("MCP server \"missing\": could not be started: cannot run")), "{text:?}");
    // The broken server's stderr is in its log file (and the hint names it).
    let log = dir.join("logs").join("mcp-broken.log");
    assert!(text.iter().any(|d| d.contains(&log.display().to_string())), "{text:?}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "fixture: failing on purpose\n");
    // What servers write may hold secrets: the log and its folder are the user's alone.
    let mode =
        |p: &std::path::Path| std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions());
    assert_eq!(mode(&log) & 0o777, 0o600);
    assert_eq!(mode(log.parent().unwrap()) & 0o777, 0o700);
    assert!(manager.take_diagnostics().is_empty(), "each problem is reported once");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_slow_server_does_not_hold_back_a_fast_one() {
    let (_guard, dir) = temp();
    let servers = vec![fixture("fast", &dir, &[]), fixture("slow", &dir, &["--startup-ms", "20000"])];
    let manager = McpManager::start(
        McpConfig::from_servers(servers),
        options(&dir).with_startup_timeout(Duration::from_secs(60)),
    );
    eventually("fast to be ready", || manager.status()[0].state == ServerState::Ready).await;
    assert_eq!(manager.status()[1].state, ServerState::Starting);
    assert_eq!(manager.tools().len(), FIXTURE_TOOLS);
    manager.shutdown().await;
}

#[tokio::test]
async fn a_server_slower_than_the_startup_timeout_fails() {
    let (_guard, dir) = temp();
    let options = options(&dir).with_startup_timeout(Duration::from_millis(300));
    let manager = settled(vec![fixture("sleepy", &dir, &["--startup-ms", "20000"])], options).await;
    assert!(failed_reason(&manager.status()[0].state).contains("did not start within 0.3 s"));
    let pid = starts(&dir)[0];
    eventually("the timed-out server to be gone", || !alive(pid)).await;
    manager.shutdown().await;
}

#[tokio::test]
async fn an_exited_server_is_reported_once_and_restarted_on_next_use() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let first_pid = starts(&dir)[0];

    let err = call(tool(&manager, "mcp__fx__exit").as_ref(), json!({})).await.unwrap_err();
    assert_eq!(err.0, "MCP server \"fx\" exited during the request; it is restarted on next use");
    eventually("the exit to be seen", || matches!(manager.status()[0].state, ServerState::Failed(_))).await;
    let status = &manager.status()[0];
    assert_eq!(failed_reason(&status.state), "the server exited");
    assert_eq!(status.tool_count, FIXTURE_TOOLS, "its tools stay listed");

    let echo = call(tool(&manager, "mcp__fx__echo").as_ref(), json!({"text": "back"})).await.unwrap();
    assert_eq!(echo.text_content(), "back");
    // The old process is wholly handled once the server runs again: its exit was reported
    // once, not also by the supervisor that saw it.
    let diagnostics = manager.take_diagnostics();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(
        diagnostics[0].to_string().contains("the server exited; it is restarted when one of its tools is next called")
    );
    assert_eq!(manager.status()[0].state, ServerState::Ready);
    let pids = starts(&dir);
    assert_eq!(pids.len(), 2);
    assert!(!alive(first_pid));
    assert!(manager.take_diagnostics().is_empty());
    manager.shutdown().await;
}

#[tokio::test]
async fn abort_cancels_the_request_on_the_server() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let slow = tool(&manager, "mcp__fx__slow");
    let cancel = CancellationToken::new();
    let running = tokio::spawn({
        let cancel = cancel.clone();
        async move { call_with(slow.as_ref(), json!({"ms": 60000}), cancel).await }
    });
    eventually("the slow call to start", || dir.join("slow-started").exists()).await;
    cancel.cancel();
    let err = running.await.unwrap().unwrap_err();
    assert_eq!(err.0, OPERATION_ABORTED);
    eventually("notifications/cancelled to reach the server", || dir.join("slow-cancelled").exists()).await;
    // The server is still there for the next call.
    let echo = call(tool(&manager, "mcp__fx__echo").as_ref(), json!({"text": "still here"})).await.unwrap();
    assert_eq!(echo.text_content(), "still here");
    assert_eq!(starts(&dir).len(), 1);
    manager.shutdown().await;
}

#[tokio::test]
async fn a_call_past_its_timeout_fails_clearly_and_is_cancelled() {
    let (_guard, dir) = temp();
    let mut server = fixture("fx", &dir, &[]);
    server.timeout = Some(Duration::from_millis(300));
    let manager = settled(vec![server], options(&dir)).await;
    let err = call(tool(&manager, "mcp__fx__slow").as_ref(), json!({"ms": 60000})).await.unwrap_err();
    assert_eq!(err.0, "MCP tool \"slow\" of server \"fx\" did not answer within 0.3 s; the call was cancelled");
    eventually("the server to see the cancellation", || dir.join("slow-cancelled").exists()).await;
    manager.shutdown().await;
}

#[tokio::test]
async fn env_cwd_and_stderr_of_stdio_servers() {
    let (_guard, dir) = temp();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut server = fixture("fx", &dir, &[]);
    if let Some(Transport::Stdio(StdioServer { env, cwd, .. })) = &mut server.transport {
        env.insert("GREETING".into(), "hello from config".into());
        *cwd = Some(work.clone());
    }
    let manager = settled(vec![server], options(&dir)).await;
    let env = call(tool(&manager, "mcp__fx__env").as_ref(), json!({"name": "GREETING"})).await.unwrap();
    assert_eq!(env.text_content(), "hello from config");
    // rho's own environment is passed on too.
    let path = call(tool(&manager, "mcp__fx__env").as_ref(), json!({"name": "PATH"})).await.unwrap();
    assert_eq!(path.text_content(), std::env::var("PATH").unwrap_or_default());
    let cwd = call(tool(&manager, "mcp__fx__cwd").as_ref(), json!({})).await.unwrap();
    assert_eq!(cwd.text_content(), work.display().to_string());
    call(tool(&manager, "mcp__fx__stderr").as_ref(), json!({"text": "a line for the log"})).await.unwrap();
    let log = dir.join("logs").join("mcp-fx.log");
    eventually("the log line", || std::fs::read_to_string(&log).unwrap_or_default().contains("a line for the log"))
        .await;
    manager.shutdown().await;
}

#[tokio::test]
async fn disabled_servers_are_listed_and_not_started() {
    let (_guard, dir) = temp();
    let mut server = fixture("off", &dir, &[]);
    server.enabled = false;
    let manager = settled(vec![server, fixture("on", &dir, &[])], options(&dir)).await;
    let status = manager.status();
    assert_eq!(status[0].name, "off");
    assert_eq!(status[0].state, ServerState::Disabled);
    assert_eq!(status[0].tool_count, 0);
    assert_eq!(starts(&dir).len(), 1, "only the enabled server ran");
    assert!(manager.tools().iter().all(|t| t.name().starts_with("mcp__on__")));
    manager.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_every_server_process() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("a", &dir, &[]), fixture("b", &dir, &[])], options(&dir)).await;
    let pids = starts(&dir);
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|p| alive(*p)));
    let echo = tool(&manager, "mcp__a__echo");
    manager.shutdown().await;
    eventually("the servers to be gone", || pids.iter().all(|p| !alive(*p))).await;
    // A tool kept past shutdown answers with an error, and starts nothing.
    let err = call(echo.as_ref(), json!({"text": "x"})).await.unwrap_err();
    assert_eq!(err.0, "MCP servers are shut down");
    assert_eq!(starts(&dir).len(), 2);
}
