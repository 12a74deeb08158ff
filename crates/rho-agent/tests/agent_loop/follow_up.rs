//! Follow-up messages (docs/protocol.md, "Queues"): queued during a run, delivered only when the
//! agent would otherwise stop — one per stop in "one-at-a-time" mode, all at once in "all" mode —
//! and always after any steering message.

use pretty_assertions::assert_eq;
use rho_agent::AgentEvent;
use rho_types::{AgentMessage, InterruptMode, QueueMode};
use serde_json::json;

use crate::common::*;

/// A run whose first turn calls bash (waiting for the file `go`) and whose later turns answer
/// with text; `queue` runs while the bash call waits.
async fn run_with_queued(mode: QueueMode, replies: usize, queue: impl FnOnce(&Harness)) -> Harness {
    let command = format!("{}; echo ok", wait_for_file("go"));
    let mut turns = vec![json!({"toolCalls": [{"name": "bash", "arguments": {"command": command, "timeout": 10}}]})];
    turns.extend((1..=replies).map(|n| json!({"text": format!("reply {n}")})));
    let h = Harness::start(json!(turns)).await;
    h.agent.set_follow_up_mode(mode);
    let run = h.spawn_prompt("Start.");
    h.wait_for_tool_starts(1).await;
    queue(&h);
    h.write("go", "");
    finish(run).await;
    assert_eq!(h.server.remaining_turns(), 0, "every scripted reply was requested");
    h
}

/// Which user messages each turn injected, turn by turn.
fn users_per_turn(events: &[AgentEvent]) -> Vec<Vec<String>> {
    let mut turns: Vec<Vec<String>> = Vec::new();
    for event in events {
        match event {
            AgentEvent::TurnStart => turns.push(Vec::new()),
            AgentEvent::MessageEnd { message: AgentMessage::User(u) } => {
                turns.last_mut().expect("a turn is open").push(u.text());
            }
            _ => {}
        }
    }
    turns
}

#[tokio::test]
async fn one_at_a_time_delivers_one_follow_up_per_stop() {
    let h = run_with_queued(QueueMode::OneAtATime, 3, |h| {
        h.follow_up("F1");
        h.follow_up("F2");
    })
    .await;
    let events = h.events();
    // Turn 2 exists because of the tool call, not the follow-ups; they come when the agent
    // would stop, one per stop.
    assert_eq!(users_per_turn(&events), [vec!["Start."], vec![], vec!["F1"], vec!["F2"]]);
    let requests = h.requests();
    assert_eq!(requests.len(), 4);
    assert!(!body_mentions(&requests[1], "F1"));
    assert!(body_mentions(&requests[2], "F1") && !body_mentions(&requests[2], "F2"));
    assert!(body_mentions(&requests[3], "F2"));

    let Some(AgentEvent::AgentEnd { messages, .. }) = events.last() else { panic!("agent_end last") };
    let roles: Vec<&str> = messages.iter().map(AgentMessage::role).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "toolResult", "assistant", "user", "assistant", "user", "assistant"],
        "agent_end carries the follow-ups too"
    );
    assert_eq!(h.agent.queued_count(), 0);
}

#[tokio::test]
async fn all_delivers_every_follow_up_at_the_first_stop() {
    let h = run_with_queued(QueueMode::All, 2, |h| {
        h.follow_up("F1");
        h.follow_up("F2");
    })
    .await;
    assert_eq!(users_per_turn(&h.events()), [vec!["Start."], vec![], vec!["F1", "F2"]]);
    let requests = h.requests();
    assert_eq!(requests.len(), 3);
    assert!(body_mentions(&requests[2], "F1") && body_mentions(&requests[2], "F2"));
}

/// A steering message and a follow-up queued together: the steering message goes first, at
/// the next turn; the follow-up waits until the agent would stop.
#[tokio::test]
async fn steering_is_delivered_before_follow_ups() {
    let h = run_with_queued(QueueMode::OneAtATime, 2, |h| {
        h.agent.set_interrupt_mode(InterruptMode::Wait);
        h.follow_up("later");
        h.steer("now");
    })
    .await;
    assert_eq!(users_per_turn(&h.events()), [vec!["Start."], vec!["now"], vec!["later"]]);
}

/// The queue events report each change of the queues.
#[tokio::test]
async fn queue_updates_follow_the_queues() {
    let h = run_with_queued(QueueMode::All, 2, |h| {
        h.follow_up("F1");
        h.follow_up("F2");
    })
    .await;
    let updates: Vec<Vec<String>> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::QueueUpdate { steering, follow_up } => {
                assert!(steering.is_empty());
                Some(follow_up)
            }
            _ => None,
        })
        .collect();
    assert_eq!(updates, [vec!["F1".to_owned()], vec!["F1".to_owned(), "F2".to_owned()], vec![]]);
}
