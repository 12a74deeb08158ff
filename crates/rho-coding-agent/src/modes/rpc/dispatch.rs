//! One command in, one response out, with the `data` payloads of docs/protocol.md, "Commands".
//! Every answer to a command that carried an id carries it back, failures included
//! (docs/decisions.md D3).

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;

use futures::FutureExt;
use rho_rpc::{
    BranchData, BranchMessage, BranchMessagesData, CancelledData, CommandsData, CycleModelData, Disposition,
    DispositionData, IntegrationModel, IntegrationsData, LastAssistantTextData, LevelData, MessagesData, ModelsData,
    PathData, ProtocolData, RpcCommand, RpcResponse, ThinkingLevelsData, TodoPhasesData, ToolNamesData,
};
use rho_types::ThinkingLevel;
use serde::Serialize;
use serde_json::Value;

use super::Queued;
use super::host_tools::HostToolBridge;
use super::subagents::SubagentTracker;
use crate::agent_session::{AgentSession, PromptOptions, PromptOutcome, SessionCommandError};
use crate::modes::encoder::OutItem;
use crate::modes::frames::{UpdateShape, wire_messages};
use crate::modes::out_queue::OutQueue;

/// What a handler answers.
pub(super) enum Reply {
    Ok,
    Data(Value),
    Err(String),
    /// A failure with omp's machine-readable `code`.
    ErrWithCode(String, &'static str),
}

/// A JSON value as JavaScript's `String(value)` writes it (strings bare).
pub(super) fn js_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// What a panic said, when it said it with a string.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a bug in rho")
}

pub(super) fn data<T: Serialize>(payload: &T) -> Reply {
    match serde_json::to_value(payload) {
        Ok(v) => Reply::Data(v),
        Err(e) => Reply::Err(format!("Failed to serialize response: {e}")),
    }
}

/// pi 1.6's answer to `prompt`, `steer` and `follow_up`.
fn disposition(disposition: Disposition) -> Reply {
    data(&DispositionData { disposition })
}

/// `get_tree`'s payload, with the session's own nodes (`rho_rpc::TreeData` is its wire shape).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TreeData {
    tree: Vec<rho_session::TreeNode<Value>>,
    leaf_id: Option<String>,
}

/// The stack of the thread [`on_deep_stack`] starts: room for a tree hundreds of thousands of
/// entries deep (only the pages touched are ever mapped).
const DEEP_STACK: usize = 1 << 30;

/// Runs `f` on a thread of its own with [`DEEP_STACK`]; `None` when it could not start or
/// panicked.
async fn on_deep_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new().name("rho-deep-stack".into()).stack_size(DEEP_STACK).spawn(move || {
        let _ = tx.send(f());
    });
    if let Err(e) = spawned {
        tracing::error!("could not start a thread: {e}");
        return None;
    }
    rx.await.ok()
}

fn done(result: Result<(), SessionCommandError>) -> Reply {
    match result {
        Ok(()) => Reply::Ok,
        Err(e) => Reply::Err(e.to_string()),
    }
}

pub struct Dispatcher {
    pub session: AgentSession,
    /// The shape of streaming updates once a host negotiates protocol 2: omp's, unless the
    /// host chose one (`--rpc-message-update`).
    pub updates_after_negotiation: UpdateShape,
    pub out: Arc<OutQueue>,
    pub host: Arc<HostToolBridge>,
    pub host_uris: Arc<super::HostUriBridge>,
    pub subagents: Arc<SubagentTracker>,
}

impl Dispatcher {
    fn respond(&self, id: &Option<Value>, command: &str, reply: Reply) {
        self.out.push(OutItem::Response(response(id, command, reply)));
    }

