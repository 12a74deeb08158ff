//! `/settings`: pi's settings menu, with the settings rho acts on. Each row shows its current
//! value; Enter or Space moves a two- or three-valued setting to its next value, or opens the
//! list of values (thinking level, theme). A change applies at once (to the session, or to this
//! screen) and is saved to the global `settings.json`, other keys kept. The theme list shows
//! the highlighted theme while moving, as pi's does. Escape closes the menu, or a list of values
//! back to the menu (the theme in effect before is back).
//!
//! Each row says what it does under the list, as pi's does. Left out from pi's menu: transport
//! (read from `settings.json` when the session starts; `auto` suits every provider), and, for
//! want of the feature behind them, inline images and their width, editor padding, autocomplete size, hardware cursor, clear on shrink, terminal progress, changelog,
//! telemetry, warnings and Anthropic extra usage.

use rho_types::{QueueMode, ThinkingLevel};
use serde_json::Value;

use super::app::{App, Picking};
use super::blocks;
use super::select::{Select, SelectItem};
use super::theme;

/// The settings of the menu, in pi's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    AutoCompact,
    SteeringMode,
    FollowUpMode,
    HideThinking,
    QuietStartup,
    DefaultProjectTrust,
    DoubleEscape,
    TreeFilter,
    Thinking,
    Theme,
    AutoResizeImages,
    BlockImages,
    SkillCommands,
}

const SETTINGS: [Setting; 13] = [
    Setting::AutoCompact,
    Setting::SteeringMode,
    Setting::FollowUpMode,
    Setting::HideThinking,
    Setting::QuietStartup,
    Setting::DefaultProjectTrust,
    Setting::DoubleEscape,
    Setting::TreeFilter,
    Setting::Thinking,
    Setting::Theme,
    Setting::AutoResizeImages,
    Setting::BlockImages,
    Setting::SkillCommands,
];

const BOOLS: &[&str] = &["true", "false"];
const QUEUE_MODES: &[&str] = &["one-at-a-time", "all"];
/// What Escape twice on an empty editor opens (`doubleEscapeAction`).
pub const DOUBLE_ESCAPE_ACTIONS: &[&str] = &["tree", "fork", "none"];
/// What decides a project's trust when nothing else does (`defaultProjectTrust`, pi 1.6).
const DEFAULT_PROJECT_TRUST: &[&str] = &["ask", "always", "never"];
const DEFAULT_PROJECT_TRUST_KEY: &str = "defaultProjectTrust";
/// The view `/tree` opens in (`treeFilterMode`).
const TREE_FILTER_MODES: &[&str] = &["default", "no-tools", "user-only", "labeled-only", "all"];

impl Setting {
    fn id(self) -> &'static str {
        match self {
            Self::AutoCompact => "autocompact",
            Self::SkillCommands => "skill-commands",
            Self::SteeringMode => "steering-mode",
            Self::FollowUpMode => "follow-up-mode",
            Self::HideThinking => "hide-thinking",
            Self::QuietStartup => "quiet-startup",
            Self::DefaultProjectTrust => "default-project-trust",
            Self::DoubleEscape => "double-escape-action",
            Self::TreeFilter => "tree-filter-mode",
            Self::Thinking => "thinking",
            Self::Theme => "theme",
            Self::AutoResizeImages => "auto-resize-images",
            Self::BlockImages => "block-images",
        }
    }

    /// What the setting does (pi's words), shown under the list for the highlighted row.
    fn description(self) -> &'static str {
        match self {
            Self::AutoCompact => "Automatically compact context when it gets too large",
            Self::SteeringMode => {
                "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for \
                 response. 'all': deliver all at once."
            }
            Self::FollowUpMode => {
                "Alt+Enter queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait \
                 for response. 'all': deliver all at once."
            }
            Self::HideThinking => "Hide thinking blocks in assistant responses",
            Self::QuietStartup => "Disable verbose printing at startup",
            Self::DefaultProjectTrust => {
                "Fallback behavior when no extension or saved trust decision decides project trust"
            }
            Self::DoubleEscape => "Action when pressing Escape twice with empty editor",
            Self::TreeFilter => "Default filter when opening /tree",
            Self::Thinking => "Reasoning depth for thinking-capable models",
            Self::Theme => "Color theme for the interface",
            Self::AutoResizeImages => "Resize large images to 2000x2000 max for better model compatibility",
            Self::BlockImages => "Prevent images from being sent to LLM providers",
            Self::SkillCommands => "Register skills as /skill:name commands",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::AutoCompact => "Auto-compact",
            Self::SkillCommands => "Skill commands",
            Self::SteeringMode => "Steering mode",
            Self::FollowUpMode => "Follow-up mode",
            Self::HideThinking => "Hide thinking",
            Self::QuietStartup => "Quiet startup",
            Self::DefaultProjectTrust => "Default project trust",
            Self::DoubleEscape => "Double-escape action",
            Self::TreeFilter => "Tree filter mode",
            Self::Thinking => "Thinking level",
            Self::Theme => "Theme",
            Self::AutoResizeImages => "Auto-resize images",
            Self::BlockImages => "Block images",
        }
    }

    fn from_id(id: &str) -> Option<Self> {
        SETTINGS.into_iter().find(|s| s.id() == id)
    }

    /// The values Enter steps through; `None` for a setting whose values open as a list.
    fn cycle(self) -> Option<&'static [&'static str]> {
        match self {
            Self::SteeringMode | Self::FollowUpMode => Some(QUEUE_MODES),
            Self::DoubleEscape => Some(DOUBLE_ESCAPE_ACTIONS),
            Self::DefaultProjectTrust => Some(DEFAULT_PROJECT_TRUST),
            Self::TreeFilter => Some(TREE_FILTER_MODES),
            Self::Thinking | Self::Theme => None,
            _ => Some(BOOLS),
        }
    }
}

