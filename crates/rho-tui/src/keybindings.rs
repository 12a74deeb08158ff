//! The key table: which keys run which action, with pi's action ids (`tui.editor.undo`,
//! `app.message.dequeue`, …) and key syntax (`ctrl+shift+p`, `alt+enter`, `pageUp`). The
//! defaults are pi's; `<agent dir>/keybindings.json` (an action id → a key or a list of keys)
//! replaces an action's keys. A file that cannot be read, or an entry with an unknown action or
//! key, leaves the defaults of what it names and yields one warning line.
//!
//! pi's ids for what rho's interactive mode does not have (the session picker's keys, folding in
//! the tree, the external editor, the lists' keys, …) are accepted and have no effect, so a pi
//! user's file loads without noise; so are those of the tree's views and labels, whose keys are
//! pi's defaults and not rebound. pi 1.6's ids for what rho lacks altogether (the fullscreen
//! mode's transcript keys, saving the thinking level) are named in the warning as not supported. The table is read once at start ([`load`]) and shared ([`current`]), as
//! pi's key manager is.

use parking_lot::RwLock;
use std::path::Path;
use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

/// What a key can do. The order of [`DEFAULTS`] is the order a key is tried in: the first action
/// whose key it is and that applies at the moment runs (Ctrl+D quits on an empty editor and
/// deletes forward otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Interrupt,
    Clear,
    Exit,
    Suspend,
    ThinkingCycle,
    ModelCycleForward,
    ModelCycleBackward,
    ModelSelect,
    ToolsExpand,
    ThinkingToggle,
    FollowUp,
    Dequeue,
    PasteImage,
    SessionNew,
    SessionTree,
    SessionFork,
    SessionResume,
    NewLine,
    Submit,
    Tab,
    Undo,
    DeleteToLineEnd,
    DeleteToLineStart,
    DeleteWordBackward,
    DeleteWordForward,
    DeleteCharBackward,
    DeleteCharForward,
    Yank,
    YankPop,
    CursorLineStart,
    CursorLineEnd,
    CursorWordLeft,
    CursorWordRight,
    JumpForward,
    JumpBackward,
    CursorUp,
    CursorDown,
    CursorLeft,
    CursorRight,
    PageUp,
    PageDown,
    HistoryPrevious,
    HistoryNext,
    MessageCopy,
}

