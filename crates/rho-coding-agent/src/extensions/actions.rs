//! What the host asks of rho, handled in the order it arrives: session actions (pi's
//! `sendMessage`, `appendEntry`, `setModel`, …), dialogs and notices for the mode's UI service,
//! failures to report, new registrations, and the host's exit. Actions that wait (a dialog,
//! `waitForIdle`, `compact`) run on tasks of their own, so one that waits never holds up the
//! next.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use rho_extensions::protocol::SendOptions;
use rho_extensions::{Action, ExtensionHost, Incoming};
use rho_rpc::{StreamingBehavior, UiMethod};
use rho_types::types::{ImageContent, UserContent};
use rho_types::{AgentMessage, ThinkingLevel};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Extensions;
use crate::agent_session::{
    AgentSession, BranchSummaryChoice, PromptOptions, PromptOutcome, PromptSource, RegisteredMcpServer, Seed,
    SeedEntry, SessionCommandError,
};
use crate::ui::{ComponentUpdate, UiAnswer};

/// Starts the task that handles what the host sends; it ends with the session.
pub(super) fn spawn_loop(extensions: Weak<Extensions>, mut incoming: mpsc::UnboundedReceiver<Incoming>) {
    tokio::spawn(async move {
        let dialogs: Dialogs = Arc::default();
        while let Some(message) = incoming.recv().await {
            let Some(extensions) = extensions.upgrade() else { break };
            let Some(session) = extensions.session() else { break };
            handle(&extensions, &session, &dialogs, message);
        }
    });
}

/// Open dialogs by the host's request id, to withdraw them.
type Dialogs = Arc<Mutex<HashMap<String, CancellationToken>>>;

fn handle(extensions: &Arc<Extensions>, session: &AgentSession, dialogs: &Dialogs, message: Incoming) {
    match message {
        Incoming::Answer(answer) => answer.deliver(),
        Incoming::Fault(fault) => session.report_extension_error(&fault.extension_path, &fault.event, &fault.error),
        Incoming::Registrations(registrations) => extensions.set_registrations(session, Arc::from(registrations)),
        Incoming::Exited { reason } => {
            {
                // A host started since (after a stuck one was stopped) stays.
                let mut host = extensions.host.lock();
                if host.as_ref().is_some_and(|h| !h.is_alive()) {
                    *host = None;
                }
            }
            if let Some(ui) = session.ui() {
                ui.reset_extensions();
            }
            session.report_extension_error(
                "<extension host>",
                "exit",
                &format!("the extension host exited ({reason}); it is started again when an extension is next needed"),
            );
        }
        Incoming::UiCancel { target } => {
            if let Some(cancel) = dialogs.lock().remove(&target) {
                cancel.cancel();
            }
        }
        Incoming::Ui { id, request } => ui(extensions, session, dialogs, id, request),
        Incoming::Component(frame) => {
            if let Some(ui) = session.ui() {
                ui.component(ComponentUpdate::Render(frame));
            }
        }
        Incoming::ComponentClose { id } => {
            if let Some(ui) = session.ui() {
                ui.component(ComponentUpdate::Close { id });
            }
        }
        Incoming::EditorSubmit { text } => {
            if let Some(ui) = session.ui() {
                ui.component(ComponentUpdate::EditorSubmit { text });
            }
        }
        Incoming::EditorAction { action, text } => {
            if let Some(ui) = session.ui() {
                ui.component(ComponentUpdate::EditorAction { action, text });
            }
        }
        Incoming::Action { id, action } => act(extensions, session, id, action),
    }
}

