//! Which extensions a run loads (`-e`, the `extensions` settings, the extension folders; see
//! rho-extensions' `discover`) and how the mode hosts them. No extension found: no host, and
//! options meant for extension flags are unknown options.

use std::time::Duration;

use rho_extensions::discover::{Sources, discover, extension_paths, is_package_source};
use rho_extensions::protocol::PackagesInit;
use serde_json::Value;

use super::StartupError;
use crate::cli::Cli;
use crate::config::{ConfigPaths, Settings};
use crate::extensions::{Config, Output};

/// How a mode shows what extensions do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtensionUi {
    /// RPC and interactive mode: dialogs work (`ctx.hasUI`); extensions print to stderr (RPC)
    /// or to a log file (`interactive`, where the terminal is the UI).
    Rpc,
    Interactive,
    /// Print and JSON mode: no dialogs, output to stderr.
    None,
}

/// Whether any extension would load for this command line (settings read quietly): options
/// rho does not know are extension flags only then.
pub fn extensions_configured(cli: &Cli) -> bool {
    let Ok(cwd) = std::env::current_dir() else {
        return false;
    };
    let paths = ConfigPaths::from_env(cwd);
    let (settings, _) = Settings::load(&paths, &crate::config::LoadOptions::default());
    !extension_paths(&sources(cli, &paths, &settings)).is_empty() || packages(cli, &settings).is_some()
}

/// The package sources to resolve in the host: `-e` values that name packages, and (unless
/// `--no-extensions`) the settings' `packages`.
fn packages(cli: &Cli, settings: &Settings) -> Option<Vec<String>> {
    let from_cli: Vec<String> = cli.extensions.iter().filter(|e| is_package_source(e)).cloned().collect();
    let configured = |value: Option<&Value>| value.and_then(Value::as_array).is_some_and(|list| !list.is_empty());
    let (global, project) = settings.by_file("packages");
    let in_settings = !cli.no_extensions && (configured(global) || configured(project));
    (in_settings || !from_cli.is_empty()).then_some(from_cli)
}

fn sources<'a>(cli: &Cli, paths: &'a ConfigPaths, settings: &Settings) -> Sources<'a> {
    let strings = |value: Option<&Value>| -> Vec<String> {
        value
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let (global, project) = settings.by_file("extensions");
    Sources {
        cwd: &paths.cwd,
        agent_dir: &paths.agent_dir,
        cli: cli.extensions.clone(),
        project_settings: strings(project),
        global_settings: strings(global),
        discover: !cli.no_extensions,
        skip_project: false,
    }
}

/// The extensions to load and how; `None` when there are none.
pub fn extension_config(
    cli: &Cli,
    paths: &ConfigPaths,
    settings: &Settings,
    ui: ExtensionUi,
) -> Result<Option<Config>, StartupError> {
    let (found, from_cli) = discover(&sources(cli, paths, settings));
    let packages = packages(cli, settings).map(|sources| PackagesInit { cli_count: from_cli, sources });
    if found.is_empty() && packages.is_none() {
        if let Some((name, _)) = cli.extension_flags.first() {
            return Err(StartupError::new(format!("Error: Unknown option: --{name}"), 2));
        }
        return Ok(None);
    }
    let output = match ui {
        ExtensionUi::Interactive => Output::File(paths.agent_dir.join("logs").join("extensions.log")),
        ExtensionUi::Rpc | ExtensionUi::None => Output::Stderr,
    };
    let timeout_ms = settings.get("extensionHookTimeoutMs").and_then(Value::as_u64).unwrap_or(30_000);
    Ok(Some(Config {
        paths: found,
        flag_values: cli.extension_flags.clone(),
        has_ui: ui != ExtensionUi::None,
        packages,
        output,
        hook_timeout: Duration::from_millis(timeout_ms.max(1)),
    }))
}
