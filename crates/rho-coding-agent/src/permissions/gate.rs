//! The permission gate: rho-agent's [`ToolGate`] that applies the rules and the approval mode
//! to every call after its arguments are validated and before it runs, and asks the user through
//! whatever can ask in this mode (the interactive dialog or an RPC host's `select` via the UI
//! service; ACP's `session/request_permission`). With no one to ask, a call that needs approval
//! is refused with an error the model reads.

use parking_lot::Mutex;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::{ToolContext, ToolError, ToolGate};
use rho_rpc::UiMethod;
use serde_json::{Map, Value};

use super::{Approval, Call, Decision, Rules, describe, only_reads};
use crate::ui::Ui;

/// The user's answer to a question about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskAnswer {
    Once,
    /// For the rest of the session: the same call (the same command, for `bash`) or tool.
    Always,
    Deny,
    /// The question was withdrawn (abort, a dismissed dialog).
    Aborted,
}

/// Something that can ask the user about a call.
pub trait Asker: Send + Sync {
    fn ask<'a>(
        &'a self,
        question: &'a str,
        tool: &'a str,
        args: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<AskAnswer, String>>;
}

const ALLOW_ONCE: &str = "Allow once";
const ALLOW_ALWAYS: &str = "Allow always (this session)";
const DENY: &str = "Deny";

/// Asks through the UI service: a `select` of allow once / always / deny.
pub struct UiAsker(pub Arc<dyn Ui>);

impl Asker for UiAsker {
    fn ask<'a>(
        &'a self,
        question: &'a str,
        _tool: &'a str,
        _args: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<AskAnswer, String>> {
        let options = [ALLOW_ONCE, ALLOW_ALWAYS, DENY].map(str::to_owned).to_vec();
        let dialog =
            self.0.dialog(UiMethod::Select { title: question.to_owned(), options, timeout: None }, ctx.cancel.clone());
        Box::pin(async move {
            Ok(match dialog.await.value() {
                Some(ALLOW_ONCE) => AskAnswer::Once,
                Some(ALLOW_ALWAYS) => AskAnswer::Always,
                Some(DENY) => AskAnswer::Deny,
                _ => AskAnswer::Aborted,
            })
        })
    }
}

/// The gate of one session.
pub struct PermissionGate {
    rules: Rules,
    approval: Approval,
    asker: Option<Arc<dyn Asker>>,
    /// Decides what no rule and no approval mode decides (ACP's session mode).
    fallback: Option<Arc<dyn ToolGate>>,
    cwd: PathBuf,
    home: Option<PathBuf>,
    /// Calls allowed for the rest of the session.
    always: Mutex<HashSet<String>>,
}

impl PermissionGate {
    pub fn new(
        rules: Rules,
        approval: Approval,
        asker: Option<Arc<dyn Asker>>,
        fallback: Option<Arc<dyn ToolGate>>,
        cwd: PathBuf,
        home: Option<PathBuf>,
    ) -> Self {
        Self { rules, approval, asker, fallback, cwd, home, always: Mutex::new(HashSet::new()) }
    }

    /// What an "always" answer remembers: the command for `bash`, the tool otherwise.
    fn always_key(tool: &str, args: &Map<String, Value>) -> String {
        match (tool, args.get("command").and_then(Value::as_str)) {
            ("bash", Some(command)) => format!("bash:{command}"),
            _ => tool.to_owned(),
        }
    }

    async fn ask(&self, why: &str, tool: &str, args: &Map<String, Value>, ctx: &ToolContext) -> Result<(), ToolError> {
        let key = Self::always_key(tool, args);
        if self.always.lock().contains(&key) {
            return Ok(());
        }
        let refused = |reason: &str| {
            ToolError::new(format!("Permission denied: this call needs the user's approval ({why}), {reason}"))
        };
        if self.approval == Approval::Never {
            return Err(refused("and approvals are off (--approval never)."));
        }
        let Some(asker) = &self.asker else {
            return Err(refused("and there is no one to ask in this mode."));
        };
        let question = format!("Allow this call? ({why})\n{}", describe(tool, args));
        match asker
            .ask(&question, tool, args, ctx)
            .await
            .map_err(|e| ToolError::new(format!("Permission request failed: {e}")))?
        {
            AskAnswer::Once => Ok(()),
            AskAnswer::Always => {
                self.always.lock().insert(key);
                Ok(())
            }
            AskAnswer::Deny => Err(ToolError::new(super::rejected(tool))),
            AskAnswer::Aborted => Err(ToolError::new(rho_agent::tool::OPERATION_ABORTED)),
        }
    }
}

impl ToolGate for PermissionGate {
    fn check<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            let call = Call { tool, args, cwd: &self.cwd, home: self.home.as_deref() };
            match self.rules.decide(&call) {
                Decision::Deny(rule) => Err(ToolError::new(format!(
                    "Permission denied: the rule {rule} in permissions.deny refuses this call."
                ))),
                Decision::Ask(rule) => self.ask(&format!("the rule {rule} in permissions.ask"), tool, args, ctx).await,
                Decision::Unreadable(rule) => {
                    let why = format!("a command rho cannot read in full, where the rule {rule} may apply");
                    self.ask(&why, tool, args, ctx).await
                }
                Decision::Allow => Ok(()),
                Decision::Undecided if self.approval == Approval::Ask && !only_reads(tool) => {
                    self.ask("--approval ask", tool, args, ctx).await
                }
                Decision::Undecided => match &self.fallback {
                    Some(fallback) => fallback.check(tool, args, ctx).await,
                    None => Ok(()),
                },
            }
        })
    }
}