/// Each action's id and default keys, in the order keys are tried.
pub const DEFAULTS: &[(Action, &str, &[&str])] = &[
    (Action::Interrupt, "app.interrupt", &["escape"]),
    (Action::Clear, "app.clear", &["ctrl+c"]),
    (Action::Exit, "app.exit", &["ctrl+d"]),
    (Action::Suspend, "app.suspend", &["ctrl+z"]),
    (Action::ThinkingCycle, "app.thinking.cycle", &["shift+tab"]),
    (Action::ModelCycleForward, "app.model.cycleForward", &["ctrl+p"]),
    (Action::ModelCycleBackward, "app.model.cycleBackward", &["shift+ctrl+p"]),
    (Action::ModelSelect, "app.model.select", &["ctrl+l"]),
    (Action::ToolsExpand, "app.tools.expand", &["ctrl+o"]),
    (Action::ThinkingToggle, "app.thinking.toggle", &["ctrl+t"]),
    (Action::FollowUp, "app.message.followUp", &["alt+enter"]),
    (Action::Dequeue, "app.message.dequeue", &["alt+up"]),
    (Action::PasteImage, "app.clipboard.pasteImage", &["ctrl+v"]),
    (Action::SessionNew, "app.session.new", &[]),
    (Action::SessionTree, "app.session.tree", &[]),
    (Action::SessionFork, "app.session.fork", &[]),
    (Action::SessionResume, "app.session.resume", &[]),
    (Action::NewLine, "tui.input.newLine", &["shift+enter"]),
    (Action::Submit, "tui.input.submit", &["enter"]),
    (Action::Tab, "tui.input.tab", &["tab"]),
    (Action::Undo, "tui.editor.undo", &["ctrl+-"]),
    (Action::DeleteToLineEnd, "tui.editor.deleteToLineEnd", &["ctrl+k"]),
    (Action::DeleteToLineStart, "tui.editor.deleteToLineStart", &["ctrl+u"]),
    (Action::DeleteWordBackward, "tui.editor.deleteWordBackward", &["ctrl+w", "alt+backspace"]),
    (Action::DeleteWordForward, "tui.editor.deleteWordForward", &["alt+d", "alt+delete"]),
    (Action::DeleteCharBackward, "tui.editor.deleteCharBackward", &["backspace"]),
    (Action::DeleteCharForward, "tui.editor.deleteCharForward", &["delete", "ctrl+d"]),
    (Action::Yank, "tui.editor.yank", &["ctrl+y"]),
    (Action::YankPop, "tui.editor.yankPop", &["alt+y"]),
    (Action::CursorLineStart, "tui.editor.cursorLineStart", &["home", "ctrl+a"]),
    (Action::CursorLineEnd, "tui.editor.cursorLineEnd", &["end", "ctrl+e"]),
    (Action::CursorWordLeft, "tui.editor.cursorWordLeft", &["alt+left", "ctrl+left", "alt+b"]),
    (Action::CursorWordRight, "tui.editor.cursorWordRight", &["alt+right", "ctrl+right", "alt+f"]),
    (Action::JumpForward, "tui.editor.jumpForward", &["ctrl+]"]),
    (Action::JumpBackward, "tui.editor.jumpBackward", &["ctrl+alt+]"]),
    (Action::CursorUp, "tui.editor.cursorUp", &["up"]),
    (Action::CursorDown, "tui.editor.cursorDown", &["down"]),
    (Action::CursorLeft, "tui.editor.cursorLeft", &["left", "ctrl+b"]),
    (Action::CursorRight, "tui.editor.cursorRight", &["right", "ctrl+f"]),
    (Action::PageUp, "tui.editor.pageUp", &["pageUp"]),
    (Action::PageDown, "tui.editor.pageDown", &["pageDown"]),
    (Action::HistoryPrevious, "tui.editor.historyPrevious", &[]),
    (Action::HistoryNext, "tui.editor.historyNext", &[]),
    (Action::MessageCopy, "app.message.copy", &["ctrl+x"]),
];

/// The action with pi's id `name`.
pub fn action_named(name: &str) -> Option<Action> {
    DEFAULTS.iter().find(|(_, id, _)| *id == name).map(|(action, _, _)| *action)
}

/// pi's ids for what rho's interactive mode does not have: accepted, without effect.
const WITHOUT_EFFECT: &[&str] = &[
    "tui.input.copy",
    "tui.select.up",
    "tui.select.down",
    "tui.select.pageUp",
    "tui.select.pageDown",
    "tui.select.confirm",
    "tui.select.cancel",
    "app.model.cycleBackward",
    "app.editor.external",
    "app.session.toggleNamedFilter",
    "app.session.togglePath",
    "app.session.toggleSort",
    "app.session.rename",
    "app.session.delete",
    "app.session.deleteNoninvasive",
    "app.tree.foldOrUp",
    "app.tree.unfoldOrDown",
    "app.tree.editLabel",
    "app.tree.toggleLabelTimestamp",
    "app.tree.filter.default",
    "app.tree.filter.noTools",
    "app.tree.filter.userOnly",
    "app.tree.filter.labeledOnly",
    "app.tree.filter.all",
    "app.tree.filter.cycleForward",
    "app.tree.filter.cycleBackward",
    "app.models.save",
    "app.models.enableAll",
    "app.models.clearAll",
    "app.models.toggleProvider",
    "app.models.reorderUp",
    "app.models.reorderDown",
];

