//! Steering while tools run (docs/protocol.md, "Interrupt modes"). In `immediate` mode a steering
//! message queued while the first call runs interrupts the batch when that call finishes: the calls
//! still running are killed and reported as skipped, and the message opens the next turn. In `wait`
//! mode the whole batch completes and the message is delivered after `turn_end`.

use pretty_assertions::assert_eq;
use rho_agent::{AgentEvent, SKIPPED};
use rho_types::{AgentMessage, InterruptMode};
use serde_json::json;

use crate::common::*;

const STEER: &str = "Stop that and list the files instead.";

/// A script whose first reply makes three bash calls: the first waits for the file `go`, the
/// other two run `others`.
fn batch_script(others: &str) -> serde_json::Value {
    let first = format!("{}; echo first", wait_for_file("go"));
    json!([
        {"toolCalls": [
            {"name": "bash", "arguments": {"command": first, "timeout": 10}},
            {"name": "bash", "arguments": {"command": others.replace("N", "2"), "timeout": 10}},
            {"name": "bash", "arguments": {"command": others.replace("N", "3"), "timeout": 10}}
        ]},
        {"text": "Changing course."}
    ])
}

/// Runs the batch, steering while the first call runs (once the other two wrote `pid_files`),
/// and returns the harness after the run with the pids read.
async fn steer_during_batch(mode: InterruptMode, others: &str, pid_files: &[&str]) -> (Harness, Vec<i32>) {
    let h = Harness::start(batch_script(others)).await;
    h.agent.set_interrupt_mode(mode);
    let run = h.spawn_prompt("Do the slow thing.");
    h.wait_for_tool_starts(3).await;
    let mut pids = Vec::new();
    for file in pid_files {
        pids.push(h.wait_for_pid(file).await);
    }
    h.steer(STEER);
    h.write("go", "");
    finish(run).await;
    (h, pids)
}

/// The run's events without the queue's own (they come whenever the queue changes).
fn without_queue_updates(events: Vec<AgentEvent>) -> Vec<AgentEvent> {
    events.into_iter().filter(|e| !matches!(e, AgentEvent::QueueUpdate { .. })).collect()
}

#[tokio::test]
async fn immediate_mode_skips_the_remaining_calls_and_steers_the_next_turn() {
    let (h, pids) =
        steer_during_batch(InterruptMode::Immediate, "echo $$ > N.pid; exec sleep 30", &["2.pid", "3.pid"]).await;
    // The interrupted calls' processes were killed, not left to run out their 30 s.
    for pid in pids {
        assert_gone_within_1s(pid).await;
    }

    let events = without_queue_updates(h.events());
    assert_eq!(ended_tool_ids(&events), called_tool_ids(&events));
    assert_eq!(
        tool_outcomes(&events),
        [("first\n".to_owned(), false), (SKIPPED.to_owned(), true), (SKIPPED.to_owned(), true)]
    );

    // The batch's turn ends, then a new turn opens with the steering message, then the model.
    let names = type_names(&events);
    let turn_end = names.iter().position(|t| *t == "turn_end").unwrap();
    assert_eq!(names[turn_end + 1], "turn_start");
    let AgentEvent::MessageStart { message: AgentMessage::User(steer) } = &events[turn_end + 2] else {
        panic!("the steering message opens the turn: {:?}", &names[turn_end..]);
    };
    assert_eq!(steer.text(), STEER);
    assert_eq!(names[turn_end + 3], "message_end");
    assert_eq!(names[turn_end + 4], "message_start");
    assert_eq!(names.last(), Some(&"agent_end"));
    assert_eq!(user_texts(&events), ["Do the slow thing.", STEER]);

    // The model saw the skipped results and the steering message.
    let requests = h.requests();
    assert_eq!(requests.len(), 2);
    assert!(body_mentions(&requests[1], SKIPPED));
    assert!(body_mentions(&requests[1], STEER));
    assert_calls_paired(&h.agent.messages());
    assert_eq!(h.agent.queued_count(), 0);
}

#[tokio::test]
async fn wait_mode_completes_the_batch_then_delivers_after_turn_end() {
    let others = format!("{}; echo N", wait_for_file("go"));
    let (h, _) = steer_during_batch(InterruptMode::Wait, &others, &[]).await;

    let events = without_queue_updates(h.events());
    assert_eq!(
        tool_outcomes(&events),
        [("first\n".to_owned(), false), ("2\n".to_owned(), false), ("3\n".to_owned(), false)]
    );
    let names = type_names(&events);
    let turn_end = names.iter().position(|t| *t == "turn_end").unwrap();
    let last_tool_end = names.iter().rposition(|t| *t == "tool_execution_end").unwrap();
    assert!(last_tool_end < turn_end);
    assert_eq!(names[turn_end + 1], "turn_start");
    let AgentEvent::MessageStart { message: AgentMessage::User(steer) } = &events[turn_end + 2] else {
        panic!("the steering message opens the turn: {:?}", &names[turn_end..]);
    };
    assert_eq!(steer.text(), STEER);
    assert_eq!(user_texts(&events), ["Do the slow thing.", STEER]);

    let requests = h.requests();
    assert_eq!(requests.len(), 2);
    assert!(!body_mentions(&requests[1], SKIPPED));
    assert!(body_mentions(&requests[1], STEER));
}

/// Steering queued while the agent is idle is delivered right after the next prompt, before
/// the first model call.
#[tokio::test]
async fn steering_queued_while_idle_joins_the_next_prompt() {
    let h = Harness::start(json!([{"text": "Both noted."}])).await;
    h.steer("And keep it short.");
    h.prompt("Explain the plan.").await;
    let events = h.events();
    assert_eq!(user_texts(&events), ["Explain the plan.", "And keep it short."]);
    let names = type_names(&events);
    assert_eq!(names.iter().filter(|t| **t == "turn_start").count(), 1);
    let request = &h.requests()[0];
    assert!(body_mentions(request, "Explain the plan.") && body_mentions(request, "And keep it short."));
}

/// With steering mode "all", every queued steering message is delivered in one poll; with
/// "one-at-a-time" one per turn.
#[tokio::test]
async fn steering_modes_take_one_or_all() {
    for (mode, expected_turns) in [(rho_types::QueueMode::All, 2), (rho_types::QueueMode::OneAtATime, 3)] {
        let first = format!("{}; echo done", wait_for_file("go"));
        let h = Harness::start(json!([
            {"toolCalls": [{"name": "bash", "arguments": {"command": first, "timeout": 10}}]},
            {"text": "reply 2"},
            {"text": "reply 3"}
        ]))
        .await;
        h.agent.set_steering_mode(mode);
        let run = h.spawn_prompt("Start.");
        h.wait_for_tool_starts(1).await;
        h.steer("S1");
        h.steer("S2");
        h.write("go", "");
        finish(run).await;

        let events = h.events();
        let turns = type_names(&events).iter().filter(|t| **t == "turn_start").count();
        assert_eq!(turns, expected_turns, "{mode:?}");
        assert_eq!(user_texts(&events), ["Start.", "S1", "S2"], "{mode:?}");
        let requests = h.requests();
        assert!(body_mentions(&requests[1], "S1"), "{mode:?}");
        assert_eq!(body_mentions(&requests[1], "S2"), mode == rho_types::QueueMode::All, "{mode:?}");
        assert_eq!(h.agent.queued_count(), 0);
    }
}
