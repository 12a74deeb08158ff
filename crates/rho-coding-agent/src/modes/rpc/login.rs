//! omp's `login` command: one of pi's subscription logins, run beside the other commands. The
//! page to open goes to the host as an `open_url` UI request (with the code to enter, for
//! GitHub's device flow); for a login that comes back through the browser, the host is also
//! asked (`input`) for the address the browser ends on, in case it cannot reach rho's callback.
//! The answer comes when the login is saved (and used from then on), or with why it failed.

use std::sync::Arc;

use rho_ai::oauth::{self, providers};
use rho_rpc::{RpcResponse, UiMethod};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::AgentSession;
use crate::login::flow::{self, Paste, Prompt};
use crate::modes::encoder::OutItem;
use crate::modes::out_queue::OutQueue;
use crate::ui::UiAnswer;

/// How long the host is given to answer the paste request (omp's).
const PASTE_TIMEOUT_MS: u64 = 600_000;

/// Starts the login of `provider_id`; its response is written when it ends.
pub(super) fn start(session: AgentSession, out: Arc<OutQueue>, id: Option<Value>, provider_id: String) {
    tokio::spawn(async move {
        let response = match login(&session, &provider_id).await {
            Ok(()) => RpcResponse::with_data(id, "login", json!({"providerId": provider_id})),
            Err(error) => RpcResponse::error(id, "login", error),
        };
        out.push(OutItem::Response(response));
    });
}

async fn login(session: &AgentSession, provider_id: &str) -> Result<(), String> {
    let provider = providers::find(provider_id)
        .filter(|p| flow::has_flow(p))
        .ok_or_else(|| format!("Unknown OAuth provider: {provider_id}"))?;
    let ui = session.ui();
    let shown = ui.clone();
    let show = move |prompt: Prompt| {
        let instructions = match &prompt.user_code {
            Some(code) => format!("Enter code: {code}"),
            None => "Complete the login in the browser.".to_owned(),
        };
        if let Some(ui) = &shown {
            ui.notify(UiMethod::OpenUrl { url: prompt.url, instructions: Some(instructions) });
        }
    };
    // Asked only when the flow waits for a browser (polled then): a device login asks nothing.
    let paste: Paste = Box::pin(async move {
        let ui = ui?;
        let method = UiMethod::Input {
            title: "Paste the address the browser ends on (or the code the page shows)".to_owned(),
            placeholder: None,
            timeout: Some(PASTE_TIMEOUT_MS),
        };
        match ui.dialog(method, CancellationToken::new()).await {
            UiAnswer::Value(text) if !text.trim().is_empty() => Some(text),
            _ => None,
        }
    });
    let creds = flow::run(provider, show, paste).await?;
    oauth::save_login(&session.paths().auth_file(), provider.id, &creds).map_err(|e| e.to_string())?;
    session.reload_logins()
}
