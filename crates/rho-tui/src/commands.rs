//! The slash commands of the interactive mode: the built-in ones, the prompt templates and skills
//! the session lists (`get_commands` of RPC mode), completion of their names, and `/hotkeys`.

use ratatui::text::{Line, Span};

use super::keybindings::{Action, Keybindings};
use super::style;
use rho_coding_agent::AgentSession;

/// The built-in commands: name and what it does.
pub const BUILTIN: &[(&str, &str)] = &[
    ("settings", "Open the settings menu"),
    ("model", "Select the model (or /model provider/id)"),
    ("thinking", "Set the thinking level (or /thinking <level>)"),
    ("scoped-models", "Choose the models Ctrl+P cycles"),
    ("new", "Start a new session"),
    ("resume", "Resume a session of this directory"),
    ("import", "Import a JSONL session and continue it: /import <path>"),
    ("fork", "Fork a new session from an earlier message"),
    ("tree", "Navigate the session tree and continue from any entry"),
    ("clone", "Duplicate the session into a new file and continue there"),
    ("rewind", "Restore the code and/or conversation to before an earlier message"),
    ("name", "Name the session: /name <name> (without one, show it)"),
    ("session", "Show the session's file, id, messages, tokens and cost"),
    ("compact", "Compact the conversation: /compact [instructions]"),
    ("export", "Export the session to HTML, or to JSONL with a .jsonl file: /export [file]"),
    ("share", "Share the session as a private GitHub gist (needs the GitHub CLI)"),
    ("copy", "Copy the last answer to the clipboard (OSC 52)"),
    ("hotkeys", "Show the keys"),
    ("reload", "Reload settings, context files, skills, prompt templates and themes"),
    ("trust", "Save this project's trust decision for the next start"),
    ("mcp", "List the MCP servers and where each stands (/mcp reconnect <server> restarts one)"),
    ("jobs", "List the commands running in the background"),
    ("login", "Log in to a subscription (Claude Pro/Max, ChatGPT Plus/Pro)"),
    ("logout", "Log out of a subscription"),
    ("quit", "Quit rho"),
];