/// `ctx.ui`: a dialog through the mode's UI service (answered with its result), or a notice.
fn ui(
    extensions: &Arc<Extensions>,
    session: &AgentSession,
    dialogs: &Dialogs,
    id: Option<String>,
    request: Map<String, Value>,
) {
    let method: UiMethod = match serde_json::from_value(Value::Object(request)) {
        Ok(method) => method,
        Err(e) => {
            session.report_extension_error("<extension host>", "ui", &format!("unusable dialog: {e}"));
            if let (Some(id), Some(host)) = (id, current_host(extensions)) {
                host.respond(id, Ok(json!({"cancelled": true})));
            }
            return;
        }
    };
    let Some(service) = session.ui() else {
        if let (Some(id), Some(host)) = (id, current_host(extensions)) {
            host.respond(id, Ok(json!({"cancelled": true})));
        }
        return;
    };
    let Some(id) = id else {
        service.notify(method);
        return;
    };
    let cancel = CancellationToken::new();
    dialogs.lock().insert(id.clone(), cancel.clone());
    extensions.open_dialogs.fetch_add(1, Ordering::AcqRel);
    let extensions = extensions.clone();
    let dialogs = dialogs.clone();
    tokio::spawn(async move {
        let answer = service.dialog(method, cancel).await;
        dialogs.lock().remove(&id);
        extensions.open_dialogs.fetch_sub(1, Ordering::AcqRel);
        let value = match answer {
            UiAnswer::Value(value) => json!({"value": value}),
            UiAnswer::Confirmed(confirmed) => json!({"confirmed": confirmed}),
            UiAnswer::Cancelled { timed_out } => json!({"cancelled": true, "timedOut": timed_out}),
        };
        if let Some(host) = current_host(&extensions) {
            host.respond(id, Ok(value));
        }
    });
}

fn current_host(extensions: &Extensions) -> Option<ExtensionHost> {
    extensions.host.lock().clone()
}

/// Answers an action that wanted an answer.
fn answer(extensions: &Extensions, id: Option<String>, result: Result<Value, String>) {
    if let (Some(id), Some(host)) = (id, current_host(extensions)) {
        host.respond(id, result);
    }
}

fn act(extensions: &Arc<Extensions>, session: &AgentSession, id: Option<String>, action: Action) {
    let failed = |event: &str, error: String| session.report_extension_error("<runtime>", event, &error);
    match action {
        Action::SendMessage { message, options, during } => match custom_message(message) {
            Ok(message) => {
                let options = options.unwrap_or_default();
                let run_ending = during.as_deref() == Some("agent_end") && options.trigger_turn != Some(false);
                if run_ending && options.deliver_as.as_deref() != Some("nextTurn") {
                    after_agent_end(extensions, session, message, options.deliver_as);
                } else {
                    let trigger = options.trigger_turn == Some(true);
                    session.send_custom_message(message, options.deliver_as.as_deref(), trigger);
                }
            }
            Err(e) => failed("send_message", e),
        },
        Action::SendUserMessage { content, options } => {
            let session = session.clone();
            tokio::spawn(async move {
                if let Err(e) = send_user_message(&session, content, options.unwrap_or_default()).await {
                    session.report_extension_error("<runtime>", "send_user_message", &e);
                }
            });
        }
        Action::AppendEntry { custom_type, data } => {
            if let Err(e) = session.append_custom_entry(&custom_type, data) {
                failed("append_entry", e.to_string());
            }
        }
        Action::SetSessionName { name } => {
            if let Err(e) = session.set_session_name(&name) {
                failed("set_session_name", e.to_string());
            }
        }
        Action::SetLabel { entry_id, label } => {
            if let Err(e) = session.set_label(&entry_id, label.as_deref()) {
                failed("set_label", e.to_string());
            }
        }
        Action::SetActiveTools { names } => session.set_active_tools(names),
        Action::SetModel { provider, model_id } => {
            // pi's setModel answers false when the model has no credentials.
            let set = session.set_model(&provider, &model_id).is_ok();
            answer(extensions, id, Ok(json!(set)));
        }
        Action::SetThinkingLevel { level } => match ThinkingLevel::parse(&level) {
            Some(level) => {
                if let Err(e) = session.set_thinking_level(level) {
                    failed("set_thinking_level", e.to_string());
                }
            }
            None => failed("set_thinking_level", format!("Invalid thinking level: {level}")),
        },
        Action::Abort => {
            session.interrupt();
        }
        Action::Shutdown => extensions.request_shutdown(),
        Action::Compact { custom_instructions } => {
            let (extensions, session) = (extensions.clone(), session.clone());
            tokio::spawn(async move {
                let result = session.compact(custom_instructions.as_deref()).await;
                let result =
                    result.map_err(|e| e.to_string()).and_then(|r| serde_json::to_value(r).map_err(|e| e.to_string()));
                answer(&extensions, id, result);
            });
        }
        Action::WaitForIdle => {
            let (extensions, session) = (extensions.clone(), session.clone());
            tokio::spawn(async move {
                session.wait_idle().await;
                answer(&extensions, id, Ok(Value::Null));
            });
        }
        Action::RegisterProvider { provider, config, stream_simple } => {
            if let Err(e) = session.register_extension_provider(&provider, config, stream_simple) {
                failed("register_provider", format!("cannot register the provider {provider}: {e}"));
            }
        }
        Action::UnregisterProvider { provider } => session.unregister_extension_provider(&provider),
        Action::RegisterVirtualModel { definition } => {
            let registered = super::virtual_models::virtual_model(&definition)
                .map_err(SessionCommandError::Invalid)
                .and_then(|model| session.register_virtual_model(model));
            if let Err(e) = registered {
                failed(
                    "register_virtual_model",
                    format!("cannot register the virtual model {}/{}: {e}", definition.provider, definition.id),
                );
            }
        }
        Action::UnregisterVirtualModel { provider, id } => session.unregister_virtual_model(&provider, &id),
        Action::SetMcpServers { servers } => {
            let servers = servers
                .into_iter()
                .map(|s| RegisteredMcpServer { name: s.name, config: s.config, extension_path: s.extension_path })
                .collect();
            session.set_extension_mcp_servers(servers);
        }
        Action::NewSession { .. }
        | Action::Fork { .. }
        | Action::NavigateTree { .. }
        | Action::SwitchSession { .. }
        | Action::Reload => {
            let (extensions, session) = (extensions.clone(), session.clone());
            tokio::spawn(async move {
                let outcome = replace_session(&session, action).await;
                answer(&extensions, id, outcome);
            });
        }
    }
}