    /// Handles one command and writes its response(s). A handler that panics (a bug) is
    /// answered with an error naming it, and the dispatcher goes on with the next command.
    pub async fn handle(&self, queued: Queued) {
        let name = queued.command.name();
        let id = queued.id.clone();
        match AssertUnwindSafe(self.reply(queued)).catch_unwind().await {
            Ok(Some(reply)) => self.respond(&id, name, reply),
            Ok(None) => {}
            Err(panic) => {
                let error = format!("Internal error while handling {name}: {}", panic_text(panic.as_ref()));
                self.respond(&id, name, Reply::Err(error));
            }
        }
    }

    /// `None` when the handler wrote its responses itself.
    async fn reply(&self, queued: Queued) -> Option<Reply> {
        let Queued { id, command, epoch, ticket, bash_epoch } = queued;
        let id = &id;
        let s = &self.session;
        Some(match command {
            RpcCommand::Prompt { message, images, streaming_behavior, locale: _ } => {
                let builtin = if s.names_extension_command(&message) { None } else { self.builtin(id, &message).await };
                if let Some((reply, finished)) = builtin {
                    self.respond(id, "prompt", reply);
                    if finished {
                        s.emit(rho_rpc::SessionEvent::PromptResult { id: id.clone(), agent_invoked: false });
                    }
                    return None;
                }
                let options = PromptOptions {
                    images: images.unwrap_or_default(),
                    streaming_behavior,
                    ticket,
                    ..PromptOptions::default()
                };
                self.prompt(id, "prompt", message, options).await;
                return None;
            }
            RpcCommand::AbortAndPrompt { message, images } => {
                // The abort half was acted on when the line was read; the dispatcher waited for it.
                let options = PromptOptions { images: images.unwrap_or_default(), ticket, ..PromptOptions::default() };
                self.prompt(id, "abort_and_prompt", message, options).await;
                return None;
            }
            RpcCommand::Steer { message, images } => {
                s.steer(&message, images.unwrap_or_default());
                disposition(Disposition::Queued)
            }
            RpcCommand::FollowUp { message, images } => {
                s.follow_up(&message, images.unwrap_or_default());
                disposition(Disposition::Queued)
            }
            RpcCommand::ClearQueue => data(&s.clear_queue()),
            RpcCommand::Abort => {
                // Interrupted when the line was read: answered once what it stopped is over.
                s.settled(epoch).await;
                Reply::Ok
            }
            // Acted on when the line was read.
            RpcCommand::AbortBash => Reply::Ok,
            RpcCommand::AbortRetry => {
                s.abort_retry();
                Reply::Ok
            }
            RpcCommand::NewSession { parent_session } => {
                match s.new_session(parent_session.as_deref().map(Path::new)).await {
                    Ok(()) => self.session_changed(data(&CancelledData { cancelled: false })),
                    Err(SessionCommandError::Cancelled) => data(&CancelledData { cancelled: true }),
                    Err(e) => Reply::Err(e.to_string()),
                }
            }
            RpcCommand::GetState => self.state(),
            RpcCommand::SetTodos { phases } => match s.set_todos(&phases) {
                Ok(todo_phases) => data(&TodoPhasesData { todo_phases }),
                Err(e) => Reply::Err(e),
            },
            RpcCommand::SetHostTools { tools } => match self.host.build_tools(&tools, |n| s.has_own_tool(n)) {
                Ok((tool_names, entries)) => {
                    s.set_host_tools(entries);
                    data(&ToolNamesData { tool_names })
                }
                Err(e) => Reply::Err(e),
            },
            RpcCommand::SetHostUriSchemes { schemes } => match self.host_uris.set_schemes(&schemes) {
                Ok(schemes) => data(&serde_json::json!({ "schemes": schemes })),
                Err(e) => Reply::Err(e),
            },
            RpcCommand::SetModel { provider, model_id } => match s.set_model(&provider, &model_id) {
                Ok(model) => data(&model),
                Err(e) => Reply::Err(e.to_string()),
            },
            RpcCommand::CycleModel => match s.cycle_model() {
                Ok(Some(c)) => data(&CycleModelData {
                    model: c.model,
                    thinking_level: Some(c.thinking_level),
                    is_scoped: c.is_scoped,
                }),
                Ok(None) => Reply::Data(Value::Null),
                Err(e) => Reply::Err(e.to_string()),
            },
            RpcCommand::GetAvailableModels => data(&ModelsData { models: s.available_models() }),
            RpcCommand::SetThinkingLevel { level } => match ThinkingLevel::parse(&level) {
                Some(level) => done(s.set_thinking_level(level)),
                None => Reply::Err(SessionCommandError::InvalidThinkingLevel(level).to_string()),
            },
            RpcCommand::CycleThinkingLevel => match s.cycle_thinking_level() {
                Some(level) => data(&LevelData { level }),
                None => Reply::Data(Value::Null),
            },
            RpcCommand::GetAvailableThinkingLevels => {
                data(&ThinkingLevelsData { levels: s.available_thinking_levels() })
            }
            RpcCommand::SetSteeringMode { mode } => {
                s.set_steering_mode(mode);
                Reply::Ok
            }
            RpcCommand::SetFollowUpMode { mode } => {
                s.set_follow_up_mode(mode);
                Reply::Ok
            }
            RpcCommand::SetInterruptMode { mode } => {
                s.set_interrupt_mode(mode);
                Reply::Ok
            }
            RpcCommand::Compact { custom_instructions } => match s.compact(custom_instructions.as_deref()).await {
                Ok(result) => data(&result),
                Err(e) => Reply::Err(e.to_string()),
            },
            RpcCommand::SetAutoCompaction { enabled } => {
                s.set_auto_compaction(enabled);
                Reply::Ok
            }
            RpcCommand::SetAutoRetry { enabled } => {
                s.set_auto_retry(enabled);
                Reply::Ok
            }
            RpcCommand::Bash { command, exclude_from_context } => {
                let excluded = exclude_from_context.unwrap_or(false);
                match s.bash(&command, bash_epoch, excluded, id.clone()).await {
                    Ok(result) => data(&result),
                    Err(e) => Reply::Err(e),
                }
            }
            RpcCommand::GetSessionStats => data(&s.stats()),
            RpcCommand::ExportHtml { output_path } => match s.export_html(output_path.as_deref().map(Path::new)) {
                Ok(path) => data(&PathData { path: path.to_string_lossy().into_owned() }),
                Err(e) => Reply::Err(e.to_string()),
            },
            RpcCommand::SwitchSession { session_path } => match s.switch_session(Path::new(&session_path)).await {
                Ok(()) => self.session_changed(data(&CancelledData { cancelled: false })),
                Err(SessionCommandError::Cancelled) => data(&CancelledData { cancelled: true }),
                Err(e) => Reply::Err(e.to_string()),
            },
            RpcCommand::Branch { entry_id } => self.branch(&entry_id, false).await,
            RpcCommand::Fork { entry_id } => self.branch(&entry_id, true).await,
            RpcCommand::Clone => match s.clone_session().await {
                Ok(()) => data(&CancelledData { cancelled: false }),
                Err(SessionCommandError::Cancelled) => data(&CancelledData { cancelled: true }),
                Err(e) => Reply::Err(e.to_string()),
            },
            RpcCommand::Rewind { entry_id, restore, force, dry_run } => {
                self.rewind(&entry_id, restore, force, dry_run).await
            }
            RpcCommand::GetBranchMessages | RpcCommand::GetForkMessages => data(&BranchMessagesData {
                messages: s
                    .branch_messages()
                    .into_iter()
                    .map(|e| BranchMessage { entry_id: e.entry_id.to_string(), text: e.text })
                    .collect(),
            }),
            RpcCommand::GetEntries { since } => match s.entries(since.as_deref()) {
                Ok(entries) => data(&entries),
                Err(e) => Reply::Err(e.to_string()),
            },
            RpcCommand::GetTree => {
                self.tree(id).await;
                return None;
            }
            RpcCommand::GetLastAssistantText => data(&LastAssistantTextData { text: s.last_assistant_text() }),
            RpcCommand::SetSessionName { name } => done(s.set_session_name(&name)),
            RpcCommand::GetMessages => {
                data(&MessagesData { messages: wire_messages(self.out.limits().updates, s.messages()) })
            }
            RpcCommand::GetCommands => data(&CommandsData { commands: s.slash_commands() }),
            RpcCommand::SetLocale { locale: _ } => Reply::Ok,
            RpcCommand::NegotiateProtocol { protocol_version } => {
                if protocol_version != 2 || !self.out.limits().offers_chunking() {
                    return Some(Reply::Err(format!(
                        "Unsupported RPC protocol version: {}",
                        js_text(&protocol_version)
                    )));
                }
                // The answer goes out under protocol 1; every frame after it under protocol 2,
                // whose hosts (omp's) read streaming updates whole.
                self.respond(id, "negotiate_protocol", data(&ProtocolData { protocol_version: 2 }));
                self.out.negotiate(self.updates_after_negotiation);
                return None;
            }
            RpcCommand::GetAvailableCommands
            | RpcCommand::GetMessagesPage { .. }
            | RpcCommand::SetFastMode { .. }
            | RpcCommand::SetSubagentSubscription { .. }
            | RpcCommand::GetSubagents
            | RpcCommand::GetSubagentMessages { .. }
            | RpcCommand::GetLoginProviders
            | RpcCommand::Handoff { .. } => self.omp_command(command).await,
            // Answered when the login ends; the commands after it go on meanwhile.
            RpcCommand::Login { provider_id } => {
                super::login::start(self.session.clone(), self.out.clone(), id.clone(), provider_id);
                return None;
            }
            RpcCommand::GetIntegrations => {
                let model = s.model();
                data(&IntegrationsData {
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                    model: IntegrationModel {
                        state: if model.is_some() { "connected" } else { "no_provider" }.to_owned(),
                        provider: model.map(|m| m.provider),
                    },
                    services: Vec::new(),
                })
            }
        })
    }

