use parking_lot::Mutex;
use std::sync::Arc;

use rho_rpc::{BudgetStatus, BudgetViolationReason, SessionEvent};
use rho_types::types::{Cost, Usage};

use super::BudgetTracker;
use crate::agent_session::AgentSessionEvent;
use crate::config::settings::BudgetSettings;

fn tracker(limits: BudgetSettings) -> (Arc<BudgetTracker>, Arc<Mutex<Vec<SessionEvent>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink_seen = seen.clone();
    let sink = Arc::new(move |event: AgentSessionEvent| {
        if let AgentSessionEvent::Session(e) = event {
            sink_seen.lock().push(e);
        }
    });
    (BudgetTracker::new(limits, sink).unwrap(), seen)
}

fn limits() -> BudgetSettings {
    BudgetSettings { warn_at_ratio: 0.8, ..BudgetSettings::default() }
}

fn cost(total: f64) -> Usage {
    Usage { input: 10, output: 5, cost: Cost { total, ..Cost::default() }, ..Usage::default() }
}

fn kinds(events: &[SessionEvent]) -> Vec<(String, Option<BudgetViolationReason>)> {
    events
        .iter()
        .map(|e| match e {
            SessionEvent::BudgetWarning { snapshot, .. } => ("warning".to_owned(), snapshot.reason),
            SessionEvent::BudgetExceeded { snapshot, .. } => ("exceeded".to_owned(), snapshot.reason),
            other => (other.type_name().to_owned(), None),
        })
        .collect()
}

#[test]
fn no_limit_means_no_tracker() {
    assert!(BudgetTracker::new(limits(), crate::agent_session::discard()).is_none());
}

#[test]
fn cost_warns_once_then_exceeds_once() {
    let (t, seen) = tracker(BudgetSettings { max_cost_usd: Some(1.0), ..limits() });
    t.record_usage(&cost(0.5));
    assert!(seen.lock().is_empty());
    t.record_usage(&cost(0.35));
    t.record_usage(&cost(0.1));
    assert_eq!(t.exceeded(), None);
    t.record_usage(&cost(0.1));
    t.record_usage(&cost(0.1));
    let events = seen.lock().clone();
    let c = Some(BudgetViolationReason::Cost);
    assert_eq!(kinds(&events), vec![("warning".into(), c), ("exceeded".into(), c)]);
    assert_eq!(t.exceeded(), c);
    let SessionEvent::BudgetExceeded { snapshot, .. } = &events[1] else { unreachable!() };
    assert_eq!(snapshot.status, BudgetStatus::Exceeded);
    assert_eq!(snapshot.input_tokens, 40);
    assert_eq!(snapshot.total_tokens, 60);
    assert_eq!(t.snapshot().status, BudgetStatus::Exceeded);
}

#[test]
fn a_jump_past_the_limit_warns_and_exceeds_together() {
    let (t, seen) = tracker(BudgetSettings { max_tool_calls: Some(0), max_input_tokens: Some(1000), ..limits() });
    t.record_usage(&Usage { input: 900, ..Usage::default() });
    t.record_tool_call();
    let r = |d| Some(d);
    assert_eq!(
        kinds(&seen.lock()),
        vec![
            ("warning".into(), r(BudgetViolationReason::InputTokens)),
            ("warning".into(), r(BudgetViolationReason::ToolCalls)),
            ("exceeded".into(), r(BudgetViolationReason::ToolCalls)),
        ]
    );
}

#[test]
fn subagent_spawns_past_the_limit_are_refused() {
    let (t, seen) = tracker(BudgetSettings { max_subagents: Some(2), ..limits() });
    assert_eq!(t.try_spawn_subagent(), Ok(()));
    assert_eq!(t.try_spawn_subagent(), Ok(()));
    assert_eq!(t.try_spawn_subagent(), Err(BudgetViolationReason::Subagents));
    assert_eq!(t.try_spawn_subagent(), Err(BudgetViolationReason::Subagents));
    assert_eq!(t.snapshot().subagents, 2);
    let s = Some(BudgetViolationReason::Subagents);
    assert_eq!(kinds(&seen.lock()), vec![("warning".into(), s), ("exceeded".into(), s)]);
}

#[test]
fn wall_time_is_measured_from_the_first_start() {
    let (t, _) = tracker(BudgetSettings { max_wall_time_ms: Some(0), ..limits() });
    assert_eq!(t.exceeded(), None, "the clock has not started");
    t.start_clock();
    std::thread::sleep(std::time::Duration::from_millis(2));
    assert_eq!(t.exceeded(), Some(BudgetViolationReason::WallTime));
}
