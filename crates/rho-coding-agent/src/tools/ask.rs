//! The `ask` tool: the model puts a question to the user, either as a choice between options
//! (a `select` dialog) or as free text (an `input` dialog). It is how hosts see the extension
//! UI sub-protocol in action without an extension system; it is offered only when a UI exists.

use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_rpc::UiMethod;
use rho_types::AgentToolResult;
use serde_json::{Map, Value, json};

use crate::ui::{Ui, UiAnswer};

/// How long the user has to answer before the dialog resolves to "no answer" (ms).
const ASK_TIMEOUT_MS: u64 = 10 * 60 * 1000;

pub struct AskTool {
    ui: Arc<dyn Ui>,
}

impl AskTool {
    pub fn new(ui: Arc<dyn Ui>) -> Self {
        Self { ui }
    }
}

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        json!({
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question to ask the user"},
                "options": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Answers to choose from; omit to let the user type a free answer"
                }
            },
            "required": ["question"]
        })
    })
}

impl Tool for AskTool {
    fn name(&self) -> &str {
        "ask"
    }

    fn label(&self) -> &str {
        "Ask"
    }

    fn description(&self) -> &str {
        "Ask the user a question and wait for the answer. Use it when you need a decision or \
         information only the user has; give `options` when the answer is one of a few choices."
    }

    fn parameters(&self) -> &Value {
        schema()
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let question = args.get("question").and_then(Value::as_str).unwrap_or_default().trim().to_owned();
            if question.is_empty() {
                return Err(ToolError::new("The question must not be empty"));
            }
            let options: Vec<String> = args
                .get("options")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default();
            let method = if options.is_empty() {
                UiMethod::Input { title: question.clone(), placeholder: None, timeout: Some(ASK_TIMEOUT_MS) }
            } else {
                UiMethod::Select { title: question.clone(), options: options.clone(), timeout: Some(ASK_TIMEOUT_MS) }
            };
            let answer = self.ui.dialog(method, ctx.cancel.clone()).await;
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::new(rho_agent::tool::OPERATION_ABORTED));
            }
            let (text, details) = match &answer {
                UiAnswer::Value(value) => (format!("User answered: {value}"), json!({"answer": value})),
                UiAnswer::Confirmed(yes) => {
                    (format!("User answered: {}", if *yes { "yes" } else { "no" }), json!({"answer": yes}))
                }
                UiAnswer::Cancelled { timed_out: true } => {
                    ("The user did not answer in time.".to_owned(), json!({"timedOut": true}))
                }
                UiAnswer::Cancelled { timed_out: false } => {
                    ("The user dismissed the question without answering.".to_owned(), json!({"cancelled": true}))
                }
            };
            Ok(AgentToolResult::text(text).with_details(details))
        })
    }
}
