//! Unit tests of the turn loop, against `rho-mock-llm` with a tool that runs until cancelled.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rho_ai::StreamOptions;
use rho_mock_llm::{MockServer, Script};
use rho_types::model::{InputKind, ModelCost};
use rho_types::types::UserMessage;
use rho_types::{Model, ThinkingLevel};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use crate::agent::{Agent, AgentConfig};
use crate::event::{AgentEvent, AgentEventSink};
use crate::message::AgentMessage;
use crate::queue::{InterruptMode, QueueMode};
use crate::tool::{OPERATION_ABORTED, Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;

/// Runs until its token fires; says when it started.
struct UntilCancelled {
    schema: Value,
    started: Arc<Notify>,
}

impl Tool for UntilCancelled {
    fn name(&self) -> &str {
        "wait"
    }

    fn description(&self) -> &str {
        "Waits until cancelled."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute<'a>(
        &'a self,
        _: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            self.started.notify_one();
            ctx.cancel.cancelled().await;
            Err(ToolError::new(OPERATION_ABORTED))
        })
    }
}

#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl AgentEventSink for Events {
    fn emit(&self, event: AgentEvent) {
        self.0.lock().unwrap().push(event);
    }
}

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::prompt(text, vec![]))
}

fn user_texts(events: &Events) -> Vec<String> {
    events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd { message: AgentMessage::User(u) } => Some(u.text()),
            _ => None,
        })
        .collect()
}

async fn agent(turns: Value, started: Arc<Notify>) -> (MockServer, Agent) {
    let server = MockServer::start(Script::from_value(json!({ "turns": turns })).unwrap()).await.unwrap();
    let model = Model {
        id: "claude-sonnet-4-5".into(),
        name: "claude-sonnet-4-5".into(),
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        base_url: server.url(),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 200_000,
        max_tokens: 8_000,
        headers: Default::default(),
        compat: None,
        thinking_level_map: None,
        prompt_cache: None,
        input_limits: None,
        sampling: None,
    };
    let tool = UntilCancelled { schema: json!({"type": "object", "properties": {}}), started };
    let agent = Agent::new(AgentConfig {
        declared_prompt: None,
        system_prompt: String::new(),
        model,
        thinking_level: ThinkingLevel::Off,
        tools: vec![Arc::new(tool)],
        messages: Vec::new(),
        steering_mode: QueueMode::OneAtATime,
        follow_up_mode: QueueMode::OneAtATime,
        interrupt_mode: InterruptMode::Wait,
        request_options: Arc::new(|_| StreamOptions { api_key: Some("key".into()), ..Default::default() }),
    });
    (server, agent)
}

/// A steering message queued while a tool runs and the run is then aborted stays queued: the
/// aborted run does not inject it, the next run does.
#[tokio::test]
async fn abort_during_tools_leaves_the_steering_queue_to_the_next_run() {
    let started = Arc::new(Notify::new());
    let (server, agent) =
        agent(json!([{"toolCalls": [{"name": "wait", "arguments": {}}]}, {"text": "ok"}]), started.clone()).await;
    let events = Arc::new(Events::default());
    let run = {
        let agent = agent.clone();
        let sink: Arc<dyn AgentEventSink> = events.clone();
        tokio::spawn(async move { agent.prompt(vec![user("first")], sink).await })
    };
    tokio::time::timeout(Duration::from_secs(10), started.notified()).await.unwrap();
    agent.steer(user("steer"), &*events);
    agent.abort();
    tokio::time::timeout(Duration::from_secs(10), run).await.unwrap().unwrap().unwrap();
    assert_eq!(user_texts(&events), ["first"]);
    assert_eq!(agent.queued_count(), 1);

    events.0.lock().unwrap().clear();
    agent.prompt(vec![user("second")], events.clone()).await.unwrap();
    assert_eq!(user_texts(&events), ["second", "steer"]);
    assert_eq!(agent.queued_count(), 0);
    assert_eq!(server.requests().len(), 2);
}

/// Replaces the agent's tools with none as soon as the first reply has ended, before its calls
/// run.
struct ReplaceToolsAtReplyEnd {
    agent: Agent,
    events: Events,
}

