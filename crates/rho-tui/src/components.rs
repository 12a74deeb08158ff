//! Extensions' terminal components on screen. pi-tui components run in the extension host and
//! send their rendered lines (ANSI-styled); here they are drawn: a `ctx.ui.custom()` component
//! in the editor's place, taking every key (re-encoded as the terminal's byte sequences, which
//! is what pi-tui's key matching reads), widget components above or below the editor, and a
//! footer component in the place of rho's footer (and a header component in the place of rho's
//! header, at start). The newest open `custom()` component has the
//! keys; closing it gives them back to the one before, or to the editor.

use std::collections::HashMap;

use ansi_to_tui::IntoText;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::Line;
use rho_extensions::{ComponentFrame, ComponentKind};
use rho_rpc::WidgetPlacement;

use super::app::App;
use super::keybindings::{self, Action};
use super::widgets::ExtensionWidgets;
use rho_coding_agent::ui::ComponentUpdate;

/// The components open now.
#[derive(Debug, Default)]
pub struct Components {
    /// `custom()` components, oldest first: the last one is drawn and has the keys.
    focused: Vec<(String, Vec<Line<'static>>)>,
    /// Widget components: their widget key, by component id.
    widgets: HashMap<String, String>,
    /// The footer component, drawn instead of rho's footer and statuses.
    footer: Option<(String, Vec<Line<'static>>)>,
    /// The header component's lines, shown at start instead of rho's header.
    header: Option<(String, Vec<Line<'static>>)>,
    /// The extension's editor, drawn instead of rho's and given the keys rho does not take.
    custom_editor: Option<(String, Vec<Line<'static>>)>,
}

impl Components {
    /// Applies a render or a close; widget components go to `widgets` under their key.
    pub fn apply(&mut self, update: ComponentUpdate, widgets: &mut ExtensionWidgets) {
        match update {
            ComponentUpdate::Render(frame) => self.render(frame, widgets),
            // For the app (see `App::on_component`).
            ComponentUpdate::EditorSubmit { .. } | ComponentUpdate::EditorAction { .. } => {}
            ComponentUpdate::Close { id } => {
                self.focused.retain(|(open, _)| *open != id);
                if self.footer.as_ref().is_some_and(|(open, _)| *open == id) {
                    self.footer = None;
                }
                if self.header.as_ref().is_some_and(|(open, _)| *open == id) {
                    self.header = None;
                }
                if self.custom_editor.as_ref().is_some_and(|(open, _)| *open == id) {
                    self.custom_editor = None;
                }
                if let Some(key) = self.widgets.remove(&id)
                    && !self.widgets.values().any(|k| *k == key)
                {
                    widgets.set_widget(key, None, None);
                }
            }
        }
    }

    fn render(&mut self, frame: ComponentFrame, widgets: &mut ExtensionWidgets) {
        let ComponentFrame { id, kind, lines, widget_key, widget_placement } = frame;
        match kind {
            ComponentKind::Editor | ComponentKind::Overlay => {
                let lines = ansi_lines(&lines);
                match self.focused.iter_mut().find(|(open, _)| *open == id) {
                    Some((_, shown)) => *shown = lines,
                    None => self.focused.push((id, lines)),
                }
            }
            ComponentKind::Footer => self.footer = Some((id, ansi_lines(&lines))),
            ComponentKind::Header => self.header = Some((id, ansi_lines(&lines))),
            ComponentKind::CustomEditor => self.custom_editor = Some((id, ansi_lines(&lines))),
            ComponentKind::Widget => {
                let key = widget_key.unwrap_or_else(|| id.clone());
                let placement = match widget_placement.as_deref() {
                    Some("belowEditor") => WidgetPlacement::BelowEditor,
                    _ => WidgetPlacement::AboveEditor,
                };
                widgets.set_component_widget(key.clone(), ansi_lines(&lines), placement);
                self.widgets.insert(id, key);
            }
        }
    }

    /// The component that has the keys and its lines.
    pub fn focused(&self) -> Option<(&str, &[Line<'static>])> {
        self.focused.last().map(|(id, lines)| (id.as_str(), lines.as_slice()))
    }

    /// The footer component's lines, when one is set.
    pub fn footer(&self) -> Option<&[Line<'static>]> {
        self.footer.as_ref().map(|(_, lines)| lines.as_slice())
    }

    /// The extension's editor and its lines, when one is set.
    pub fn custom_editor(&self) -> Option<(&str, &[Line<'static>])> {
        self.custom_editor.as_ref().map(|(id, lines)| (id.as_str(), lines.as_slice()))
    }

    /// The header component's lines, when one is set (only the start shows them: the history
    /// cannot change once printed).
    pub fn header(&self) -> Option<&[Line<'static>]> {
        self.header.as_ref().map(|(_, lines)| lines.as_slice())
    }

    /// The extensions were unloaded: their components are gone.
    pub fn clear(&mut self) {
        self.focused.clear();
        self.widgets.clear();
        self.footer = None;
        self.header = None;
        self.custom_editor = None;
    }
}

impl App {
    /// A component update from the host: what the extension's editor hands over acts on the
    /// app; the rest changes what is drawn.
    pub fn on_component(&mut self, update: ComponentUpdate) {
        match update {
            ComponentUpdate::EditorSubmit { text } => {
                self.editor.set_text(&text);
                self.submit(false);
            }
            ComponentUpdate::EditorAction { action, text } => self.editor_action(&action, &text),
            other => self.components.apply(other, &mut self.widgets),
        }
    }

    /// The extension's editor, unless a dialog is being answered in rho's editor.
    pub fn extension_editor(&self) -> Option<(&str, &[Line<'static>])> {
        if self.dialog.as_ref().is_some_and(|d| d.typed) {
            return None;
        }
        self.components.custom_editor()
    }

    /// An app action the extension's editor handed over, with its text then.
    fn editor_action(&mut self, name: &str, text: &str) {
        let Some(action) = keybindings::action_named(name) else {
            return;
        };
        match action {
            // Ctrl+C clears the extension's editor first, as it clears rho's.
            Action::Clear if !text.is_empty() => {
                self.session.set_extension_editor_text("");
                self.ctrl_c_at = None;
            }
            Action::FollowUp => {
                self.editor.set_text(text);
                self.submit(true);
                self.session.set_extension_editor_text("");
            }
            _ => {
                self.run(action);
            }
        }
    }
}

/// ANSI-styled text as ratatui lines (tabs as four spaces; escape sequences that are not
/// styles are dropped).
pub fn ansi_lines(lines: &[String]) -> Vec<Line<'static>> {
    lines
        .iter()
        .flat_map(|line| {
            let line = line.replace('\t', "    ");
            match line.as_bytes().into_text() {
                Ok(text) if text.lines.is_empty() => vec![Line::default()],
                Ok(text) => text.lines,
                Err(_) => vec![Line::raw(line)],
            }
        })
        .collect()
}

/// A key as the terminal sends it (legacy encoding, xterm modifiers for the cursor keys);
/// `None` for keys that have none.
pub fn key_bytes(key: KeyEvent) -> Option<String> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    // xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl.
    let modifier = 1 + u8::from(shift) + 2 * u8::from(alt) + 4 * u8::from(ctrl);
    let csi = |letter: char| {
        if modifier == 1 { format!("\x1b[{letter}") } else { format!("\x1b[1;{modifier}{letter}") }
    };
    let tilde = |code: u8| {
        if modifier == 1 { format!("\x1b[{code}~") } else { format!("\x1b[{code};{modifier}~") }
    };
    let with_alt = |s: String| if alt { format!("\x1b{s}") } else { s };
    let bytes = match key.code {
        KeyCode::Char(c) if ctrl => with_alt(control_char(c)?.to_string()),
        KeyCode::Char(c) => with_alt(c.to_string()),
        KeyCode::Enter => with_alt("\r".into()),
        KeyCode::Tab if shift => "\x1b[Z".into(),
        KeyCode::Tab => with_alt("\t".into()),
        KeyCode::BackTab => "\x1b[Z".into(),
        KeyCode::Backspace if ctrl => with_alt("\x08".into()),
        KeyCode::Backspace => with_alt("\x7f".into()),
        KeyCode::Esc => with_alt("\x1b".into()),
        KeyCode::Up => csi('A'),
        KeyCode::Down => csi('B'),
        KeyCode::Right => csi('C'),
        KeyCode::Left => csi('D'),
        KeyCode::Home => csi('H'),
        KeyCode::End => csi('F'),
        KeyCode::Insert => tilde(2),
        KeyCode::Delete => tilde(3),
        KeyCode::PageUp => tilde(5),
        KeyCode::PageDown => tilde(6),
        KeyCode::F(n @ 1..=4) if modifier == 1 => format!("\x1bO{}", char::from(b'P' + n - 1)),
        KeyCode::F(n @ 1..=4) => format!("\x1b[1;{modifier}{}", char::from(b'P' + n - 1)),
        KeyCode::F(n @ 5..=12) => tilde([15, 17, 18, 19, 20, 21, 23, 24][usize::from(n - 5)]),
        _ => return None,
    };
    Some(bytes)
}

/// Ctrl+key's control character (Ctrl+A is 0x01, Ctrl+Space 0x00, Ctrl+[ Escape, …).
fn control_char(c: char) -> Option<char> {
    let byte = match c.to_ascii_lowercase() {
        c @ 'a'..='z' => c as u8 - b'a' + 1,
        ' ' | '@' | '2' => 0,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' => 0x1e,
        '_' | '-' | '7' => 0x1f,
        '?' | '8' => 0x7f,
        _ => return None,
    };
    Some(char::from(byte))
}

#[cfg(test)]
mod tests {
    use ratatui::style::{Color, Modifier};

    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<String> {
        key_bytes(KeyEvent::new(code, modifiers))
    }

    #[test]
    fn keys_are_the_terminals_byte_sequences() {
        let none = KeyModifiers::NONE;
        assert_eq!(key(KeyCode::Char('x'), none).as_deref(), Some("x"));
        assert_eq!(key(KeyCode::Char('X'), KeyModifiers::SHIFT).as_deref(), Some("X"));
        assert_eq!(key(KeyCode::Char('c'), KeyModifiers::CONTROL).as_deref(), Some("\x03"));
        assert_eq!(key(KeyCode::Char('x'), KeyModifiers::ALT).as_deref(), Some("\x1bx"));
        assert_eq!(key(KeyCode::Enter, none).as_deref(), Some("\r"));
        assert_eq!(key(KeyCode::Esc, none).as_deref(), Some("\x1b"));
        assert_eq!(key(KeyCode::Backspace, none).as_deref(), Some("\x7f"));
        assert_eq!(key(KeyCode::Up, none).as_deref(), Some("\x1b[A"));
        assert_eq!(key(KeyCode::Left, KeyModifiers::CONTROL).as_deref(), Some("\x1b[1;5D"));
        assert_eq!(key(KeyCode::BackTab, KeyModifiers::SHIFT).as_deref(), Some("\x1b[Z"));
        assert_eq!(key(KeyCode::Delete, none).as_deref(), Some("\x1b[3~"));
        assert_eq!(key(KeyCode::F(1), none).as_deref(), Some("\x1bOP"));
        assert_eq!(key(KeyCode::F(5), none).as_deref(), Some("\x1b[15~"));
        assert_eq!(key(KeyCode::Char('é'), KeyModifiers::CONTROL), None);
    }

    #[test]
    fn ansi_styles_become_ratatui_styles() {
        let lines = ansi_lines(&["plain \x1b[38;2;255;0;0mred\x1b[39m \x1b[1mbold\x1b[22m".into(), String::new()]);
        assert_eq!(lines.len(), 2);
        let text: String = lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "plain red bold");
        let red = lines[0].spans.iter().find(|s| s.content == "red").expect("a red span");
        assert_eq!(red.style.fg, Some(Color::Rgb(255, 0, 0)));
        let bold = lines[0].spans.iter().find(|s| s.content == "bold").expect("a bold span");
        assert!(bold.style.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn the_newest_custom_component_has_the_keys_and_widgets_take_their_key() {
        let mut components = Components::default();
        let mut widgets = ExtensionWidgets::default();
        let frame = |id: &str, kind, lines: &[&str]| ComponentFrame {
            id: id.into(),
            kind,
            lines: lines.iter().map(|l| (*l).to_owned()).collect(),
            widget_key: (kind == ComponentKind::Widget).then(|| "w".to_owned()),
            widget_placement: None,
        };
        components.apply(ComponentUpdate::Render(frame("c1", ComponentKind::Editor, &["one"])), &mut widgets);
        components.apply(ComponentUpdate::Render(frame("c2", ComponentKind::Overlay, &["two"])), &mut widgets);
        components.apply(ComponentUpdate::Render(frame("c3", ComponentKind::Widget, &["wide"])), &mut widgets);
        assert_eq!(components.focused().map(|(id, _)| id), Some("c2"));
        assert_eq!(widgets.lines(WidgetPlacement::AboveEditor).len(), 1);
        components.apply(ComponentUpdate::Close { id: "c2".into() }, &mut widgets);
        assert_eq!(components.focused().map(|(id, _)| id), Some("c1"));
        components.apply(ComponentUpdate::Close { id: "c3".into() }, &mut widgets);
        assert!(widgets.lines(WidgetPlacement::AboveEditor).is_empty());
        components.apply(ComponentUpdate::Close { id: "c1".into() }, &mut widgets);
        assert!(components.focused().is_none());
    }
}
