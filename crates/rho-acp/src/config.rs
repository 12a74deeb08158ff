//! The model and the thinking level as ACP session config options (`session/set_config_option`):
//! a `model` select over the models with credentials (`provider/id`) and, for a reasoning model,
//! a `thinking` select over the levels it supports. Changing either goes through
//! [`AgentSession::set_model`] / [`AgentSession::set_thinking_level`], as RPC mode's commands do
//! (recorded in the session, saved as the default).
//!
//! The protocol's `models` / `session/set_model` are not offered: they are not in the stable
//! protocol (schema 1.17 has no `SessionModelState`); the `model` option with its category is
//! how clients show a model picker. Permission modes are in [`super::permissions`].

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption,
};
use rho_types::ThinkingLevel;

use rho_coding_agent::agent_session::AgentSession;

pub(super) const MODEL: &str = "model";
pub(super) const THINKING: &str = "thinking";

/// The options as they stand now.
pub(super) fn options(session: &AgentSession) -> Vec<SessionConfigOption> {
    let Some(current) = session.model() else {
        return Vec::new();
    };
    let mut options = Vec::new();
    let models: Vec<SessionConfigSelectOption> = session
        .available_models()
        .iter()
        .map(|m| {
            let name = if m.name.is_empty() { m.id.clone() } else { m.name.clone() };
            SessionConfigSelectOption::new(m.selector(), name).description(m.provider.clone())
        })
        .collect();
    if !models.is_empty() {
        options.push(
            SessionConfigOption::select(MODEL, "Model", current.selector(), models)
                .category(SessionConfigOptionCategory::Model),
        );
    }
    if current.reasoning {
        let levels: Vec<SessionConfigSelectOption> = current
            .thinking_levels()
            .into_iter()
            .map(|l| SessionConfigSelectOption::new(l.as_str(), l.as_str()))
            .collect();
        options.push(
            SessionConfigOption::select(THINKING, "Thinking", session.thinking_level().as_str(), levels)
                .category(SessionConfigOptionCategory::ThoughtLevel),
        );
    }
    options
}

/// Sets one option; the error says why it could not be.
pub(super) fn set(session: &AgentSession, config_id: &str, value: &SessionConfigOptionValue) -> Result<(), String> {
    let value = value.as_value_id().map(|v| v.0.to_string()).ok_or("Expected a value id")?;
    match config_id {
        MODEL => {
            let (provider, id) = value.split_once('/').ok_or_else(|| format!("Not a provider/id: {value}"))?;
            // An editor sends the options back as they are (after session/load): the session
            // file is not written for a model it already has.
            if session.model().is_some_and(|m| m.provider == provider && m.id == id) {
                return Ok(());
            }
            session.set_model(provider, id).map(drop).map_err(|e| e.to_string())
        }
        THINKING => {
            let level = ThinkingLevel::parse(&value).ok_or_else(|| format!("Invalid thinking level: {value}"))?;
            // Sent back as it is after session/load: nothing is written for the level it has.
            if session.thinking_level() == level {
                return Ok(());
            }
            session.set_thinking_level(level).map_err(|e| e.to_string())
        }
        other => Err(format!("Unknown config option: {other}")),
    }
}
