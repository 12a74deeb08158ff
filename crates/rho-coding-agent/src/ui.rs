//! The user-interface service any part of rho can call (tools now, extensions later): dialogs
//! that wait for an answer (select, confirm, input, editor) and fire-and-forget notices (notify,
//! status, widgets, title, editor text). RPC mode implements it with the extension UI
//! sub-protocol; without a UI every dialog resolves at once to its default. The terminal also
//! draws extensions' components (pi-tui components rendered in the extension host).

use futures::future::BoxFuture;
use rho_extensions::ComponentFrame;
use rho_rpc::UiMethod;
use tokio_util::sync::CancellationToken;

/// How a dialog ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiAnswer {
    /// `select`, `input`, `editor`: the text chosen or typed.
    Value(String),
    /// `confirm`.
    Confirmed(bool),
    /// Dismissed, timed out, aborted, or no UI: the method's default applies.
    Cancelled { timed_out: bool },
}

impl UiAnswer {
    pub fn value(&self) -> Option<&str> {
        match self {
            Self::Value(v) => Some(v),
            _ => None,
        }
    }

    /// `confirm`'s answer; `false` unless confirmed.
    pub fn confirmed(&self) -> bool {
        matches!(self, Self::Confirmed(true))
    }
}

/// A surface that can ask the user things.
pub trait Ui: Send + Sync {
    /// Opens a dialog (`select`, `confirm`, `input`, `editor`) and waits for the answer. A fired
    /// `cancel` withdraws the dialog and resolves to [`UiAnswer::Cancelled`]; so does the
    /// method's `timeout`.
    fn dialog(&self, method: UiMethod, cancel: CancellationToken) -> BoxFuture<'static, UiAnswer>;

    /// Sends a fire-and-forget request (`notify`, `setStatus`, `setWidget`, `setTitle`,
    /// `set_editor_text`).
    fn notify(&self, method: UiMethod);

    /// An extension's terminal component rendered or closed. Only a terminal draws them; the
    /// extensions are told there is one (the interactive mode), so elsewhere none arrive.
    fn component(&self, _update: ComponentUpdate) {}

    /// The extensions were unloaded (reload, session replaced, host gone): what they put on
    /// screen (widgets, statuses, components) goes with them.
    fn reset_extensions(&self) {}
}

/// A terminal component's new lines or its end, or what the extension's editor hands over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentUpdate {
    Render(ComponentFrame),
    Close {
        id: String,
    },
    /// The extension's editor submitted its text.
    EditorSubmit {
        text: String,
    },
    /// The extension's editor handed over an app action (pi's id, `app.clear`, …).
    EditorAction {
        action: String,
        text: String,
    },
}
