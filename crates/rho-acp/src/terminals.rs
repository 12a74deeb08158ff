//! The editor's terminals: `terminal/*` behind the `bash` tool's [`Terminals`] hook, for a
//! client that offers `terminal`. Each command runs in a terminal the editor creates
//! (`terminal/create`), which the call's tool-call content embeds so the user watches it live;
//! rho waits for its exit (`terminal/wait_for_exit`), kills it on abort or timeout
//! (`terminal/kill`), takes its output (`terminal/output`) and releases it (`terminal/release`).

use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest, SessionId, TerminalId,
    TerminalOutputRequest, WaitForTerminalExitRequest,
};
use futures::future::BoxFuture;
use rho_tools::process::Ending;
use rho_tools::{TerminalCommand, TerminalRun, Terminals};
use tokio_util::sync::CancellationToken;

use super::files::client_error;

/// The most output the editor keeps per terminal (it drops the oldest bytes past it); rho shows
/// the model the tail anyway.
const OUTPUT_BYTE_LIMIT: u64 = 4 * 1024 * 1024;

/// One session's view of the client's terminals.
pub(super) struct ClientTerminals {
    client: ConnectionTo<Client>,
    /// Set once the session exists (its tools are made before it has an id).
    session_id: Arc<OnceLock<SessionId>>,
}

impl std::fmt::Debug for ClientTerminals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTerminals").finish_non_exhaustive()
    }
}

impl ClientTerminals {
    /// The hook for a client that offers terminals, or `None`.
    pub fn offered(
        client: ConnectionTo<Client>,
        session_id: Arc<OnceLock<SessionId>>,
        terminal: bool,
    ) -> Option<Arc<dyn Terminals>> {
        terminal.then(|| Arc::new(Self { client, session_id }) as Arc<dyn Terminals>)
    }

    async fn wait(&self, session_id: &SessionId, id: &TerminalId) -> io::Result<Ending> {
        let request = WaitForTerminalExitRequest::new(session_id.clone(), id.clone());
        let exit = self.client.send_request(request).block_task().await.map_err(client_error)?;
        Ok(Ending::Exited(exit.exit_status.exit_code.and_then(|c| i32::try_from(c).ok())))
    }

    async fn kill(&self, session_id: &SessionId, id: &TerminalId) -> io::Result<()> {
        let request = KillTerminalRequest::new(session_id.clone(), id.clone());
        self.client.send_request(request).block_task().await.map(drop).map_err(client_error)
    }

    /// Waits for the command's end, or kills it on abort or timeout.
    async fn ending(
        &self,
        session_id: &SessionId,
        id: &TerminalId,
        cancel: &CancellationToken,
        timeout: Option<Duration>,
    ) -> io::Result<Ending> {
        let expired = async {
            match timeout {
                Some(after) => tokio::time::sleep(after).await,
                None => std::future::pending().await,
            }
        };
        let stopped = tokio::select! {
            ending = self.wait(session_id, id) => return ending,
            () = cancel.cancelled() => Ending::Cancelled,
            () = expired => Ending::TimedOut,
        };
        self.kill(session_id, id).await?;
        Ok(stopped)
    }

    async fn run_in(
        &self,
        session_id: SessionId,
        command: TerminalCommand,
        started: &(dyn Fn(&str) + Send + Sync),
        cancel: &CancellationToken,
        timeout: Option<Duration>,
    ) -> io::Result<TerminalRun> {
        let env = command.env.into_iter().map(|(name, value)| EnvVariable::new(name, value)).collect();
        let create = CreateTerminalRequest::new(session_id.clone(), command.program.to_string_lossy())
            .args(command.args)
            .env(env)
            .cwd(command.cwd)
            .output_byte_limit(OUTPUT_BYTE_LIMIT);
        let id = self.client.send_request(create).block_task().await.map_err(client_error)?.terminal_id;
        started(&id.0);
        let ending = self.ending(&session_id, &id, cancel, timeout).await;
        let output = match ending {
            Ok(_) => {
                let request = TerminalOutputRequest::new(session_id.clone(), id.clone());
                self.client.send_request(request).block_task().await.map(|o| o.output).map_err(client_error)
            }
            Err(_) => Ok(String::new()),
        };
        let release = ReleaseTerminalRequest::new(session_id, id);
        let released = self.client.send_request(release).block_task().await.map(drop).map_err(client_error);
        let (ending, output) = (ending?, output?);
        released?;
        Ok(TerminalRun { output, ending })
    }
}

impl Terminals for ClientTerminals {
    fn run<'a>(
        &'a self,
        command: TerminalCommand,
        started: &'a (dyn Fn(&str) + Send + Sync),
        cancel: &'a CancellationToken,
        timeout: Option<Duration>,
    ) -> BoxFuture<'a, io::Result<TerminalRun>> {
        Box::pin(async move {
            let Some(session_id) = self.session_id.get().cloned() else {
                return Err(io::Error::other("the session has no id yet"));
            };
            self.run_in(session_id, command, started, cancel, timeout).await
        })
    }
}
