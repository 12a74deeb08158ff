//! Choosing the model and the thinking level: `set_model`, `cycle_model`,
//! `get_available_models`, `set_thinking_level`, `cycle_thinking_level`. Every change is recorded
//! in the session (`model_change`, `thinking_level_change`) and saved as the user's default, as
//! the reference does; the level is always clamped to what the model supports.

use rho_rpc::SessionEvent;
use rho_types::{Model, ThinkingLevel};
use serde_json::{Value, json};

use super::{AgentSession, SessionCommandError};

/// What `cycle_model` switched to.
#[derive(Debug, Clone)]
pub struct CycledModel {
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    pub is_scoped: bool,
}

impl AgentSession {
    /// The selected model, if any.
    pub fn model(&self) -> Option<Model> {
        (*self.inner.has_model.lock()).then(|| self.inner.agent.model())
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        self.inner.agent.thinking_level()
    }

    /// Every model with credentials, in registry order.
    pub fn available_models(&self) -> Vec<Model> {
        self.registry().available().into_iter().cloned().collect()
    }

    /// `set_model`: an available model by provider and id.
    pub fn set_model(&self, provider: &str, model_id: &str) -> Result<Model, SessionCommandError> {
        let model = self
            .registry()
            .available()
            .into_iter()
            .find(|m| m.provider == provider && m.id == model_id)
            .cloned()
            .ok_or_else(|| SessionCommandError::ModelNotFound(format!("{provider}/{model_id}")))?;
        self.switch_model(model.clone(), None, "set")?;
        Ok(model)
    }

    /// The model the run starts with when it is chosen once the extensions are loaded (a
    /// `--model` of a provider one registers): set quietly, as the start-up choice is, and
    /// recorded in the session.
    pub(crate) fn start_with_model(
        &self,
        model: Model,
        level: Option<ThinkingLevel>,
    ) -> Result<(), SessionCommandError> {
        if !self.registry().has_key(&model.provider) {
            return Err(SessionCommandError::NoApiKey(model.selector()));
        }
        let had_model = *self.inner.has_model.lock();
        let old = self.inner.agent.thinking_level();
        let wanted = level.unwrap_or_else(|| {
            if had_model { old } else { self.settings().default_thinking_level().unwrap_or(ThinkingLevel::Medium) }
        });
        let level = model.clamp_thinking(wanted);
        {
            let mut session = self.session();
            session.append_model_change(&model.provider, &model.id)?;
            if level != old || !had_model {
                session.append_thinking_level_change(level)?;
            }
        }
        self.inner.agent.set_model(model, level);
        *self.inner.has_model.lock() = true;
        Ok(())
    }

    /// `cycle_model`: the next model of the `--models` scope, or of all available models.
    /// `None` when there is nothing to switch to.
    pub fn cycle_model(&self) -> Result<Option<CycledModel>, SessionCommandError> {
        self.cycle_model_by(1)
    }

    /// Like [`cycle_model`](Self::cycle_model), the previous model (pi's Shift+Ctrl+P).
    pub fn cycle_model_backward(&self) -> Result<Option<CycledModel>, SessionCommandError> {
        self.cycle_model_by(-1)
    }

    fn cycle_model_by(&self, step: isize) -> Result<Option<CycledModel>, SessionCommandError> {
        let scope = self.scoped_models();
        let is_scoped = !scope.is_empty();
        let candidates: Vec<(Model, Option<ThinkingLevel>)> = if is_scoped {
            scope.into_iter().map(|s| (s.model, s.thinking)).collect()
        } else {
            self.available_models().into_iter().map(|m| (m, None)).collect()
        };
        if candidates.len() <= 1 {
            return Ok(None);
        }
        let current = self.model();
        let position = current
            .as_ref()
            .and_then(|c| candidates.iter().position(|(m, _)| m.provider == c.provider && m.id == c.id));
        let next = position.map_or(0, |p| (p as isize + step).rem_euclid(candidates.len() as isize) as usize);
        let (model, level) = candidates[next].clone();
        self.switch_model(model.clone(), level, "cycle")?;
        Ok(Some(CycledModel { model, thinking_level: self.thinking_level(), is_scoped }))
    }