    /// Answers a prompt once: success when its run started (or the message was queued), the
    /// reason otherwise. pi's own client breaks on a second response with the same id.
    async fn prompt(&self, id: &Option<Value>, command: &str, message: String, options: PromptOptions) {
        match self.session.submit(message, options).await {
            Ok(PromptOutcome::Started(run)) => {
                // The answer comes before the run's first event, as pi writes them.
                self.respond(id, command, disposition(Disposition::Started));
                drop(run.start());
            }
            Ok(PromptOutcome::Command(run)) => {
                // Answered once the command finished, as pi answers it; the commands after it
                // go on meanwhile (docs/decisions.md D4).
                let (out, id, command) = (self.out.clone(), id.clone(), command.to_owned());
                let handle = run.start();
                tokio::spawn(async move {
                    let _ = handle.await;
                    out.push(OutItem::Response(response(&id, &command, disposition(Disposition::Handled))));
                });
            }
            Ok(PromptOutcome::Queued) => self.respond(id, command, disposition(Disposition::Queued)),
            Ok(PromptOutcome::Handled) => self.respond(id, command, disposition(Disposition::Handled)),
            Err(rejection) => self.respond(id, command, Reply::Err(rejection.to_string())),
        }
    }

    /// `get_state`. `systemPrompt` is one string, as xcsh's client reads it; a host that
    /// negotiated omp's protocol 2 reads omp's list of sections: the prompt's own sections (or
    /// the whole text as one, when an extension replaced it for a run).
    fn state(&self) -> Reply {
        let mut state = self.session.state();
        if self.out.limits().updates.hides_system_messages() {
            state.message_count = state.message_count.saturating_sub(self.session.system_message_count());
        }
        let reply = data(&state);
        match reply {
            Reply::Data(mut state) if self.out.limits().chunked => {
                let sections = self.session.system_prompt_sections();
                if let Some(prompt) = state.get_mut("systemPrompt").filter(|p| p.is_string()) {
                    *prompt = match sections {
                        Some(sections) => Value::Array(sections.into_iter().map(Value::String).collect()),
                        None => Value::Array(vec![prompt.take()]),
                    };
                }
                Reply::Data(state)
            }
            other => other,
        }
    }

