//! The models Ctrl+P cycles (pi's scoped models): set at start from `--models` or the
//! `enabledModels` setting, changed by `/scoped-models`, and saved back to `enabledModels`.

use rho_ai::{ScopedModel, resolve_scope};
use serde_json::Value;

use super::AgentSession;
use crate::config::SettingsError;

impl AgentSession {
    /// The cycling scope; empty means every available model.
    pub fn scoped_models(&self) -> Vec<ScopedModel> {
        self.inner.scope.lock().clone()
    }

    /// Scopes cycling to the available models `patterns` select (`provider/id`, globs,
    /// `:level` suffixes, as `--models` takes them); no patterns: every model. Returns a warning
    /// per pattern that selected nothing.
    pub fn set_scope_patterns(&self, patterns: &[String]) -> Vec<String> {
        let scope = resolve_scope(&self.registry(), patterns);
        *self.inner.scope.lock() = scope.models;
        scope.warnings
    }

    /// Saves `patterns` as `enabledModels` in the global settings; `None` removes the key (every
    /// model cycles).
    pub fn save_enabled_models(&self, patterns: Option<&[String]>) -> Result<(), SettingsError> {
        let value = match patterns {
            Some(patterns) => Value::Array(patterns.iter().cloned().map(Value::String).collect()),
            None => Value::Null,
        };
        self.settings().set_global("enabledModels", value)
    }
}
