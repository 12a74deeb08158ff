//! The `tool_search` tool (pi 1.6's): searches the tools not declared to the model yet (MCP
//! tools of `deferred` exposure) and loads the best matches, so the next request declares them.
//! The declaration is recorded in the transcript like any change of tools, so a resumed session
//! declares them again. On with `--tools +tool_search` (or `defaultTools`), and by itself once a
//! server has deferred tools.

use std::sync::{Arc, LazyLock, Weak};

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Map, Value, json};

use super::tool_rank::{ToolDocument, rank};
use crate::agent_session::{AgentSession, Inner};

pub const NAME: &str = "tool_search";

/// How many tools a search loads unless `limit` says.
const DEFAULT_LIMIT: usize = 8;

const DESCRIPTION: &str = "# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\nSome of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you should use this tool (`tool_search`) to search for the required tools. For MCP tool discovery, always use `tool_search`.";

static PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query for deferred tools."},
            "limit": {"type": "number", "description": format!("Maximum number of tools to return. Defaults to {DEFAULT_LIMIT}.")},
        },
        "required": ["query"],
    })
});

pub struct ToolSearchTool {
    session: Weak<Inner>,
}

impl ToolSearchTool {
    pub(crate) fn new(session: &Arc<Inner>) -> Self {
        Self { session: Arc::downgrade(session) }
    }
}

/// The arguments, checked.
fn arguments(args: &Map<String, Value>) -> Result<(String, usize), ToolError> {
    let query = args.get("query").and_then(Value::as_str).unwrap_or_default().to_owned();
    if query.trim().is_empty() {
        return Err(ToolError::new("query must not be empty"));
    }
    let limit = match args.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(value) => match value.as_f64() {
            Some(n) if n >= 1.0 && n.fract() == 0.0 => n as usize,
            _ => return Err(ToolError::new("limit must be a positive integer")),
        },
    };
    Ok((query, limit))
}

impl Tool for ToolSearchTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &PARAMETERS
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        _ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let (query, limit) = arguments(&args)?;
            let inner = self.session.upgrade().ok_or_else(|| ToolError::new("the session has ended"))?;
            let loaded: Vec<(String, String)> = {
                let mut tools = inner.tools.lock();
                let candidates = tools.searchable_tools();
                let documents: Vec<ToolDocument> =
                    candidates.iter().map(|t| ToolDocument::new(t.name(), t.description(), t.parameters())).collect();
                let names = rank(&query, &documents, limit);
                tools.load_deferred(&names);
                names
                    .into_iter()
                    .map(|name| {
                        let description = candidates.iter().find(|t| t.name() == name).map(|t| t.description());
                        let first =
                            description.unwrap_or_default().trim().lines().next().unwrap_or_default().to_owned();
                        (name, first)
                    })
                    .collect()
            };
            if !loaded.is_empty() {
                AgentSession { inner }.refresh_tools();
            }
            let text = match loaded.len() {
                0 => "No matching tools found.".to_owned(),
                n => format!(
                    "Loaded {n} tool{}. They are available from your next call:\n{}",
                    if n == 1 { "" } else { "s" },
                    loaded.iter().map(|(name, first)| format!("- {name}: {first}")).collect::<Vec<_>>().join("\n")
                ),
            };
            let names: Vec<&str> = loaded.iter().map(|(name, _)| name.as_str()).collect();
            Ok(AgentToolResult::text(text).with_details(json!({"loaded": names})))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn arguments_are_checked_with_clear_errors() {
        assert_eq!(arguments(&args(json!({"query": "issues"}))).unwrap(), ("issues".to_owned(), DEFAULT_LIMIT));
        assert_eq!(arguments(&args(json!({"query": "x", "limit": 3}))).unwrap().1, 3);
        let error = |v| arguments(&args(v)).unwrap_err().0;
        assert_eq!(error(json!({"query": "  "})), "query must not be empty");
        assert_eq!(error(json!({})), "query must not be empty");
        assert_eq!(error(json!({"query": "x", "limit": 0})), "limit must be a positive integer");
        assert_eq!(error(json!({"query": "x", "limit": 2.5})), "limit must be a positive integer");
    }
}
