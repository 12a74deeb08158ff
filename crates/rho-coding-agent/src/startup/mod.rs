//! From the command line to a ready [`SessionOptions`]: the settings, the model registry, the
//! files the system prompt draws on, the model and thinking level, the tools, the MCP servers and
//! the session file. Problems with the user's files are warnings on stderr (printed once) and
//! rho goes on; only what makes the run impossible is an error.

mod extensions;
mod model_select;
mod session_select;
mod tools;
pub mod trust;

use std::path::PathBuf;
use std::sync::Arc;

use rho_ai::ModelRegistry;
use rho_types::ThinkingLevel;

use crate::agent_session::{ResourceSources, Resources, SessionEventSink, SessionOptions, Ui};
use crate::cli::Cli;
use crate::config::{ConfigPaths, LoadOptions, SettingOverride, Settings};

pub use extensions::{ExtensionUi, extension_config, extensions_configured};
pub use model_select::{ModelChoice, select_after_extensions, select_model};
pub use session_select::{PI_SESSION_DIR_ENV, SESSION_DIR_ENV, select_session, session_dir};

/// A start-up failure: one line on stderr and this exit code.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct StartupError {
    pub message: String,
    pub exit_code: i32,
}

impl StartupError {
    pub fn new(message: impl Into<String>, exit_code: i32) -> Self {
        Self { message: message.into(), exit_code }
    }
}

/// Everything read before the session is built.
pub struct Prepared {
    pub paths: ConfigPaths,
    pub settings: Settings,
    pub registry: ModelRegistry,
}

/// Reads the settings and the model registry; warnings go to stderr.
pub fn prepare(cli: &Cli, rpc_mode: bool) -> Result<Prepared, StartupError> {
    let cwd = std::env::current_dir()
        .map_err(|e| StartupError::new(format!("Error: cannot read the current directory: {e}"), 1))?;
    prepare_in(cli, cwd, rpc_mode)
}

/// [`prepare`] for a session in `cwd` (ACP opens sessions in other folders than the process's).
pub fn prepare_in(cli: &Cli, cwd: PathBuf, rpc_mode: bool) -> Result<Prepared, StartupError> {
    let paths = ConfigPaths::from_env(cwd);
    let overrides = setting_overrides(cli).map_err(|e| StartupError::new(e, 2))?;
    // A sub-agent takes the task settings from its command line only, as RPC mode does.
    let reset = rpc_mode || crate::task::depth_from_env() > 0;
    let trusted_project = trust::project_trusted(cli, &paths);
    let (settings, diagnostics) = Settings::load(&paths, &LoadOptions { overrides, rpc_mode: reset, trusted_project });
    for d in diagnostics {
        eprintln!("{d}");
    }
    crate::telemetry::start(&settings);
    if !trusted_project && let Some(notice) = trust::skipped_notice(&paths) {
        eprintln!("{notice}");
    }
    check_sandbox(&settings, &paths.cwd).map_err(|e| StartupError::new(e, 1))?;
    for warning in settings.without_effect() {
        eprintln!("Warning: {warning}");
    }
    for warning in rho_ai::http::extra_roots_warnings() {
        eprintln!("Warning: {warning}");
    }
    let (registry, errors) = ModelRegistry::load(&paths.agent_dir);
    for e in errors {
        eprintln!("Warning: {e}");
    }
    Ok(Prepared { paths, settings, registry })
}

/// The `--setting` overrides, `--sandbox` as the `sandbox.mode` one, `--approval` as the
/// `approval` one and `--use-theme` as the `theme` one.
fn setting_overrides(cli: &Cli) -> Result<Vec<SettingOverride>, String> {
    let sandbox = cli.sandbox.as_ref().map(|mode| format!("sandbox.mode={mode}"));
    let approval = cli.approval.as_ref().map(|mode| format!("approval={mode}"));
    // `dark/light`: rho draws with the first.
    let theme = cli.use_theme.as_ref().map(|name| {
        let name = name.split('/').next().unwrap_or_default();
        format!("theme={}", serde_json::Value::from(name))
    });
    cli.settings
        .iter()
        .chain(sandbox.as_ref())
        .chain(approval.as_ref())
        .chain(theme.as_ref())
        .map(|raw| raw.parse().map_err(|e| format!("Error: {e}")))
        .collect()
}

