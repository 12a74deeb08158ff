//! What every server of one manager shares: the options, the shutdown token, and the change
//! signal with its queue of diagnostics (each problem is queued once, and taken once).

use parking_lot::Mutex;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::diagnostic::Diagnostic;
use crate::options::McpOptions;

pub(crate) struct Shared {
    pub(crate) options: McpOptions,
    pub(crate) shutdown: CancellationToken,
    changed: watch::Sender<u64>,
    diagnostics: Mutex<Vec<Diagnostic>>,
}

impl Shared {
    pub(crate) fn new(options: McpOptions, diagnostics: Vec<Diagnostic>) -> Self {
        Self {
            options,
            shutdown: CancellationToken::new(),
            changed: watch::Sender::new(0),
            diagnostics: Mutex::new(diagnostics),
        }
    }

    /// Something a host shows changed: a state, a tool list, a prompt list.
    pub(crate) fn changed(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub(crate) fn report(&self, diagnostic: Diagnostic) {
        tracing::warn!("{diagnostic}");
        self.diagnostics.lock().push(diagnostic);
        self.changed();
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    pub(crate) fn take_diagnostics(&self) -> Vec<Diagnostic> {
        std::mem::take(&mut *self.diagnostics.lock())
    }
}
