//! The agent side of the protocol: each request from the client becomes calls on the
//! [`AgentSession`] of the session it names. Requests are answered in the SDK's dispatch loop
//! and so must not wait on the client: a prompt takes its run and returns, and a task of its own
//! answers it once the run is over (its `session/update`s are all out by then).
//!
//! What rho answers:
//! - `initialize`: protocol v1; `loadSession`; images and embedded context in prompts;
//!   `session/close`; the subscription logins as terminal auth methods (the editor runs `rho
//!   login <provider>` in a terminal). A prompt refused for want of a model or a key reads
//!   `auth.json` again (a login made meanwhile), and is answered `auth_required` when still
//!   refused, so the editor offers those logins.
//! - `session/new`, `session/load`: see [`super::sessions`]; their `mcpServers` join the
//!   session's MCP servers ([`super::mcp`]: stdio, http and sse, advertised in `initialize`);
//!   a `session/load` of a session open already keeps the servers it has.
//! - `session/prompt`: the stop reason from the last reply (`end_turn`, `max_tokens`,
//!   `cancelled`, `refusal`); a failed reply is a JSON-RPC error with its message. A session's
//!   first prompt in a project not trusted that has code of its own asks the editor about the
//!   project first ([`super::trust`]).
//! - `session/set_config_option`: model and thinking level ([`super::config`]).
//! - `session/set_mode`: `auto` or `ask` ([`super::permissions`]); `authenticate`: nothing to do
//!   (terminal methods never reach it).
//! - `session/cancel` (a notification): aborts the run ([`AgentSession::interrupt`]).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodTerminal, AuthenticateResponse, ClientCapabilities, ClientNotification,
    ClientRequest, CloseSessionResponse, Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest,
    LoadSessionResponse, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionCapabilities, SessionCloseCapabilities, SessionId, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use rho_types::types::StopReason as RhoStopReason;

use super::sessions::{AcpSession, ClientSide, Open};
use super::{config, mcp, prompt, replay, sessions};
use rho_coding_agent::agent_session::{PromptOptions, PromptOutcome, PromptRejection, RunOutcome};
use rho_coding_agent::cli::Cli;

/// How long shutdown waits for runs to stop.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(800);

/// The agent: the command line every session is built from, and the sessions.
pub(super) struct AcpAgent {
    cli: Cli,
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<SessionId, Arc<AcpSession>>>,
}

/// Answers with a typed response (the SDK's catch-all request type answers JSON).
fn answer<T: serde::Serialize>(responder: Responder, result: Result<T, Error>) -> Result<(), Error> {
    responder.respond_with_result(result.and_then(|r| serde_json::to_value(r).map_err(Error::into_internal_error)))
}

/// Loads a new ACP session's extensions (ACP has no dialogs for them: `ctx.hasUI` is false).
async fn start_extensions(cli: &Cli, acp: &AcpSession) -> Result<(), Error> {
    let problems = rho_coding_agent::modes::extensions::start_quietly(
        cli,
        &acp.session,
        rho_coding_agent::startup::ExtensionUi::None,
    )
    .await
    .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, e.message))?;
    for problem in problems {
        tracing::warn!("{problem}");
    }
    Ok(())
}

