//! Abort (docs/agent-behavior.md, "Abort"): while the model streams, the reply ends `aborted` with
//! `Request was aborted`, the run still ends with `agent_end`, and the next prompt works on a
//! conversation whose tool calls all have results; while `bash` runs, the command's processes are
//! killed within a second.

use std::time::Duration;

use pretty_assertions::assert_eq;
use rho_agent::AgentEvent;
use rho_ai::event::AssistantMessageEvent;
use rho_types::AgentMessage;
use rho_types::types::StopReason;
use serde_json::json;

use crate::common::*;

const ABORTED: &str = "Request was aborted";

/// The final assistant messages of the run, in order.
fn assistant_ends(events: &[AgentEvent]) -> Vec<rho_types::types::AssistantMessage> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd { message: AgentMessage::Assistant(a) } => Some(a.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn abort_while_streaming_a_tool_call_ends_the_run_and_the_next_prompt_works() {
    let h = Harness::start(json!([
        {"text": "Ok.", "toolCalls": [{"name": "read", "arguments": {"path": "a-rather-long-file-name.txt"}}],
         "chunkSize": 2, "chunkDelayMs": 40},
        {"text": "Fresh answer."}
    ]))
    .await;
    let run = h.spawn_prompt("Read the file.");
    h.recorder
        .wait_for_count("a toolcall_delta", 1, |e| {
            matches!(e, AgentEvent::MessageUpdate { event: AssistantMessageEvent::ToolCallDelta { .. } })
        })
        .await;
    h.agent.abort();
    tokio::time::timeout(Duration::from_secs(1), run)
        .await
        .expect("the run ends within a second of the abort")
        .unwrap();

    let events = h.events();
    let names = type_names(&events);
    assert_eq!(names.last(), Some(&"agent_end"));
    assert_eq!(names.iter().filter(|t| **t == "agent_end").count(), 1);
    let replies = assistant_ends(&events);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].stop_reason, StopReason::Aborted);
    assert_eq!(replies[0].error_message.as_deref(), Some(ABORTED));
    assert_eq!(replies[0].text(), "Ok.", "keeps what streamed before the abort");
    // The half-streamed call got a synthesized result, so the history stays paired.
    assert_eq!(replies[0].tool_calls().count(), 1);
    assert_eq!(tool_outcomes(&events), [(format!("Tool execution was aborted: {ABORTED}"), true)]);
    let turn_end = names.iter().position(|t| *t == "turn_end").unwrap();
    assert_eq!(names[turn_end + 1], "agent_end");
    assert!(!h.agent.is_running());

    h.recorder.clear();
    h.prompt("Try again.").await;
    let replies = assistant_ends(&h.events());
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].stop_reason, StopReason::Stop);
    assert_eq!(replies[0].text(), "Fresh answer.");
    let messages = h.agent.messages();
    assert_calls_paired(&messages);
    // The aborted reply and its synthesized result stay in the conversation but are not sent.
    let sent = &h.requests()[1].body;
    assert!(body_mentions(&h.requests()[1], "Read the file.") && body_mentions(&h.requests()[1], "Try again."));
    assert!(!sent.to_string().contains("tool_use"), "{sent}");
    assert!(!sent.to_string().contains("tool_result"), "{sent}");
}

#[tokio::test]
async fn abort_during_a_stalled_request_ends_the_run() {
    let h = Harness::start(json!([{"text": "never seen", "delayMs": 30000}, {"text": "Second try."}])).await;
    let run = h.spawn_prompt("Hello?");
    poll_until("the request to arrive", || !h.requests().is_empty()).await;
    h.agent.abort();
    tokio::time::timeout(Duration::from_secs(1), run)
        .await
        .expect("the run ends within a second of the abort")
        .unwrap();
    let events = h.events();
    let replies = assistant_ends(&events);
    assert_eq!(replies.len(), 1);
    assert_eq!(replies[0].stop_reason, StopReason::Aborted);
    assert_eq!(replies[0].error_message.as_deref(), Some(ABORTED));
    assert_eq!(type_names(&events).last(), Some(&"agent_end"));

    h.prompt("Again.").await;
    assert_eq!(assistant_ends(&h.events()).last().unwrap().text(), "Second try.");
}

/// Aborts a run whose bash call runs `command` once `pid_file` holds a pid, and returns that
/// pid after the run ended.
async fn abort_bash(command: &str, pid_file: &str) -> (Harness, i32) {
    let h = Harness::start(json!([{"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}])).await;
    let run = h.spawn_prompt("Wait a while.");
    let pid = h.wait_for_pid(pid_file).await;
    assert!(!process_gone(pid), "the command runs before the abort");
    h.agent.abort();
    finish(run).await;
    (h, pid)
}

#[tokio::test]
async fn abort_kills_a_running_bash_command() {
    let (h, pid) = abort_bash("echo $$ > sleep.pid; exec sleep 30", "sleep.pid").await;
    assert_gone_within_1s(pid).await;
    // Our own child, reaped: not even a zombie is left.
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());

    let events = h.events();
    assert_eq!(tool_outcomes(&events), [("Command aborted".to_owned(), true)]);
    // The loop makes its one more, immediately aborted, model call without sending it.
    let replies = assistant_ends(&events);
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[1].stop_reason, StopReason::Aborted);
    assert_eq!(h.requests().len(), 1);
    assert_eq!(type_names(&events).last(), Some(&"agent_end"));
    assert_calls_paired(&h.agent.messages());
}

#[tokio::test]
async fn abort_kills_the_commands_background_children_too() {
    let (_h, pid) = abort_bash("sleep 30 & echo $! > bg.pid; wait", "bg.pid").await;
    assert_gone_within_1s(pid).await;
}

/// A steering message queued before an abort is not consumed by the aborted run: the next run
/// delivers it (docs/protocol.md, "Queues").
#[tokio::test]
async fn abort_leaves_queued_steering_for_the_next_run() {
    let h = Harness::start(json!([
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo $$ > sleep.pid; exec sleep 30"}}]},
        {"text": "Steered."}
    ]))
    .await;
    h.agent.set_interrupt_mode(rho_types::InterruptMode::Wait);
    let run = h.spawn_prompt("Wait a while.");
    h.wait_for_pid("sleep.pid").await;
    h.steer("Change of plan.");
    h.agent.abort();
    finish(run).await;
    assert_eq!(user_texts(&h.events()), ["Wait a while."]);
    assert_eq!(h.agent.queued_count(), 1);

    h.recorder.clear();
    h.prompt("Go on.").await;
    assert_eq!(user_texts(&h.events()), ["Go on.", "Change of plan."]);
    assert!(body_mentions(&h.requests()[1], "Change of plan."));
}
