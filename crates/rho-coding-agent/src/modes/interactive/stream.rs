//! A text or thinking block as it streams: the lines that can no longer change go to the
//! history (the terminal's scrollback) as soon as they are finished; the line still being
//! written stays in the live area under them until the next line break or the block's end.

use ratatui::text::Line;

use super::{blocks, markdown};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Text,
    Thinking,
}

/// One streaming block.
pub struct StreamingBlock {
    pub kind: BlockKind,
    text: String,
    /// Rendered lines already handed to the history.
    committed: usize,
    /// The text's rendering, when it is up to date.
    rendered: Option<Vec<Line<'static>>>,
}

impl StreamingBlock {
    pub fn new(kind: BlockKind) -> Self {
        Self { kind, text: String::new(), committed: 0, rendered: None }
    }

    pub fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
        self.rendered = None;
    }

    fn lines(&mut self) -> &[Line<'static>] {
        let kind = self.kind;
        let text = &self.text;
        self.rendered.get_or_insert_with(|| match kind {
            BlockKind::Text => markdown::render(text),
            BlockKind::Thinking => blocks::thinking(text),
        })
    }

    /// The finished lines not yet committed: every rendered line but the last, which may
    /// still grow (a line break ends it).
    pub fn take_finished(&mut self) -> Vec<Line<'static>> {
        if !self.text.contains('\n') {
            return Vec::new();
        }
        let committed = self.committed;
        let lines = self.lines();
        let stable = lines.len().saturating_sub(1);
        if stable <= committed {
            return Vec::new();
        }
        let out = lines[committed..stable].to_vec();
        self.committed = stable;
        out
    }

    /// The lines not committed yet (the live area's content).
    pub fn pending(&mut self) -> Vec<Line<'static>> {
        let committed = self.committed;
        let lines = self.lines();
        lines.get(committed..).map(<[_]>::to_vec).unwrap_or_default()
    }

    /// The block ended: everything not yet committed.
    pub fn finish(mut self) -> Vec<Line<'static>> {
        self.pending()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::markdown::plain;

    #[test]
    fn finished_lines_are_committed_once_and_the_rest_at_the_end() {
        let mut block = StreamingBlock::new(BlockKind::Text);
        block.push("Hello wo");
        assert!(block.take_finished().is_empty());
        assert_eq!(plain(&block.pending()), "Hello wo");
        block.push("rld\nsecond");
        assert_eq!(plain(&block.take_finished()), "Hello world");
        assert!(block.take_finished().is_empty());
        block.push(" line\n\nthird");
        assert_eq!(plain(&block.take_finished()), "second line\n");
        assert_eq!(plain(&block.finish()), "third");
    }
}