/// What a `/hotkeys` line names: fixed text, or the keys of actions in the key table (as
/// `keybindings.json` left them), each action's keys joined by `, ` and the actions by ` / `.
#[derive(Debug, Clone, Copy)]
pub enum Keys {
    Text(&'static str),
    Of(&'static [Action]),
    /// An action without default keys: listed only once bound.
    IfBound(Action),
}

/// The keys, as `/hotkeys` lists them.
pub const HOTKEYS: &[(Keys, &str)] = &[
    (Keys::Of(&[Action::Submit]), "Send (while working: queue a steering message)"),
    (Keys::Of(&[Action::FollowUp]), "While working: queue a follow-up message"),
    (Keys::Of(&[Action::Dequeue]), "Put the queued messages back into the editor"),
    (Keys::Of(&[Action::NewLine]), "New line (also Ctrl+J)"),
    (Keys::Of(&[Action::Interrupt]), "Abort the run (queued messages back into the editor) / close a list"),
    (Keys::Text("Escape twice"), "Open the session tree (editor empty, idle)"),
    (Keys::Of(&[Action::Clear]), "Clear the editor; twice quits"),
    (Keys::Of(&[Action::Exit]), "Quit (editor empty); else delete the character under the cursor"),
    (Keys::Of(&[Action::CursorUp, Action::CursorDown]), "Move between lines; history of prompts"),
    (Keys::IfBound(Action::HistoryPrevious), "The previous prompt of the history"),
    (Keys::IfBound(Action::HistoryNext), "The next prompt of the history"),
    (Keys::Of(&[Action::CursorLeft, Action::CursorRight]), "Move the cursor"),
    (Keys::Of(&[Action::CursorWordLeft, Action::CursorWordRight]), "Word left / right"),
    (Keys::Of(&[Action::JumpForward, Action::JumpBackward]), "Jump to the next / previous typed character"),
    (Keys::Of(&[Action::CursorLineStart, Action::CursorLineEnd]), "Start / end of line"),
    (Keys::Of(&[Action::PageUp, Action::PageDown]), "Move a page of lines"),
    (Keys::Of(&[Action::DeleteToLineEnd, Action::DeleteToLineStart]), "Delete to end / start of line"),
    (Keys::Of(&[Action::DeleteWordBackward]), "Delete the word before the cursor"),
    (Keys::Of(&[Action::DeleteWordForward]), "Delete the word after the cursor"),
    (Keys::Of(&[Action::Yank, Action::YankPop]), "Paste the last deleted text / cycle to older ones"),
    (Keys::Of(&[Action::Undo]), "Undo"),
    (Keys::Of(&[Action::Tab]), "Complete a command name, or a path (a word with /, or starting with . or ~)"),
    (Keys::Text("@"), "Pick a file of the working directory (fuzzy; Up/Down, Tab or Enter, Esc closes)"),
    (Keys::Text("Paste"), "More than 10 lines show as [paste #n +N lines], sent whole"),
    (Keys::Text("Paste an image path"), "Attach the image (drag a file onto the terminal); shown as [image #n]"),
    (Keys::Of(&[Action::PasteImage]), "Attach the clipboard's image (needs wl-paste, xclip or pngpaste)"),
    (Keys::Text("!command"), "Run a shell command; its output joins the conversation"),
    (Keys::Text("!!command"), "Run a shell command; its output is not sent to the model"),
    (Keys::Of(&[Action::MessageCopy]), "Copy the last answer to the clipboard (as /copy)"),
    (Keys::Of(&[Action::ModelSelect]), "Select the model"),
    (
        Keys::Of(&[Action::ModelCycleForward, Action::ModelCycleBackward]),
        "Next / previous model (of /scoped-models, --models, else the available)",
    ),
    (Keys::Of(&[Action::ThinkingCycle]), "Next thinking level"),
    (Keys::Of(&[Action::Suspend]), "Suspend rho (fg resumes)"),
    (Keys::Of(&[Action::ToolsExpand]), "Expand tool output (and show the last one in full)"),
    (Keys::Of(&[Action::ThinkingToggle]), "Hide or show thinking blocks"),
    (Keys::IfBound(Action::SessionNew), "Start a new session"),
    (Keys::IfBound(Action::SessionTree), "Open the session tree"),
    (Keys::IfBound(Action::SessionFork), "Fork from an earlier message"),
    (Keys::IfBound(Action::SessionResume), "Resume a session"),
];

/// The width of `/hotkeys`' key column.
const KEY_COLUMN: usize = 25;

/// The text of a `/hotkeys` line's keys in `bindings` (`None`: an unbound optional action).
fn keys_text(keys: Keys, bindings: &Keybindings) -> Option<String> {
    let of = |action: Action| {
        let keys: Vec<String> = bindings.keys(action).iter().map(ToString::to_string).collect();
        if keys.is_empty() { "(unbound)".to_owned() } else { keys.join(", ") }
    };
    match keys {
        Keys::Text(text) => Some(text.to_owned()),
        Keys::Of(actions) => Some(actions.iter().map(|a| of(*a)).collect::<Vec<_>>().join(" / ")),
        Keys::IfBound(action) => (!bindings.keys(action).is_empty()).then(|| of(action)),
    }
}

/// A built-in command with its argument text.
#[derive(Debug, PartialEq, Eq)]
pub struct Invocation<'a> {
    pub name: &'a str,
    pub args: &'a str,
}

/// `text` as a built-in command, when it is one (anything else is a prompt: templates and skills
/// are expanded by the session).
pub fn parse(text: &str) -> Option<Invocation<'_>> {
    let rest = text.trim().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let name = if name == "exit" { "quit" } else { name };
    let name = BUILTIN.iter().find(|(n, _)| *n == name).map(|(n, _)| *n)?;
    Some(Invocation { name, args: args.trim() })
}