/// pi 1.6's ids for what rho does not have at all (the fullscreen mode's transcript keys, saving
/// the thinking level from its selector): a file that binds them is told so once.
const NOT_SUPPORTED: &[&str] = &[
    "tui.altScreen.pageUp",
    "tui.altScreen.pageDown",
    "tui.altScreen.halfPageUp",
    "tui.altScreen.halfPageDown",
    "tui.altScreen.lineUp",
    "tui.altScreen.lineDown",
    "tui.altScreen.previousPrompt",
    "tui.altScreen.nextPrompt",
    "tui.altScreen.search",
    "tui.altScreen.searchNext",
    "tui.altScreen.searchPrevious",
    "tui.altScreen.searchClose",
    "tui.altScreen.top",
    "tui.altScreen.bottom",
    "app.thinking.save",
];

/// pi's ids before they were namespaced; pi migrates them, and so does rho.
const LEGACY_IDS: &[(&str, &str)] = &[
    ("cursorUp", "tui.editor.cursorUp"),
    ("cursorDown", "tui.editor.cursorDown"),
    ("cursorLeft", "tui.editor.cursorLeft"),
    ("cursorRight", "tui.editor.cursorRight"),
    ("cursorWordLeft", "tui.editor.cursorWordLeft"),
    ("cursorWordRight", "tui.editor.cursorWordRight"),
    ("cursorLineStart", "tui.editor.cursorLineStart"),
    ("cursorLineEnd", "tui.editor.cursorLineEnd"),
    ("jumpForward", "tui.editor.jumpForward"),
    ("jumpBackward", "tui.editor.jumpBackward"),
    ("pageUp", "tui.editor.pageUp"),
    ("pageDown", "tui.editor.pageDown"),
    ("deleteCharBackward", "tui.editor.deleteCharBackward"),
    ("deleteCharForward", "tui.editor.deleteCharForward"),
    ("deleteWordBackward", "tui.editor.deleteWordBackward"),
    ("deleteWordForward", "tui.editor.deleteWordForward"),
    ("deleteToLineStart", "tui.editor.deleteToLineStart"),
    ("deleteToLineEnd", "tui.editor.deleteToLineEnd"),
    ("yank", "tui.editor.yank"),
    ("yankPop", "tui.editor.yankPop"),
    ("undo", "tui.editor.undo"),
    ("newLine", "tui.input.newLine"),
    ("submit", "tui.input.submit"),
    ("tab", "tui.input.tab"),
    ("copy", "tui.input.copy"),
    ("selectUp", "tui.select.up"),
    ("selectDown", "tui.select.down"),
    ("selectPageUp", "tui.select.pageUp"),
    ("selectPageDown", "tui.select.pageDown"),
    ("selectConfirm", "tui.select.confirm"),
    ("selectCancel", "tui.select.cancel"),
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("selectModel", "app.model.select"),
    ("expandTools", "app.tools.expand"),
    ("toggleThinking", "app.thinking.toggle"),
    ("toggleSessionNamedFilter", "app.session.toggleNamedFilter"),
    ("externalEditor", "app.editor.external"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("newSession", "app.session.new"),
    ("tree", "app.session.tree"),
    ("fork", "app.session.fork"),
    ("resume", "app.session.resume"),
    ("treeFoldOrUp", "app.tree.foldOrUp"),
    ("treeUnfoldOrDown", "app.tree.unfoldOrDown"),
    ("treeEditLabel", "app.tree.editLabel"),
    ("treeToggleLabelTimestamp", "app.tree.toggleLabelTimestamp"),
    ("toggleSessionPath", "app.session.togglePath"),
    ("toggleSessionSort", "app.session.toggleSort"),
    ("renameSession", "app.session.rename"),
    ("deleteSession", "app.session.delete"),
    ("deleteSessionNoninvasive", "app.session.deleteNoninvasive"),
];

/// The file's name in the agent dir.
pub const FILE_NAME: &str = "keybindings.json";

/// A key as the table compares them: a key code and the Ctrl, Alt and Shift modifiers. Letters
/// are lower case (Shift is a modifier); other characters carry their shift in themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    code: KeyCode,
    modifiers: KeyModifiers,
}

