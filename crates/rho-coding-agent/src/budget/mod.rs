//! The session budget (`task.budget.*`; docs/protocol.md, "Budgets"): cumulative wall time, tokens,
//! cost, tool calls and sub-agent spawns measured against the configured hard limits.
//!
//! The tracker exists only when at least one limit is set. It is fed by the session (each
//! finished assistant message's usage, each dispatched tool call, the clock's start at the first
//! `agent_start`) and by the task tool (each sub-agent spawn and the sub-agents' usage as it
//! streams in). It emits `budget_warning` once per dimension when that dimension reaches
//! `warnAtRatio` × its limit, and `budget_exceeded` once, when any dimension passes its limit;
//! from then on [`BudgetTracker::exceeded`] answers the dimension, which the session uses to
//! refuse prompts and the task tool to refuse spawns.
//!
//! A dimension is exceeded when its value is *above* the limit (spending exactly the limit is
//! allowed), except sub-agents: a spawn that would make the count pass the limit is refused and
//! is what exceeds the budget. Events are emitted after the tracker's lock is released.

use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;
use std::time::Instant;

use rho_rpc::{BudgetScope, BudgetSnapshot, BudgetStatus, BudgetViolationReason, SessionEvent};
use rho_types::types::Usage;

use crate::agent_session::SessionEventSink;
use crate::config::settings::BudgetSettings;

/// Every dimension, in the order they are checked (and reported when several pass at once).
pub const DIMENSIONS: [BudgetViolationReason; 7] = [
    BudgetViolationReason::WallTime,
    BudgetViolationReason::InputTokens,
    BudgetViolationReason::OutputTokens,
    BudgetViolationReason::TotalTokens,
    BudgetViolationReason::Cost,
    BudgetViolationReason::ToolCalls,
    BudgetViolationReason::Subagents,
];

/// The running totals.
#[derive(Debug, Default)]
struct State {
    started: Option<Instant>,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
    cost_usd: f64,
    tool_calls: u64,
    subagents: u64,
    /// Dimensions whose warning went out.
    warned: Vec<BudgetViolationReason>,
    /// The dimension that exceeded the budget, once one did.
    exceeded: Option<BudgetViolationReason>,
}

