//! One MCP tool as a rho [`Tool`]: the server's description and input schema, a call that
//! restarts an exited server, honours the abort token (cancelling the request on the server)
//! and the per-call timeout, and a result mapped by [`crate::result`].

use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::Tool;
use rho_agent::tool::{ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Map, Value};

use crate::result::to_agent_result;
use crate::server::{Server, ToolDef};

pub(crate) struct McpTool {
    /// The model-facing name (`mcp__<server>__<tool>`).
    name: String,
    label: String,
    /// The tool as the server listed it.
    def: Arc<ToolDef>,
    server: Arc<Server>,
}

impl McpTool {
    pub(crate) fn new(name: String, def: Arc<ToolDef>, server: Arc<Server>) -> Self {
        let label = format!("{}: {}", server.name(), def.title.as_deref().unwrap_or(&def.name));
        Self { name, label, def, server }
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.def.description
    }

    fn parameters(&self) -> &Value {
        &self.def.schema
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let tool = &self.def.name;
            let result = self.server.call_tool(tool, args, &ctx.cancel).await?;
            to_agent_result(result, self.server.name(), tool)
        })
    }
}
