//! The harness every agent-loop test uses: a `rho-mock-llm` server with a script, a model whose
//! base URL points at it, a temporary working directory, the real built-in tools working in it,
//! an [`Agent`] over them, and a recorder of every event the runs emit.
//!
//! Waiting is done by polling (events, files, `/proc`) against generous deadlines, so the tests
//! never sleep for a fixed time and never assert on how long something took, except the 1 s
//! liveness bounds the abort scenarios name.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rho_agent::{AgentConfig, AgentEvent, AgentEventSink};
use rho_ai::StreamOptions;
use rho_mock_llm::{MockServer, RecordedRequest, Script};
use rho_tools::{ToolOptions, builtin_tool_names, create_tools};
use rho_types::model::{InputKind, ModelCost};
use rho_types::types::{AssistantContent, UserMessage};
use rho_types::{AgentMessage, InterruptMode, Model, QueueMode, ThinkingLevel};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::task::JoinHandle;

pub use rho_agent::Agent;

/// How long a wait may take before the test fails instead of hanging.
pub const PATIENCE: Duration = Duration::from_secs(15);

const POLL: Duration = Duration::from_millis(5);

/// One wire API: its name, provider, model id and the suffix of the base URL.
#[derive(Debug, Clone, Copy)]
pub struct Wire {
    pub api: &'static str,
    pub provider: &'static str,
    pub model_id: &'static str,
    pub base_path: &'static str,
}

pub const ANTHROPIC: Wire =
    Wire { api: "anthropic-messages", provider: "anthropic", model_id: "claude-sonnet-4-5", base_path: "" };

pub const WIRES: [Wire; 4] = [
    ANTHROPIC,
    Wire { api: "openai-completions", provider: "local", model_id: "gpt-5-mini", base_path: "/v1" },
    Wire { api: "openai-responses", provider: "openai", model_id: "gpt-5", base_path: "/v1" },
    Wire { api: "google-generative-ai", provider: "google", model_id: "gemini-2.5-flash", base_path: "/v1beta" },
];

/// Keeps every event of every run, in order.
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<AgentEvent>>,
}

impl AgentEventSink for Recorder {
    fn emit(&self, event: AgentEvent) {
        self.events.lock().unwrap().push(event);
    }
}

impl Recorder {
    pub fn events(&self) -> Vec<AgentEvent> {
        self.events.lock().unwrap().clone()
    }

    pub fn clear(&self) {
        self.events.lock().unwrap().clear();
    }

    /// Waits until `count` recorded events satisfy `pred`.
    pub async fn wait_for_count(&self, what: &str, count: usize, pred: impl Fn(&AgentEvent) -> bool) {
        poll_until(what, || self.events.lock().unwrap().iter().filter(|e| pred(e)).count() >= count).await;
    }
}

/// Polls `done` until it holds; fails the test after [`PATIENCE`].
pub async fn poll_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(POLL).await;
    }
}

pub struct Harness {
    pub server: MockServer,
    pub dir: TempDir,
    pub agent: Agent,
    pub recorder: Arc<Recorder>,
}

impl Harness {
    /// An Anthropic-speaking agent with every built-in tool, immediate interrupts and
    /// one-at-a-time queues (the agent's own defaults), serving `turns`.
    pub async fn start(turns: Value) -> Self {
        Self::start_with(ANTHROPIC, turns).await
    }