/// A sandbox that was asked for and cannot be enforced stops rho: never run unconfined. One that
/// this machine enforces only in part is said so, with what is missing.
fn check_sandbox(settings: &Settings, cwd: &std::path::Path) -> Result<(), String> {
    rho_sandbox::check_supported(settings.sandbox().mode).map_err(|e| format!("Error: {e}"))?;
    if let Some(sandbox) = crate::agent_session::tools::sandbox(cwd, settings) {
        match rho_sandbox::probe(&sandbox) {
            Ok(gaps) => gaps.iter().for_each(|gap| eprintln!("Warning: {gap}")),
            Err(e) => return Err(format!("Error: the sandbox could not be set up: {e}")),
        }
    }
    Ok(())
}

/// Builds the session options for a mode. `sink` and `ui` come from the mode.
pub fn session_options(
    cli: &Cli,
    prepared: Prepared,
    sink: Arc<dyn SessionEventSink>,
    ui: Option<Arc<dyn Ui>>,
) -> Result<SessionOptions, StartupError> {
    let Prepared { paths, settings, mut registry } = prepared;
    let (tools, tool_filter) = tools::select(cli, &settings)?;
    let mut session = select_session(cli, &paths, &settings)?;
    if let Some(name) = cli.name.as_deref().map(str::trim).filter(|n| !n.is_empty())
        && session.name() != Some(name)
        && let Err(e) = session.append_session_info(name)
    {
        eprintln!("Warning: the session name was not saved: {e}");
    }
    let restored = session.build_context();
    let choice = match select_model(cli, &settings, &mut registry, &restored) {
        Ok(choice) => choice,
        Err(e) => {
            // Nothing was said in a session made for this run: leave no file behind.
            if session.entries().is_empty()
                && session.created_here()
                && let Some(file) = session.session_file()
            {
                let _ = std::fs::remove_file(file);
            }
            return Err(e);
        }
    };
    let thinking_level = match (&choice.model, choice.thinking) {
        (Some(model), Some(level)) => model.clamp_thinking(level),
        (Some(model), None) => model.clamp_thinking(
            restored.thinking_level.or(settings.default_thinking_level()).unwrap_or(ThinkingLevel::Medium),
        ),
        (None, level) => level.unwrap_or(ThinkingLevel::Off),
    };
    let (resources, resource_sources) = load_resources(cli, &paths, &settings);
    let mcp = (!cli.no_mcp).then(|| load_mcp(&paths, settings.project_trusted()));
    Ok(SessionOptions {
        tool_filter,
        paths,
        settings,
        registry,
        model: choice.model,
        thinking_level,
        scope: choice.scope,
        session,
        resources,
        resource_sources,
        tools,
        sink,
        ui,
        file_access: None,
        terminals: None,
        host_uris: None,
        mcp,
    })
}

/// The MCP servers of `<agent dir>/mcp.json`, and of the project's `.mcp.json` and
/// `.rho/mcp.json` when the project is trusted; problems with those files are printed (the
/// servers' own problems are reported as they happen).
fn load_mcp(paths: &ConfigPaths, trusted_project: bool) -> rho_mcp::McpConfig {
    let files = rho_mcp::McpConfig::paths(&paths.cwd, &paths.agent_dir);
    let files = if trusted_project { &files[..] } else { &files[..1] };
    let (config, diagnostics) = rho_mcp::McpConfig::from_files(files, &paths.cwd, &|name| std::env::var(name).ok());
    for d in diagnostics {
        eprintln!("Warning: {d}");
    }
    config
}

/// Context files, skills, templates and the prompt texts (problems are printed), and where
/// they came from (for `/reload`).
fn load_resources(cli: &Cli, paths: &ConfigPaths, settings: &Settings) -> (Resources, ResourceSources) {
    let to_strings = |v: &[PathBuf]| v.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>();
    let sources = ResourceSources {
        no_context_files: cli.no_context_files,
        no_skills: cli.no_skills,
        skills: to_strings(&cli.skills),
        no_prompt_templates: cli.no_prompt_templates,
        prompt_templates: to_strings(&cli.prompt_templates),
        system_prompt: cli.system_prompt.clone(),
        append_system_prompt: cli.append_system_prompt.clone(),
        no_rules: cli.no_rules,
    };
    let (resources, diagnostics) = crate::agent_session::load_resources(paths, settings, &sources);
    for d in diagnostics {
        eprintln!("Warning: {d}");
    }
    (resources, sources)
}
