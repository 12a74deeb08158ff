//! The session's side of the budget (`task.budget.*`): the tracker is fed from the run's events
//! (the clock starts at the first `agent_start`, every finished assistant message adds its usage,
//! every dispatched tool call counts), and a prompt is refused once the budget is exceeded.

use std::sync::Arc;

use rho_agent::AgentEvent;
use rho_types::AgentMessage;
use rho_types::types::Usage;

use super::{AgentSession, PromptRejection};
use crate::budget::BudgetTracker;

impl AgentSession {
    /// The budget controller, when at least one limit is set.
    pub fn budget(&self) -> Option<&Arc<BudgetTracker>> {
        self.inner.budget.as_ref()
    }

    /// `Budget exceeded: <reason>` once any limit was passed (the wall clock is checked now).
    pub(crate) fn check_budget(&self) -> Result<(), PromptRejection> {
        match self.budget().and_then(|b| b.exceeded()) {
            Some(reason) => Err(PromptRejection::BudgetExceeded { reason: reason.as_str().to_owned() }),
            None => Ok(()),
        }
    }

    /// What one of the run's events adds to the budget, taken before the event goes out.
    pub(crate) fn budget_input(&self, event: &AgentEvent) -> Option<BudgetInput> {
        self.budget()?;
        match event {
            AgentEvent::AgentStart => Some(BudgetInput::Start),
            AgentEvent::MessageEnd { message: AgentMessage::Assistant(a) } => Some(BudgetInput::Usage(a.usage)),
            AgentEvent::ToolExecutionStart { .. } => Some(BudgetInput::ToolCall),
            _ => None,
        }
    }

    /// Records it (after the event went out, so budget events follow what caused them).
    pub(crate) fn record_budget(&self, input: BudgetInput) {
        let Some(budget) = self.budget() else {
            return;
        };
        match input {
            BudgetInput::Start => budget.start_clock(),
            BudgetInput::Usage(usage) => budget.record_usage(&usage),
            BudgetInput::ToolCall => budget.record_tool_call(),
        }
    }
}

/// What a run's event adds to the budget.
pub(crate) enum BudgetInput {
    /// The first `agent_start` starts the wall clock.
    Start,
    /// A finished assistant message's usage.
    Usage(Usage),
    /// A dispatched tool call.
    ToolCall,
}
