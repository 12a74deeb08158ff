//! Todo reminders: when a run stops with the list unfinished, the session emits
//! `todo_reminder` and appends a hidden developer message telling the model to carry on, then
//! continues the run.
//!
//! [`TodoReminders`] holds the attempt counter and decides, after `agent_end`, whether to remind
//! (the reference's rules: the last assistant message made no tool calls and did not end in
//! `error`/`aborted`, `todo.enabled` and `todo.reminders` are on, the turn was not driven by a
//! tool choice the user forced, tasks are open, and fewer than `todo.reminders.max` reminders
//! were sent since the counter last reset). The session resets the counter on every user
//! prompt and on `new_session`; it resets itself when nothing is open.

use rho_rpc::{TodoPhase, TodoReminderItem, TodoStatus};
use rho_types::AgentMessage;
use rho_types::types::{
    AssistantContent, AssistantMessage, Attribution, StopReason, UserContent, UserMessage, UserMessageContent,
};

use crate::config::settings::TodoSettings;

/// The open (pending or in-progress) tasks in phase order, as `todo_reminder.todos` lists them.
pub fn open_tasks(phases: &[TodoPhase]) -> Vec<TodoReminderItem> {
    phases
        .iter()
        .flat_map(|p| &p.tasks)
        .filter(|t| t.status.is_open())
        .map(|t| TodoReminderItem { id: t.id.clone(), content: t.content.clone(), status: t.status })
        .collect()
}

/// The hidden reminder the model is sent: the open tasks by phase and the attempt counter,
/// wrapped in `<system-reminder>` tags.
pub fn reminder_text(phases: &[TodoPhase], attempt: u32, max_attempts: u32) -> String {
    let open = open_tasks(phases).len();
    let mut text = String::from("<system-reminder>\n");
    let noun = if open == 1 { "task" } else { "tasks" };
    text.push_str(&format!("You stopped, but your todo list still has {open} open {noun}:\n"));
    for phase in phases {
        let tasks: Vec<_> = phase.tasks.iter().filter(|t| t.status.is_open()).collect();
        if tasks.is_empty() {
            continue;
        }
        text.push_str(&format!("\n{}:\n", phase.name));
        for task in tasks {
            let state = if task.status == TodoStatus::InProgress { "in progress" } else { "pending" };
            text.push_str(&format!("- {} {} ({state})\n", task.id, task.content));
        }
    }
    text.push_str(
        "\nKeep working on these tasks. If one is already finished or no longer needed, record that with \
         todo_write (completed or abandoned) rather than leaving it open.\n",
    );
    text.push_str(&format!("(Reminder {attempt}/{max_attempts})\n</system-reminder>"));
    text
}

/// The reminder as the hidden developer message the session appends before continuing.
pub fn reminder_message(text: String, timestamp: i64) -> AgentMessage {
    AgentMessage::Developer(UserMessage {
        content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
        synthetic: Some(true),
        attribution: Some(Attribution::Agent),
        timestamp,
    })
}

/// A reminder to send: the `todo_reminder` event's fields and the message text.
#[derive(Debug, Clone, PartialEq)]
pub struct Reminder {
    pub todos: Vec<TodoReminderItem>,
    pub attempt: u32,
    pub max_attempts: u32,
    pub text: String,
}

/// What the session knows when a run has ended.
#[derive(Debug, Clone, Copy)]
pub struct RunEnd<'a> {
    /// The run's last assistant message, if it produced one.
    pub last_assistant: Option<&'a AssistantMessage>,
    /// The last turn's tool choice was forced by the user (not by rho's own eager prelude).
    pub user_forced_tool_choice: bool,
}

/// The reminder attempt counter of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TodoReminders {
    attempt: u32,
}

