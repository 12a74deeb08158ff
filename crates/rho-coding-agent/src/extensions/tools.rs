//! Extension tools run in the host: a call is a `tool` request whose partial results stream
//! back as updates. Aborting the call fires the tool's signal there; its answer (a result, or
//! the error it threw) is still waited for a moment, so what the tool reports on abort is kept.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rho_agent::tool::OPERATION_ABORTED;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_extensions::protocol::Registrations;
use rho_extensions::{ExtensionTool, HostError, ToHost, ToolHost, UpdateSink};
use rho_types::AgentToolResult;
use serde_json::{Map, Value};

use super::Extensions;

/// How long an aborted tool may take to answer before it is reported as aborted.
const ABORT_GRACE: Duration = Duration::from_secs(2);

/// The tools the extensions registered, as rho tools.
pub(super) fn extension_tools(registrations: &Registrations, extensions: Arc<Extensions>) -> Vec<Arc<dyn Tool>> {
    let host: Arc<dyn ToolHost> = Arc::new(Runner(extensions));
    registrations
        .tools
        .iter()
        .map(|registration| Arc::new(ExtensionTool::new(registration.clone(), host.clone())) as Arc<dyn Tool>)
        .collect()
}

struct Runner(Arc<Extensions>);

impl ToolHost for Runner {
    fn run_tool<'a>(
        &'a self,
        name: &'a str,
        params: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let extensions = &self.0;
            let host = extensions.host().await.map_err(|e| ToolError::new(e.to_string()))?;
            if let Some(session) = extensions.session() {
                extensions.sync_to(&host, &session, true);
            }
            let updates: UpdateSink = {
                let ctx = ctx.clone();
                Arc::new(move |partial: Value| {
                    if let Ok(partial) = serde_json::from_value::<AgentToolResult>(partial) {
                        ctx.update(partial);
                    }
                })
            };
            let message = ToHost::Tool {
                name: name.to_owned(),
                tool_call_id: ctx.tool_call_id.clone(),
                params: Value::Object(params),
            };
            let (id, answer) = host.request_with_updates(&message, Some(updates));
            tokio::pin!(answer);
            let answer = tokio::select! {
                answer = &mut answer => answer,
                () = ctx.cancel.cancelled() => {
                    host.send(&ToHost::Cancel { target: id });
                    match tokio::time::timeout(ABORT_GRACE, answer).await {
                        Ok(answer) => answer,
                        Err(_) => {
                            // A tool that ignores its signal may be one that never yields: such a
                            // host is replaced rather than left to hang every later call.
                            extensions.stop_if_unresponsive().await;
                            return Err(ToolError::new(OPERATION_ABORTED));
                        }
                    }
                }
            };
            match answer {
                Ok(Ok(value)) => serde_json::from_value(value)
                    .map_err(|e| ToolError::new(format!("The tool {name} returned an unusable result: {e}"))),
                Ok(Err(HostError::Failed(message))) => Err(ToolError::new(message)),
                Ok(Err(e)) => Err(ToolError::new(e.to_string())),
                Err(_) => Err(ToolError::new("the extension host closed the channel")),
            }
        })
    }
}
