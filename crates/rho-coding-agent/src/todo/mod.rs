//! The session's todo list: its shared state ([`TodoStore`]), the `todo_write` tool, the RPC
//! `set_todos` normalization, restoring the list from a branch, reminders when a run stops
//! with work open, auto-clear of finished tasks, and the eager planning prelude.
//!
//! How the session uses it:
//! - owns one [`TodoStore`], hands a clone to [`TodoWriteTool::new`] and answers `get_state`
//!   with [`TodoStore::phases`];
//! - `set_todos`: [`normalize_set_todos`] then [`TodoStore::set_phases`] (an `Err` is the
//!   command's error, the list unchanged); `new_session`: [`TodoStore::clear`]; session load
//!   and `branch`: [`TodoStore::restore_from_messages`] with the branch's messages;
//! - keeps an [`AutoClear`] started on the store with `tasks.todoClearDelay`, whose callback
//!   emits `todo_auto_clear` once per removed task;
//! - after `agent_end`, asks [`TodoReminders::check`]; on `Some`, emits `todo_reminder`, appends
//!   [`reminder_message`] and continues; resets the counter on each user prompt;
//! - on a prompt, [`wants_eager_prelude`] decides whether [`eager_prelude_message`] goes first
//!   and the first call is forced to `todo_write`.

mod auto_clear;
mod eager;
mod model;
mod normalize;
mod ops;
mod reminder;
mod restore;
mod store;
mod summary;
mod tool;

pub use auto_clear::{AutoClear, ClearDelay, ClearKey, NoRuntime, finished_keys, remove_cleared};
pub use eager::{
    EAGER_PRELUDE_CUSTOM_TYPE, EAGER_PRELUDE_TEXT, PreludeCheck, eager_prelude_message, wants_eager_prelude,
};
pub use model::{Phase, Task, TodoStorage, TodoWriteDetails};
pub use normalize::{FLAT_PHASE_NAME, normalize_set_todos, parse_status};
pub use ops::{InputPhase, InputTask, TodoOp, TodoWriteParams, apply_ops, normalize_in_progress};
pub use reminder::{Reminder, RunEnd, TodoReminders, open_tasks, reminder_message, reminder_text};
pub use restore::{restore_from_messages, restore_phases_from_messages};
pub use store::TodoStore;
pub use summary::{format_summary, status_name};
pub use tool::{TODO_WRITE_TOOL_NAME, TodoWriteTool, parameters_schema};
