//! Auto-clear: finished todos leave the list `tasks.todoClearDelay` seconds after they were
//! finished, and the session emits one `todo_auto_clear` per task removed.
//!
//! Timers are keyed by phase name and task content, as in the reference (a `todo_write`
//! `replace` renumbers ids, so ids would restart timers that should keep running). Whenever the
//! list changes, every finished task without a timer gets one, and timers whose task is no
//! longer finished (its status changed back, or it was removed) are cancelled. When a timer
//! fires and its task is still finished, the task is removed and then every phase left without
//! tasks. [`remove_cleared`] is that step as a pure function; [`AutoClear`] owns the timers.

use parking_lot::{Mutex, MutexGuard};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::task::{AbortHandle, JoinHandle};

use super::TodoStore;
use super::model::Phase;

/// `tasks.todoClearDelay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClearDelay {
    /// Negative settings: finished tasks stay.
    Never,
    /// `0` clears on the next tick.
    After(Duration),
}

impl ClearDelay {
    /// The reference's default, 60 seconds.
    pub const DEFAULT: Self = Self::After(Duration::from_secs(60));

    /// From the setting's seconds: negative means never.
    pub fn from_secs(secs: i64) -> Self {
        u64::try_from(secs).map_or(Self::Never, |s| Self::After(Duration::from_secs(s)))
    }
}

impl Default for ClearDelay {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a timer is kept under.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClearKey {
    pub phase: String,
    pub content: String,
}

/// The keys of every finished (`completed` or `abandoned`) task.
pub fn finished_keys(phases: &[Phase]) -> HashSet<ClearKey> {
    phases
        .iter()
        .flat_map(|p| {
            p.tasks
                .iter()
                .filter(|t| t.status.is_done())
                .map(|t| ClearKey { phase: p.name.clone(), content: t.content.clone() })
        })
        .collect()
}

/// A timer for `key` fired: removes the first task under that key if it is still finished,
/// then every phase without tasks. Returns how many tasks were removed (0 or 1).
pub fn remove_cleared(phases: &mut Vec<Phase>, key: &ClearKey) -> usize {
    let removed = phases.iter_mut().filter(|p| p.name == key.phase).any(|p| {
        match p.tasks.iter().position(|t| t.content == key.content && t.status.is_done()) {
            Some(i) => {
                p.tasks.remove(i);
                true
            }
            None => false,
        }
    });
    if !removed {
        return 0;
    }
    phases.retain(|p| !p.tasks.is_empty());
    1
}

/// Auto-clear needs a tokio runtime to run its timers on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("todo auto-clear needs a running tokio runtime")]
pub struct NoRuntime;

type OnClear = Arc<dyn Fn(usize) + Send + Sync>;

/// The auto-clear timers of one session's [`TodoStore`].
///
/// Created with [`AutoClear::start`], it watches the store and keeps the timers in step with
/// the list; `on_clear(n)` runs (on a runtime worker) after `n` tasks were removed — the
/// session emits `n` `todo_auto_clear` events. Dropping it (or replacing it with a new one,
/// e.g. when the delay setting changes or the session is switched) cancels every timer.
pub struct AutoClear {
    inner: Arc<Scheduler>,
    watcher: JoinHandle<()>,
}

struct Scheduler {
    store: TodoStore,
    delay: Duration,
    on_clear: OnClear,
    runtime: Handle,
    timers: Mutex<Timers>,
}

#[derive(Default)]
struct Timers {
    next_id: u64,
    armed: HashMap<ClearKey, (u64, AbortHandle)>,
}

impl std::fmt::Debug for AutoClear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AutoClear").field("delay", &self.inner.delay).field("armed", &self.armed()).finish()
    }
}

