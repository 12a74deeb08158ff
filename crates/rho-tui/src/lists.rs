//! What the lists of the built-in commands do when an item is picked, toggled or the list is
//! closed: one place that dispatches on what the list is picking.

use super::app::{App, Picking};
use super::resume;
use super::select::Select;

impl App {
    /// Enter on an item of a list that closes on picking.
    pub fn picked(&mut self, picking: Picking, value: &str) {
        match picking {
            Picking::Model => self.set_model(value),
            Picking::Session => self.resume(value),
            Picking::Fork => self.fork(value),
            Picking::Tree => self.tree_entry_picked(value),
            Picking::TreeSummary => self.tree_summary_picked(value),
            Picking::SettingValue => self.setting_value_picked(value),
            Picking::Dialog => self.answer_dialog(Some(value.to_owned())),
            Picking::Login => self.login_picked(value),
            Picking::Logout => self.logout_command(value),
            Picking::Thinking => self.thinking_command(value),
            Picking::Trust => self.trust_picked(value),
            Picking::Rewind => self.rewind_message_picked(value),
            Picking::RewindChoice => self.rewind_choice_picked(value),
            Picking::Settings | Picking::ScopedModels => self.toggled(picking, value),
        }
    }

    /// Enter or Space on an item of a list that stays open.
    pub fn toggled(&mut self, picking: Picking, value: &str) {
        match picking {
            Picking::Settings => self.setting_toggled(value),
            Picking::ScopedModels => self.scoped_model_toggled(value),
            _ => {}
        }
    }

    /// A Ctrl+letter in a list that stays open.
    pub fn list_shortcut(&mut self, picking: Picking, key: char, highlighted: Option<&str>) {
        match picking {
            Picking::ScopedModels => self.scoped_models_shortcut(key, highlighted),
            Picking::Tree => self.tree_shortcut(key, highlighted),
            Picking::Session if key == '\t' => {
                let (dir, agent_dir) = (self.session.sessions_dir(), self.session.paths().agent_dir.clone());
                if let Some((_, list)) = self.select.as_mut() {
                    resume::switch_scope(list, &dir, &agent_dir);
                }
            }
            _ => {}
        }
    }

    /// Another item highlighted (moving, or typing in the search).
    pub fn list_highlighted(&mut self, picking: Picking, value: &str) {
        if picking == Picking::SettingValue {
            self.setting_value_highlighted(value);
        }
    }

    /// Alt+Up / Alt+Down on an item of a list that stays open.
    pub fn list_item_moved(&mut self, picking: Picking, delta: isize, value: &str) {
        if picking == Picking::ScopedModels {
            self.scoped_model_moved(delta, value);
        }
    }

    /// Escape (or Ctrl+C) closed `list`: a tool's dialog is answered with nothing, a list of
    /// values goes back to the list it came from.
    pub fn list_closed(&mut self, picking: Picking, list: &Select) {
        match picking {
            Picking::Dialog => self.answer_dialog(None),
            Picking::SettingValue => self.setting_values_closed(list.highlighted().as_deref()),
            Picking::TreeSummary => self.tree_summary_closed(list.highlighted().as_deref()),
            _ => {}
        }
    }
}