const MODIFIERS: KeyModifiers = KeyModifiers::CONTROL.union(KeyModifiers::ALT).union(KeyModifiers::SHIFT);

impl Key {
    /// A pressed key, normalized: `BackTab` is Shift+Tab, Ctrl with the control bytes a terminal
    /// sends for Ctrl+\ ] ^ - (which arrive as Ctrl+4 … Ctrl+7) is those symbols, `_` is `-`.
    pub fn from_event(event: KeyEvent) -> Key {
        let mut modifiers = event.modifiers & MODIFIERS;
        let code = match event.code {
            KeyCode::BackTab => {
                modifiers |= KeyModifiers::SHIFT;
                KeyCode::Tab
            }
            KeyCode::Char(c) => {
                let ctrl = modifiers.contains(KeyModifiers::CONTROL);
                let c = match c {
                    '4' if ctrl => '\\',
                    '5' if ctrl => ']',
                    '6' if ctrl => '^',
                    '7' | '_' if ctrl => '-',
                    c => c,
                };
                KeyCode::Char(c)
            }
            code => code,
        };
        Key::new(code, modifiers)
    }

    fn new(code: KeyCode, mut modifiers: KeyModifiers) -> Key {
        let code = match code {
            KeyCode::Char(c) if c.is_ascii_uppercase() => {
                modifiers |= KeyModifiers::SHIFT;
                KeyCode::Char(c.to_ascii_lowercase())
            }
            KeyCode::Char(c) if !c.is_ascii_alphabetic() && c != ' ' => {
                modifiers -= KeyModifiers::SHIFT;
                KeyCode::Char(c)
            }
            code => code,
        };
        Key { code, modifiers }
    }

    /// A key in pi's syntax: modifiers (`ctrl`, `alt`, `shift`) and a key joined by `+`.
    pub fn parse(spec: &str) -> Option<Key> {
        let spec = spec.trim();
        let (mods, name) = match spec.strip_suffix("++") {
            Some(mods) => (mods, "+"),
            None => match spec.rsplit_once('+') {
                Some((mods, name)) => (mods, name),
                None => ("", spec),
            },
        };
        let mut modifiers = KeyModifiers::NONE;
        for m in mods.split('+').filter(|m| !m.is_empty()) {
            modifiers |= match m.to_ascii_lowercase().as_str() {
                "ctrl" => KeyModifiers::CONTROL,
                "alt" => KeyModifiers::ALT,
                "shift" => KeyModifiers::SHIFT,
                _ => return None,
            };
        }
        Some(Key::new(key_code(name)?, modifiers))
    }
}

/// As `/hotkeys` shows a key: `Shift+Ctrl+P`, `Ctrl+Alt+]`, `Alt+Backspace`, `PageUp`.
impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (modifier, name) in
            [(KeyModifiers::SHIFT, "Shift+"), (KeyModifiers::CONTROL, "Ctrl+"), (KeyModifiers::ALT, "Alt+")]
        {
            if self.modifiers.contains(modifier) {
                f.write_str(name)?;
            }
        }
        let name = match self.code {
            KeyCode::Char(' ') => "Space",
            KeyCode::Char(c) => return write!(f, "{}", c.to_ascii_uppercase()),
            KeyCode::F(n) => return write!(f, "F{n}"),
            KeyCode::Esc => "Escape",
            KeyCode::Enter => "Enter",
            KeyCode::Tab => "Tab",
            KeyCode::Backspace => "Backspace",
            KeyCode::Delete => "Delete",
            KeyCode::Insert => "Insert",
            KeyCode::KeypadBegin => "Clear",
            KeyCode::Home => "Home",
            KeyCode::End => "End",
            KeyCode::PageUp => "PageUp",
            KeyCode::PageDown => "PageDown",
            KeyCode::Up => "Up",
            KeyCode::Down => "Down",
            KeyCode::Left => "Left",
            KeyCode::Right => "Right",
            _ => "?",
        };
        f.write_str(name)
    }
}