fn invalid_params(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

impl AcpAgent {
    pub fn new(cli: Cli) -> Self {
        Self { cli, client: Mutex::new(ClientCapabilities::default()), sessions: Mutex::new(HashMap::new()) }
    }

    fn session(&self, id: &SessionId) -> Result<Arc<AcpSession>, Error> {
        self.sessions.lock().get(id).cloned().ok_or_else(|| invalid_params(format!("Unknown session: {}", id.0)))
    }

    /// Answers one request (a prompt is answered when its run ends).
    pub fn request(
        &self,
        request: ClientRequest,
        responder: Responder,
        cx: &ConnectionTo<Client>,
    ) -> Result<(), Error> {
        match request {
            ClientRequest::InitializeRequest(r) => answer(responder, Ok(self.initialize(r))),
            ClientRequest::AuthenticateRequest(_) => answer(responder, Ok(AuthenticateResponse::new())),
            ClientRequest::NewSessionRequest(r) => self.new_session(r, responder, cx),
            ClientRequest::LoadSessionRequest(r) => self.load_session(r, responder, cx),
            ClientRequest::PromptRequest(r) => self.prompt(r, responder),
            ClientRequest::SetSessionConfigOptionRequest(r) => answer(responder, self.set_config_option(r)),
            ClientRequest::CloseSessionRequest(r) => {
                if let Some(acp) = self.sessions.lock().remove(&r.session_id) {
                    acp.session.interrupt();
                }
                answer(responder, Ok(CloseSessionResponse::new()))
            }
            ClientRequest::SetSessionModeRequest(r) => answer(responder, self.set_mode(r)),
            other => responder.respond_with_error(Error::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Not supported by rho: {}", other.method()),
            )),
        }
    }

    /// `session/cancel`; other notifications are ignored.
    pub fn notification(&self, notification: ClientNotification) {
        if let ClientNotification::CancelNotification(cancel) = notification
            && let Ok(acp) = self.session(&cancel.session_id)
        {
            acp.cancelled.store(true, Ordering::Release);
            acp.session.interrupt();
        }
    }

    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        *self.client.lock() = request.client_capabilities;
        let prompts = PromptCapabilities::new().image(true).embedded_context(true);
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .mcp_capabilities(mcp::capabilities())
            .prompt_capabilities(prompts)
            .session_capabilities(SessionCapabilities::new().close(SessionCloseCapabilities::new()));
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .auth_methods(auth_methods())
            .agent_info(Implementation::new("rho", env!("CARGO_PKG_VERSION")).title("rho".to_owned()))
    }

    fn client_side<'a>(
        &self,
        cx: &'a ConnectionTo<Client>,
        fs: &'a agent_client_protocol::v1::schema::FileSystemCapabilities,
        mcp_servers: &'a [McpServer],
    ) -> ClientSide<'a> {
        ClientSide { connection: cx, fs, terminal: self.client.lock().terminal, mcp_servers }
    }

    fn new_session(
        &self,
        request: NewSessionRequest,
        responder: Responder,
        cx: &ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let fs = self.client.lock().fs.clone();
        let client = self.client_side(cx, &fs, &request.mcp_servers);
        let (id, acp) = match sessions::open(&self.cli, &request.cwd, &Open::New, &client) {
            Ok(opened) => opened,
            Err(message) => return responder.respond_with_error(invalid_params(message)),
        };
        let response = NewSessionResponse::new(id.clone())
            .config_options(Some(config::options(&acp.session)))
            .modes(acp.permissions.modes(sandbox_mode(&acp.session)));
        let acp = Arc::new(acp);
        self.sessions.lock().insert(id, acp.clone());
        // The session's extensions load before the answer: the first prompt finds them.
        let cli = self.cli.clone();
        tokio::spawn(async move {
            let started = start_extensions(&cli, &acp).await;
            let _ = answer(responder, started.map(|()| response));
            acp.session.announce_commands();
        });
        Ok(())
    }

    /// Replays the history, then answers, then announces the commands.
    fn load_session(
        &self,
        request: LoadSessionRequest,
        responder: Responder,
        cx: &ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let existing = self.sessions.lock().get(&request.session_id).cloned();
        let acp = match existing {
            Some(acp) => {
                if !request.mcp_servers.is_empty() {
                    tracing::info!("session/load of an open session: it keeps the MCP servers it has");
                }
                acp
            }
            None => {
                let fs = self.client.lock().fs.clone();
                let how = Open::Load(&request.session_id.0);
                let client = self.client_side(cx, &fs, &request.mcp_servers);
                match sessions::open(&self.cli, &request.cwd, &how, &client) {
                    Ok((id, acp)) => {
                        let acp = Arc::new(acp);
                        self.sessions.lock().insert(id, acp.clone());
                        acp
                    }
                    Err(message) => return responder.respond_with_error(invalid_params(message)),
                }
            }
        };
        let history = acp.session.messages();
        for update in replay::replay(acp.session.cwd(), &history, &acp.session.todo_phases()) {
            acp.updates.send(update);
        }
        let response = LoadSessionResponse::new()
            .config_options(Some(config::options(&acp.session)))
            .modes(acp.permissions.modes(sandbox_mode(&acp.session)));
        answer(responder, Ok(response))?;
        acp.session.announce_commands();
        Ok(())
    }

    fn prompt(&self, request: PromptRequest, responder: Responder) -> Result<(), Error> {
        let acp = match self.session(&request.session_id) {
            Ok(acp) => acp,
            Err(e) => return responder.respond_with_error(e),
        };
        let input = match prompt::build(request.prompt, acp.session.cwd()) {
            Ok(input) => input,
            Err(message) => return responder.respond_with_error(invalid_params(message)),
        };
        if let Some(options) = super::rewind::parse(&input.text) {
            tokio::spawn(async move {
                super::rewind::run(&acp, options).await;
                let _ = answer(responder, Ok(PromptResponse::new(StopReason::EndTurn)));
            });
            return Ok(());
        }
        let question = acp.trust_question.lock().take();
        match question {
            // The session's first prompt: the editor is asked about the project first.
            Some(question) => {
                tokio::spawn(async move {
                    question.ask(&acp.permissions).await;
                    if let Err(e) = start_prompt(acp, input, responder) {
                        tracing::debug!("session/prompt not answered: {e}");
                    }
                });
                Ok(())
            }
            None => start_prompt(acp, input, responder),
        }
    }

    fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let acp = self.session(&request.session_id)?;
        config::set(&acp.session, &request.config_id.0, &request.value).map_err(invalid_params)?;
        Ok(SetSessionConfigOptionResponse::new(config::options(&acp.session)))
    }

    fn set_mode(&self, request: SetSessionModeRequest) -> Result<SetSessionModeResponse, Error> {
        let acp = self.session(&request.session_id)?;
        acp.permissions.set_mode(&request.mode_id).map_err(invalid_params)?;
        Ok(SetSessionModeResponse::new())
    }

    /// Stops every run and waits (briefly) for the session files to be complete.
    pub async fn shutdown(&self) {
        let sessions: Vec<Arc<AcpSession>> = self.sessions.lock().drain().map(|(_, s)| s).collect();
        for acp in &sessions {
            acp.session.interrupt();
            acp.session.abort_bash();
        }
        let stopped = futures::future::join_all(sessions.iter().map(|acp| acp.session.abort()));
        if tokio::time::timeout(SHUTDOWN_GRACE, stopped).await.is_err() {
            tracing::warn!("shutdown: a run did not stop in time");
        }
        futures::future::join_all(sessions.iter().map(|acp| acp.session.shutdown())).await;
    }
}