    /// `get_tree`, answered from a thread whose stack holds the whole tree: the nodes nest as
    /// deep as the session is long, and building, writing and dropping them recurse that deep.
    async fn tree(&self, id: &Option<Value>) {
        let (tree, leaf_id) = self.session.tree();
        let limits = self.out.limits();
        let response_id = id.clone();
        let lines = on_deep_stack(move || {
            let response = match serde_json::to_value(TreeData { tree, leaf_id }) {
                Ok(data) => RpcResponse::with_data(response_id, "get_tree", data),
                Err(e) => RpcResponse::error(response_id, "get_tree", format!("Failed to serialize response: {e}")),
            };
            crate::modes::encoder::encode_stateless(&limits, OutItem::Response(response))
        })
        .await;
        match lines {
            Some(lines) => self.out.push(lines),
            None => self.respond(id, "get_tree", Reply::Err("Internal error while handling get_tree".into())),
        }
    }

    /// After the conversation was replaced: the sub-agents of the old one are forgotten and
    /// omp's hosts get the commands again (before the answer, as omp writes them).
    fn session_changed(&self, reply: Reply) -> Reply {
        self.subagents.reset();
        self.session.announce_commands();
        reply
    }

    /// `rewind`: the files, the conversation or both, back to just before a user message.
    async fn rewind(&self, entry_id: &str, restore: rho_rpc::RewindRestore, force: bool, dry_run: bool) -> Reply {
        let (code, conversation) = match restore {
            rho_rpc::RewindRestore::Both => (true, true),
            rho_rpc::RewindRestore::Code => (true, false),
            rho_rpc::RewindRestore::Conversation => (false, true),
        };
        let options = crate::agent_session::RewindOptions { code, conversation, force, dry_run };
        match self.session.rewind(entry_id, options).await {
            Ok(rewound) => data(&rho_rpc::RewindData { files: rewound.files, text: rewound.editor_text }),
            Err(SessionCommandError::InvalidBranchEntry) => {
                Reply::Err("Invalid entry ID for rewinding: not a user message on the current branch".into())
            }
            Err(e) => Reply::Err(e.to_string()),
        }
    }

    /// omp's `branch` and pi's `fork`: both continue in a new file; omp's hosts also get the
    /// commands again.
    async fn branch(&self, entry_id: &str, fork: bool) -> Reply {
        match self.session.fork(entry_id).await {
            Ok(text) if fork => data(&BranchData { text, cancelled: false }),
            Ok(text) => self.session_changed(data(&BranchData { text, cancelled: false })),
            Err(SessionCommandError::Cancelled) => data(&BranchData { text: String::new(), cancelled: true }),
            Err(SessionCommandError::InvalidBranchEntry) if fork => Reply::Err("Invalid entry ID for forking".into()),
            Err(e) => Reply::Err(e.to_string()),
        }
    }
}

/// The response frame for `reply`.
fn response(id: &Option<Value>, command: &str, reply: Reply) -> RpcResponse {
    match reply {
        Reply::Ok => RpcResponse::ok(id.clone(), command),
        Reply::Data(data) => RpcResponse::with_data(id.clone(), command, data),
        Reply::Err(error) => RpcResponse::error(id.clone(), command, error),
        Reply::ErrWithCode(error, code) => RpcResponse::error_with_code(id.clone(), command, error, code),
    }
}