impl AutoClear {
    /// Starts watching `store`. With [`ClearDelay::Never`] nothing is ever scheduled (`None`).
    pub fn start(
        store: TodoStore,
        delay: ClearDelay,
        on_clear: impl Fn(usize) + Send + Sync + 'static,
    ) -> Result<Option<Self>, NoRuntime> {
        let runtime = Handle::try_current().map_err(|_| NoRuntime)?;
        let ClearDelay::After(delay) = delay else {
            return Ok(None);
        };
        let mut changes = store.subscribe();
        changes.borrow_and_update();
        let inner = Arc::new(Scheduler {
            store,
            delay,
            on_clear: Arc::new(on_clear),
            runtime: runtime.clone(),
            timers: Mutex::new(Timers::default()),
        });
        inner.sync();
        let weak = Arc::downgrade(&inner);
        let watcher = runtime.spawn(async move {
            while changes.changed().await.is_ok() {
                match weak.upgrade() {
                    Some(scheduler) => scheduler.sync(),
                    None => return,
                }
            }
        });
        Ok(Some(Self { inner, watcher }))
    }

    /// How many timers are running.
    pub fn armed(&self) -> usize {
        self.inner.lock().armed.len()
    }
}

impl Drop for AutoClear {
    fn drop(&mut self) {
        self.watcher.abort();
        for (_, (_, handle)) in self.inner.lock().armed.drain() {
            handle.abort();
        }
    }
}

impl Scheduler {
    fn lock(&self) -> MutexGuard<'_, Timers> {
        self.timers.lock()
    }

    /// Brings the timers in step with the list.
    fn sync(self: &Arc<Self>) {
        let keys = finished_keys(&self.store.full_phases());
        let mut timers = self.lock();
        timers.armed.retain(|key, (_, handle)| {
            let keep = keys.contains(key);
            if !keep {
                handle.abort();
            }
            keep
        });
        for key in keys {
            if timers.armed.contains_key(&key) {
                continue;
            }
            let id = timers.next_id;
            timers.next_id += 1;
            let handle = self.runtime.spawn(fire(Arc::downgrade(self), key.clone(), id, self.delay));
            timers.armed.insert(key, (id, handle.abort_handle()));
        }
    }
}

