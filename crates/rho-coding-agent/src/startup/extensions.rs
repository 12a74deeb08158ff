//! Which extensions a run loads (`-e`, the `extensions` settings, the extension folders; see
//! rho-extensions' `discover`) and how the mode hosts them. No extension found: no host, and
//! options meant for extension flags are unknown options.

use std::time::Duration;

use rho_extensions::TerminalSize;
use rho_extensions::discover::{Sources, extension_paths, is_package_source, rho_only_paths};
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
    let trusted_project = super::trust::project_trusted(cli, &paths);
    let options = crate::config::LoadOptions { trusted_project, ..Default::default() };
    let (settings, _) = Settings::load(&paths, &options);
    !extension_paths(&sources(cli, &paths, &settings)).is_empty() || packages(cli, &settings).is_some()
}

/// Whether packages are to be loaded: `-e` names one, or (unless `--no-extensions`) the
/// settings list some.
fn packages(cli: &Cli, settings: &Settings) -> Option<()> {
    let from_cli = cli.extensions.iter().any(|e| is_package_source(e));
    let configured = |value: Option<&Value>| value.and_then(Value::as_array).is_some_and(|list| !list.is_empty());
    let (global, project) = settings.by_file("packages");
    let in_settings = !cli.no_extensions && (configured(global) || configured(project));
    (in_settings || from_cli).then_some(())
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
        skip_project: !settings.project_trusted(),
    }
}

/// The extensions to load and how; `None` when there are none.
pub fn extension_config(
    cli: &Cli,
    paths: &ConfigPaths,
    settings: &Settings,
    ui: ExtensionUi,
) -> Result<Option<Config>, StartupError> {
    let sources = sources(cli, paths, settings);
    let found = extension_paths(&sources);
    let packages = packages(cli, settings);
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
        rho_only: rho_only_paths(&sources),
        paths: found,
        starts_for_packages: packages.is_some(),
        flag_values: cli.extension_flags.clone(),
        has_ui: ui != ExtensionUi::None,
        mode: match ui {
            ExtensionUi::Interactive => "tui",
            ExtensionUi::Rpc => "rpc",
            ExtensionUi::None if cli.mode == Some(crate::cli::Mode::Json) => "json",
            ExtensionUi::None => "print",
        },
        cli: cli.extensions.clone(),
        no_extensions: cli.no_extensions,
        trusted_project: settings.project_trusted(),
        terminal: (ui == ExtensionUi::Interactive).then(terminal_size),
        output,
        hook_timeout: Duration::from_millis(timeout_ms.max(1)),
    }))
}

/// The terminal's size now (80×24 when it cannot be read), for components to render at.
fn terminal_size() -> TerminalSize {
    let (columns, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    TerminalSize { columns, rows }
}
