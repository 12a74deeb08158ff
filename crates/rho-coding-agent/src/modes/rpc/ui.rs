//! The extension UI sub-protocol (docs/protocol.md, "Extension UI sub-protocol") as rho's [`Ui`]
//! service: a dialog is an `extension_ui_request` frame and a pending entry keyed by its id; the
//! host's `extension_ui_response` resolves it. The server enforces the dialog's `timeout`; an abort
//! withdraws it (an `editor` also gets a `cancel` request, as xcsh sends); unknown, stale and
//! fire-and-forget ids are ignored. `setTitle` is written only when `PI_RPC_EMIT_TITLE` is truthy.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rho_rpc::{UiMethod, UiRequest, UiResponse};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ids::new_id;
use crate::agent_session::AgentSessionEvent;
use crate::modes::out_queue::OutQueue;
use crate::ui::{Ui, UiAnswer};

#[derive(Clone, Copy, PartialEq, Eq)]
enum DialogKind {
    Value,
    Confirm,
}

struct Pending {
    kind: DialogKind,
    answer: oneshot::Sender<UiAnswer>,
}

type PendingMap = Arc<Mutex<HashMap<String, Pending>>>;

pub struct RpcUi {
    out: Arc<OutQueue>,
    pending: PendingMap,
    emit_title: bool,
}

impl RpcUi {
    pub fn new(out: Arc<OutQueue>) -> Arc<Self> {
        let emit_title = std::env::var("PI_RPC_EMIT_TITLE").is_ok_and(|v| is_truthy(&v));
        Arc::new(Self { out, pending: Arc::default(), emit_title })
    }

    /// Resolves the dialog a host answered; unknown ids are ignored.
    pub fn resolve(&self, response: UiResponse) {
        let Some(pending) = self.pending.lock().remove(&response.id) else {
            return;
        };
        let answer = if response.cancelled == Some(true) {
            UiAnswer::Cancelled { timed_out: response.timed_out == Some(true) }
        } else {
            match pending.kind {
                DialogKind::Value => match response.value {
                    Some(v) => UiAnswer::Value(v),
                    None => UiAnswer::Cancelled { timed_out: false },
                },
                DialogKind::Confirm => UiAnswer::Confirmed(response.confirmed == Some(true)),
            }
        };
        let _ = pending.answer.send(answer);
    }

    /// Resolves every open dialog with its default (the host went away).
    pub fn cancel_all(&self) {
        for (_, pending) in self.pending.lock().drain() {
            let _ = pending.answer.send(UiAnswer::Cancelled { timed_out: false });
        }
    }

    fn send(&self, id: String, method: UiMethod) {
        self.out.push_event(AgentSessionEvent::UiRequest(UiRequest { id, method }));
    }
}

impl Ui for RpcUi {
    fn dialog(&self, method: UiMethod, cancel: CancellationToken) -> BoxFuture<'static, UiAnswer> {
        let (kind, timeout) = match &method {
            UiMethod::Select { timeout, .. } | UiMethod::Input { timeout, .. } => (DialogKind::Value, *timeout),
            UiMethod::Confirm { timeout, .. } => (DialogKind::Confirm, *timeout),
            UiMethod::Editor { .. } => (DialogKind::Value, None),
            _ => {
                self.notify(method);
                return Box::pin(async { UiAnswer::Cancelled { timed_out: false } });
            }
        };
        if cancel.is_cancelled() {
            return Box::pin(async { UiAnswer::Cancelled { timed_out: false } });
        }
        let is_editor = matches!(method, UiMethod::Editor { .. });
        let id = new_id();
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id.clone(), Pending { kind, answer: tx });
        self.send(id.clone(), method);
        let out = self.out.clone();
        let pending = self.pending.clone();
        Box::pin(async move {
            let timer = async {
                match timeout {
                    Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                answer = rx => answer.unwrap_or(UiAnswer::Cancelled { timed_out: false }),
                () = timer => {
                    pending.lock().remove(&id);
                    UiAnswer::Cancelled { timed_out: true }
                }
                () = cancel.cancelled() => {
                    pending.lock().remove(&id);
                    if is_editor {
                        out.push_event(AgentSessionEvent::UiRequest(UiRequest {
                            id: new_id(),
                            method: UiMethod::Cancel { target_id: id.clone() },
                        }));
                    }
                    UiAnswer::Cancelled { timed_out: false }
                }
            }
        })
    }

    fn notify(&self, method: UiMethod) {
        if matches!(method, UiMethod::SetTitle { .. }) && !self.emit_title {
            return;
        }
        self.send(new_id(), method);
    }
}

