//! What a tool is to the agent loop: a name, a description and a JSON Schema for the model, and
//! an `execute` that honours a cancellation token and may stream partial results.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use rho_types::model::ImageResize;
use rho_types::types::ToolSpec;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use rho_types::tool_result::AgentToolResult;

/// A failed execution; its message becomes the text of an error result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        Self(e.to_string())
    }
}

/// Receives a tool's accumulated partial result while it runs.
pub type UpdateSink = Arc<dyn Fn(AgentToolResult) + Send + Sync>;

/// What fits the images of a tool's result to the model before the model gets them (the
/// model's resize profile given): the application's, as resizing is not the loop's business.
pub type FitImages = Arc<
    dyn Fn(Vec<rho_types::types::UserContent>, Option<ImageResize>) -> Vec<rho_types::types::UserContent> + Send + Sync,
>;

/// Asked before a request is sent with `model` (after a run's first request, and for every
/// request a virtual selection routes): true when it changed the conversation (compacted it), so
/// the request is built from it again. The application's: when to compact is not the loop's
/// business.
pub type BeforeRequest = Arc<dyn Fn(rho_types::Model) -> futures::future::BoxFuture<'static, bool> + Send + Sync>;

/// What a running tool gets besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    /// The model's id for this call.
    pub tool_call_id: String,
    /// Fires on abort (or when a steering message interrupts the batch).
    pub cancel: CancellationToken,
    /// The current model's resize profile for new images (`inputLimits.images.resize`), when it
    /// has one.
    pub image_resize: Option<ImageResize>,
    on_update: Option<UpdateSink>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext").field("tool_call_id", &self.tool_call_id).finish()
    }
}

impl ToolContext {
    pub fn new(tool_call_id: impl Into<String>, cancel: CancellationToken, on_update: Option<UpdateSink>) -> Self {
        Self { tool_call_id: tool_call_id.into(), cancel, image_resize: None, on_update }
    }

    /// This context for a model with `profile` as its image resize profile.
    pub fn with_image_resize(mut self, profile: Option<ImageResize>) -> Self {
        self.image_resize = profile;
        self
    }

    /// Reports the result so far (replacing the previous one).
    pub fn update(&self, partial: AgentToolResult) {
        if let Some(sink) = &self.on_update {
            sink(partial);
        }
    }
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;

    /// A human label (defaults to the name).
    fn label(&self) -> &str {
        self.name()
    }

    /// What the model is told the tool does.
    fn description(&self) -> &str;

    /// The JSON Schema of the arguments (an object schema).
    fn parameters(&self) -> &Value;

    /// The one line the system prompt lists the tool with, when it wants to be listed (pi's
    /// `promptSnippet`; the built-ins' lines are the application's).
    fn prompt_snippet(&self) -> Option<&str> {
        None
    }

    /// Guideline bullets the system prompt adds while the tool is active (pi's
    /// `promptGuidelines`).
    fn prompt_guidelines(&self) -> &[String] {
        &[]
    }

    /// Where the tool was defined, in pi's `sourceInfo` shape, when something other than rho
    /// defined it (an extension).
    fn source_info(&self) -> Option<&Value> {
        None
    }

    /// Whether the loop validates the arguments against [`parameters`](Self::parameters)
    /// before the call runs; `false` for a tool that prepares and validates them itself (an
    /// extension tool with pi's `prepareArguments`, whose code runs elsewhere).
    fn validates_arguments(&self) -> bool {
        true
    }

    /// Turns older or looser forms of the arguments into the form [`parameters`](Self::parameters)
    /// describes, before they are validated (pi's `prepareArguments`). The default keeps them.
    fn prepare_arguments(&self, args: Map<String, Value>) -> Map<String, Value> {
        args
    }

    /// The file this call would write, if it writes one. Calls that write the same file never
    /// run at the same time; they run in the order the model made them.
    fn write_target(&self, _args: &Map<String, Value>) -> Option<PathBuf> {
        None
    }

    /// Runs the tool with validated (and coerced) arguments.
    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>>;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters().clone(),
        }
    }
}

/// Decides whether a tool call may run, after its arguments are validated and before it runs:
/// how a mode with permissions (ACP's `ask` mode) asks the user. A refused call is an error
/// result the model sees, as any failed call.
pub trait ToolGate: Send + Sync {
    /// `Ok` runs the call; `Err` is its result. `ctx` is the call's (its id, its cancellation).
    fn check<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<(), ToolError>>;
}

/// The text of a tool error caused by cancellation.
pub const OPERATION_ABORTED: &str = "Operation aborted";