/// A key's name (`a`, `7`, `pageUp`, `f5`, `-`) as a key code.
fn key_code(name: &str) -> Option<KeyCode> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        let symbol = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?".contains(c);
        return (c.is_ascii_alphanumeric() || symbol).then(|| KeyCode::Char(c.to_ascii_lowercase()));
    }
    let lower = name.to_ascii_lowercase();
    let code = match lower.as_str() {
        "escape" | "esc" => KeyCode::Esc,
        "enter" | "return" => KeyCode::Enter,
        "tab" => KeyCode::Tab,
        "space" => KeyCode::Char(' '),
        "backspace" => KeyCode::Backspace,
        "delete" => KeyCode::Delete,
        "insert" => KeyCode::Insert,
        "clear" => KeyCode::KeypadBegin,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        f => {
            let n: u8 = f.strip_prefix('f')?.parse().ok()?;
            return (1..=12).contains(&n).then_some(KeyCode::F(n));
        }
    };
    Some(code)
}

/// The keys of every action.
#[derive(Debug, Clone)]
pub struct Keybindings {
    keys: Vec<(Action, Vec<Key>)>,
}

impl Default for Keybindings {
    fn default() -> Self {
        let keys = DEFAULTS
            .iter()
            .map(|(action, _, keys)| (*action, keys.iter().filter_map(|k| Key::parse(k)).collect()))
            .collect();
        Keybindings { keys }
    }
}

impl Keybindings {
    /// The defaults with the file's text applied, and the warning when some of it was not
    /// understood (what was understood is applied).
    pub fn from_json(text: &str) -> (Keybindings, Option<String>) {
        let mut bindings = Keybindings::default();
        let object = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => object,
            Ok(_) => return (bindings, Some("is not a JSON object".to_owned())),
            Err(e) => return (bindings, Some(format!("is not valid JSON ({e})"))),
        };
        let mut problems = Vec::new();
        let mut unsupported = Vec::new();
        for (name, value) in &object {
            let id = LEGACY_IDS.iter().find(|(old, _)| old == name).map_or(name.as_str(), |(_, new)| *new);
            if id != name && object.contains_key(id) {
                continue;
            }
            let Some(index) = DEFAULTS.iter().position(|(_, n, _)| *n == id) else {
                if NOT_SUPPORTED.contains(&id) {
                    unsupported.push(name.as_str());
                } else if !WITHOUT_EFFECT.contains(&id) {
                    problems.push(format!("unknown action \"{name}\""));
                }
                continue;
            };
            let specs: Vec<&str> = match value {
                Value::String(s) => vec![s.as_str()],
                Value::Array(items) if items.iter().all(Value::is_string) => {
                    items.iter().filter_map(Value::as_str).collect()
                }
                _ => {
                    problems.push(format!("{name}: not a key or a list of keys"));
                    continue;
                }
            };
            let mut keys = Vec::new();
            let mut bad = None;
            for spec in specs {
                match Key::parse(spec) {
                    Some(key) if !keys.contains(&key) => keys.push(key),
                    Some(_) => {}
                    None => bad = bad.or(Some(spec)),
                }
            }
            match bad {
                Some(spec) => problems.push(format!("{name}: unknown key \"{spec}\"")),
                None => bindings.keys[index].1 = keys,
            }
        }
        let mut parts = Vec::new();
        if !problems.is_empty() {
            parts.push(format!("{} (their defaults are kept)", problems.join("; ")));
        }
        if !unsupported.is_empty() {
            parts.push(format!("not supported by rho, ignored: {}", unsupported.join(", ")));
        }
        let warning = (!parts.is_empty()).then(|| parts.join("; "));
        (bindings, warning)
    }

    /// The actions `key` is bound to, in the order they are tried.
    pub fn actions(&self, key: KeyEvent) -> Vec<Action> {
        let key = Key::from_event(key);
        self.keys.iter().filter(|(_, keys)| keys.contains(&key)).map(|(action, _)| *action).collect()
    }

    /// `action`'s keys, in the order they were given.
    pub fn keys(&self, action: Action) -> &[Key] {
        self.keys.iter().find(|(a, _)| *a == action).map_or(&[], |(_, keys)| keys)
    }

    /// Whether `key` is one of `action`'s keys.
    pub fn is(&self, key: KeyEvent, action: Action) -> bool {
        let key = Key::from_event(key);
        self.keys.iter().any(|(a, keys)| *a == action && keys.contains(&key))
    }
}

