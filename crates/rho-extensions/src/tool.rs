//! A tool an extension registered, as a rho [`Tool`]: its name, description and schema as the
//! extension gave them; running it is a request to the host ([`ToolHost`]), which calls the
//! extension's `execute` with an abort signal tied to the call's cancellation.

use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Map, Value};

use crate::protocol::ToolRegistration;

/// Runs extension tools (the session's side of the host).
pub trait ToolHost: Send + Sync {
    fn run_tool<'a>(
        &'a self,
        name: &'a str,
        params: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>>;
}

pub struct ExtensionTool {
    registration: ToolRegistration,
    host: Arc<dyn ToolHost>,
}

impl ExtensionTool {
    pub fn new(registration: ToolRegistration, host: Arc<dyn ToolHost>) -> Self {
        Self { registration, host }
    }

    pub fn registration(&self) -> &ToolRegistration {
        &self.registration
    }
}

impl Tool for ExtensionTool {
    fn name(&self) -> &str {
        &self.registration.name
    }

    fn label(&self) -> &str {
        self.registration.label.as_deref().unwrap_or(&self.registration.name)
    }

    fn description(&self) -> &str {
        &self.registration.description
    }

    fn parameters(&self) -> &Value {
        &self.registration.parameters
    }

    fn prompt_snippet(&self) -> Option<&str> {
        self.registration.prompt_snippet.as_deref().map(str::trim).filter(|s| !s.is_empty())
    }

    fn validates_arguments(&self) -> bool {
        !self.registration.prepare_arguments
    }

    fn source_info(&self) -> Option<&Value> {
        self.registration.source_info.as_ref()
    }

    fn prompt_guidelines(&self) -> &[String] {
        self.registration.prompt_guidelines.as_deref().unwrap_or_default()
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        self.host.run_tool(&self.registration.name, args, ctx)
    }
}
