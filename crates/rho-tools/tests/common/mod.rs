//! Helpers shared by the tool tests: run one call of a built-in tool in a directory.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use rho_agent::{ToolContext, ToolError};
use rho_tools::{ToolOptions, create_tool};
use rho_types::AgentToolResult;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().expect("arguments are an object")
}

pub async fn call(tool: &str, cwd: &Path, arguments: Value) -> Result<AgentToolResult, ToolError> {
    call_with(tool, &ToolOptions::new(cwd), arguments, CancellationToken::new()).await
}

pub async fn call_with(
    tool: &str,
    options: &ToolOptions,
    arguments: Value,
    cancel: CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let tool = create_tool(tool, options).expect("a built-in tool");
    // As the agent calls a tool: arguments prepared, then validated against its schema.
    let prepared = tool.prepare_arguments(args(arguments));
    let checked = rho_agent::validate::Validators::default()
        .check(tool.name(), tool.parameters(), &prepared)
        .map_err(ToolError::new)?;
    tool.execute(checked, ToolContext::new("call-1", cancel, None)).await
}

/// Runs a call while recording its partial results.
pub async fn call_recording(
    tool: &str,
    options: &ToolOptions,
    arguments: Value,
    cancel: CancellationToken,
    updates: Arc<Mutex<Vec<AgentToolResult>>>,
) -> Result<AgentToolResult, ToolError> {
    let tool = create_tool(tool, options).expect("a built-in tool");
    let sink: rho_agent::tool::UpdateSink = Arc::new(move |partial| {
        updates.lock().unwrap().push(partial);
    });
    tool.execute(args(arguments), ToolContext::new("call-1", cancel, Some(sink))).await
}

pub fn text(result: &AgentToolResult) -> String {
    result.text_content()
}

pub fn write(dir: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
}