    /// Makes `model` current: re-clamps the level (or applies `level`), records the change in
    /// the session (nothing changes when that write fails), tells the host (`model_changed`,
    /// `thinking_level_changed`) and saves it as the default.
    /// Extensions hear `model_select` with `source` (`set` or `cycle`).
    fn switch_model(
        &self,
        model: Model,
        level: Option<ThinkingLevel>,
        source: &str,
    ) -> Result<(), SessionCommandError> {
        if !self.registry().has_key(&model.provider) {
            return Err(SessionCommandError::NoApiKey(model.selector()));
        }
        let previous = self.model();
        let (model_changed, old_level, new_level) = {
            let old = self.inner.agent.thinking_level();
            let changed = self.inner.agent.read_model(|m| m.provider != model.provider || m.id != model.id);
            // pi 1.6's choice: the level asked for, else the default level of the settings, else
            // the level the session has now (clamped to what the new model takes).
            let wanted = level.or_else(|| self.settings().default_thinking_level()).unwrap_or(old);
            (changed || !*self.inner.has_model.lock(), old, model.clamp_thinking(wanted))
        };
        {
            let mut session = self.session();
            session.append_model_change(&model.provider, &model.id)?;
            if new_level != old_level {
                session.append_thinking_level_change(new_level)?;
            }
        }
        self.inner.agent.set_model(model.clone(), new_level);
        *self.inner.has_model.lock() = true;
        if model_changed {
            self.emit(SessionEvent::ModelChanged);
        }
        if new_level != old_level {
            self.emit_thinking_level(new_level, old_level);
        }
        if model_changed {
            // After thinking_level_select, as pi tells its extensions.
            self.tell_extensions(json!({
                "type": "model_select", "model": model, "previousModel": previous, "source": source,
            }));
        }
        let mut settings = self.settings();
        for (key, value) in [("defaultProvider", &model.provider), ("defaultModel", &model.id)] {
            if let Err(e) = settings.set_global(key, Value::String(value.clone())) {
                tracing::warn!("could not save {key}: {e}");
            }
        }
        Ok(())
    }

    /// `set_thinking_level`, clamped to the model; recorded in the session (nothing changes
    /// when that write fails) and announced when the level changes.
    pub fn set_thinking_level(&self, level: ThinkingLevel) -> Result<(), SessionCommandError> {
        let (clamped, current, reasoning) = {
            let has_model = *self.inner.has_model.lock();
            let (clamped, reasoning) =
                self.inner.agent.read_model(|m| (if has_model { m.clamp_thinking(level) } else { level }, m.reasoning));
            (clamped, self.inner.agent.thinking_level(), reasoning)
        };
        if clamped != current {
            self.session().append_thinking_level_change(clamped)?;
            self.inner.agent.set_thinking_level(clamped);
            self.emit_thinking_level(clamped, current);
        }
        if (reasoning || clamped != ThinkingLevel::Off)
            && let Err(e) = self.settings().set_global("defaultThinkingLevel", Value::String(clamped.as_str().into()))
        {
            tracing::warn!("could not save defaultThinkingLevel: {e}");
        }
        Ok(())
    }

    /// `thinking_level_changed`, under pi's key and omp's; extensions hear
    /// `thinking_level_select`.
    fn emit_thinking_level(&self, level: ThinkingLevel, previous: ThinkingLevel) {
        self.tell_extensions(json!({
            "type": "thinking_level_select", "level": level.as_str(), "previousLevel": previous.as_str(),
        }));
        let level = level.as_str().to_owned();
        self.emit(SessionEvent::ThinkingLevelChanged { thinking_level: level.clone(), level });
    }

    /// `get_available_thinking_levels`: the levels the current model takes, least to most
    /// intensive (`off` alone for a model without reasoning, or no model).
    pub fn available_thinking_levels(&self) -> Vec<ThinkingLevel> {
        if !*self.inner.has_model.lock() {
            return vec![ThinkingLevel::Off];
        }
        self.inner.agent.read_model(rho_types::Model::thinking_levels)
    }

    /// `cycle_thinking_level`: off, then each level the model supports, then off again.
    /// `None` when the model has no reasoning.
    pub fn cycle_thinking_level(&self) -> Option<ThinkingLevel> {
        let levels = self.inner.agent.read_model(|m| m.reasoning.then(|| m.thinking_levels()))?;
        let current = self.inner.agent.thinking_level();
        let position = levels.iter().position(|l| *l == current).unwrap_or(0);
        let next = levels[(position + 1) % levels.len()];
        self.set_thinking_level(next).ok()?;
        Some(next)
    }
}