impl State {
    fn wall_time_ms(&self) -> u64 {
        self.started.map_or(0, |t| u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    fn value(&self, dimension: BudgetViolationReason) -> f64 {
        match dimension {
            BudgetViolationReason::WallTime => self.wall_time_ms() as f64,
            BudgetViolationReason::InputTokens => self.input_tokens as f64,
            BudgetViolationReason::OutputTokens => self.output_tokens as f64,
            BudgetViolationReason::TotalTokens => self.total_tokens as f64,
            BudgetViolationReason::Cost => self.cost_usd,
            BudgetViolationReason::ToolCalls => self.tool_calls as f64,
            BudgetViolationReason::Subagents => self.subagents as f64,
        }
    }

    fn snapshot(&self, status: BudgetStatus, reason: Option<BudgetViolationReason>) -> BudgetSnapshot {
        BudgetSnapshot {
            status,
            wall_time_ms: self.wall_time_ms(),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            total_tokens: self.total_tokens,
            cost_usd: self.cost_usd,
            tool_calls: self.tool_calls,
            subagents: self.subagents,
            reason,
        }
    }

    fn status(&self) -> BudgetStatus {
        if self.exceeded.is_some() {
            BudgetStatus::Exceeded
        } else if self.warned.is_empty() {
            BudgetStatus::Ok
        } else {
            BudgetStatus::Warning
        }
    }
}

/// The session's budget controller. Shared (`Arc`) by the session and the task tool.
pub struct BudgetTracker {
    limits: BudgetSettings,
    scope: BudgetScope,
    sink: Arc<dyn SessionEventSink>,
    state: Mutex<State>,
}

impl std::fmt::Debug for BudgetTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BudgetTracker").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl BudgetTracker {
    /// A tracker for `limits` reporting to `sink`; `None` when no limit is set.
    pub fn new(limits: BudgetSettings, sink: Arc<dyn SessionEventSink>) -> Option<Arc<Self>> {
        limits
            .any_limit()
            .then(|| Arc::new(Self { limits, scope: BudgetScope::Session, sink, state: Mutex::new(State::default()) }))
    }

    /// Starts the wall clock (the first `agent_start`; later calls change nothing).
    pub fn start_clock(&self) {
        let events = {
            let mut state = self.lock();
            state.started.get_or_insert_with(Instant::now);
            self.evaluate(&mut state)
        };
        self.emit(events);
    }

    /// Adds one finished assistant message's usage (the session's own or a sub-agent's).
    pub fn record_usage(&self, usage: &Usage) {
        let events = {
            let mut state = self.lock();
            state.input_tokens += usage.input;
            state.output_tokens += usage.output;
            state.total_tokens += usage.context_tokens();
            state.cost_usd += usage.cost.total;
            self.evaluate(&mut state)
        };
        self.emit(events);
    }

    /// Counts one dispatched tool call.
    pub fn record_tool_call(&self) {
        let events = {
            let mut state = self.lock();
            state.tool_calls += 1;
            self.evaluate(&mut state)
        };
        self.emit(events);
    }

    /// Counts a sub-agent about to be spawned, or refuses it: when the budget is already
    /// exceeded, or when this spawn would pass `maxSubagents` (which then exceeds the budget).
    pub fn try_spawn_subagent(&self) -> Result<(), BudgetViolationReason> {
        let (result, events) = {
            let mut state = self.lock();
            let mut events = self.evaluate(&mut state);
            if let Some(reason) = state.exceeded {
                (Err(reason), events)
            } else if self.limits.max_subagents.is_some_and(|max| state.subagents >= max) {
                let reason = BudgetViolationReason::Subagents;
                state.exceeded = Some(reason);
                events.push(SessionEvent::BudgetExceeded {
                    scope: self.scope,
                    snapshot: state.snapshot(BudgetStatus::Exceeded, Some(reason)),
                });
                (Err(reason), events)
            } else {
                state.subagents += 1;
                events.extend(self.evaluate(&mut state));
                (Ok(()), events)
            }
        };
        self.emit(events);
        result
    }

    /// The dimension that exceeded the budget, if one has (the wall clock is checked now).
    pub fn exceeded(&self) -> Option<BudgetViolationReason> {
        let (exceeded, events) = {
            let mut state = self.lock();
            let events = self.evaluate(&mut state);
            (state.exceeded, events)
        };
        self.emit(events);
        exceeded
    }

    /// The limits it measures against.
    pub fn limits(&self) -> &BudgetSettings {
        &self.limits
    }

    /// The totals as they stand.
    pub fn snapshot(&self) -> BudgetSnapshot {
        let state = self.lock();
        state.snapshot(state.status(), state.exceeded)
    }

    fn limit(&self, dimension: BudgetViolationReason) -> Option<f64> {
        let l = &self.limits;
        match dimension {
            BudgetViolationReason::WallTime => l.max_wall_time_ms.map(|v| v as f64),
            BudgetViolationReason::InputTokens => l.max_input_tokens.map(|v| v as f64),
            BudgetViolationReason::OutputTokens => l.max_output_tokens.map(|v| v as f64),
            BudgetViolationReason::TotalTokens => l.max_total_tokens.map(|v| v as f64),
            BudgetViolationReason::Cost => l.max_cost_usd,
            BudgetViolationReason::ToolCalls => l.max_tool_calls.map(|v| v as f64),
            // Spawns are refused before they pass the limit (try_spawn_subagent); only the
            // warning is evaluated here.
            BudgetViolationReason::Subagents => l.max_subagents.map(|v| v as f64),
        }
    }

    /// The events the current totals call for, recording that they went out.
    fn evaluate(&self, state: &mut State) -> Vec<SessionEvent> {
        let mut events = Vec::new();
        if state.exceeded.is_some() {
            return events;
        }
        for dimension in DIMENSIONS {
            let Some(limit) = self.limit(dimension) else {
                continue;
            };
            let value = state.value(dimension);
            if value > 0.0 && value >= self.limits.warn_at_ratio * limit && !state.warned.contains(&dimension) {
                state.warned.push(dimension);
                events.push(SessionEvent::BudgetWarning {
                    scope: self.scope,
                    snapshot: state.snapshot(BudgetStatus::Warning, Some(dimension)),
                });
            }
            if dimension != BudgetViolationReason::Subagents && value > limit {
                state.exceeded = Some(dimension);
                events.push(SessionEvent::BudgetExceeded {
                    scope: self.scope,
                    snapshot: state.snapshot(BudgetStatus::Exceeded, Some(dimension)),
                });
                break;
            }
        }
        events
    }

    fn emit(&self, events: Vec<SessionEvent>) {
        for event in events {
            self.sink.emit(event.into());
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }
}

#[cfg(test)]
mod tests;
