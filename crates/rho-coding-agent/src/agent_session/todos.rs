//! The session's todo list: the state `todo_write`, `set_todos` and `get_state` share, restored
//! from the branch when a session is loaded or branched, the reminder sent when a run would stop
//! with tasks open (`todo_reminder`, then a hidden message and another turn of the same run), and the
//! auto-clear of finished tasks (`todo_auto_clear`).

use rho_rpc::{SessionEvent, TodoPhase};
use rho_session::entry_message;
use rho_types::AgentMessage;
use rho_types::types::now_ms;

use super::AgentSession;
use crate::todo::{AutoClear, ClearDelay, RunEnd, normalize_set_todos, reminder_message};

impl AgentSession {
    /// The session's todo phases, as `get_state` reports them.
    pub fn todo_phases(&self) -> Vec<TodoPhase> {
        self.inner.todos.phases()
    }

    /// `set_todos`: replaces the list with the normalized phases and returns them; a malformed
    /// list is refused with the reason and changes nothing.
    pub(crate) fn set_todos(&self, phases: &serde_json::Value) -> Result<Vec<TodoPhase>, String> {
        let phases = normalize_set_todos(phases)?;
        self.inner.todos.set_phases(phases.clone());
        Ok(phases)
    }

    /// The list as the branch's latest `todo_write` left it (finished tasks dropped).
    pub(crate) fn restore_todos(&self) {
        let messages: Vec<AgentMessage> =
            self.session().branch_entries().into_iter().filter_map(entry_message).collect();
        self.inner.todos.restore_from_messages(&messages);
    }

    /// Starts the auto-clear of finished tasks (`tasks.todoClearDelay`).
    pub(crate) fn start_todo_auto_clear(&self) {
        let delay = ClearDelay::from_secs(self.settings().todo().clear_delay_secs);
        let sink = self.inner.sink.clone();
        let started = AutoClear::start(self.inner.todos.clone(), delay, move |removed| {
            for _ in 0..removed {
                sink.emit(SessionEvent::TodoAutoClear.into());
            }
        });
        *self.inner.todo_auto_clear.lock() = started.ok().flatten();
    }

    /// When a run would end: reminds the model of open tasks when it stopped with some (at most
    /// `todo.reminders.max` times per user prompt). True when a reminder was added and the run
    /// should take another turn. A model that is not offered `todo_write` is not reminded: it
    /// could not mark a task done (a host's `set_todos` list is then the host's to keep).
    pub(crate) fn remind_of_open_todos(&self) -> bool {
        if !self.inner.agent.tools().iter().any(|tool| tool.name() == "todo_write") {
            return false;
        }
        let settings = self.settings().todo();
        let last = self.last_assistant();
        let phases = self.inner.todos.phases();
        let reminder = self.inner.todo_reminders.lock().check(
            &settings,
            RunEnd { last_assistant: last.as_ref(), user_forced_tool_choice: false },
            &phases,
        );
        let Some(reminder) = reminder else {
            return false;
        };
        self.emit(SessionEvent::TodoReminder {
            todos: reminder.todos,
            attempt: reminder.attempt,
            max_attempts: reminder.max_attempts,
        });
        let message = reminder_message(reminder.text, now_ms());
        self.record(message);
        true
    }
}
