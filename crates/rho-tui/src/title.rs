//! The terminal's title, as the UI service's `setTitle` sets it: an OSC 0 escape written once
//! per change (not on every frame), with control characters dropped so a title cannot carry
//! escapes of its own. As in pi, the title is left as it is on exit.

/// The title written last and the one waiting to be written.
#[derive(Debug, Default)]
pub struct TerminalTitle {
    written: Option<String>,
    pending: Option<String>,
}

impl TerminalTitle {
    /// `setTitle`: the title to write with the next frame, unless it is the one shown.
    pub fn set(&mut self, title: &str) {
        let clean: String = title.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        self.pending = (self.written.as_deref() != Some(clean.as_str())).then_some(clean);
    }

    /// The escape that sets the pending title, once.
    pub fn take_escape(&mut self) -> Option<String> {
        let title = self.pending.take()?;
        let escape = format!("\x1b]0;{title}\x07");
        self.written = Some(title);
        Some(escape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_written_once_per_change() {
        let mut title = TerminalTitle::default();
        assert_eq!(title.take_escape(), None);
        title.set("rho - build");
        assert_eq!(title.take_escape().as_deref(), Some("\x1b]0;rho - build\x07"));
        assert_eq!(title.take_escape(), None, "not again on the next frame");
        title.set("rho - build");
        assert_eq!(title.take_escape(), None, "the same title is not written again");
        title.set("other");
        title.set("rho - build");
        assert_eq!(title.take_escape(), None, "set back before a frame: nothing to write");
        title.set("two\x1b]0;evil\x07");
        assert_eq!(title.take_escape().as_deref(), Some("\x1b]0;two ]0;evil \x07"));
    }
}