    pub async fn start_with(wire: Wire, turns: Value) -> Self {
        let script = Script::from_value(json!({ "turns": turns })).expect("a valid script");
        let server = MockServer::start(script).await.expect("the mock server starts");
        let dir = tempfile::tempdir().unwrap();
        let tools = create_tools(builtin_tool_names(), &ToolOptions::new(dir.path()));
        let agent = Agent::new(AgentConfig {
            declared_prompt: None,
            system_prompt: "You are a test agent.".into(),
            model: model(wire, &server),
            thinking_level: ThinkingLevel::Off,
            tools,
            messages: Vec::new(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            interrupt_mode: InterruptMode::Immediate,
            request_options: Arc::new(|_| StreamOptions { api_key: Some("test-key".into()), ..Default::default() }),
        });
        Self { server, dir, agent, recorder: Arc::new(Recorder::default()) }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) {
        std::fs::write(self.path(rel), content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    /// Starts a run on `text` in its own task.
    pub fn spawn_prompt(&self, text: &str) -> JoinHandle<()> {
        let agent = self.agent.clone();
        let sink: Arc<dyn AgentEventSink> = self.recorder.clone();
        let message = user(text);
        tokio::spawn(async move { agent.prompt(vec![message], sink).await.expect("the agent was idle") })
    }

    /// Runs a prompt to its end.
    pub async fn prompt(&self, text: &str) {
        finish(self.spawn_prompt(text)).await;
    }

    pub fn steer(&self, text: &str) {
        self.agent.steer(user(text), &*self.recorder);
    }

    pub fn follow_up(&self, text: &str) {
        self.agent.follow_up(user(text), &*self.recorder);
    }

    pub fn events(&self) -> Vec<AgentEvent> {
        self.recorder.events()
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// Waits until `count` tool executions have started.
    pub async fn wait_for_tool_starts(&self, count: usize) {
        self.recorder
            .wait_for_count("tool_execution_start", count, |e| matches!(e, AgentEvent::ToolExecutionStart { .. }))
            .await;
    }

    /// Waits until the file `rel` holds a line and returns it as a pid.
    pub async fn wait_for_pid(&self, rel: &str) -> i32 {
        let path = self.path(rel);
        let mut pid = None;
        poll_until(rel, || {
            pid = std::fs::read_to_string(&path).ok().and_then(|s| s.trim().parse().ok());
            pid.is_some()
        })
        .await;
        pid.unwrap()
    }
}

/// Waits for a run's task; fails the test if it takes longer than [`PATIENCE`].
pub async fn finish(run: JoinHandle<()>) {
    tokio::time::timeout(PATIENCE, run).await.expect("the run ends").expect("the run does not panic");
}

pub fn model(wire: Wire, server: &MockServer) -> Model {
    Model {
        id: wire.model_id.into(),
        name: wire.model_id.into(),
        api: wire.api.into(),
        provider: wire.provider.into(),
        base_url: format!("{}{}", server.url(), wire.base_path),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, tiers: Vec::new() },
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
        input_limits: None,
        sampling: None,
    }
}

pub fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::prompt(text, vec![]))
}

/// A bash command that waits until `file` exists (relative to the working directory).
pub fn wait_for_file(file: &str) -> String {
    format!("while [ ! -e {file} ]; do sleep 0.01; done")
}

/// Whether process `pid` is gone: no `/proc` entry, or a zombie nobody has reaped yet (an
/// orphaned grandchild is reaped by init, which a container may not run).
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Polls until `pid` is gone; fails unless that happens within one second.
pub async fn assert_gone_within_1s(pid: i32) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    while !process_gone(pid) {
        assert!(tokio::time::Instant::now() < deadline, "process {pid} still runs 1 s after the abort");
        tokio::time::sleep(POLL).await;
    }
}

// ---- looking at what happened ----

pub fn type_names(events: &[AgentEvent]) -> Vec<&'static str> {
    events.iter().map(AgentEvent::type_name).collect()
}

/// The ids of `tool_execution_end` events, in order.
pub fn ended_tool_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

/// `(text, isError)` of every `tool_execution_end`, in order.
pub fn tool_outcomes(events: &[AgentEvent]) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, is_error, .. } => Some((result.text_content(), *is_error)),
            _ => None,
        })
        .collect()
}

/// The tool call ids of the assistant messages that ended, in order.
pub fn called_tool_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd { message: AgentMessage::Assistant(a) } => Some(a.tool_calls().cloned()),
            _ => None,
        })
        .flatten()
        .map(|c| c.id)
        .collect()
}

/// The texts of user messages that ended, in order.
pub fn user_texts(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd { message: AgentMessage::User(u) } => Some(u.text()),
            _ => None,
        })
        .collect()
}

/// Whether a recorded request body mentions `text` anywhere.
pub fn body_mentions(request: &RecordedRequest, text: &str) -> bool {
    request.body.to_string().contains(text)
}

