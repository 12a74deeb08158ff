//! pi 1.6's `project_trust` event, asked before the session is built: a host loads the
//! extensions that do not depend on the decision (the user's own and the command line's, as pi's
//! bootstrap pass loads them), its handlers answer, and the host is closed. The extensions load
//! again with the session, the project's among them when it is trusted (pi loads them twice as
//! well).

use std::path::Path;

use rho_extensions::protocol::{Init, SessionSync};
use rho_extensions::{ExtensionHost, HostCommand, HostOutput, Incoming, ToHost};
use serde_json::Value;
use tokio::sync::mpsc;

use super::Config;

/// What a `project_trust` handler decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustAnswer {
    pub trusted: bool,
    /// Save the decision (`trust.json`), not only for this run.
    pub remember: bool,
}

/// The first yes or no of the `project_trust` handlers of `config`'s extensions for the project
/// at `cwd`; `None` when all leave it undecided, or the host cannot answer (which is said on
/// stderr).
pub async fn ask(config: &Config, cwd: &Path, agent_dir: &Path) -> Option<TrustAnswer> {
    let runtime = match rho_extensions::install::prepare(agent_dir, &mut |line: &str| eprintln!("{line}")).await {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("Warning: project_trust was not asked of the extensions: {e}");
            return None;
        }
    };
    let (incoming_tx, mut incoming) = mpsc::unbounded_channel();
    // Only answers matter here; what else the extensions ask of a session there is not.
    tokio::spawn(async move {
        while let Some(message) = incoming.recv().await {
            match message {
                Incoming::Answer(answer) => answer.deliver(),
                Incoming::Fault(fault) => {
                    eprintln!("Extension \"{}\" {} error: {}", fault.extension_path, fault.event, fault.error);
                }
                _ => {}
            }
        }
    });
    let mut env = vec![("PI_CODING_AGENT_DIR".to_owned(), agent_dir.display().to_string())];
    if let Some((var, token)) = rho_tools::guardian::owner_env() {
        env.push((var.to_owned(), token.to_owned()));
    }
    let command = HostCommand {
        node: runtime.node.clone(),
        script: runtime.script.clone(),
        cwd: cwd.to_path_buf(),
        env,
        output: HostOutput::Stderr,
    };
    let host = match ExtensionHost::spawn(command, incoming_tx).await {
        Ok(host) => host,
        Err(e) => {
            eprintln!("Warning: project_trust was not asked of the extensions: {e}");
            return None;
        }
    };
    let answer = ask_host(&host, config, cwd, agent_dir).await;
    host.kill();
    match answer {
        Ok(answer) => answer,
        Err(e) => {
            eprintln!("Warning: project_trust was not asked of the extensions: {e}");
            None
        }
    }
}

async fn ask_host(
    host: &ExtensionHost,
    config: &Config,
    cwd: &Path,
    agent_dir: &Path,
) -> Result<Option<TrustAnswer>, String> {
    let init = Init {
        cwd: cwd.display().to_string(),
        agent_dir: agent_dir.display().to_string(),
        cli: config.cli.clone(),
        no_extensions: config.no_extensions,
        trusted_project: false,
        extensions: config.rho_only.iter().map(|p| p.display().to_string()).collect(),
        flag_values: config.flag_values.clone(),
        has_ui: false,
        mode: config.mode,
        hook_timeout_ms: u64::try_from(config.hook_timeout.as_millis()).unwrap_or(u64::MAX),
        terminal: None,
        theme: None,
        session: SessionSync::default(),
        state: Value::Null,
        spoken_apis: rho_types::model::api::SPOKEN,
    };
    let closed = || "the extension host closed".to_owned();
    let (_, loaded) = host.request(&ToHost::Init(Box::new(init)));
    loaded.await.map_err(|_| closed())?.map_err(|e| e.to_string())?;
    let (_, answer) = host.request(&ToHost::ProjectTrust { cwd: cwd.display().to_string() });
    let value = tokio::time::timeout(config.hook_timeout, answer)
        .await
        .map_err(|_| format!("no answer within {} s", config.hook_timeout.as_secs_f32()))?
        .map_err(|_| closed())?
        .map_err(|e| e.to_string())?;
    Ok(match value.get("trusted").and_then(Value::as_str) {
        Some(decided @ ("yes" | "no")) => Some(TrustAnswer {
            trusted: decided == "yes",
            remember: value.get("remember").and_then(Value::as_bool) == Some(true),
        }),
        _ => None,
    })
}
