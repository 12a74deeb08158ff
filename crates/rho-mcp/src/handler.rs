//! rho's side of a connection: what it tells the server about itself, and what it does with the
//! server's notifications. `tools/list_changed` and `prompts/list_changed` re-list that server
//! (on a task of their own: the handler runs on the connection's task, which must stay free to
//! carry the answer). Notifications coalesce: a re-list waits for a burst to pause (50 ms, at
//! most 500 ms), and those that arrive while it runs make one more after it, never one each (a
//! server that sends 20,000 in a row costs a few `tools/list`, not 20,000).

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{MaybeSendFuture, NotificationContext, RoleClient};

use crate::server::Server;

pub(crate) struct ClientEvents {
    server: Weak<Server>,
    /// The connection this handler belongs to: a notification from a replaced one is ignored.
    generation: u64,
    info: ClientConfig,
    tools: Arc<Coalesce>,
    prompts: Arc<Coalesce>,
}

impl ClientEvents {
    pub(crate) fn new(server: Weak<Server>, generation: u64, client_version: &str) -> Self {
        let info = ClientConfig::new(ClientCapabilities::default(), Implementation::new("rho", client_version));
        Self { server, generation, info, tools: Arc::default(), prompts: Arc::default() }
    }

    fn refresh(&self, what: Refresh) {
        let state = match what {
            Refresh::Tools => self.tools.clone(),
            Refresh::Prompts => self.prompts.clone(),
        };
        state.notes.fetch_add(1, Ordering::AcqRel);
        // A re-list is already coming: it sees this notification.
        if state.running.swap(true, Ordering::AcqRel) {
            return;
        }
        let Some(server) = self.server.upgrade() else {
            state.running.store(false, Ordering::Release);
            return;
        };
        let generation = self.generation;
        tokio::spawn(async move {
            loop {
                // The burst is over once QUIET passes without a notification (at most LONGEST).
                let began = tokio::time::Instant::now();
                let mut seen = state.notes.load(Ordering::Acquire);
                loop {
                    tokio::time::sleep(QUIET).await;
                    let now = state.notes.load(Ordering::Acquire);
                    if now == seen || began.elapsed() >= LONGEST {
                        seen = now;
                        break;
                    }
                    seen = now;
                }
                match what {
                    Refresh::Tools => server.refresh_tools(generation).await,
                    Refresh::Prompts => server.refresh_prompts(generation).await,
                }
                state.running.store(false, Ordering::Release);
                // One that came while listing (and saw a re-list running) gets its own.
                if state.notes.load(Ordering::Acquire) == seen || state.running.swap(true, Ordering::AcqRel) {
                    break;
                }
            }
        });
    }
}

/// Notifications of one kind, and whether a re-list is coming.
#[derive(Default)]
struct Coalesce {
    notes: AtomicU64,
    running: AtomicBool,
}

/// How long a burst of notifications must pause before the re-list.
const QUIET: Duration = Duration::from_millis(50);
/// The longest a re-list waits for a burst to pause.
const LONGEST: Duration = Duration::from_millis(500);

#[derive(Clone, Copy)]
enum Refresh {
    Tools,
    Prompts,
}

impl ClientHandler for ClientEvents {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.refresh(Refresh::Tools);
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.refresh(Refresh::Prompts);
        std::future::ready(())
    }
}