/// A completion candidate: the name without its slash, and a description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub description: String,
}

/// The commands whose name starts with what follows the `/` of `text` (a single word).
pub fn complete(text: &str, session: &AgentSession) -> Vec<Candidate> {
    let Some(prefix) = text.strip_prefix('/') else { return Vec::new() };
    if prefix.contains(char::is_whitespace) {
        return Vec::new();
    }
    let builtin = BUILTIN.iter().map(|(n, d)| Candidate { name: (*n).to_owned(), description: (*d).to_owned() });
    let session_commands = session
        .slash_commands()
        .into_iter()
        .map(|c| Candidate { name: c.name, description: c.description.unwrap_or_default() });
    builtin.chain(session_commands).filter(|c| c.name.starts_with(prefix) && c.name != prefix).collect()
}

/// Whether `text` is `/` and the whole name of a command (a built-in one or the session's).
pub fn names(text: &str, session: &AgentSession) -> bool {
    let Some(name) = text.strip_prefix('/').filter(|n| !n.is_empty() && !n.contains(char::is_whitespace)) else {
        return false;
    };
    BUILTIN.iter().any(|(n, _)| *n == name) || session.slash_commands().iter().any(|c| c.name == name)
}

/// `/hotkeys`: the keys in effect (the key table's) and the commands.
pub fn hotkeys(bindings: &Keybindings) -> Vec<Line<'static>> {
    let mut lines = vec![Line::default(), Line::styled("Keys", style::bold())];
    for (keys, what) in HOTKEYS {
        let Some(key) = keys_text(*keys, bindings) else { continue };
        // Keys wider than the column get a line of their own.
        if key.chars().count() > KEY_COLUMN {
            lines.push(Line::styled(format!("  {key}"), style::accent()));
            lines.push(Line::raw(format!("  {:KEY_COLUMN$} {what}", "")));
        } else {
            lines.push(Line::from(vec![
                Span::styled(format!("  {key:<KEY_COLUMN$} "), style::accent()),
                Span::raw(*what),
            ]));
        }
    }
    lines.push(Line::styled("Commands", style::bold()));
    for (name, what) in BUILTIN {
        lines.push(Line::from(vec![Span::styled(format!("  /{name:<25}"), style::accent()), Span::raw(*what)]));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotkeys_shows_the_keys_of_the_table() {
        let shown = |bindings: &Keybindings| crate::markdown::plain(&hotkeys(bindings));
        let defaults = shown(&Keybindings::default());
        assert!(defaults.contains("\n  Ctrl+O                    Expand tool output"), "{defaults}");
        assert!(defaults.contains("\n  Ctrl+P / Shift+Ctrl+P     Next / previous model"), "{defaults}");
        let word =
            "\n  Alt+Left, Ctrl+Left, Alt+B / Alt+Right, Ctrl+Right, Alt+F\n                            Word left";
        assert!(defaults.contains(word), "{defaults}");
        assert!(!defaults.contains("Ctrl+N") && !defaults.contains("(unbound)"), "{defaults}");
        let (remapped, _) =
            Keybindings::from_json(r#"{"app.tools.expand": "alt+o", "app.session.new": "ctrl+n", "app.exit": []}"#);
        let remapped = shown(&remapped);
        assert!(remapped.contains("\n  Alt+O                     Expand tool output"), "{remapped}");
        assert!(remapped.contains("\n  Ctrl+N                    Start a new session"), "{remapped}");
        assert!(remapped.contains("\n  (unbound)                 Quit (editor empty)"), "{remapped}");
    }

    #[test]
    fn builtins_parse_with_their_arguments() {
        assert_eq!(parse("/name  my work "), Some(Invocation { name: "name", args: "my work" }));
        assert_eq!(parse("/exit"), Some(Invocation { name: "quit", args: "" }));
        assert_eq!(parse("/review this"), None);
        assert_eq!(parse("hello"), None);
    }
}