impl AgentEventSink for ReplaceToolsAtReplyEnd {
    fn emit(&self, event: AgentEvent) {
        if let AgentEvent::MessageEnd { message: AgentMessage::Assistant(_) } = &event
            && !self.agent.tools().is_empty()
        {
            self.agent.set_tools(Vec::new(), String::new());
        }
        self.events.emit(event);
    }
}

/// A tool set replaced between a reply and its calls (an MCP server's tools refreshed) reaches
/// the next request; the turn runs its calls with the tools its own request offered.
#[tokio::test]
async fn a_turn_runs_its_calls_with_the_tools_its_request_offered() {
    let started = Arc::new(Notify::new());
    let (server, agent) =
        agent(json!([{"toolCalls": [{"name": "wait", "arguments": {}}]}, {"text": "ok"}]), started.clone()).await;
    let sink = Arc::new(ReplaceToolsAtReplyEnd { agent: agent.clone(), events: Events::default() });
    let run = {
        let agent = agent.clone();
        let sink: Arc<dyn AgentEventSink> = sink.clone();
        tokio::spawn(async move { agent.prompt(vec![user("go")], sink).await })
    };
    // The call found its tool (which waits for the abort) instead of failing as unknown.
    tokio::time::timeout(Duration::from_secs(10), started.notified()).await.unwrap();
    agent.abort();
    tokio::time::timeout(Duration::from_secs(10), run).await.unwrap().unwrap().unwrap();
    let first = &server.requests()[0].body;
    assert_eq!(first["tools"][0]["name"], "wait", "{first}");

    agent.prompt(vec![user("again")], sink.clone()).await.unwrap();
    let requests = server.requests();
    let last = &requests.last().unwrap().body;
    assert!(last.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), "{last}");
}

/// Refuses every call it is asked about, naming it.
struct RefuseAll(Mutex<Vec<String>>);

impl crate::tool::ToolGate for RefuseAll {
    fn check<'a>(
        &'a self,
        tool: &'a str,
        _: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        self.0.lock().unwrap().push(format!("{tool} {}", ctx.tool_call_id));
        Box::pin(async { Err(ToolError::new("The user refused this call")) })
    }
}

/// A gate is asked before each call; a refused call never runs and its refusal is the error
/// result the model gets.
#[tokio::test]
async fn a_refused_call_does_not_run_and_the_model_sees_why() {
    let started = Arc::new(Notify::new());
    let calls = json!([{"toolCalls": [{"id": "c1", "name": "wait", "arguments": {}}]}, {"text": "ok"}]);
    let (server, agent) = agent(calls, started.clone()).await;
    let gate = Arc::new(RefuseAll(Mutex::new(Vec::new())));
    agent.set_tool_gate(Some(gate.clone()));
    let events = Arc::new(Events::default());
    tokio::time::timeout(Duration::from_secs(10), agent.prompt(vec![user("go")], events.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(*gate.0.lock().unwrap(), ["wait c1"]);
    let ends: Vec<(String, bool)> = events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, is_error, .. } => Some((result.text_content(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [("The user refused this call".to_owned(), true)]);
    let second = server.requests()[1].body.to_string();
    assert!(second.contains("The user refused this call"), "{second}");
}

/// Hooks that block `wait`, rewrite the arguments of other calls, mark results, replace
/// assistant text at `message_end` and drop the first message from every request's context.
#[derive(Default)]
struct Rewrite {
    seen_args: Mutex<Vec<Value>>,
    contexts: Mutex<Vec<usize>>,
}

impl crate::hooks::AgentHooks for Rewrite {
    fn wants(&self, _: crate::hooks::HookPoint) -> bool {
        true
    }

    fn context<'a>(
        &'a self,
        mut messages: Vec<AgentMessage>,
        _: &'a tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'a, Vec<AgentMessage>> {
        Box::pin(async move {
            self.contexts.lock().unwrap().push(messages.len());
            if messages.len() > 1 {
                messages.remove(0);
            }
            messages
        })
    }

    fn tool_call<'a>(
        &'a self,
        call: &'a rho_types::types::ToolCall,
        mut args: Map<String, Value>,
        _: &'a tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'a, crate::hooks::ToolCallDecision> {
        Box::pin(async move {
            if call.id == "blocked" {
                return crate::hooks::ToolCallDecision::Block("Blocked by policy".into());
            }
            args.insert("patched".into(), json!(true));
            self.seen_args.lock().unwrap().push(Value::Object(args.clone()));
            crate::hooks::ToolCallDecision::Run(args)
        })
    }

    fn tool_result<'a>(
        &'a self,
        _: &'a rho_types::types::ToolCall,
        _: &'a Map<String, Value>,
        mut outcome: crate::hooks::ToolOutcome,
        _: &'a tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'a, crate::hooks::ToolOutcome> {
        Box::pin(async move {
            outcome.result.content.push(rho_types::types::UserContent::text("(checked)"));
            outcome
        })
    }

    fn message_end<'a>(&'a self, message: AgentMessage) -> BoxFuture<'a, AgentMessage> {
        Box::pin(async move {
            match message {
                AgentMessage::Assistant(mut a) if !a.text().is_empty() => {
                    a.content =
                        vec![rho_types::types::AssistantContent::Text(rho_types::types::TextContent::new("replaced"))];
                    AgentMessage::Assistant(a)
                }
                // A replacement of another role is ignored by the loop.
                AgentMessage::User(_) => AgentMessage::Custom(crate::message::CustomMessage {
                    custom_type: "x".into(),
                    content: rho_types::types::UserMessageContent::Text("x".into()),
                    display: false,
                    details: None,
                    attribution: None,
                    timestamp: 0,
                }),
                other => other,
            }
        })
    }
}

/// Echoes its arguments; its result asks to end the run (`terminate`).
struct Echo {
    schema: Value,
    terminate: bool,
}

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn description(&self) -> &str {
        "Echoes its arguments."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        _: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let mut result = AgentToolResult::text(Value::Object(args).to_string());
            result.terminate = self.terminate.then_some(true);
            Ok(result)
        })
    }
}

