//! The slash commands of the interactive mode: the built-in ones, the prompt templates and skills
//! the session lists (`get_commands` of RPC mode), completion of their names, and `/hotkeys`.

use ratatui::text::{Line, Span};

use super::style;
use crate::AgentSession;

/// The built-in commands: name and what it does.
pub const BUILTIN: &[(&str, &str)] = &[
    ("settings", "Open the settings menu"),
    ("model", "Select the model (or /model provider/id)"),
    ("scoped-models", "Choose the models Ctrl+P cycles"),
    ("new", "Start a new session"),
    ("resume", "Resume a session of this directory"),
    ("fork", "Fork a new session from an earlier message"),
    ("tree", "Navigate the session tree and continue from any entry"),
    ("clone", "Duplicate the session into a new file and continue there"),
    ("name", "Name the session: /name <name>"),
    ("session", "Show the session's file, id, messages, tokens and cost"),
    ("compact", "Compact the conversation: /compact [instructions]"),
    ("export", "Export the session to HTML: /export [file]"),
    ("copy", "Copy the last answer to the clipboard (OSC 52)"),
    ("hotkeys", "Show the keys"),
    ("reload", "Reload settings, context files, skills, prompt templates and themes"),
    ("quit", "Quit rho"),
];

/// The keys, as `/hotkeys` lists them.
pub const HOTKEYS: &[(&str, &str)] = &[
    ("Enter", "Send (while working: queue a steering message)"),
    ("Alt+Enter", "While working: queue a follow-up message"),
    ("Alt+Up", "Put the queued messages back into the editor"),
    ("Shift+Enter, Ctrl+J", "New line"),
    ("Escape", "Abort the run (queued messages back into the editor) / close a list"),
    ("Escape twice", "Open the session tree (editor empty, idle)"),
    ("Ctrl+C", "Clear the editor; twice quits"),
    ("Ctrl+D", "Quit (editor empty); else delete the character under the cursor"),
    ("Up / Down", "Move between lines; history of prompts"),
    ("Left / Right", "Move the cursor (also Ctrl+B / Ctrl+F)"),
    ("Alt+B / Alt+F", "Word left / right (also Alt+Left / Alt+Right, Ctrl+Left / Ctrl+Right)"),
    ("Ctrl+] / Ctrl+Alt+]", "Jump to the next / previous typed character"),
    ("Home / End", "Start / end of line (also Ctrl+A / Ctrl+E)"),
    ("Ctrl+K / Ctrl+U", "Delete to end / start of line"),
    ("Ctrl+W, Alt+Backspace", "Delete the word before the cursor"),
    ("Alt+D, Alt+Delete", "Delete the word after the cursor"),
    ("Ctrl+Y / Alt+Y", "Paste the last deleted text / cycle to older ones"),
    ("Ctrl+-", "Undo"),
    ("Tab", "Complete a command name, or a path (a word with /, or starting with . or ~)"),
    ("@", "Pick a file of the working directory (fuzzy; Up/Down, Tab or Enter, Esc closes)"),
    ("Paste", "More than 10 lines show as [paste #n +N lines], sent whole"),
    ("Paste an image path", "Attach the image (drag a file onto the terminal); shown as [image #n]"),
    ("Ctrl+V", "Attach the clipboard's image (needs wl-paste, xclip or pngpaste)"),
    ("!command", "Run a shell command; its output joins the conversation"),
    ("!!command", "Run a shell command; its output is not sent to the model"),
    ("Ctrl+L", "Select the model"),
    ("Ctrl+P / Shift+Ctrl+P", "Next / previous model (of /scoped-models, --models, else the available)"),
    ("Shift+Tab", "Next thinking level"),
    ("Ctrl+Z", "Suspend rho (fg resumes)"),
    ("Ctrl+O", "Expand tool output (and show the last one in full)"),
    ("Ctrl+T", "Hide or show thinking blocks"),
];

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

pub fn hotkeys() -> Vec<Line<'static>> {
    let mut lines = vec![Line::default(), Line::styled("Keys", style::bold())];
    for (key, what) in HOTKEYS {
        lines.push(Line::from(vec![Span::styled(format!("  {key:<26}"), style::accent()), Span::raw(*what)]));
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
    fn builtins_parse_with_their_arguments() {
        assert_eq!(parse("/name  my work "), Some(Invocation { name: "name", args: "my work" }));
        assert_eq!(parse("/exit"), Some(Invocation { name: "quit", args: "" }));
        assert_eq!(parse("/review this"), None);
        assert_eq!(parse("hello"), None);
    }
}
