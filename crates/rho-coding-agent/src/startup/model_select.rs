//! Which model a run starts with (docs/agent-behavior.md, "Initial model"): `--model`, else the
//! `--models` scope (or `enabledModels`), else the session's own model when it still has a key,
//! else the settings' default, else the first available model. `--api-key` applies to the chosen
//! model's provider.

use rho_ai::{ModelRegistry, ResolveError, ScopedModel, resolve_model, resolve_scope};
use rho_session::SessionContext;
use rho_types::{Model, ThinkingLevel};

use super::StartupError;
use crate::cli::Cli;
use crate::config::Settings;

/// The model (if any), the level the command line asked for, and the cycling scope.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub model: Option<Model>,
    pub thinking: Option<ThinkingLevel>,
    pub scope: Vec<ScopedModel>,
}

pub fn select_model(
    cli: &Cli,
    settings: &Settings,
    registry: &mut ModelRegistry,
    restored: &SessionContext,
) -> Result<ModelChoice, StartupError> {
    let mut thinking = cli.thinking.as_deref().and_then(|raw| {
        let level = ThinkingLevel::parse(raw.trim());
        if level.is_none() {
            eprintln!(
                "Warning: Invalid thinking level \"{raw}\". Valid values: off, minimal, low, medium, high, xhigh, max"
            );
        }
        level
    });
    let patterns = cli.models.clone().or_else(|| settings.enabled_models()).unwrap_or_default();
    let scope = if patterns.is_empty() {
        Vec::new()
    } else {
        let scope = resolve_scope(registry, &patterns);
        for warning in &scope.warnings {
            eprintln!("Warning: {warning}");
        }
        scope.models
    };

    // A `--model` no provider knows may be one an extension registers: looked up again once
    // they are loaded (see `select_after_extensions`), as pi loads them first.
    let wanted = match &cli.model {
        Some(pattern) => match resolve_model(registry, pattern, cli.provider.as_deref()) {
            Ok(resolved) => Some(resolved),
            // (`--api-key` is for the model named: that one must be known now.)
            Err(_) if cli.api_key.is_none() && super::extensions_configured(cli) => None,
            Err(e) => return Err(not_found(e, registry)),
        },
        None => None,
    };
    let model = if let Some(resolved) = wanted {
        if let Some(warning) = &resolved.warning {
            eprintln!("Warning: {warning}");
        }
        thinking = thinking.or(resolved.thinking);
        Some(resolved.model)
    } else if !scope.is_empty() && restored.messages.is_empty() {
        let default = settings.default_provider().zip(settings.default_model());
        let pick = default
            .and_then(|(p, id)| scope.iter().find(|s| s.model.provider == p && s.model.id == id))
            .unwrap_or(&scope[0]);
        thinking = thinking.or(pick.thinking);
        Some(pick.model.clone())
    } else {
        restored_model(registry, restored).or_else(|| {
            registry.default_model(settings.default_provider().as_deref(), settings.default_model().as_deref()).cloned()
        })
    };

    if let Some(key) = &cli.api_key {
        let Some(model) = &model else {
            return Err(StartupError::new(
                "Error: --api-key requires a model to be specified via --model, --provider/--model, or --models",
                2,
            ));
        };
        registry.set_runtime_key(&model.provider, key.clone());
    }
    Ok(ModelChoice { model, thinking, scope })
}

/// The session's model, when it exists and has credentials.
fn restored_model(registry: &ModelRegistry, restored: &SessionContext) -> Option<Model> {
    let wanted = restored.model.as_ref()?;
    match registry.find(&wanted.provider, &wanted.model_id) {
        Some(model) if registry.is_available(model) => Some(model.clone()),
        _ => {
            match registry.unusable_login(&wanted.provider) {
                Some(why) => {
                    eprintln!("Warning: Could not restore model {}/{}: {why}", wanted.provider, wanted.model_id)
                }
                None => eprintln!("Warning: Could not restore model {}/{}", wanted.provider, wanted.model_id),
            }
            None
        }
    }
}

/// `--model` that matches nothing: the reference's text and the closest matches, and why when
/// the model is of a login rho cannot use (`openai-codex/…` with a ChatGPT login).
fn not_found(e: ResolveError, registry: &ModelRegistry) -> StartupError {
    let mut message = format!("Error: {e}");
    let (ResolveError::NotFound { pattern, .. } | ResolveError::UnknownProvider { provider: pattern }) = &e else {
        return StartupError::new(message, 2);
    };
    if let Some(why) = pattern.split_once('/').and_then(|(provider, _)| registry.unusable_login(provider)) {
        message.push_str(&format!(" {why}"));
    } else if let ResolveError::NotFound { suggestions, .. } = &e
        && !suggestions.is_empty()
    {
        message.push_str(&format!(" Did you mean: {}?", suggestions.join(", ")));
    }
    StartupError::new(message, 2)
}

/// `--model` once the extensions are loaded, when it named a model no provider knew at start
/// (one an extension registers): the session switches to it; a `--model` nothing knows still
/// ends the run with the error it would have at start. Without `--model`, a resumed session
/// that selected a virtual model gets it back.
pub fn select_after_extensions(cli: &Cli, session: &crate::AgentSession) -> Result<(), StartupError> {
    let Some(pattern) = &cli.model else {
        session.restore_virtual_selection();
        return Ok(());
    };
    // Chosen at start already (extensions may have changed the model since, as in pi).
    if resolve_model(&session.registry_at_start(), pattern, cli.provider.as_deref()).is_ok() {
        return Ok(());
    }
    let registry = session.registry();
    let resolved = resolve_model(&registry, pattern, cli.provider.as_deref()).map_err(|e| not_found(e, &registry))?;
    if session.model().is_some_and(|m| m.provider == resolved.model.provider && m.id == resolved.model.id) {
        return Ok(());
    }
    let level = cli.thinking.as_deref().and_then(|raw| ThinkingLevel::parse(raw.trim())).or(resolved.thinking);
    session.start_with_model(resolved.model, level).map_err(|e| StartupError::new(format!("Error: {e}"), 1))
}
