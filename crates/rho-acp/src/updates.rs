//! A session's events as `session/update` notifications. The agent's text and thinking deltas
//! become message and thought chunks; a tool call is announced (`tool_call`, pending) once the
//! model has finished writing its arguments, goes `in_progress` when it runs, streams its
//! partial output, and ends `completed` or `failed` with its output (and the diffs of `edit` and
//! `write`); a `bash` call run in the editor's terminal shows that terminal instead of its
//! output, from its first partial result to its end; a call that never ran is marked failed
//! when the run ends. `todo_write` results
//! become the plan; rho's templates and skills the available commands.
//!
//! The translation keeps a little state (the calls announced, whether the last reply was a
//! refusal) behind a short lock; the notifications go out through the SDK's queue, in order,
//! without blocking the run.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, ContentChunk, ImageContent, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionId, SessionInfoUpdate, SessionNotification, SessionUpdate,
    Terminal, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    UnstructuredCommandInput,
};
use rho_agent::AgentEvent;
use rho_ai::{AssistantMessageEvent, ProviderError};
use rho_rpc::{SessionEvent, TodoPhase, TodoStatus};
use rho_types::types::UserContent;
use serde_json::{Map, Value};

use super::tool_calls;
use rho_coding_agent::agent_session::{AgentSessionEvent, SessionEventSink};
use rho_coding_agent::todo::{TODO_WRITE_TOOL_NAME, TodoWriteDetails};

/// The session's event sink in ACP mode.
pub(super) struct UpdateSink {
    client: ConnectionTo<Client>,
    /// Set once the session exists; events before that have no session to go to.
    session_id: Arc<OnceLock<SessionId>>,
    state: Mutex<Translator>,
}

impl UpdateSink {
    pub fn new(client: ConnectionTo<Client>, session_id: Arc<OnceLock<SessionId>>, cwd: PathBuf) -> Self {
        Self { client, session_id, state: Mutex::new(Translator::new(cwd)) }
    }

    /// Sends one update for this session.
    pub fn send(&self, update: SessionUpdate) {
        let Some(id) = self.session_id.get() else { return };
        if let Err(e) = self.client.send_notification(SessionNotification::new(id.clone(), update)) {
            tracing::debug!("session/update not sent: {e}");
        }
    }

    /// Whether the last reply was refused by the model (and forgets it).
    pub fn take_refusal(&self) -> bool {
        std::mem::take(&mut self.state.lock().refused)
    }
}

impl SessionEventSink for UpdateSink {
    fn emit(&self, event: AgentSessionEvent) {
        let updates = self.state.lock().translate(&event);
        for update in updates {
            self.send(update);
        }
    }
}

/// What the translation remembers between events.
pub(super) struct Translator {
    cwd: PathBuf,
    /// Calls announced and not finished: their tool and arguments.
    calls: HashMap<String, (String, Map<String, Value>)>,
    /// Calls running in the editor's terminals: the terminal's id.
    terminals: HashMap<String, String>,
    refused: bool,
}

impl Translator {
    pub fn new(cwd: PathBuf) -> Self {
        Self { cwd, calls: HashMap::new(), terminals: HashMap::new(), refused: false }
    }

