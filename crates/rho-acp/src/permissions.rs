//! Session modes and `session/request_permission`. rho runs its tools without asking, in every
//! mode; an editor can give its user that control, so an ACP session has two modes
//! (`session/set_mode`, listed in `session/new`'s and `session/load`'s answers):
//! - `auto` (the default): tools run as they do everywhere else in rho;
//! - `ask`: before a call that can change something runs (`edit`, `write`, `bash`, and tools
//!   rho cannot vouch for: MCP tools, `task`), the client is asked with
//!   `session/request_permission`: allow once, allow always (that tool, for the rest of the
//!   session in this process), or reject. A rejected call is an error result the model sees;
//!   a request the client cancels, or a run aborted while it waits, ends the call as aborted.
//!
//! The question is asked through rho-agent's [`ToolGate`], after the call's arguments are
//! validated and before it runs, so the loop is the same as in every mode.

use parking_lot::Mutex;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionId, SessionMode, SessionModeId, SessionModeState, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use futures::future::BoxFuture;
use rho_agent::{ToolContext, ToolError, ToolGate};
use serde_json::{Map, Value};

use super::tool_calls;
use rho_coding_agent::permissions::{AskAnswer, Asker};

pub(super) const AUTO: &str = "auto";
pub(super) const ASK: &str = "ask";

const ALLOW: &str = "allow";
const ALLOW_ALWAYS: &str = "allow-always";
const REJECT: &str = "reject";

/// One session's mode and the answers it remembers; the session's tool gate.
pub(super) struct Permissions {
    client: ConnectionTo<Client>,
    session_id: Arc<OnceLock<SessionId>>,
    cwd: PathBuf,
    state: Mutex<State>,
}

struct State {
    mode: &'static str,
    /// Tools allowed always.
    allowed: HashSet<String>,
}

impl State {
    /// Whether a call of `tool` needs the client's answer first.
    fn asks(&self, tool: &str) -> bool {
        let harmless = tool == rho_coding_agent::todo::TODO_WRITE_TOOL_NAME
            || matches!(tool_calls::kind(tool), ToolKind::Read | ToolKind::Search | ToolKind::Fetch);
        self.mode == ASK && !harmless && !self.allowed.contains(tool)
    }
}

impl Permissions {
    pub fn new(client: ConnectionTo<Client>, session_id: Arc<OnceLock<SessionId>>, cwd: PathBuf) -> Self {
        Self { client, session_id, cwd, state: Mutex::new(State { mode: AUTO, allowed: HashSet::new() }) }
    }

    /// The modes, with the current one.
    /// The modes, each saying the sandbox commands run in when there is one (`sandbox` is its
    /// mode's name; `None` at full access).
    pub fn modes(&self, sandbox: Option<&str>) -> SessionModeState {
        let boxed = |text: &str| match sandbox {
            Some(mode) => format!("{text}; commands run in the {mode} sandbox"),
            None => text.to_owned(),
        };
        let modes = vec![
            SessionMode::new(AUTO, "Auto").description(boxed("Tools run without asking")),
            SessionMode::new(ASK, "Ask").description(boxed("Ask before edits, writes and commands")),
        ];
        SessionModeState::new(self.state.lock().mode, modes)
    }

    /// Switches the mode; the error names an unknown one.
    pub fn set_mode(&self, id: &SessionModeId) -> Result<(), String> {
        let mode = match &*id.0 {
            AUTO => AUTO,
            ASK => ASK,
            other => return Err(format!("Unknown mode: {other} (rho has {AUTO} and {ASK})")),
        };
        self.state.lock().mode = mode;
        Ok(())
    }

    /// Whether the call runs without asking.
    fn runs_freely(&self, tool: &str) -> bool {
        !self.state.lock().asks(tool)
    }

    fn request(
        &self,
        session_id: SessionId,
        tool: &str,
        args: &Map<String, Value>,
        id: &str,
    ) -> RequestPermissionRequest {
        let fields = ToolCallUpdateFields::new()
            .title(tool_calls::title(tool, args))
            .kind(tool_calls::kind(tool))
            .locations(tool_calls::locations(&self.cwd, tool, args))
            .content(tool_calls::diffs(&self.cwd, tool, args))
            .raw_input(Value::Object(args.clone()));
        let options = vec![
            PermissionOption::new(ALLOW, "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new(ALLOW_ALWAYS, format!("Always allow {tool}"), PermissionOptionKind::AllowAlways),
            PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
        ];
        RequestPermissionRequest::new(session_id, ToolCallUpdate::new(id.to_owned(), fields), options)
    }
}

impl Permissions {
    /// The session's id, once it has one.
    pub fn session_id(&self) -> Option<SessionId> {
        self.session_id.get().cloned()
    }

    /// Sends a `session/request_permission` and waits for the answer.
    pub async fn send(&self, request: RequestPermissionRequest) -> Result<RequestPermissionResponse, String> {
        self.client.send_request(request).block_task().await.map_err(|e| e.message)
    }

    /// Asks the client about the call; a question it cancels, or a run aborted meanwhile, is
    /// [`AskAnswer::Aborted`].
    async fn ask_client(&self, tool: &str, args: &Map<String, Value>, ctx: &ToolContext) -> Result<AskAnswer, String> {
        let Some(session_id) = self.session_id() else { return Err("the session has no id yet".into()) };
        let request = self.request(session_id, tool, args, &ctx.tool_call_id);
        let answer = tokio::select! {
            answer = self.send(request) => answer,
            () = ctx.cancel.cancelled() => return Ok(AskAnswer::Aborted),
        };
        let answer = answer?;
        match answer.outcome {
            RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
                ALLOW => Ok(AskAnswer::Once),
                ALLOW_ALWAYS => Ok(AskAnswer::Always),
                REJECT => Ok(AskAnswer::Deny),
                other => Err(format!("answered with an unknown option: {other}")),
            },
            _ => Ok(AskAnswer::Aborted),
        }
    }
}

/// The permission rules ask through the client too.
impl Asker for Permissions {
    fn ask<'a>(
        &'a self,
        _question: &'a str,
        tool: &'a str,
        args: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<AskAnswer, String>> {
        Box::pin(self.ask_client(tool, args, ctx))
    }
}

impl ToolGate for Permissions {
    fn check<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            if self.runs_freely(tool) || self.session_id.get().is_none() {
                return Ok(());
            }
            let answer = self
                .ask_client(tool, args, ctx)
                .await
                .map_err(|e| ToolError::new(format!("Permission request failed: {e}")))?;
            match answer {
                AskAnswer::Once => Ok(()),
                AskAnswer::Always => {
                    self.state.lock().allowed.insert(tool.to_owned());
                    Ok(())
                }
                AskAnswer::Deny => Err(ToolError::new(rho_coding_agent::permissions::rejected(tool))),
                AskAnswer::Aborted => Err(ToolError::new(rho_agent::tool::OPERATION_ABORTED)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_tools_never_ask() {
        let mut state = State { mode: ASK, allowed: HashSet::from(["bash".to_owned()]) };
        let asks = |state: &State, tools: &[&str]| tools.iter().map(|t| state.asks(t)).collect::<Vec<_>>();
        let tools = ["read", "grep", "todo_write", "bash", "edit", "write", "mcp__x__y", "task"];
        assert_eq!(asks(&state, &tools), [false, false, false, false, true, true, true, true]);
        state.mode = AUTO;
        assert_eq!(asks(&state, &tools), [false; 8]);
    }
}
