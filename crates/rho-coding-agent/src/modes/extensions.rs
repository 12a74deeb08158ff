//! Starting a mode's extensions, which every mode does the same way: the extensions the command
//! line and the settings name are loaded once the session exists; installing the host (first
//! use) says so on stderr; what does not load is reported and the rest go on; a start that
//! cannot happen (no Node.js, an unknown option) ends the run with one clear error.

use crate::agent_session::AgentSession;
use crate::cli::Cli;
use crate::startup::{ExtensionUi, StartupError, extension_config};

/// Starts the session's extensions; `Err` carries the error to print and the exit code.
/// Extensions that did not load are printed on stderr.
pub(crate) async fn start(cli: &Cli, session: &AgentSession, ui: ExtensionUi) -> Result<(), StartupError> {
    for problem in start_quietly(cli, session, ui).await? {
        eprintln!("{problem}");
    }
    Ok(())
}

/// [`start`], returning the extensions that did not load as lines to show (the interactive
/// mode shows them in its history).
pub(crate) async fn start_quietly(
    cli: &Cli,
    session: &AgentSession,
    ui: ExtensionUi,
) -> Result<Vec<String>, StartupError> {
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
    Ok(started.load_errors.into_iter().map(|(path, error)| format!("Error: {error} ({path})")).collect())
}