/// A message an `agent_end` handler sent. In pi 1.6 the run is still active while those
/// handlers run, so the message is queued and the run goes on with it; rho's run has ended by
/// then, so the message starts the next one once the handlers are done (pi goes on once they
/// return). Messages keep the order they were sent in: the first starts the run, the others
/// queue on it as they asked (pi delivers them one at a time).
fn after_agent_end(
    extensions: &Arc<Extensions>,
    session: &AgentSession,
    message: AgentMessage,
    deliver_as: Option<String>,
) {
    let first = {
        let mut pending = extensions.after_agent_end.lock();
        pending.push((message, deliver_as));
        pending.len() == 1
    };
    if !first {
        return;
    }
    let (extensions, session) = (extensions.clone(), session.clone());
    tokio::spawn(async move {
        extensions.flush().await;
        let pending = std::mem::take(&mut *extensions.after_agent_end.lock());
        for (message, deliver_as) in pending {
            session.send_custom_message(message, deliver_as.as_deref(), true);
        }
    });
}

/// The command context's session actions: `{cancelled}` as pi answers them.
async fn replace_session(session: &AgentSession, action: Action) -> Result<Value, String> {
    let done = match action {
        Action::NewSession { parent_session, entries } => {
            let seed = entries.unwrap_or_default().into_iter().filter_map(seed_entry).collect();
            session.new_session_seeded(parent_session.as_deref().map(std::path::Path::new), seed).await
        }
        Action::Fork { entry_id, position } => match position.as_deref() {
            Some("at") => session.clone_at(Some(entry_id)).await,
            _ => session.fork(&entry_id).await.map(drop),
        },
        Action::SwitchSession { session_path } => session.switch_session(std::path::Path::new(&session_path)).await,
        Action::NavigateTree { target_id, summarize, custom_instructions, label, .. } => {
            let choice = match summarize {
                Some(true) => BranchSummaryChoice::Summarize { instructions: custom_instructions },
                _ => BranchSummaryChoice::NoSummary,
            };
            let navigated = session.navigate_tree(&target_id, choice).await;
            match (navigated, label) {
                (Ok(_), Some(label)) => session.label_leaf(&label),
                (other, _) => other.map(drop),
            }
        }
        Action::Reload => {
            let reloaded = session.reload().map(drop);
            if reloaded.is_ok() {
                session.reload_extensions().await;
            }
            reloaded
        }
        _ => Ok(()),
    };
    match done {
        Ok(()) => Ok(json!({"cancelled": false})),
        Err(SessionCommandError::Cancelled) => Ok(json!({"cancelled": true})),
        Err(e) => Err(e.to_string()),
    }
}

