//! Starting a mode's extensions, which every mode does the same way: the extensions the command
//! line and the settings name are loaded once the session exists; installing the host (first
//! use) says so on stderr; what does not load is reported and the rest go on; a start that
//! cannot happen (no Node.js, an unknown option) ends the run with one clear error. A `--model`
//! of a provider an extension registers is chosen once they are loaded.

use crate::agent_session::AgentSession;
use crate::cli::Cli;
use crate::startup::{ExtensionUi, StartupError, extension_config, select_after_extensions};

/// An extension that did not load: where it is, and why (pi's `Failed to load extension: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProblem {
    pub path: String,
    pub error: String,
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Error: {} ({})", self.error, self.path)
    }
}

/// Starts the session's extensions; `Err` carries the error to print and the exit code.
/// Extensions that did not load are printed on stderr.
pub(crate) async fn start(cli: &Cli, session: &AgentSession, ui: ExtensionUi) -> Result<(), StartupError> {
    for problem in start_quietly(cli, session, ui).await? {
        eprintln!("{problem}");
    }
    Ok(())
}

/// [`start`], returning the extensions that did not load (the interactive mode shows them in its
/// history, RPC mode sends them to the host).
pub async fn start_quietly(
    cli: &Cli,
    session: &AgentSession,
    ui: ExtensionUi,
) -> Result<Vec<LoadProblem>, StartupError> {
    let config = {
        let settings = session.settings().clone();
        extension_config(cli, session.paths(), &settings, ui)?
    };
    let Some(config) = config else {
        return Ok(Vec::new());
    };
    let started = session
        .start_extensions(config, &mut |line: &str| eprintln!("{line}"))
        .await
        .map_err(|e| StartupError::new(format!("Error: {e}"), 1))?;
    select_after_extensions(cli, session)?;
    Ok(started.load_errors.into_iter().map(|(path, error)| LoadProblem { path, error }).collect())
}

/// The model registry with the providers extensions register (`--list-models`, as pi lists
/// them): the extensions are loaded into a session kept in memory, then closed.
pub async fn registry_with_extensions(
    cli: &Cli,
    prepared: crate::startup::Prepared,
) -> Result<std::sync::Arc<rho_ai::ModelRegistry>, StartupError> {
    let mut cli = cli.clone();
    cli.no_session = true;
    // The models are listed whatever `--model` names.
    cli.model = None;
    let sink: std::sync::Arc<dyn crate::agent_session::SessionEventSink> =
        std::sync::Arc::new(|event: crate::agent_session::AgentSessionEvent| {
            if let crate::agent_session::AgentSessionEvent::ExtensionError(e) = event {
                eprintln!("Extension error ({}, {}): {}", e.extension_path, e.event, e.error);
            }
        });
    let session = AgentSession::new(crate::startup::session_options(&cli, prepared, sink, None)?);
    start(&cli, &session, ExtensionUi::None).await?;
    let registry = session.registry();
    session.shutdown().await;
    Ok(registry)
}