/// Runs a prompt in `acp` and answers `responder` when it ends.
fn start_prompt(acp: Arc<AcpSession>, input: prompt::PromptInput, responder: Responder) -> Result<(), Error> {
    acp.cancelled.store(false, Ordering::Release);
    acp.updates.take_refusal();
    let options = || PromptOptions { images: input.images.clone(), ..PromptOptions::default() };
    let mut outcome = acp.session.prompt(&input.text, options());
    if outcome.as_ref().is_err_and(needs_login) && acp.session.reload_logins().is_ok() {
        // A login made since (the editor's terminal auth) is taken up.
        outcome = acp.session.prompt(&input.text, options());
    }
    match outcome {
        Ok(PromptOutcome::Started(run)) => {
            let handle = run.start();
            tokio::spawn(async move {
                let outcome = handle.await.unwrap_or_default();
                if let Err(e) = answer(responder, stop_reason(&acp, outcome).map(PromptResponse::new)) {
                    tracing::debug!("session/prompt not answered: {e}");
                }
            });
            Ok(())
        }
        Ok(PromptOutcome::Command(command)) => {
            let handle = command.start();
            tokio::spawn(async move {
                let _ = handle.await;
                let _ = answer(responder, Ok(PromptResponse::new(StopReason::EndTurn)));
            });
            Ok(())
        }
        // Queued only with a streaming behaviour, which ACP prompts never carry.
        Ok(PromptOutcome::Queued | PromptOutcome::Handled) => {
            answer(responder, Ok(PromptResponse::new(StopReason::EndTurn)))
        }
        Err(rejection) if needs_login(&rejection) => {
            responder.respond_with_error(Error::auth_required().data(rejection.to_string()))
        }
        Err(rejection) => responder.respond_with_error(Error::new(ErrorCode::INVALID_REQUEST, rejection.to_string())),
    }
}

/// The sandbox the session's commands run in, by its mode's name; `None` at full access.
fn sandbox_mode(session: &rho_coding_agent::AgentSession) -> Option<&'static str> {
    let mode = session.settings().sandbox().mode;
    (mode != rho_sandbox::SandboxMode::DangerFullAccess).then(|| mode.as_str())
}

/// The logins an editor can run in a terminal: `rho login <provider>` for each one rho has.
fn auth_methods() -> Vec<AuthMethod> {
    rho_ai::oauth::providers::PROVIDERS
        .iter()
        .filter(|p| rho_coding_agent::login::flow::has_flow(p))
        .map(|p| {
            let method = AuthMethodTerminal::new(format!("login-{}", p.id), format!("Log in to {}", p.name))
                .description(format!("Runs `rho login {}` in a terminal", p.id))
                .args(vec!["login".to_owned(), p.id.to_owned()]);
            AuthMethod::Terminal(method)
        })
        .collect()
}

/// A prompt refused for want of a model or a key: a login would let it run.
fn needs_login(rejection: &PromptRejection) -> bool {
    matches!(rejection, PromptRejection::NoModel { .. } | PromptRejection::NoApiKey { .. } | PromptRejection::Login(_))
}

/// ACP's stop reason for a run that ended as `outcome`.
fn stop_reason(acp: &AcpSession, outcome: RunOutcome) -> Result<StopReason, Error> {
    if acp.cancelled.load(Ordering::Acquire) {
        return Ok(StopReason::Cancelled);
    }
    match outcome.stop_reason {
        Some(RhoStopReason::Length) => Ok(StopReason::MaxTokens),
        Some(RhoStopReason::Aborted) => Ok(StopReason::Cancelled),
        Some(RhoStopReason::Error) if acp.updates.take_refusal() => Ok(StopReason::Refusal),
        Some(RhoStopReason::Error) => Err(Error::new(
            ErrorCode::INTERNAL_ERROR,
            outcome.error_message.unwrap_or_else(|| "The model request failed".to_owned()),
        )),
        _ => Ok(StopReason::EndTurn),
    }
}
