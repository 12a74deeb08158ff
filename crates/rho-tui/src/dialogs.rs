//! The [`Ui`] service in the terminal: a tool's dialog (the `ask` tool's select and input,
//! confirm, editor) opens in the viewport and its answer goes back to the waiting tool; notices
//! become history lines, statuses and widgets go to the footer and above the editor
//! ([`super::widgets`]), and `set_editor_text` fills the editor. A dialog withdrawn by an abort
//! or its timeout closes by itself.

use std::time::Duration;

use futures::future::BoxFuture;
use ratatui::text::Line;
use rho_rpc::UiMethod;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::app::{App, AppEvent, Picking};
use super::notices;
use super::select::{Select, SelectItem};
use rho_coding_agent::ui::{ComponentUpdate, Ui, UiAnswer};

/// A dialog on screen, waiting for the person.
pub struct Dialog {
    pub title: String,
    /// A yes/no question (answered with [`UiAnswer::Confirmed`]).
    confirm: bool,
    /// Typed in the editor (input, editor) rather than picked from a list.
    pub typed: bool,
    /// The editor's text before the dialog took it.
    draft: String,
    answer: oneshot::Sender<UiAnswer>,
}

/// The UI service the session's tools call; it hands everything to the main loop.
pub struct TerminalUi {
    tx: UnboundedSender<AppEvent>,
}

impl TerminalUi {
    pub fn new(tx: UnboundedSender<AppEvent>) -> Self {
        Self { tx }
    }
}

impl Ui for TerminalUi {
    fn dialog(&self, method: UiMethod, cancel: CancellationToken) -> BoxFuture<'static, UiAnswer> {
        let timeout = match &method {
            UiMethod::Select { timeout, .. } | UiMethod::Confirm { timeout, .. } | UiMethod::Input { timeout, .. } => {
                timeout.map(Duration::from_millis)
            }
            _ => None,
        };
        let (answer, answered) = oneshot::channel();
        let sent = self.tx.send(AppEvent::Dialog(method, answer)).is_ok();
        Box::pin(async move {
            if !sent {
                return UiAnswer::Cancelled { timed_out: false };
            }
            let expiry = async {
                match timeout {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                answer = answered => answer.unwrap_or(UiAnswer::Cancelled { timed_out: false }),
                () = cancel.cancelled() => UiAnswer::Cancelled { timed_out: false },
                () = expiry => UiAnswer::Cancelled { timed_out: true },
            }
        })
    }

    fn notify(&self, method: UiMethod) {
        let _ = self.tx.send(AppEvent::UiNotify(method));
    }

    fn component(&self, update: ComponentUpdate) {
        let _ = self.tx.send(AppEvent::Component(update));
    }

    fn reset_extensions(&self) {
        let _ = self.tx.send(AppEvent::ResetExtensions);
    }
}

impl App {
    /// Opens a dialog a tool asked for (one at a time: a second is refused while one is open).
    pub fn open_dialog(&mut self, method: UiMethod, answer: oneshot::Sender<UiAnswer>) {
        if self.dialog.is_some() {
            let _ = answer.send(UiAnswer::Cancelled { timed_out: false });
            return;
        }
        let draft = self.editor.text().to_owned();
        let (title, confirm, typed, list) = match method {
            UiMethod::Select { title, options, .. } => (title, false, false, options),
            UiMethod::Confirm { title, message, .. } => {
                (format!("{title}: {message}"), true, false, vec!["Yes".to_owned(), "No".to_owned()])
            }
            UiMethod::Input { title, .. } => {
                self.editor.take();
                (title, false, true, Vec::new())
            }
            UiMethod::Editor { title, prefill, .. } => {
                self.editor.set_text(prefill.as_deref().unwrap_or_default());
                (title, false, true, Vec::new())
            }
            other => {
                self.ui_notify(other);
                let _ = answer.send(UiAnswer::Cancelled { timed_out: false });
                return;
            }
        };
        if !typed {
            let items =
                list.into_iter().map(|o| SelectItem { label: o.clone(), detail: String::new(), value: o }).collect();
            self.select = Some((Picking::Dialog, Select::new(title.clone(), items, 0)));
        }
        self.dialog = Some(Dialog { title, confirm, typed, draft, answer });
    }

    /// Answers the open dialog (`None`: dismissed) and gives the editor back its draft.
    pub fn answer_dialog(&mut self, value: Option<String>) {
        let Some(dialog) = self.dialog.take() else { return };
        if dialog.typed {
            self.editor.set_text(&dialog.draft);
        }
        let answer = match value {
            Some(v) if dialog.confirm => UiAnswer::Confirmed(v == "Yes"),
            Some(v) => UiAnswer::Value(v),
            None => UiAnswer::Cancelled { timed_out: false },
        };
        let _ = dialog.answer.send(answer);
    }

    /// Closes a dialog its tool stopped waiting for (abort, timeout).
    pub fn drop_stale_dialog(&mut self) {
        if self.dialog.as_ref().is_some_and(|d| d.answer.is_closed()) {
            if self.select.as_ref().is_some_and(|(p, _)| *p == Picking::Dialog) {
                self.select = None;
            }
            self.answer_dialog(None);
        }
    }

    pub fn ui_notify(&mut self, method: UiMethod) {
        match method {
            UiMethod::Notify { message, notify_type } => {
                self.push([Line::default(), notices::notify(&message, notify_type)]);
            }
            UiMethod::SetStatus { status_key, status_text } => self.widgets.set_status(status_key, status_text),
            UiMethod::SetWidget { widget_key, widget_lines, widget_placement } => {
                self.widgets.set_widget(widget_key, widget_lines, widget_placement);
            }
            UiMethod::SetEditorText { text } => self.editor.set_text(&text),
            UiMethod::SetTitle { title } => self.title.set(&title),
            _ => {}
        }
    }
}
