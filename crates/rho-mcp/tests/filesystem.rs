//! rho-mcp against the real filesystem server, `@modelcontextprotocol/server-filesystem` (npm),
//! over stdio: its tools as `mcp__fs__<tool>`, a write/edit/read round trip and a listing inside
//! the allowed directory, a refused read outside it, and no process left after shutdown.
//!
//! Gated: it needs `node` and the package. When either is missing the test prints
//! `SKIPPED ...` with the reason and how to install it, and passes; with
//! `RHO_MCP_REQUIRE_FILESYSTEM=1` (what CI sets once it installs the package) it fails instead.
//! The package is looked for in `$RHO_MCP_FILESYSTEM` (a directory holding `node_modules`, or
//! the package's own directory) and then in `<workspace>/target/mcp-filesystem`, where CI puts
//! it with:
//!
//! ```sh
//! npm install --no-audit --no-fund --prefix target/mcp-filesystem @modelcontextprotocol/server-filesystem@2026.8.31
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::time::Duration;

use rho_mcp::{McpConfig, McpManager, ServerConfig, ServerState, StdioServer, Transport};
use serde_json::json;
use support::npm::NpmServer;
use support::*;

const FILESYSTEM: NpmServer = NpmServer {
    package: "@modelcontextprotocol/server-filesystem",
    version: "2026.8.31",
    prefix: "target/mcp-filesystem",
    dir_var: "RHO_MCP_FILESYSTEM",
    require_var: "RHO_MCP_REQUIRE_FILESYSTEM",
};

/// Pids of running processes whose command line mentions `needle` (the test's own allowed
/// directory, so only the server this test started).
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
        })
        .filter(|pid| alive(*pid))
        .collect()
}

#[tokio::test]
async fn the_filesystem_server_over_stdio() {
    let (node, index) = gated!(FILESYSTEM, "the_filesystem_server_over_stdio");
    let (_guard, dir) = temp();
    // The server compares real paths: give it (and the calls) the canonical one.
    let dir = std::fs::canonicalize(&dir).unwrap();
    let allowed = dir.join("allowed");
    std::fs::create_dir(&allowed).unwrap();
    let outside = dir.join("secret.txt");
    std::fs::write(&outside, "not for the server\n").unwrap();

    let stdio = StdioServer {
        command: node,
        args: vec![index.display().to_string(), allowed.display().to_string()],
        env: Default::default(),
        cwd: None,
    };
    let config = ServerConfig {
        name: "fs".to_owned(),
        transport: Some(Transport::Stdio(stdio)),
        enabled: true,
        timeout: None,
        exposure: None,
        tool_exposure: Default::default(),
        source: dir.join("mcp.json"),
    };
    let manager = McpManager::start(
        McpConfig::from_servers(vec![config]),
        options(&dir).with_startup_timeout(Duration::from_secs(60)),
    );
    tokio::time::timeout(Duration::from_secs(90), manager.settled()).await.unwrap();
    assert_eq!(manager.status()[0].state, ServerState::Ready, "{:?}", manager.take_diagnostics());

    let names: Vec<String> = manager.tools().iter().map(|t| t.name().to_owned()).collect();
    for expected in [
        "mcp__fs__read_text_file",
        "mcp__fs__read_file",
        "mcp__fs__write_file",
        "mcp__fs__edit_file",
        "mcp__fs__list_directory",
    ] {
        assert!(names.contains(&expected.to_owned()), "{expected} in {names:?}");
    }

    // Write, then read back what was written (through the server and on disk).
    let note = allowed.join("note.txt");
    let path = note.display().to_string();
    let wrote = call(tool(&manager, "mcp__fs__write_file").as_ref(), json!({"path": path, "content": "alpha\nbeta\n"}))
        .await
        .unwrap();
    assert!(wrote.text_content().contains("Successfully wrote"), "{}", wrote.text_content());
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "alpha\nbeta\n");
    let read = call(tool(&manager, "mcp__fs__read_text_file").as_ref(), json!({"path": path})).await.unwrap();
    assert_eq!(read.text_content(), "alpha\nbeta\n");

    // An edit lands, and the deprecated `read_file` sees it too.
    let edit = json!({"path": path, "edits": [{"oldText": "beta", "newText": "gamma"}]});
    let edited = call(tool(&manager, "mcp__fs__edit_file").as_ref(), edit).await.unwrap();
    assert!(edited.text_content().contains("+gamma"), "{}", edited.text_content());
    let read = call(tool(&manager, "mcp__fs__read_file").as_ref(), json!({"path": path})).await.unwrap();
    assert_eq!(read.text_content(), "alpha\ngamma\n");

    let listing =
        call(tool(&manager, "mcp__fs__list_directory").as_ref(), json!({"path": allowed.display().to_string()}))
            .await
            .unwrap();
    assert!(listing.text_content().lines().any(|l| l == "[FILE] note.txt"), "{}", listing.text_content());

    // Outside the allowed directory: the server's isError result is a tool error with its message.
    let refused =
        call(tool(&manager, "mcp__fs__read_text_file").as_ref(), json!({"path": outside.display().to_string()}))
            .await
            .unwrap_err();
    assert!(refused.0.contains("Access denied"), "{}", refused.0);
    assert!(refused.0.contains("outside allowed directories"), "{}", refused.0);
    assert!(!refused.0.contains("not for the server"), "{}", refused.0);
    // The server is still usable after the refusal.
    let read = call(tool(&manager, "mcp__fs__read_text_file").as_ref(), json!({"path": path})).await.unwrap();
    assert_eq!(read.text_content(), "alpha\ngamma\n");

    let needle = allowed.display().to_string();
    let running = processes_mentioning(&needle);
    assert!(!running.is_empty(), "the server process (argument {needle}) is running");
    manager.shutdown().await;
    eventually("the server process to be gone", || running.iter().all(|pid| !alive(*pid))).await;
    assert_eq!(processes_mentioning(&needle), Vec::<u32>::new());
}