    pub fn translate(&mut self, event: &AgentSessionEvent) -> Vec<SessionUpdate> {
        match event {
            AgentSessionEvent::Agent(event) => self.agent_event(event),
            AgentSessionEvent::Session(SessionEvent::AvailableCommandsUpdate { commands }) => {
                vec![available_commands(commands)]
            }
            AgentSessionEvent::Session(SessionEvent::SessionInfoChanged { name: Some(name) }) => {
                vec![SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().title(name.clone()))]
            }
            _ => Vec::new(),
        }
    }

    fn agent_event(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::MessageUpdate { event } => self.stream_step(event),
            AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => {
                if self.calls.contains_key(tool_call_id) {
                    let fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
                    return vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(tool_call_id.clone(), fields))];
                }
                self.calls.insert(tool_call_id.clone(), (tool_name.clone(), args.clone()));
                vec![SessionUpdate::ToolCall(announce(
                    &self.cwd,
                    tool_call_id,
                    tool_name,
                    args,
                    ToolCallStatus::InProgress,
                ))]
            }
            AgentEvent::ToolExecutionUpdate { tool_call_id, partial_result, .. } => {
                let terminal =
                    partial_result.details.as_ref().and_then(|d| d.get("terminalId")).and_then(Value::as_str);
                let shown = match terminal {
                    Some(terminal) => {
                        self.terminals.insert(tool_call_id.clone(), terminal.to_owned());
                        vec![ToolCallContent::Terminal(Terminal::new(terminal.to_owned()))]
                    }
                    None if self.terminals.contains_key(tool_call_id) => return Vec::new(),
                    None => content(&partial_result.content),
                };
                let fields = ToolCallUpdateFields::new().content(shown);
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(tool_call_id.clone(), fields))]
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, result, is_error, .. } => {
                let args = self.calls.remove(tool_call_id).map(|(_, args)| args).unwrap_or_default();
                let output =
                    ToolOutput { content: &result.content, details: result.details.as_ref(), is_error: *is_error };
                let mut update = finished(&self.cwd, tool_call_id, tool_name, &args, &output);
                if let Some(terminal) = self.terminals.remove(tool_call_id) {
                    update.fields.content = Some(vec![ToolCallContent::Terminal(Terminal::new(terminal))]);
                }
                let mut updates = vec![SessionUpdate::ToolCallUpdate(update)];
                updates.extend(plan_from_todo_write(tool_name, &output).map(SessionUpdate::Plan));
                updates
            }
            AgentEvent::AgentEnd { .. } => {
                self.terminals.clear();
                let mut ids: Vec<String> = self.calls.drain().map(|(id, _)| id).collect();
                ids.sort();
                ids.into_iter()
                    .map(|id| {
                        let fields = ToolCallUpdateFields::new().status(ToolCallStatus::Failed);
                        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields))
                    })
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    fn stream_step(&mut self, step: &AssistantMessageEvent) -> Vec<SessionUpdate> {
        match step {
            AssistantMessageEvent::Start { .. } => {
                self.refused = false;
                Vec::new()
            }
            AssistantMessageEvent::TextDelta { delta, .. } => {
                vec![SessionUpdate::AgentMessageChunk(ContentChunk::new(delta.clone().into()))]
            }
            AssistantMessageEvent::ThinkingDelta { delta, .. } => {
                vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(delta.clone().into()))]
            }
            AssistantMessageEvent::ToolCallEnd { tool_call, .. } => {
                self.calls.insert(tool_call.id.clone(), (tool_call.name.clone(), tool_call.arguments.clone()));
                let call =
                    announce(&self.cwd, &tool_call.id, &tool_call.name, &tool_call.arguments, ToolCallStatus::Pending);
                vec![SessionUpdate::ToolCall(call)]
            }
            AssistantMessageEvent::Error { failure, .. } => {
                self.refused = failure
                    .as_deref()
                    .is_some_and(|f| matches!(f, ProviderError::Stream { error_type, .. } if error_type == "refusal"));
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

/// A tool call as first announced.
pub(super) fn announce(
    cwd: &Path,
    id: &str,
    tool: &str,
    args: &Map<String, Value>,
    status: ToolCallStatus,
) -> ToolCall {
    ToolCall::new(id.to_owned(), tool_calls::title(tool, args))
        .kind(tool_calls::kind(tool))
        .status(status)
        .locations(tool_calls::locations(cwd, tool, args))
        .raw_input(Value::Object(args.clone()))
}

/// What a tool returned.
pub(super) struct ToolOutput<'a> {
    pub content: &'a [UserContent],
    pub details: Option<&'a Value>,
    pub is_error: bool,
}

/// The last update of a call: its status and output, with the diffs of a successful edit.
pub(super) fn finished(
    cwd: &Path,
    id: &str,
    tool: &str,
    args: &Map<String, Value>,
    output: &ToolOutput<'_>,
) -> ToolCallUpdate {
    let mut content = content(output.content);
    let status = if output.is_error {
        ToolCallStatus::Failed
    } else {
        content.extend(tool_calls::diffs(cwd, tool, args));
        ToolCallStatus::Completed
    };
    let fields = ToolCallUpdateFields::new().status(status).content(content).raw_output(output.details.cloned());
    ToolCallUpdate::new(id.to_owned(), fields)
}

/// rho's content blocks as ACP's.
pub(super) fn content(blocks: &[UserContent]) -> Vec<ToolCallContent> {
    blocks.iter().map(|b| ToolCallContent::from(content_block(b))).collect()
}

pub(super) fn content_block(block: &UserContent) -> ContentBlock {
    match block {
        UserContent::Text(t) => t.text.clone().into(),
        UserContent::Image(i) => ContentBlock::Image(ImageContent::new(i.data.clone(), i.mime_type.clone())),
    }
}

/// The plan a successful `todo_write` leaves.
fn plan_from_todo_write(tool: &str, output: &ToolOutput<'_>) -> Option<Plan> {
    if tool != TODO_WRITE_TOOL_NAME || output.is_error {
        return None;
    }
    let details: TodoWriteDetails = serde_json::from_value(output.details?.clone()).ok()?;
    let phases: Vec<TodoPhase> = details.phases.iter().map(|p| p.to_wire()).collect();
    Some(plan(&phases))
}

