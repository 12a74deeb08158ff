//! The session's todo list, shared between the `todo_write` tool, the RPC `set_todos` and
//! `get_state` commands, auto-clear and the session itself.
//!
//! A [`TodoStore`] is a cheap handle (`Arc` inside); clones see the same list. Every change
//! that actually alters the list bumps a revision on a `tokio::sync::watch` channel, so the
//! session (or [`super::AutoClear`]) can react — e.g. (re)schedule auto-clear timers — without
//! the writers knowing who listens. The lock is a plain `std` mutex held only to copy or swap
//! the list, never across an `.await`.

use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;

use rho_rpc::TodoPhase;
use rho_types::AgentMessage;
use tokio::sync::watch;

use super::model::{self, Phase, TodoStorage};
use super::restore::restore_phases_from_messages;

/// A shareable handle on one session's todo list.
#[derive(Clone)]
pub struct TodoStore {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    revision: watch::Sender<u64>,
}

#[derive(Default)]
struct State {
    phases: Vec<Phase>,
    storage: TodoStorage,
}

impl std::fmt::Debug for TodoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TodoStore").field("phases", &self.lock().phases).finish()
    }
}

impl Default for TodoStore {
    fn default() -> Self {
        Self::new()
    }
}

impl TodoStore {
    /// An empty list, recorded in memory.
    pub fn new() -> Self {
        let (revision, _) = watch::channel(0);
        Self { inner: Arc::new(Inner { state: Mutex::new(State::default()), revision }) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock()
    }

    /// The list as the protocol shows it (`get_state.todoPhases`, the `set_todos` response).
    pub fn phases(&self) -> Vec<TodoPhase> {
        model::to_wire(&self.lock().phases)
    }

    /// The list with each task's `details` (what `todo_write` works on).
    pub fn full_phases(&self) -> Vec<Phase> {
        self.lock().phases.clone()
    }

    /// Replaces the list with protocol phases (`set_todos`, a restore); `details` are gone.
    pub fn set_phases(&self, phases: Vec<TodoPhase>) {
        self.replace(model::from_wire(phases));
    }

    /// Replaces the list wholesale.
    pub fn replace(&self, phases: Vec<Phase>) {
        self.update(|current| *current = phases);
    }

    /// Empties the list (`new_session`, `set_todos` with `[]`).
    pub fn clear(&self) {
        self.replace(Vec::new());
    }

    /// Applies `f` to the list under the lock and notifies subscribers when the list changed.
    pub fn update<R>(&self, f: impl FnOnce(&mut Vec<Phase>) -> R) -> R {
        let (result, changed) = {
            let mut state = self.lock();
            let before = state.phases.clone();
            let result = f(&mut state.phases);
            (result, state.phases != before)
        };
        if changed {
            self.inner.revision.send_modify(|r| *r += 1);
        }
        result
    }

    /// Restores the list from a branch (session load, `branch`): the latest successful
    /// `todo_write` result's phases without finished tasks or empty phases.
    pub fn restore_from_messages(&self, messages: &[AgentMessage]) {
        self.replace(restore_phases_from_messages(messages));
    }

    /// Where the list is recorded (reported by `todo_write` in its result details).
    pub fn storage(&self) -> TodoStorage {
        self.lock().storage
    }

    /// Set by the session when it gains or loses a session file.
    pub fn set_storage(&self, storage: TodoStorage) {
        self.lock().storage = storage;
    }

    /// A receiver that wakes whenever the list changes (its value is a revision counter).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.revision.subscribe()
    }

    /// How many changes the list has seen.
    pub fn revision(&self) -> u64 {
        *self.inner.revision.borrow()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_rpc::{TodoItem, TodoStatus};

    fn wire(status: TodoStatus) -> Vec<TodoPhase> {
        vec![TodoPhase {
            id: "phase-1".into(),
            name: "P".into(),
            tasks: vec![TodoItem { id: "task-1".into(), content: "c".into(), status, notes: None }],
        }]
    }

    #[test]
    fn clones_share_one_list() {
        let a = TodoStore::new();
        let b = a.clone();
        a.set_phases(wire(TodoStatus::Pending));
        assert_eq!(b.phases(), wire(TodoStatus::Pending));
        b.clear();
        assert!(a.phases().is_empty());
    }

    #[tokio::test]
    async fn subscribers_wake_on_real_changes_only() {
        let store = TodoStore::new();
        let mut rx = store.subscribe();
        store.set_phases(wire(TodoStatus::Pending));
        assert!(rx.has_changed().unwrap());
        rx.borrow_and_update();
        store.set_phases(wire(TodoStatus::Pending));
        assert!(!rx.has_changed().unwrap());
        store.update(|p| p[0].tasks[0].status = TodoStatus::Completed);
        assert!(rx.has_changed().unwrap());
        assert_eq!(store.revision(), 2);
    }

    #[test]
    fn storage_defaults_to_memory() {
        let store = TodoStore::new();
        assert_eq!(store.storage(), TodoStorage::Memory);
        store.set_storage(TodoStorage::Session);
        assert_eq!(store.clone().storage(), TodoStorage::Session);
    }
}
