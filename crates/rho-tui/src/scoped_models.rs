//! `/scoped-models`: which models Ctrl+P cycles, as pi's model configuration list. Every
//! available model is listed; with all of them cycling no row is marked, otherwise each is
//! marked ✓ or ✗. Enter or Space toggles the highlighted model (the first toggle from "all"
//! keeps only that one), Ctrl+A enables all, Ctrl+X clears all, Ctrl+P toggles the highlighted
//! model's provider. The enabled models are listed first, in the order Ctrl+P cycles them;
//! Alt+Up / Alt+Down move the highlighted one. Changes apply to this session at once; Ctrl+S
//! saves them, in that order, as `enabledModels` in the global settings (all or none enabled:
//! the key is removed); until then the hint says "(unsaved)".

use super::app::{App, Picking};
use super::blocks;
use super::select::{Select, SelectItem};

const ENABLED: &str = "✓";
const DISABLED: &str = "✗";

const HINT: &str = "Enter toggle · Ctrl+A all · Ctrl+X none · Ctrl+P provider · Alt+↑/↓ move · Ctrl+S save";
/// What the hint starts with once the list differs from what is saved.
const UNSAVED: &str = "(unsaved) ";

/// The enabled models, as `provider/id`: `None` when all are.
type Enabled = Option<Vec<String>>;

impl App {
    /// Opens the list, the session's scope marked.
    pub fn open_scoped_models(&mut self) {
        let all = self.all_model_ids();
        if all.is_empty() {
            self.push([blocks::error("No models available: set an API key or add models.json")]);
            return;
        }
        let scope: Vec<String> =
            self.session.scoped_models().iter().map(|s| format!("{}/{}", s.model.provider, s.model.id)).collect();
        let enabled = (!scope.is_empty()).then_some(scope);
        let title = "Models for Ctrl+P (this session; Ctrl+S saves)";
        let list = Select::new(title, items(&all, &enabled), 0).toggling().with_hint(HINT);
        self.select = Some((Picking::ScopedModels, list));
    }

    fn all_model_ids(&self) -> Vec<String> {
        self.session.available_models().iter().map(|m| format!("{}/{}", m.provider, m.id)).collect()
    }

    /// What the open list shows enabled.
    fn listed_enabled(&self) -> Enabled {
        let Some((Picking::ScopedModels, list)) = &self.select else { return None };
        let items = list.items();
        if items.iter().all(|i| i.detail.is_empty()) {
            return None;
        }
        Some(items.iter().filter(|i| i.detail == ENABLED).map(|i| i.value.clone()).collect())
    }

    /// Enter or Space on a model.
    pub fn scoped_model_toggled(&mut self, id: &str) {
        let enabled = match self.listed_enabled() {
            None => Some(vec![id.to_owned()]),
            Some(mut ids) => {
                match ids.iter().position(|i| i == id) {
                    Some(at) => {
                        ids.remove(at);
                    }
                    None => ids.push(id.to_owned()),
                }
                Some(ids)
            }
        };
        self.apply_scope(enabled);
    }

    /// Alt+Up (-1) / Alt+Down (+1): an enabled model one place earlier or later in the order.
    pub fn scoped_model_moved(&mut self, delta: isize, id: &str) {
        let Some(mut ids) = self.listed_enabled() else { return };
        let Some(at) = ids.iter().position(|i| i == id) else { return };
        let Some(to) = at.checked_add_signed(delta).filter(|to| *to < ids.len()) else { return };
        ids.swap(at, to);
        self.apply_scope(Some(ids));
        if let Some((Picking::ScopedModels, list)) = &mut self.select {
            list.highlight(id);
        }
    }

    /// Ctrl+A, Ctrl+X, Ctrl+P and Ctrl+S in the list.
    pub fn scoped_models_shortcut(&mut self, key: char, highlighted: Option<&str>) {
        let all = self.all_model_ids();
        let enabled = self.listed_enabled();
        match key {
            'a' => self.apply_scope(None),
            'x' => self.apply_scope(Some(Vec::new())),
            'p' => {
                let Some(provider) = highlighted.and_then(|id| id.split_once('/')).map(|(p, _)| p.to_owned()) else {
                    return;
                };
                let of_provider: Vec<&String> =
                    all.iter().filter(|id| id.starts_with(&format!("{provider}/"))).collect();
                let is_on = |id: &String| enabled.as_ref().is_none_or(|ids| ids.contains(id));
                let mut ids = enabled.clone().unwrap_or_else(|| all.clone());
                if of_provider.iter().all(|id| is_on(id)) {
                    ids.retain(|id| !of_provider.contains(&id));
                } else {
                    ids.extend(of_provider.into_iter().filter(|id| !ids.contains(id)).cloned().collect::<Vec<_>>());
                }
                self.apply_scope(Some(ids));
            }
            's' => {
                let patterns = enabled.filter(|ids| !ids.is_empty() && ids.len() < all.len());
                match self.session.save_enabled_models(patterns.as_deref()) {
                    Ok(()) => {
                        if let Some((Picking::ScopedModels, list)) = &mut self.select {
                            list.set_hint(HINT);
                        }
                        self.push([blocks::notice("Model selection saved to settings")]);
                    }
                    Err(e) => self.push([blocks::error(&format!("Error: {e}"))]),
                }
            }
            _ => {}
        }
    }

    /// Makes `enabled` the session's scope (all or none enabled: every model cycles) and shows
    /// it in the list.
    fn apply_scope(&mut self, enabled: Enabled) {
        let all = self.all_model_ids();
        let enabled = enabled.filter(|ids| ids.len() < all.len() || ids.iter().any(|id| !all.contains(id)));
        let patterns = enabled.clone().filter(|ids| !ids.is_empty()).unwrap_or_default();
        for warning in self.session.set_scope_patterns(&patterns) {
            self.push([blocks::warning(&warning)]);
        }
        if let Some((Picking::ScopedModels, list)) = &mut self.select {
            list.set_items(items(&all, &enabled));
            list.set_hint(format!("{UNSAVED}{HINT}"));
        }
    }
}

/// The list rows: every model, marked when not all are enabled; the enabled ones first, in
/// their order.
fn items(all: &[String], enabled: &Enabled) -> Vec<SelectItem> {
    let first = enabled.as_deref().unwrap_or_default();
    first
        .iter()
        .filter(|id| all.contains(id))
        .chain(all.iter().filter(|id| !first.contains(id)))
        .map(|id| SelectItem {
            label: id.clone(),
            detail: match enabled {
                None => String::new(),
                Some(ids) if ids.contains(id) => ENABLED.to_owned(),
                Some(_) => DISABLED.to_owned(),
            },
            value: id.clone(),
        })
        .collect()
}

impl App {
    /// Shift+Ctrl+P: the previous model of the scope (or of the available ones).
    pub fn cycle_model_backward(&mut self) {
        let line = match self.session.cycle_model_backward() {
            Ok(Some(cycled)) => blocks::notice(&format!("Model: {}/{}", cycled.model.provider, cycled.model.id)),
            Ok(None) => blocks::notice("No other model to switch to"),
            Err(e) => blocks::error(&format!("Error: {e}")),
        };
        self.push([line]);
    }
}