async fn fire(scheduler: Weak<Scheduler>, key: ClearKey, id: u64, delay: Duration) {
    tokio::time::sleep(delay).await;
    let Some(scheduler) = scheduler.upgrade() else {
        return;
    };
    {
        let mut timers = scheduler.lock();
        match timers.armed.get(&key) {
            Some((armed, _)) if *armed == id => {
                timers.armed.remove(&key);
            }
            _ => return,
        }
    }
    let removed = scheduler.store.update(|phases| remove_cleared(phases, &key));
    if removed > 0 {
        (scheduler.on_clear)(removed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todo::model::Task;
    use rho_rpc::TodoStatus;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::time::sleep;

    fn task(content: &str, status: TodoStatus) -> Task {
        Task { id: content.into(), content: content.into(), status, notes: None, details: None }
    }

    fn phase(name: &str, tasks: Vec<Task>) -> Phase {
        Phase { id: name.into(), name: name.into(), tasks }
    }

    fn counter() -> (Arc<AtomicUsize>, impl Fn(usize) + Send + Sync + 'static) {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        (count, move |n| {
            c.fetch_add(n, Ordering::SeqCst);
        })
    }

    fn names(store: &TodoStore) -> Vec<(String, Vec<String>)> {
        store.full_phases().into_iter().map(|p| (p.name, p.tasks.into_iter().map(|t| t.content).collect())).collect()
    }

    #[test]
    fn delay_from_the_setting() {
        assert_eq!(ClearDelay::from_secs(-1), ClearDelay::Never);
        assert_eq!(ClearDelay::from_secs(0), ClearDelay::After(Duration::ZERO));
        assert_eq!(ClearDelay::from_secs(60), ClearDelay::default());
    }

    #[test]
    fn remove_cleared_takes_finished_tasks_and_empty_phases() {
        let mut phases = vec![
            phase("A", vec![task("a", TodoStatus::Completed)]),
            phase("B", vec![task("b", TodoStatus::Abandoned), task("c", TodoStatus::Pending)]),
            phase("Empty", vec![]),
        ];
        let key = |p: &str, c: &str| ClearKey { phase: p.into(), content: c.into() };
        assert_eq!(finished_keys(&phases), HashSet::from([key("A", "a"), key("B", "b")]));
        assert_eq!(remove_cleared(&mut phases, &key("B", "c")), 0, "not finished");
        assert_eq!(phases.len(), 3, "nothing removed, nothing pruned");
        assert_eq!(remove_cleared(&mut phases, &key("A", "a")), 1);
        assert_eq!(phases.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), vec!["B"]);
        assert_eq!(remove_cleared(&mut phases, &key("B", "b")), 1);
        assert_eq!(phases[0].tasks, vec![task("c", TodoStatus::Pending)]);
    }

    #[tokio::test(start_paused = true)]
    async fn finished_tasks_leave_after_the_delay() {
        let store = TodoStore::new();
        let (count, on_clear) = counter();
        let clear = AutoClear::start(store.clone(), ClearDelay::from_secs(60), on_clear).unwrap().unwrap();
        store.replace(vec![
            phase("Done", vec![task("a", TodoStatus::Completed)]),
            phase("Work", vec![task("b", TodoStatus::Abandoned), task("c", TodoStatus::InProgress)]),
        ]);
        sleep(Duration::from_secs(59)).await;
        assert_eq!(clear.armed(), 2);
        assert_eq!(count.load(Ordering::SeqCst), 0);
        sleep(Duration::from_secs(2)).await;
        assert_eq!(count.load(Ordering::SeqCst), 2);
        assert_eq!(names(&store), vec![("Work".to_owned(), vec!["c".to_owned()])]);
        assert_eq!(clear.armed(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_status_changed_back_cancels_its_timer() {
        let store = TodoStore::new();
        let (count, on_clear) = counter();
        let clear = AutoClear::start(store.clone(), ClearDelay::from_secs(10), on_clear).unwrap().unwrap();
        store.replace(vec![phase("P", vec![task("a", TodoStatus::Completed), task("b", TodoStatus::Completed)])]);
        sleep(Duration::from_secs(5)).await;
        store.update(|p| p[0].tasks[0].status = TodoStatus::InProgress);
        sleep(Duration::from_secs(1)).await;
        assert_eq!(clear.armed(), 1);
        sleep(Duration::from_secs(10)).await;
        assert_eq!(count.load(Ordering::SeqCst), 1);
        assert_eq!(names(&store), vec![("P".to_owned(), vec!["a".to_owned()])]);
    }

    #[tokio::test(start_paused = true)]
    async fn later_changes_do_not_restart_a_running_timer() {
        let store = TodoStore::new();
        let (count, on_clear) = counter();
        let _clear = AutoClear::start(store.clone(), ClearDelay::from_secs(10), on_clear).unwrap().unwrap();
        store.replace(vec![phase("P", vec![task("a", TodoStatus::Completed), task("b", TodoStatus::Pending)])]);
        sleep(Duration::from_secs(6)).await;
        store.update(|p| p[0].tasks[1].notes = Some("touched".into()));
        sleep(Duration::from_secs(5)).await;
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn zero_clears_on_the_next_tick_and_existing_tasks_count() {
        let store = TodoStore::new();
        store.replace(vec![phase("P", vec![task("a", TodoStatus::Completed)])]);
        let (count, on_clear) = counter();
        let _clear = AutoClear::start(store.clone(), ClearDelay::from_secs(0), on_clear).unwrap().unwrap();
        assert_eq!(store.full_phases().len(), 1, "not synchronously");
        sleep(Duration::from_millis(1)).await;
        assert_eq!(count.load(Ordering::SeqCst), 1);
        assert!(store.full_phases().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn never_and_drop_keep_the_list() {
        let store = TodoStore::new();
        let (count, on_clear) = counter();
        assert!(AutoClear::start(store.clone(), ClearDelay::Never, on_clear).unwrap().is_none());
        let (_, on_clear) = counter();
        let clear = AutoClear::start(store.clone(), ClearDelay::from_secs(1), on_clear).unwrap().unwrap();
        store.replace(vec![phase("P", vec![task("a", TodoStatus::Completed)])]);
        sleep(Duration::from_millis(10)).await;
        assert_eq!(clear.armed(), 1);
        drop(clear);
        sleep(Duration::from_secs(5)).await;
        assert_eq!(count.load(Ordering::SeqCst), 0);
        assert_eq!(store.full_phases().len(), 1);
    }

    #[test]
    fn needs_a_runtime() {
        assert_eq!(AutoClear::start(TodoStore::new(), ClearDelay::DEFAULT, |_| {}).unwrap_err(), NoRuntime);
    }
}
