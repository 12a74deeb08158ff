//! The loop's edge cases: a run whose scope was cancelled before it began, continuing with
//! nothing to continue from, a second run while one runs, a call to a tool that does not exist,
//! arguments that fail validation (and a tool's own preparation of older argument forms), a
//! failed reply whose tool calls still get results, and a consumer's back-pressure.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rho_agent::{AgentError, AgentEvent, AgentEventSink, Backpressure};
use rho_types::AgentMessage;
use rho_types::types::StopReason;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::common::*;

fn failed_replies(events: &[AgentEvent]) -> Vec<StopReason> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd { message: AgentMessage::Assistant(a) } => Some(a.stop_reason),
            _ => None,
        })
        .collect()
}

fn tool_error_texts(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, is_error: true, .. } => Some(result.text_content()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_run_whose_scope_was_cancelled_before_it_began_ends_at_once_aborted() {
    let h = Harness::start(json!([{"text": "never sent"}])).await;
    let scope = CancellationToken::new();
    scope.cancel();
    let sink: Arc<dyn AgentEventSink> = h.recorder.clone();
    h.agent.prompt_within(&scope, vec![user("go")], sink).await.unwrap();
    let events = h.events();
    assert_eq!(type_names(&events).first(), Some(&"agent_start"));
    assert_eq!(type_names(&events).last(), Some(&"agent_end"));
    assert_eq!(failed_replies(&events), [StopReason::Aborted]);
    assert!(h.requests().is_empty(), "a cancelled run asks the model nothing");
    // The prompt is kept; the next run goes on from it.
    assert_eq!(h.agent.message_count(), 2);
}

#[tokio::test]
async fn continuing_needs_something_to_continue_from() {
    let h = Harness::start(json!([{"text": "Answer."}, {"text": "Steered."}])).await;
    let sink: Arc<dyn AgentEventSink> = h.recorder.clone();
    assert_eq!(h.agent.continue_run(sink.clone()).await, Err(AgentError::NothingToContinue));
    h.prompt("hello").await;
    assert_eq!(h.agent.continue_run(sink.clone()).await, Err(AgentError::CannotContinue("assistant".into())));
    // A queued message is something to continue with.
    h.steer("and then?");
    h.recorder.clear();
    h.agent.continue_run(sink).await.unwrap();
    assert_eq!(failed_replies(&h.events()), [StopReason::Stop]);
    assert_eq!(h.agent.message_count(), 4);
}

#[tokio::test]
async fn a_second_run_while_one_runs_is_refused() {
    let h = Harness::start(json!([{"toolCalls": [{"name": "bash", "arguments": {"command": wait_for_file("go")}}]},
                                  {"text": "Done."}]))
    .await;
    let first = h.spawn_prompt("wait");
    h.wait_for_tool_starts(1).await;
    let sink: Arc<dyn AgentEventSink> = h.recorder.clone();
    assert_eq!(h.agent.prompt(vec![user("again")], sink).await, Err(AgentError::Busy));
    h.write("go", "");
    finish(first).await;
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_are_tool_errors_and_the_run_goes_on() {
    let h = Harness::start(json!([
        {"toolCalls": [
            {"name": "no_such_tool", "arguments": {}},
            {"name": "read", "arguments": {"path": 42, "limit": "x"}},
            {"name": "edit", "arguments": {"path": "f.txt", "oldText": "a", "newText": "b"}}
        ]},
        {"text": "Recovered."}
    ]))
    .await;
    h.write("f.txt", "a\n");
    h.prompt("try things").await;
    let errors = tool_error_texts(&h.events());
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0], "Tool no_such_tool not found");
    assert!(errors[1].starts_with("Validation failed for tool \"read\":"), "{}", errors[1]);
    // The edit tool prepared its older single form into the form its schema has.
    assert_eq!(h.read("f.txt"), "b\n");
    assert_eq!(failed_replies(&h.events()).last(), Some(&StopReason::Stop));
}

#[tokio::test]
async fn the_tool_calls_of_a_failed_reply_still_get_results() {
    let h = Harness::start(json!([{
        "toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}],
        "streamError": {"type": "api_error", "message": "Internal failure"}
    }]))
    .await;
    h.prompt("read it").await;
    let events = h.events();
    assert_eq!(failed_replies(&events), [StopReason::Error]);
    let errors = tool_error_texts(&events);
    assert_eq!(errors, ["Tool execution failed due to an error: Internal failure"]);
    // No call is left without a result in the conversation.
    let messages = h.agent.messages();
    assert!(matches!(messages.last(), Some(AgentMessage::ToolResult(_))), "{messages:?}");
}

/// Counts the deltas it receives and says it is congested after the first one, until the
/// test relieves it.
struct Congested {
    deltas: AtomicUsize,
    backpressure: Arc<Backpressure>,
}

impl AgentEventSink for Congested {
    fn emit(&self, event: AgentEvent) {
        if let AgentEvent::MessageUpdate { event } = &event
            && event.delta().is_some()
        {
            self.deltas.fetch_add(1, Ordering::SeqCst);
            self.backpressure.set(true);
        }
    }

    fn backpressure(&self) -> Option<Arc<Backpressure>> {
        Some(self.backpressure.clone())
    }
}

#[tokio::test]
async fn a_congested_consumer_holds_the_run_until_it_is_relieved() {
    let h = Harness::start(json!([{"text": "one two three four", "chunkSize": 4}])).await;
    let sink = Arc::new(Congested { deltas: AtomicUsize::new(0), backpressure: Arc::default() });
    let run = {
        let agent = h.agent.clone();
        let sink: Arc<dyn AgentEventSink> = sink.clone();
        tokio::spawn(async move { agent.prompt(vec![user("count")], sink).await.unwrap() })
    };
    poll_until("the first delta", || sink.deltas.load(Ordering::SeqCst) == 1).await;
    // Congested: the run takes nothing more from the model.
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    assert_eq!(sink.deltas.load(Ordering::SeqCst), 1);
    assert!(!run.is_finished());
    // Relieved after each delta until the reply is done: every delta arrives.
    let relief = {
        let sink = sink.clone();
        tokio::spawn(async move {
            loop {
                sink.backpressure.set(false);
                tokio::task::yield_now().await;
            }
        })
    };
    finish(run).await;
    relief.abort();
    assert_eq!(sink.deltas.load(Ordering::SeqCst), 5);
}