/// An entry a `setup` callback appended, as rho writes it again in the new session.
fn seed_entry(entry: Value) -> Option<Seed> {
    let id = entry.get("id").and_then(Value::as_str).map(str::to_owned);
    let seeded = match entry.get("type")?.as_str()? {
        "message" => SeedEntry::Message(Box::new(serde_json::from_value(entry.get("message")?.clone()).ok()?)),
        "custom" => SeedEntry::Custom {
            custom_type: entry.get("customType")?.as_str()?.to_owned(),
            data: entry.get("data").cloned(),
        },
        "custom_message" => {
            let mut message = entry.as_object()?.clone();
            message.insert("role".into(), json!("custom"));
            message.insert("timestamp".into(), json!(rho_types::types::now_ms()));
            SeedEntry::Message(Box::new(serde_json::from_value(Value::Object(message)).ok()?))
        }
        "context_edit" => SeedEntry::ContextEdit {
            target_id: entry.get("targetId")?.as_str()?.to_owned(),
            content: crate::agent_session::edit_content(&entry).ok()?,
        },
        _ => return None,
    };
    Some(Seed { id, entry: seeded })
}

/// `{customType, content, display, details}` as a custom message of the conversation.
fn custom_message(message: Value) -> Result<AgentMessage, String> {
    let Value::Object(mut fields) = message else {
        return Err("sendMessage needs a message object".into());
    };
    fields.insert("role".into(), json!("custom"));
    fields.entry("display").or_insert(json!(false));
    fields.entry("content").or_insert(json!(""));
    fields.insert("timestamp".into(), json!(rho_types::types::now_ms()));
    serde_json::from_value(Value::Object(fields)).map_err(|e| format!("unusable message: {e}"))
}

/// `sendUserMessage`: a prompt as it is (no command or template), from the extension; while a
/// run streams it must say how to queue it, as in pi.
async fn send_user_message(session: &AgentSession, content: Value, options: SendOptions) -> Result<(), String> {
    let (text, images) = match content {
        Value::String(text) => (text, Vec::new()),
        Value::Array(parts) => {
            let parts: Vec<UserContent> =
                serde_json::from_value(Value::Array(parts)).map_err(|e| format!("unusable message content: {e}"))?;
            let text: Vec<&str> = parts.iter().filter_map(UserContent::as_text).collect();
            let images: Vec<ImageContent> = parts
                .iter()
                .filter_map(|p| match p {
                    UserContent::Image(image) => Some(image.clone()),
                    _ => None,
                })
                .collect();
            (text.join("\n"), images)
        }
        _ => return Err("sendUserMessage needs text or content blocks".into()),
    };
    let streaming_behavior = match options.deliver_as.as_deref() {
        Some("followUp") => Some(StreamingBehavior::FollowUp),
        Some("steer") => Some(StreamingBehavior::Steer),
        _ => None,
    };
    let raw = options.expand_prompt_templates != Some(true);
    let options = PromptOptions { images, streaming_behavior, source: PromptSource::Extension, raw, ticket: None };
    match session.submit(&text, options).await {
        Ok(PromptOutcome::Started(run)) => {
            drop(run.start());
            Ok(())
        }
        Ok(PromptOutcome::Command(command)) => {
            drop(command.start());
            Ok(())
        }
        Ok(PromptOutcome::Queued | PromptOutcome::Handled) => Ok(()),
        Err(crate::agent_session::PromptRejection::Busy) => {
            Err("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
                .into())
        }
        Err(e) => Err(e.to_string()),
    }
}