impl TodoReminders {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reminders sent since the last reset.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// A new user prompt, `new_session`, or nothing left open.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    /// Decides after `agent_end` whether to remind; counts the attempt when it does.
    pub fn check(&mut self, settings: &TodoSettings, run: RunEnd<'_>, phases: &[TodoPhase]) -> Option<Reminder> {
        let last = run.last_assistant?;
        if matches!(last.stop_reason, StopReason::Error | StopReason::Aborted)
            || last.content.iter().any(|c| matches!(c, AssistantContent::ToolCall(_)))
        {
            return None;
        }
        if !settings.enabled || !settings.reminders || run.user_forced_tool_choice {
            return None;
        }
        let todos = open_tasks(phases);
        if todos.is_empty() {
            self.reset();
            return None;
        }
        let max_attempts = u32::try_from(settings.reminders_max).unwrap_or(u32::MAX);
        if self.attempt >= max_attempts {
            return None;
        }
        self.attempt += 1;
        let text = reminder_text(phases, self.attempt, max_attempts);
        Some(Reminder { todos, attempt: self.attempt, max_attempts, text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_rpc::TodoItem;
    use rho_types::types::{TextContent, ToolCall};

    fn item(id: &str, content: &str, status: TodoStatus) -> TodoItem {
        TodoItem { id: id.into(), content: content.into(), status, notes: Some("not listed".into()) }
    }

    fn phases() -> Vec<TodoPhase> {
        vec![
            TodoPhase {
                id: "phase-1".into(),
                name: "Done".into(),
                tasks: vec![item("task-1", "a", TodoStatus::Completed)],
            },
            TodoPhase {
                id: "phase-2".into(),
                name: "Build".into(),
                tasks: vec![
                    item("task-2", "Compile", TodoStatus::InProgress),
                    item("task-3", "Old", TodoStatus::Abandoned),
                    item("task-4", "Test", TodoStatus::Pending),
                ],
            },
        ]
    }

    fn settings() -> TodoSettings {
        TodoSettings {
            enabled: true,
            reminders: true,
            reminders_max: 3,
            eager: true,
            completion_enabled: false,
            completion_max_reminders: 3,
            clear_delay_secs: 60,
        }
    }

    fn assistant(stop: StopReason, tool_call: bool) -> AssistantMessage {
        let mut m = AssistantMessage::empty("api", "p", "m");
        m.stop_reason = stop;
        m.content.push(AssistantContent::Text(TextContent::new("done for now")));
        if tool_call {
            m.content.push(AssistantContent::ToolCall(ToolCall {
                id: "t".into(),
                name: "read".into(),
                arguments: Default::default(),
                thought_signature: None,
                intent: None,
            }));
        }
        m
    }

    #[test]
    fn open_tasks_in_phase_order_without_notes() {
        let open = open_tasks(&phases());
        assert_eq!(
            serde_json::to_value(open).unwrap(),
            serde_json::json!([
                {"id":"task-2","content":"Compile","status":"in_progress"},
                {"id":"task-4","content":"Test","status":"pending"}
            ])
        );
    }

    #[test]
    fn reminder_text_lists_open_tasks_by_phase() {
        assert_eq!(
            reminder_text(&phases(), 2, 3),
            "<system-reminder>\n\
             You stopped, but your todo list still has 2 open tasks:\n\
             \n\
             Build:\n\
             - task-2 Compile (in progress)\n\
             - task-4 Test (pending)\n\
             \n\
             Keep working on these tasks. If one is already finished or no longer needed, record that with \
             todo_write (completed or abandoned) rather than leaving it open.\n\
             (Reminder 2/3)\n\
             </system-reminder>"
        );
        let AgentMessage::Developer(m) = reminder_message("x".into(), 5) else { panic!() };
        assert_eq!((m.content.text_joined(""), m.timestamp), ("x".to_owned(), 5));
    }

    #[test]
    fn counts_up_to_the_maximum_then_stops() {
        let mut r = TodoReminders::new();
        let last = assistant(StopReason::Stop, false);
        let run = RunEnd { last_assistant: Some(&last), user_forced_tool_choice: false };
        for n in 1..=3 {
            let reminder = r.check(&settings(), run, &phases()).unwrap();
            assert_eq!((reminder.attempt, reminder.max_attempts, reminder.todos.len()), (n, 3, 2));
            assert!(reminder.text.contains(&format!("(Reminder {n}/3)")));
        }
        assert_eq!(r.check(&settings(), run, &phases()), None);
        r.reset();
        assert_eq!(r.check(&settings(), run, &phases()).unwrap().attempt, 1);
    }

    #[test]
    fn no_reminder_when_the_run_did_not_just_stop() {
        let mut r = TodoReminders::new();
        for (last, forced) in [
            (assistant(StopReason::Stop, true), false),
            (assistant(StopReason::Error, false), false),
            (assistant(StopReason::Aborted, false), false),
            (assistant(StopReason::Stop, false), true),
        ] {
            let run = RunEnd { last_assistant: Some(&last), user_forced_tool_choice: forced };
            assert_eq!(r.check(&settings(), run, &phases()), None);
        }
        assert_eq!(
            r.check(&settings(), RunEnd { last_assistant: None, user_forced_tool_choice: false }, &phases()),
            None
        );
        let last = assistant(StopReason::Length, false);
        let run = RunEnd { last_assistant: Some(&last), user_forced_tool_choice: false };
        assert!(r.check(&settings(), run, &phases()).is_some());
    }

    #[test]
    fn settings_and_an_empty_list_turn_it_off() {
        let mut r = TodoReminders::new();
        let last = assistant(StopReason::Stop, false);
        let run = RunEnd { last_assistant: Some(&last), user_forced_tool_choice: false };
        assert_eq!(r.check(&TodoSettings { enabled: false, ..settings() }, run, &phases()), None);
        assert_eq!(r.check(&TodoSettings { reminders: false, ..settings() }, run, &phases()), None);
        assert!(r.check(&settings(), run, &phases()).is_some());
        assert_eq!(r.check(&settings(), run, &[]), None);
        assert_eq!(r.attempt(), 0, "nothing open resets the counter");
    }
}
