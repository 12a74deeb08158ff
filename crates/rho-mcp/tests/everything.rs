//! rho-mcp against the reference server, `@modelcontextprotocol/server-everything` (npm), over
//! all three transports: stdio, streamable HTTP and the older HTTP+SSE (the last two on
//! 127.0.0.1).
//!
//! Gated: it needs `node` and the package. When either is missing the test prints
//! `SKIPPED ...` with the reason and how to install it, and passes; with
//! `RHO_MCP_REQUIRE_EVERYTHING=1` (what CI sets once it installs the package) it fails instead.
//! The package is looked for in `$RHO_MCP_EVERYTHING` (a directory holding `node_modules`, or
//! the package's own directory) and then in `<workspace>/target/mcp-everything`, where CI puts
//! it with:
//!
//! ```sh
//! npm install --no-audit --no-fund --prefix target/mcp-everything @modelcontextprotocol/server-everything@2026.8.31
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::path::Path;
use std::time::Duration;

use rho_mcp::{McpConfig, McpManager, RemoteServer, ServerConfig, ServerState, StdioServer, Transport};
use rho_types::types::UserContent;
use serde_json::json;
use support::npm::NpmServer;
use support::*;
use tokio_util::sync::CancellationToken;

const EVERYTHING: NpmServer = NpmServer {
    package: "@modelcontextprotocol/server-everything",
    version: "2026.8.31",
    prefix: "target/mcp-everything",
    dir_var: "RHO_MCP_EVERYTHING",
    require_var: "RHO_MCP_REQUIRE_EVERYTHING",
};

fn server(name: &str, dir: &Path, transport: Transport) -> ServerConfig {
    ServerConfig {
        name: name.to_owned(),
        transport: Some(transport),
        enabled: true,
        timeout: None,
        exposure: None,
        tool_exposure: Default::default(),
        source: dir.join("mcp.json"),
    }
}

async fn ready(config: ServerConfig, dir: &Path) -> std::sync::Arc<McpManager> {
    let manager = McpManager::start(
        McpConfig::from_servers(vec![config]),
        options(dir).with_startup_timeout(Duration::from_secs(60)),
    );
    tokio::time::timeout(Duration::from_secs(90), manager.settled()).await.unwrap();
    assert_eq!(manager.status()[0].state, ServerState::Ready, "{:?}", manager.take_diagnostics());
    manager
}

async fn echo_works(manager: &McpManager) {
    let echo = call(tool(manager, "mcp__everything__echo").as_ref(), json!({"message": "hi"})).await.unwrap();
    assert_eq!(echo.text_content(), "Echo: hi");
}

#[tokio::test]
async fn the_reference_server_over_stdio() {
    let (node, index) = gated!(EVERYTHING, "the_reference_server_over_stdio");
    let (_guard, dir) = temp();
    let stdio = StdioServer {
        command: node,
        args: vec![index.display().to_string(), "stdio".into()],
        env: Default::default(),
        cwd: None,
    };
    let manager = ready(server("everything", &dir, Transport::Stdio(stdio)), &dir).await;
    let names: Vec<String> = manager.tools().iter().map(|t| t.name().to_owned()).collect();
    for expected in ["mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image"] {
        assert!(names.contains(&expected.to_owned()), "{expected} in {names:?}");
    }
    echo_works(&manager).await;

    let sum = call(tool(&manager, "mcp__everything__get-sum").as_ref(), json!({"a": 2, "b": 40})).await.unwrap();
    assert!(sum.text_content().contains("42"), "{}", sum.text_content());

    let image = call(tool(&manager, "mcp__everything__get-tiny-image").as_ref(), json!({})).await.unwrap();
    assert!(image.content.iter().any(|c| matches!(c, UserContent::Image(i) if i.mime_type == "image/png")));

    let weather =
        call(tool(&manager, "mcp__everything__get-structured-content").as_ref(), json!({"location": "Chicago"}))
            .await
            .unwrap();
    let details = weather.details.unwrap();
    assert!(details["structuredContent"]["temperature"].is_number(), "{details}");

    // A long operation, aborted: the server stays usable.
    let long = tool(&manager, "mcp__everything__trigger-long-running-operation");
    let cancel = CancellationToken::new();
    let running = tokio::spawn({
        let cancel = cancel.clone();
        async move { call_with(long.as_ref(), json!({"duration": 60, "steps": 60}), cancel).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    cancel.cancel();
    assert_eq!(running.await.unwrap().unwrap_err().0, rho_agent::tool::OPERATION_ABORTED);
    echo_works(&manager).await;

    let prompts = manager.prompts();
    let simple = prompts.iter().find(|p| p.command == "mcp__everything__simple-prompt").expect("simple-prompt");
    let messages = manager.get_prompt(&simple.command, Default::default(), &CancellationToken::new()).await.unwrap();
    assert!(!messages.is_empty());
    manager.shutdown().await;
}

/// Starts `node index.js <mode>` on a free loopback port; killed on drop.
async fn serve_http(node: &str, index: &Path, mode: &str) -> (tokio::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = tokio::process::Command::new(node)
        .arg(index)
        .arg(mode)
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return (child, port);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server-everything {mode} did not listen on {port}");
}

#[tokio::test]
async fn the_reference_server_over_streamable_http() {
    let (node, index) = gated!(EVERYTHING, "the_reference_server_over_streamable_http");
    let (_guard, dir) = temp();
    let (_child, port) = serve_http(&node, &index, "streamableHttp").await;
    let remote = RemoteServer { url: format!("http://127.0.0.1:{port}/mcp"), headers: Default::default() };
    let manager = ready(server("everything", &dir, Transport::Http(remote)), &dir).await;
    echo_works(&manager).await;
    manager.shutdown().await;
}

#[tokio::test]
async fn the_reference_server_over_sse() {
    let (node, index) = gated!(EVERYTHING, "the_reference_server_over_sse");
    let (_guard, dir) = temp();
    let (_child, port) = serve_http(&node, &index, "sse").await;
    let remote = RemoteServer { url: format!("http://127.0.0.1:{port}/sse"), headers: Default::default() };
    let manager = ready(server("everything", &dir, Transport::Sse(remote)), &dir).await;
    echo_works(&manager).await;
    let sum = call(tool(&manager, "mcp__everything__get-sum").as_ref(), json!({"a": 1, "b": 2})).await.unwrap();
    assert!(sum.text_content().contains('3'));
    manager.shutdown().await;
}