static CURRENT: RwLock<Option<Arc<Keybindings>>> = RwLock::new(None);

/// Reads `<agent_dir>/keybindings.json` (none is the defaults) and makes it the table in use;
/// the warning line to show when the file was not understood in full.
pub fn load(agent_dir: &Path) -> Option<String> {
    let path = agent_dir.join(FILE_NAME);
    let (bindings, warning) = match std::fs::read_to_string(&path) {
        Ok(text) => Keybindings::from_json(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Keybindings::default(), None),
        Err(e) => (Keybindings::default(), Some(format!("cannot be read ({e})"))),
    };
    *CURRENT.write() = Some(Arc::new(bindings));
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let shown = match home.as_deref().and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    };
    warning.map(|w| format!("Warning: {shown}: {w}"))
}

/// The table in use (the defaults until [`load`] ran).
pub fn current() -> Arc<Keybindings> {
    if let Some(bindings) = CURRENT.read().as_ref() {
        return bindings.clone();
    }
    Arc::new(Keybindings::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn keys_parse_in_pi_syntax() {
        let ctrl_shift_p = Key::parse("ctrl+shift+p").unwrap();
        assert_eq!(ctrl_shift_p, Key::from_event(event(KeyCode::Char('P'), KeyModifiers::CONTROL)));
        assert_eq!(Key::parse("alt+enter"), Some(Key::from_event(event(KeyCode::Enter, KeyModifiers::ALT))));
        assert_eq!(Key::parse("pageUp"), Some(Key::from_event(event(KeyCode::PageUp, KeyModifiers::NONE))));
        assert_eq!(Key::parse("shift+tab"), Some(Key::from_event(event(KeyCode::BackTab, KeyModifiers::SHIFT))));
        assert_eq!(Key::parse("f12"), Some(Key::from_event(event(KeyCode::F(12), KeyModifiers::NONE))));
        assert_eq!(Key::parse("ctrl++"), Some(Key::from_event(event(KeyCode::Char('+'), KeyModifiers::CONTROL))));
        for bad in ["ctrl+nope", "hyper+a", "f13", "", "ctrl+"] {
            assert_eq!(Key::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn keys_are_shown_as_hotkeys_lists_them() {
        let shown = |spec: &str| Key::parse(spec).unwrap().to_string();
        assert_eq!(shown("shift+ctrl+p"), "Shift+Ctrl+P");
        assert_eq!(shown("ctrl+alt+]"), "Ctrl+Alt+]");
        assert_eq!(shown("alt+backspace"), "Alt+Backspace");
        assert_eq!(shown("pageUp"), "PageUp");
        assert_eq!(shown("escape"), "Escape");
        assert_eq!(shown("ctrl+-"), "Ctrl+-");
        assert_eq!(shown("f5"), "F5");
        let (bindings, _) = Keybindings::from_json(r#"{"app.tools.expand": ["alt+o", "ctrl+o"]}"#);
        let keys: Vec<String> = bindings.keys(Action::ToolsExpand).iter().map(Key::to_string).collect();
        assert_eq!(keys, ["Alt+O", "Ctrl+O"]);
        assert!(bindings.keys(Action::SessionNew).is_empty());
    }

    #[test]
    fn control_bytes_of_symbols_are_those_symbols() {
        let undo = Key::parse("ctrl+-").unwrap();
        // A legacy terminal sends 0x1f, which arrives as Ctrl+7; the kitty protocol sends Ctrl+-.
        assert_eq!(Key::from_event(event(KeyCode::Char('7'), KeyModifiers::CONTROL)), undo);
        assert_eq!(Key::from_event(event(KeyCode::Char('-'), KeyModifiers::CONTROL)), undo);
        let jump = Key::parse("ctrl+]").unwrap();
        assert_eq!(Key::from_event(event(KeyCode::Char('5'), KeyModifiers::CONTROL)), jump);
    }

    #[test]
    fn a_file_replaces_the_keys_of_the_actions_it_names() {
        let (bindings, warning) =
            Keybindings::from_json(r#"{"tui.editor.cursorUp": ["up", "ctrl+k"], "app.model.select": "alt+m"}"#);
        assert_eq!(warning, None);
        let ctrl_k = event(KeyCode::Char('k'), KeyModifiers::CONTROL);
        assert_eq!(bindings.actions(ctrl_k), vec![Action::DeleteToLineEnd, Action::CursorUp]);
        assert!(bindings.is(event(KeyCode::Char('m'), KeyModifiers::ALT), Action::ModelSelect));
        assert!(!bindings.is(event(KeyCode::Char('l'), KeyModifiers::CONTROL), Action::ModelSelect));
    }

    #[test]
    fn legacy_ids_are_migrated_and_pi_only_ids_accepted() {
        let (bindings, warning) = Keybindings::from_json(r#"{"undo": "alt+u", "app.editor.external": "ctrl+g"}"#);
        assert_eq!(warning, None);
        assert!(bindings.is(event(KeyCode::Char('u'), KeyModifiers::ALT), Action::Undo));
    }

    #[test]
    fn what_is_not_understood_keeps_its_defaults_and_is_reported_once() {
        let (bindings, warning) = Keybindings::from_json(
            r#"{"app.nothing": "ctrl+x", "tui.editor.undo": ["alt+u", "ctrl+nope"], "app.exit": 3, "app.clear": "ctrl+q"}"#,
        );
        assert_eq!(
            warning.as_deref(),
            Some(
                "unknown action \"app.nothing\"; tui.editor.undo: unknown key \"ctrl+nope\"; \
                 app.exit: not a key or a list of keys (their defaults are kept)"
            )
        );
        assert!(bindings.is(event(KeyCode::Char('7'), KeyModifiers::CONTROL), Action::Undo));
        assert!(!bindings.is(event(KeyCode::Char('u'), KeyModifiers::ALT), Action::Undo));
        assert!(bindings.is(event(KeyCode::Char('q'), KeyModifiers::CONTROL), Action::Clear));
        let (bindings, warning) = Keybindings::from_json("{ not json");
        assert!(warning.unwrap().starts_with("is not valid JSON"));
        assert!(bindings.is(event(KeyCode::Esc, KeyModifiers::NONE), Action::Interrupt));
    }

    #[test]
    fn pi_1_6s_history_and_copy_keys_are_honoured_and_its_fullscreen_keys_named() {
        let (bindings, warning) = Keybindings::from_json(
            r#"{"tui.editor.historyPrevious": "alt+k", "app.message.copy": "ctrl+shift+c",
                "tui.altScreen.search": "ctrl+f", "app.thinking.save": "ctrl+s"}"#,
        );
        let alt_k = KeyEvent::new(KeyCode::Char('k'), KeyModifiers::ALT);
        assert_eq!(bindings.actions(alt_k), vec![Action::HistoryPrevious]);
        assert_eq!(bindings.keys(Action::HistoryNext), &[] as &[Key], "no default key, as in pi");
        assert_eq!(bindings.keys(Action::MessageCopy), [Key::parse("ctrl+shift+c").unwrap()]);
        assert_eq!(warning.as_deref(), Some("not supported by rho, ignored: tui.altScreen.search, app.thinking.save"));
        let ctrl_x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::CONTROL);
        assert_eq!(Keybindings::default().actions(ctrl_x), vec![Action::MessageCopy], "pi's default");
    }
}
