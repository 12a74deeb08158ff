//! Shared by the integration tests: the fixture server as a configured stdio server, a manager
//! over it, and a tool call as the agent loop makes one.
#![allow(dead_code)]

pub mod npm;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rho_agent::Tool;
use rho_agent::tool::{ToolContext, ToolError};
use rho_mcp::{McpConfig, McpManager, McpOptions, ServerConfig, StdioServer, Transport};
use rho_types::AgentToolResult;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub const FIXTURE: &str = env!("CARGO_BIN_EXE_rho-mcp-fixture-server");

/// The tools the fixture lists (before `add_tool`).
pub const FIXTURE_TOOLS: usize = 16;

/// A fixture server entry, its markers in `dir`.
pub fn fixture(name: &str, dir: &Path, args: &[&str]) -> ServerConfig {
    ServerConfig {
        name: name.to_owned(),
        transport: Some(Transport::Stdio(StdioServer {
            command: FIXTURE.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: [("FIXTURE_DIR".to_owned(), dir.display().to_string())].into(),
            cwd: None,
        })),
        enabled: true,
        timeout: None,
        exposure: None,
        tool_exposure: Default::default(),
        source: dir.join("mcp.json"),
    }
}

pub fn options(dir: &Path) -> McpOptions {
    McpOptions::new(dir).with_log_dir(dir.join("logs")).with_startup_timeout(Duration::from_secs(20))
}

/// A manager over `servers`, settled (every server ready or failed).
pub async fn settled(servers: Vec<ServerConfig>, options: McpOptions) -> Arc<McpManager> {
    let manager = McpManager::start(McpConfig::from_servers(servers), options);
    tokio::time::timeout(Duration::from_secs(30), manager.settled()).await.expect("servers settle");
    manager
}

pub fn tool(manager: &McpManager, name: &str) -> Arc<dyn Tool> {
    manager.tools().into_iter().find(|t| t.name() == name).unwrap_or_else(|| {
        panic!("no tool {name}; have {:?}", manager.tools().iter().map(|t| t.name().to_owned()).collect::<Vec<_>>())
    })
}

pub fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

pub async fn call(tool: &dyn Tool, arguments: Value) -> Result<AgentToolResult, ToolError> {
    call_with(tool, arguments, CancellationToken::new()).await
}

pub async fn call_with(
    tool: &dyn Tool,
    arguments: Value,
    cancel: CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let ctx = ToolContext::new("call-1", cancel, None);
    tokio::time::timeout(Duration::from_secs(30), tool.execute(args(arguments), ctx)).await.expect("the call ends")
}

/// Waits (bounded) until `cond` holds.
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..300 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The pids the fixture wrote at each start.
pub fn starts(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("starts"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

pub fn alive(pid: u32) -> bool {
    // A zombie still has a /proc entry; it is not running.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

pub fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().to_path_buf();
    (dir, path)
}