fn tool_ends(events: &Events) -> Vec<(String, bool)> {
    events
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, is_error, .. } => Some((result.text_content(), *is_error)),
            _ => None,
        })
        .collect()
}

/// The hooks answer at every point: a blocked call's reason is its result, a changed argument
/// reaches the tool, a changed result reaches the model, a replaced reply is what is reported
/// and kept, a role-changing replacement is ignored, and the context hook shapes the request.
#[tokio::test]
async fn hooks_block_change_arguments_results_messages_and_context() {
    let turns = json!([
        {"toolCalls": [{"id": "blocked", "name": "echo", "arguments": {}}, {"id": "ok", "name": "echo", "arguments": {"a": 1}}]},
        {"text": "done"}
    ]);
    let (server, agent) = agent(turns, Arc::new(Notify::new())).await;
    agent.set_tools(vec![Arc::new(Echo { schema: json!({"type": "object"}), terminate: false })], String::new());
    let hooks = Arc::new(Rewrite::default());
    agent.set_hooks(Some(hooks.clone()));
    let events = Arc::new(Events::default());
    agent.prompt(vec![user("go")], events.clone()).await.unwrap();

    assert_eq!(
        tool_ends(&events),
        [("Blocked by policy".to_owned(), true), ("{\"a\":1,\"patched\":true}\n(checked)".to_owned(), false)]
    );
    assert_eq!(*hooks.seen_args.lock().unwrap(), [json!({"a": 1, "patched": true})]);
    assert_eq!(user_texts(&events), ["go"], "the user message kept its role");
    let last = agent.messages().last().cloned().unwrap();
    assert_eq!(last.as_assistant().unwrap().text(), "replaced");
    // Two requests, each without the first message of the conversation.
    assert_eq!(*hooks.contexts.lock().unwrap(), [1, 4]);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1].body["messages"];
    assert_eq!(second[0]["role"], "assistant", "the prompt was left out: {second}");
}

/// When every result of a batch asks to terminate, no request follows the batch.
#[tokio::test]
async fn a_batch_whose_results_all_terminate_ends_the_run() {
    let turns = json!([{"toolCalls": [{"name": "echo", "arguments": {}}]}, {"text": "never asked"}]);
    let (server, agent) = agent(turns, Arc::new(Notify::new())).await;
    agent.set_tools(vec![Arc::new(Echo { schema: json!({"type": "object"}), terminate: true })], String::new());
    let events = Arc::new(Events::default());
    agent.prompt(vec![user("go")], events.clone()).await.unwrap();
    assert_eq!(server.requests().len(), 1);
    assert!(matches!(events.0.lock().unwrap().last(), Some(AgentEvent::AgentEnd { .. })));
}
