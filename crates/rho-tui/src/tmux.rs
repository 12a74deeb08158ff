//! tmux passes modified keys such as Shift+Enter only when its `extended-keys` option is on and
//! the program asks for them (xterm's modifyOtherKeys), and it encodes them as its
//! `extended-keys-format` says. rho reads the CSI u form (the kitty keyboard protocol's, which
//! tmux does not speak itself); so under tmux rho asks for modified keys when tmux will send them
//! in that form, and otherwise says in one notice what to set — Ctrl+J makes a new line meanwhile.
//! (In the xterm form every modified key, Ctrl+C included, would arrive in a form rho cannot read,
//! so rho does not ask then.)

use std::process::{Command, Stdio};

/// What tmux does with Shift+Enter for rho.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShiftEnter {
    /// Not under tmux: the terminal's keyboard protocol decides.
    NotTmux,
    /// tmux sends modified keys in the CSI u form once asked.
    Extended,
    /// tmux will not pass it: the notice says what to set.
    Lost(String),
}

impl ShiftEnter {
    /// Under tmux, asks tmux how it passes modified keys.
    pub fn check() -> Self {
        if std::env::var_os("TMUX").is_none_or(|v| v.is_empty()) {
            return Self::NotTmux;
        }
        let extended = show("extended-keys");
        let format = show("extended-keys-format");
        match (extended.as_deref(), format.as_deref()) {
            (None, _) => Self::NotTmux,
            (Some("off"), _) => Self::Lost(
                "tmux extended-keys is off, so Shift+Enter arrives as Enter: add `set -g extended-keys on` and \
                 `set -g extended-keys-format csi-u` to ~/.tmux.conf and restart tmux (Ctrl+J makes a new line)."
                    .to_owned(),
            ),
            (Some(_), Some("csi-u")) => Self::Extended,
            (Some(_), _) => Self::Lost(
                "tmux sends modified keys in its xterm format, which rho does not read: add \
                 `set -g extended-keys-format csi-u` to ~/.tmux.conf (tmux 3.5 or later) and restart tmux \
                 (Ctrl+J makes a new line)."
                    .to_owned(),
            ),
        }
    }

    /// The key that makes a new line in the editor, for the first screen's hint.
    pub fn newline_key(&self) -> &'static str {
        match self {
            Self::Lost(_) => "Ctrl+J",
            _ => "Shift+Enter",
        }
    }
}

/// `tmux show -gv <option>`: the option's value, `None` when tmux does not answer.
fn show(option: &str) -> Option<String> {
    let output =
        Command::new("tmux").args(["show", "-gv", option]).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