/// The todo list as a plan: one entry per task (abandoned ones left out), named with its phase
/// when there are several.
pub(super) fn plan(phases: &[TodoPhase]) -> Plan {
    let named = phases.len() > 1;
    let entries = phases
        .iter()
        .flat_map(|phase| phase.tasks.iter().map(move |task| (phase, task)))
        .filter_map(|(phase, task)| {
            let status = match task.status {
                TodoStatus::Pending => PlanEntryStatus::Pending,
                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                TodoStatus::Completed => PlanEntryStatus::Completed,
                TodoStatus::Abandoned => return None,
            };
            let content = if named { format!("{}: {}", phase.name, task.content) } else { task.content.clone() };
            Some(PlanEntry::new(content, PlanEntryPriority::Medium, status))
        })
        .collect();
    Plan::new(entries)
}

/// rho's prompt templates and skills as the commands an editor offers after `/`.
fn available_commands(commands: &[rho_rpc::AvailableCommand]) -> SessionUpdate {
    let commands = commands
        .iter()
        .map(|c| {
            let input = c
                .input
                .as_ref()
                .map(|i| AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(i.hint.clone())));
            AvailableCommand::new(c.name.clone(), c.description.clone().unwrap_or_default()).input(input)
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_types::AgentToolResult;
    use rho_types::types::ToolCall as RhoToolCall;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn agent(event: AgentEvent) -> AgentSessionEvent {
        AgentSessionEvent::Agent(event)
    }

    #[test]
    fn a_tool_call_is_announced_run_and_finished() {
        let mut t = Translator::new(PathBuf::from("/w"));
        let edit = args(json!({"path": "a.rs", "edits": [{"oldText": "x", "newText": "y"}]}));
        let call = RhoToolCall {
            id: "c1".into(),
            name: "edit".into(),
            arguments: edit.clone(),
            thought_signature: None,
            intent: None,
        };
        let step = AssistantMessageEvent::ToolCallEnd { content_index: 0, tool_call: call };
        let announced = t.translate(&agent(AgentEvent::MessageUpdate { event: step }));
        let [SessionUpdate::ToolCall(call)] = announced.as_slice() else { panic!("{announced:?}") };
        assert_eq!(call.title, "Edit a.rs");
        assert_eq!(call.status, ToolCallStatus::Pending);

        let start = AgentEvent::ToolExecutionStart { tool_call_id: "c1".into(), tool_name: "edit".into(), args: edit };
        let running = t.translate(&agent(start));
        let [SessionUpdate::ToolCallUpdate(update)] = running.as_slice() else { panic!("{running:?}") };
        assert_eq!(update.fields.status, Some(ToolCallStatus::InProgress));

        let end = AgentEvent::ToolExecutionEnd {
            tool_call_id: "c1".into(),
            tool_name: "edit".into(),
            result: AgentToolResult::text("Successfully replaced 1 block(s) in a.rs."),
            is_error: false,
            is_warning: None,
            duration_ms: Some(3),
        };
        let done = t.translate(&agent(end));
        let [SessionUpdate::ToolCallUpdate(update)] = done.as_slice() else { panic!("{done:?}") };
        assert_eq!(update.fields.status, Some(ToolCallStatus::Completed));
        assert_eq!(update.fields.content.as_ref().map(Vec::len), Some(2), "the text and the diff");
        assert!(
            t.translate(&agent(AgentEvent::AgentEnd { messages: Vec::new(), will_retry: false, is_terminal: true }))
                .is_empty()
        );
    }

    #[test]
    fn calls_that_never_ran_fail_when_the_run_ends() {
        let mut t = Translator::new(PathBuf::from("/w"));
        let call = RhoToolCall {
            id: "c2".into(),
            name: "bash".into(),
            arguments: args(json!({"command": "ls"})),
            thought_signature: None,
            intent: None,
        };
        t.translate(&agent(AgentEvent::MessageUpdate {
            event: AssistantMessageEvent::ToolCallEnd { content_index: 0, tool_call: call },
        }));
        let end =
            t.translate(&agent(AgentEvent::AgentEnd { messages: Vec::new(), will_retry: false, is_terminal: true }));
        let [SessionUpdate::ToolCallUpdate(update)] = end.as_slice() else { panic!("{end:?}") };
        assert_eq!(update.fields.status, Some(ToolCallStatus::Failed));
    }

    #[test]
    fn todo_phases_become_a_plan() {
        let phases: Vec<TodoPhase> = serde_json::from_value(json!([
            {"id": "p1", "name": "Build", "tasks": [
                {"id": "t1", "content": "a", "status": "completed"},
                {"id": "t2", "content": "b", "status": "abandoned"}]},
            {"id": "p2", "name": "Test", "tasks": [{"id": "t3", "content": "c", "status": "in_progress"}]}
        ]))
        .unwrap();
        let plan = plan(&phases);
        let entries: Vec<(&str, PlanEntryStatus)> =
            plan.entries.iter().map(|e| (e.content.as_str(), e.status.clone())).collect();
        assert_eq!(entries, vec![("Build: a", PlanEntryStatus::Completed), ("Test: c", PlanEntryStatus::InProgress)]);
    }
}