/// `hideThinkingBlock`, `quietStartup` and `doubleEscapeAction`: pi's settings of the
/// interactive screen itself.
pub const HIDE_THINKING_KEY: &str = "hideThinkingBlock";
pub const QUIET_STARTUP_KEY: &str = "quietStartup";
pub const DOUBLE_ESCAPE_KEY: &str = "doubleEscapeAction";
/// The view `/tree` opens in.
const TREE_FILTER_KEY: &str = "treeFilterMode";

impl App {
    /// The screen's own settings, as `settings.json` has them at start: thinking blocks hidden.
    pub fn apply_screen_settings(&mut self) {
        let settings = self.session.settings();
        self.hide_thinking = settings.get_bool(HIDE_THINKING_KEY).unwrap_or(false);
        super::markdown::mermaid::set_mode(&settings.get_string("markdown.mermaid").unwrap_or_default());
    }

    /// `quietStartup`: no header at start.
    pub fn quiet_startup(&self) -> bool {
        self.session.settings().get_bool(QUIET_STARTUP_KEY).unwrap_or(false)
    }

    /// `doubleEscapeAction`: `tree` (the default), `fork` or `none`.
    pub fn double_escape_action(&self) -> String {
        self.session.settings().get_string(DOUBLE_ESCAPE_KEY).unwrap_or_else(|| "tree".to_owned())
    }

    /// `/settings`: the menu, on its first row.
    pub fn open_settings(&mut self) {
        self.open_settings_at(Setting::AutoCompact);
    }

    fn open_settings_at(&mut self, setting: Setting) {
        let selected = SETTINGS.iter().position(|s| *s == setting).unwrap_or(0);
        let menu = Select::new("Settings", self.settings_items(), selected)
            .toggling()
            .described(|id| Setting::from_id(id).map(Setting::description))
            .with_hint("Enter/Space change · type to search · Esc close");
        self.select = Some((Picking::Settings, menu));
    }

    fn settings_items(&self) -> Vec<SelectItem> {
        let width = SETTINGS.iter().map(|s| s.label().len()).max().unwrap_or(0);
        SETTINGS
            .iter()
            .map(|s| SelectItem {
                label: format!("{:<width$}", s.label()),
                detail: self.setting_value(*s),
                value: s.id().to_owned(),
            })
            .collect()
    }

    fn setting_value(&self, setting: Setting) -> String {
        let session = &self.session;
        let modes = session.queue_modes();
        match setting {
            Setting::AutoCompact => session.auto_compaction_enabled().to_string(),
            Setting::SkillCommands => session.settings().enable_skill_commands().to_string(),
            Setting::SteeringMode => modes.steering.as_str().to_owned(),
            Setting::FollowUpMode => modes.follow_up.as_str().to_owned(),
            Setting::HideThinking => self.hide_thinking.to_string(),
            Setting::QuietStartup => self.quiet_startup().to_string(),
            Setting::DoubleEscape => self.double_escape_action(),
            Setting::DefaultProjectTrust => {
                self.session.settings().get_string(DEFAULT_PROJECT_TRUST_KEY).unwrap_or_else(|| "ask".to_owned())
            }
            Setting::TreeFilter => {
                self.session.settings().get_string(TREE_FILTER_KEY).unwrap_or_else(|| "default".to_owned())
            }
            Setting::Thinking => session.thinking_level().as_str().to_owned(),
            Setting::Theme => current_theme(self),
            Setting::AutoResizeImages => session.settings().images().auto_resize.to_string(),
            Setting::BlockImages => session.settings().images().block_images.to_string(),
        }
    }

