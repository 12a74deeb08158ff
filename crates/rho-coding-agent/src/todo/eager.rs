//! The eager todo prelude: on the first user prompt of a conversation, a hidden message asks
//! the model to plan with `todo_write` first, and that first model call is forced to call the
//! tool.
//!
//! [`wants_eager_prelude`] is the decision (the reference's conditions); the session places
//! [`eager_prelude_message`] before the user message (it is emitted as `message_start` /
//! `message_end` like any other message) and sets the tool choice of the first call to
//! `todo_write`.

use rho_types::types::{Attribution, UserMessageContent};
use rho_types::{AgentMessage, CustomMessage};

use crate::config::settings::TodoSettings;

/// `customType` of the prelude message.
pub const EAGER_PRELUDE_CUSTOM_TYPE: &str = "eager-todo-prelude";

/// What the session knows when a prompt arrives.
#[derive(Debug, Clone, Copy)]
pub struct PreludeCheck<'a> {
    pub settings: &'a TodoSettings,
    /// The conversation has no user message yet.
    pub first_prompt: bool,
    /// The todo list is not empty (e.g. seeded with `set_todos`).
    pub has_todos: bool,
    pub plan_mode: bool,
    /// `todo_write` is among the active tools.
    pub todo_write_available: bool,
    /// The model accepts a forced (named) tool choice.
    pub forced_tool_choice_supported: bool,
    /// The prompt's text.
    pub prompt: &'a str,
}

/// Whether this prompt gets the prelude. Questions and exclamations (a prompt ending in `?` or
/// `!`) do not: they rarely need a plan.
pub fn wants_eager_prelude(check: &PreludeCheck<'_>) -> bool {
    let prompt = check.prompt.trim_end();
    check.settings.enabled
        && check.settings.eager
        && check.first_prompt
        && !check.has_todos
        && !check.plan_mode
        && check.todo_write_available
        && check.forced_tool_choice_supported
        && !prompt.is_empty()
        && !prompt.ends_with(['?', '!'])
}

/// The prelude's text.
pub const EAGER_PRELUDE_TEXT: &str = "<system-reminder>\n\
Before you start on the request below, lay out the work with the todo_write tool: one replace op \
with the phases and tasks you expect, the first task in progress. Keep tasks concrete and small. \
Then continue with the first task, and keep the list current as you go.\n\
</system-reminder>";

/// The hidden custom message placed before the first user message.
pub fn eager_prelude_message(timestamp: i64) -> AgentMessage {
    AgentMessage::Custom(CustomMessage {
        custom_type: EAGER_PRELUDE_CUSTOM_TYPE.to_owned(),
        content: UserMessageContent::Text(EAGER_PRELUDE_TEXT.into()),
        display: false,
        details: None,
        attribution: Some(Attribution::Agent),
        timestamp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn check<'a>(settings: &'a TodoSettings, prompt: &'a str) -> PreludeCheck<'a> {
        PreludeCheck {
            settings,
            first_prompt: true,
            has_todos: false,
            plan_mode: false,
            todo_write_available: true,
            forced_tool_choice_supported: true,
            prompt,
        }
    }

    #[test]
    fn the_first_plain_prompt_gets_it() {
        let s = settings();
        assert!(wants_eager_prelude(&check(&s, "Add a dark mode toggle and run the tests")));
        assert!(wants_eager_prelude(&check(&s, "Refactor the parser.  \n")));
    }

    #[test]
    fn each_condition_turns_it_off() {
        let s = settings();
        assert!(!wants_eager_prelude(&check(&s, "What does this do?")));
        assert!(!wants_eager_prelude(&check(&s, "Go!  ")));
        assert!(!wants_eager_prelude(&check(&s, "   ")));
        assert!(!wants_eager_prelude(&PreludeCheck { first_prompt: false, ..check(&s, "x") }));
        assert!(!wants_eager_prelude(&PreludeCheck { has_todos: true, ..check(&s, "x") }));
        assert!(!wants_eager_prelude(&PreludeCheck { plan_mode: true, ..check(&s, "x") }));
        assert!(!wants_eager_prelude(&PreludeCheck { todo_write_available: false, ..check(&s, "x") }));
        assert!(!wants_eager_prelude(&PreludeCheck { forced_tool_choice_supported: false, ..check(&s, "x") }));
        let off = TodoSettings { eager: false, ..settings() };
        assert!(!wants_eager_prelude(&check(&off, "x")));
        let disabled = TodoSettings { enabled: false, ..settings() };
        assert!(!wants_eager_prelude(&check(&disabled, "x")));
    }

    #[test]
    fn the_message_is_hidden_and_attributed_to_the_agent() {
        let AgentMessage::Custom(m) = eager_prelude_message(7) else { panic!() };
        assert_eq!(m.custom_type, "eager-todo-prelude");
        assert!(!m.display);
        assert_eq!(m.attribution, Some(Attribution::Agent));
        assert!(m.content.text_joined("").contains("todo_write"));
    }
}