/// `1`, `true`, `yes` or `on`, ignoring case and surrounding spaces.
fn is_truthy(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::encoder::{FrameEncoder, FrameLimits};

    /// The frames written so far, as JSON.
    fn written(out: &OutQueue) -> Vec<serde_json::Value> {
        out.close();
        let mut encoder = FrameEncoder::new(out.limits());
        let mut bytes = Vec::new();
        while let Some((batch, _)) = out.take_batch() {
            for item in batch {
                encoder.encode(item, &mut bytes);
            }
        }
        String::from_utf8(bytes).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    fn select(timeout: Option<u64>) -> UiMethod {
        UiMethod::Select { title: "Pick".into(), options: vec!["a".into(), "b".into()], timeout }
    }

    #[tokio::test(start_paused = true)]
    async fn a_dialog_times_out_to_its_default_and_a_late_answer_is_ignored() {
        let out = OutQueue::new(FrameLimits::new(1 << 20));
        let ui = RpcUi::new(out.clone());
        let answer = ui.dialog(select(Some(5_000)), CancellationToken::new()).await;
        assert_eq!(answer, UiAnswer::Cancelled { timed_out: true });
        let frames = written(&out);
        let id = frames[0]["id"].as_str().unwrap().to_owned();
        ui.resolve(UiResponse { id, value: Some("a".into()), confirmed: None, cancelled: None, timed_out: None });
        assert!(ui.pending.lock().is_empty());
    }

    #[tokio::test]
    async fn answers_resolve_by_kind_and_unknown_ids_are_ignored() {
        let out = OutQueue::new(FrameLimits::new(1 << 20));
        let ui = RpcUi::new(out.clone());
        let confirm = ui.dialog(
            UiMethod::Confirm { title: "Sure?".into(), message: "Go on".into(), timeout: None },
            CancellationToken::new(),
        );
        let id = ui.pending.lock().keys().next().cloned().unwrap();
        ui.resolve(UiResponse {
            id: "stale".into(),
            value: None,
            confirmed: Some(false),
            cancelled: None,
            timed_out: None,
        });
        ui.resolve(UiResponse { id, value: None, confirmed: Some(true), cancelled: None, timed_out: None });
        assert_eq!(confirm.await, UiAnswer::Confirmed(true));
        let frames = written(&out);
        assert_eq!(frames[0]["method"], "confirm");
        assert_eq!(frames[0]["message"], "Go on");
    }

    #[tokio::test]
    async fn an_aborted_editor_is_withdrawn_with_a_cancel_request() {
        let out = OutQueue::new(FrameLimits::new(1 << 20));
        let ui = RpcUi::new(out.clone());
        let cancel = CancellationToken::new();
        let dialog =
            ui.dialog(UiMethod::Editor { title: "Edit".into(), prefill: None, prompt_style: None }, cancel.clone());
        cancel.cancel();
        assert_eq!(dialog.await, UiAnswer::Cancelled { timed_out: false });
        let frames = written(&out);
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[1]["method"], "cancel");
        assert_eq!(frames[1]["targetId"], frames[0]["id"]);
    }

    #[tokio::test]
    async fn set_title_is_suppressed_and_other_notices_are_written() {
        let out = OutQueue::new(FrameLimits::new(1 << 20));
        let ui = RpcUi { out: out.clone(), pending: Arc::default(), emit_title: false };
        ui.notify(UiMethod::SetTitle { title: "rho".into() });
        ui.notify(UiMethod::Notify { message: "hi".into(), notify_type: None });
        let frames = written(&out);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0]["method"], "notify");
        assert!(is_truthy(" Yes ") && is_truthy("1") && !is_truthy("0") && !is_truthy(""));
    }
}