    /// Enter or Space on a row of the menu.
    pub fn setting_toggled(&mut self, id: &str) {
        let Some(setting) = Setting::from_id(id) else { return };
        match setting.cycle() {
            Some(values) => {
                let current = self.setting_value(setting);
                let position = values.iter().position(|v| *v == current).unwrap_or(0);
                let next = values[(position + 1) % values.len()];
                self.apply_setting(setting, next);
                let items = self.settings_items();
                if let Some((Picking::Settings, menu)) = &mut self.select {
                    menu.set_items(items);
                }
            }
            None => self.open_setting_values(setting),
        }
    }

    fn open_setting_values(&mut self, setting: Setting) {
        let (title, values): (&str, Vec<String>) = match setting {
            Setting::Thinking => {
                let levels = match self.session.model() {
                    Some(model) => model.thinking_levels(),
                    None => vec![ThinkingLevel::Off],
                };
                ("Thinking level", levels.iter().map(|l| l.as_str().to_owned()).collect())
            }
            _ => ("Theme", theme::names()),
        };
        let current = self.setting_value(setting);
        let selected = values.iter().position(|v| *v == current).unwrap_or(0);
        let items = values
            .into_iter()
            .map(|v| SelectItem {
                detail: if v == current { "← current".to_owned() } else { String::new() },
                value: format!("{}={v}", setting.id()),
                label: v,
            })
            .collect();
        let list = Select::new(title, items, selected).with_hint("Enter select · Esc back");
        self.select = Some((Picking::SettingValue, list));
    }

    /// A value picked from a setting's list (`id=value`): applied, then back to the menu.
    pub fn setting_value_picked(&mut self, picked: &str) {
        let Some((id, value)) = picked.split_once('=') else { return };
        let Some(setting) = Setting::from_id(id) else { return };
        self.apply_setting(setting, value);
        self.open_settings_at(setting);
    }

    /// Another value highlighted in a setting's list (`id=value`): a theme is shown at once.
    pub fn setting_value_highlighted(&mut self, highlighted: &str) {
        if let Some(name) = highlighted.strip_prefix(&format!("{}=", Setting::Theme.id())) {
            theme::preview(name);
        }
    }

    /// Escape in a setting's list: back to the menu on that setting (and to the theme in effect
    /// before a preview).
    pub fn setting_values_closed(&mut self, highlighted: Option<&str>) {
        theme::end_preview();
        let setting = highlighted.and_then(|v| v.split_once('=')).and_then(|(id, _)| Setting::from_id(id));
        self.open_settings_at(setting.unwrap_or(Setting::Thinking));
    }

    fn apply_setting(&mut self, setting: Setting, value: &str) {
        let on = value == "true";
        let saved = match setting {
            Setting::AutoCompact => {
                self.session.set_auto_compaction(on);
                Ok(())
            }
            Setting::SteeringMode => {
                self.session.set_steering_mode(queue_mode(value));
                Ok(())
            }
            Setting::FollowUpMode => {
                self.session.set_follow_up_mode(queue_mode(value));
                Ok(())
            }
            Setting::Thinking => match ThinkingLevel::parse(value) {
                Some(level) => self.session.set_thinking_level(level).map_err(|e| e.to_string()),
                None => Err(format!("Unknown thinking level: {value}")),
            },
            Setting::SkillCommands => self.save_setting("enableSkillCommands", Value::Bool(on)),
            Setting::HideThinking => {
                self.set_hide_thinking(on);
                self.save_setting(HIDE_THINKING_KEY, Value::Bool(on))
            }
            Setting::QuietStartup => self.save_setting(QUIET_STARTUP_KEY, Value::Bool(on)),
            Setting::DoubleEscape => self.save_setting(DOUBLE_ESCAPE_KEY, Value::String(value.to_owned())),
            Setting::DefaultProjectTrust => {
                self.save_setting(DEFAULT_PROJECT_TRUST_KEY, Value::String(value.to_owned()))
            }
            Setting::TreeFilter => self.save_setting(TREE_FILTER_KEY, Value::String(value.to_owned())),
            Setting::Theme => theme::set(value).and_then(|()| {
                // The history is drawn again in the theme's colours.
                self.redraw_history();
                self.save_setting("theme", Value::String(value.into()))
            }),
            Setting::AutoResizeImages => self.save_setting("images.autoResize", Value::Bool(on)),
            Setting::BlockImages => self.save_setting("images.blockImages", Value::Bool(on)),
        };
        if let Err(e) = saved {
            self.push([blocks::error(&format!("{}: {e}", setting.label()))]);
        }
    }

    fn save_setting(&self, key: &str, value: Value) -> Result<(), String> {
        self.session.settings().set_global(key, value).map_err(|e| e.to_string())
    }
}

fn queue_mode(value: &str) -> QueueMode {
    if value == "all" { QueueMode::All } else { QueueMode::OneAtATime }
}

fn current_theme(app: &App) -> String {
    app.session.settings().get_string("theme").unwrap_or_else(|| "dark".to_owned())
}
