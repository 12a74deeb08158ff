//! Serving extension UI requests (docs/protocol.md, "Extension UI sub-protocol"): dialogs
//! (`select`, `confirm`, `input`, `editor`) go to [`UiHandler::dialog`] in a task of their own and
//! its [`UiAnswer`] is sent as `extension_ui_response`; fire-and-forget methods go to
//! [`UiHandler::notify`].
//!
//! A dialog's task stops without answering when the server withdraws it (`cancel` with its
//! `targetId`), when its `timeout` passes (the server has then resolved it to the default
//! already), or when the server goes away. Without a handler, dialogs are answered
//! `{"cancelled":true}` at once.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::host_tools::Tagged;
use super::shared::Shared;
use crate::command::UiResponse;
use crate::frames::{UiMethod, UiRequest};

/// The user's answer to a dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiAnswer {
    /// For `select`, `input` and `editor`.
    Value(String),
    /// For `confirm`.
    Confirmed(bool),
    /// Dismissed: the dialog resolves to its default.
    Cancelled,
    /// Dismissed because the host's own timer ran out (`timedOut: true`; the extension's
    /// timeout hook runs).
    TimedOut,
}

impl UiAnswer {
    fn into_response(self, id: String) -> UiResponse {
        let mut response = UiResponse { id, value: None, confirmed: None, cancelled: None, timed_out: None };
        match self {
            Self::Value(v) => response.value = Some(v),
            Self::Confirmed(c) => response.confirmed = Some(c),
            Self::Cancelled => response.cancelled = Some(true),
            Self::TimedOut => {
                response.cancelled = Some(true);
                response.timed_out = Some(true);
            }
        }
        response
    }
}

/// The host's user interface, as extensions reach it.
pub trait UiHandler: Send + Sync + 'static {
    /// Asks the user. `cancel` fires when the server withdraws the dialog, its timeout passes
    /// or the server goes away; the answer is then not sent.
    fn dialog(&self, request: UiRequest, cancel: CancellationToken) -> BoxFuture<'static, UiAnswer>;

    /// Shows a fire-and-forget request (`notify`, `setStatus`, `setWidget`, `setTitle`,
    /// `set_editor_text`, `cancel`). Called on the reader task: keep it quick.
    fn notify(&self, request: UiRequest) {
        let _ = request;
    }
}

/// Starts serving one request.
pub(crate) fn serve(shared: &Arc<Shared>, request: UiRequest) {
    if !request.method.is_dialog() {
        if let UiMethod::Cancel { target_id } = &request.method
            && let Some(token) = shared.dialogs.lock().remove(target_id)
        {
            token.cancel();
        }
        if let Some(handler) = &shared.ui {
            handler.notify(request);
        }
        return;
    }
    let token = shared.gone.child_token();
    shared.dialogs.lock().insert(request.id.clone(), token.clone());
    let timeout = match &request.method {
        UiMethod::Select { timeout, .. } | UiMethod::Confirm { timeout, .. } | UiMethod::Input { timeout, .. } => {
            timeout.filter(|&ms| ms > 0).map(Duration::from_millis)
        }
        _ => None,
    };
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        let id = request.id.clone();
        let answer = match shared.ui.clone() {
            None => Some(UiAnswer::Cancelled),
            Some(handler) => {
                let asking = handler.dialog(request, token.clone());
                let expired = async {
                    match timeout {
                        Some(t) => tokio::time::sleep(t).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    () = token.cancelled() => None,
                    () = expired => None,
                    answer = asking => Some(answer),
                }
            }
        };
        shared.dialogs.lock().remove(&id);
        let Some(answer) = answer.filter(|_| !token.is_cancelled()) else { return };
        let response = answer.into_response(id);
        // A failed write means the server is gone; there is nobody left to answer.
        let _ = shared.write_frame(&Tagged { kind: "extension_ui_response", frame: &response }).await;
    });
}