/// Every tool call in `messages` has exactly one tool result after it, before the next
/// assistant or user message.
pub fn assert_calls_paired(messages: &[AgentMessage]) {
    let mut open: Vec<String> = Vec::new();
    for message in messages {
        match message {
            AgentMessage::Assistant(a) => {
                assert!(open.is_empty(), "calls without a result: {open:?}");
                open = a.tool_calls().map(|c| c.id.clone()).collect();
            }
            AgentMessage::ToolResult(r) => {
                let pos = open.iter().position(|id| *id == r.tool_call_id);
                assert!(pos.is_some(), "a result for an unknown or answered call: {}", r.tool_call_id);
                open.retain(|id| *id != r.tool_call_id);
            }
            _ => assert!(open.is_empty(), "calls without a result: {open:?}"),
        }
    }
    assert!(open.is_empty(), "calls without a result: {open:?}");
}

/// A compact, timestamp-free account of one event for snapshots: its type and the fields a
/// host acts on.
pub fn summarize(event: &AgentEvent) -> Value {
    match event {
        AgentEvent::AgentStart | AgentEvent::TurnStart => json!({"type": event.type_name()}),
        AgentEvent::AgentEnd { messages, .. } => json!({
            "type": "agent_end",
            "messages": messages.iter().map(|m| m.role()).collect::<Vec<_>>(),
        }),
        AgentEvent::TurnEnd { message, tool_results } => json!({
            "type": "turn_end",
            "message": summarize_message(message),
            "toolResults": tool_results.iter().map(|r| json!([r.tool_call_id, r.text(), r.is_error])).collect::<Vec<_>>(),
        }),
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            json!({"type": event.type_name(), "message": summarize_message(message)})
        }
        AgentEvent::MessageUpdate { event: update } => {
            let mut out = json!({"type": "message_update", "event": update.type_name()});
            if let Some(index) = update.content_index() {
                out["contentIndex"] = json!(index);
            }
            if let Some(delta) = update.delta() {
                out["delta"] = json!(delta);
            }
            out
        }
        AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => json!({
            "type": "tool_execution_start", "toolCallId": tool_call_id, "toolName": tool_name, "args": args,
        }),
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => {
            json!({"type": "tool_execution_update", "toolCallId": tool_call_id})
        }
        AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, result, is_error, .. } => json!({
            "type": "tool_execution_end", "toolCallId": tool_call_id, "toolName": tool_name,
            "text": result.text_content(), "isError": is_error,
        }),
        AgentEvent::QueueUpdate { steering, follow_up } => {
            json!({"type": "queue_update", "steering": steering, "followUp": follow_up})
        }
    }
}

fn summarize_message(message: &AgentMessage) -> Value {
    match message {
        AgentMessage::User(u) => json!({"role": "user", "text": u.text()}),
        AgentMessage::ToolResult(r) => json!({
            "role": "toolResult", "toolCallId": r.tool_call_id, "text": r.text(), "isError": r.is_error,
        }),
        AgentMessage::Assistant(a) => {
            let content: Vec<Value> = a
                .content
                .iter()
                .map(|block| match block {
                    AssistantContent::Text(t) => json!({"text": t.text}),
                    AssistantContent::Thinking(t) => json!({"thinking": t.thinking}),
                    AssistantContent::RedactedThinking(_) => json!("redactedThinking"),
                    AssistantContent::ToolCall(c) => json!({"toolCall": c.name, "id": c.id, "arguments": c.arguments}),
                })
                .collect();
            let mut out = json!({"role": "assistant", "stopReason": a.stop_reason.as_str(), "content": content});
            if let Some(error) = &a.error_message {
                out["errorMessage"] = json!(error);
            }
            out
        }
        other => json!({"role": other.role()}),
    }
}

/// Which file a path argument names, for edits spelled different ways.
pub fn spelled(dir: &Path, how: &str, file: &str) -> String {
    match how {
        "relative" => file.to_owned(),
        "dot" => format!("./{file}"),
        "absolute" => dir.join(file).display().to_string(),
        "parent" => format!("sub/../{file}"),
        _ => unreachable!("unknown spelling {how}"),
    }
}
