//! A text or thinking block as it streams: the lines that can no longer change go to the
//! history (the terminal's scrollback) as soon as they are finished; the line still being
//! written stays in the live area under them until the next line break or the block's end.
//!
//! The cost stays linear in the reply: only a delta with a line break re-renders, and it renders
//! from the start of the current block (a blank line outside a code fence, where everything
//! before is committed), not from the start of the reply. The live area renders at most the last
//! [`LIVE_BYTES`] of the unfinished text.
//!
//! A block an extension's markdown transformer sees is held whole in the live area instead
//! (printed lines cannot change when the transformed text does), drawn from the transformer's
//! last answer, and goes to the history when it ends.

use ratatui::text::Line;

use super::{blocks, markdown};

/// The most of an unfinished line the live area renders (its tail).
const LIVE_BYTES: usize = 8 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Text,
    Thinking,
}

/// One streaming block.
pub struct StreamingBlock {
    pub kind: BlockKind,
    text: String,
    /// Where the current markdown block starts: everything before it is committed.
    base: usize,
    /// Lines of `text[base..]`'s rendering already handed to the history.
    committed: usize,
    /// Set when a markdown transformer sees the block.
    pub transforming: Option<Transforming>,
}

/// A block a markdown transformer sees, as it streams.
#[derive(Debug, Default)]
pub struct Transforming {
    /// Which block the transformer's answers are for.
    pub id: u64,
    /// A transform of the text so far is being asked for.
    pub asking: bool,
    /// When the last one was asked for.
    pub asked_at: Option<std::time::Instant>,
    /// The last answer: how many bytes of the text it is of, and the transformed markdown.
    answer: Option<(usize, String)>,
}

impl StreamingBlock {
    pub fn new(kind: BlockKind) -> Self {
        Self { kind, text: String::new(), base: 0, committed: 0, transforming: None }
    }

    /// A block held whole until it ends, for markdown transformers (answers tagged `id`).
    pub fn transformed(kind: BlockKind, id: u64) -> Self {
        Self { transforming: Some(Transforming { id, ..Transforming::default() }), ..Self::new(kind) }
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The transformer's answer for the first `len` bytes of the text.
    pub fn set_transformed(&mut self, id: u64, len: usize, markdown: String) {
        if let Some(t) = self.transforming.as_mut().filter(|t| t.id == id) {
            t.asking = false;
            if len <= self.text.len() {
                t.answer = Some((len, markdown));
            }
        }
    }

    fn render(&self, text: &str) -> Vec<Line<'static>> {
        match self.kind {
            BlockKind::Text => markdown::render_from(text, self.base > 0),
            BlockKind::Thinking => blocks::thinking(text),
        }
    }

    /// Adds a delta; returns the lines it finished (those of the text up to its last line
    /// break).
    pub fn push(&mut self, delta: &str) -> Vec<Line<'static>> {
        self.text.push_str(delta);
        if !delta.contains('\n') || self.transforming.is_some() {
            return Vec::new();
        }
        let Some(last_break) = self.text.rfind('\n') else { return Vec::new() };
        let finished = &self.text[self.base..=last_break];
        let lines = self.render(finished);
        let block_ended =
            self.kind == BlockKind::Text && finished.ends_with("\n\n") && !inside_fence(finished) && !in_list(finished);
        // Rendered up to a line break, every line is whole; but a table's borders and column
        // widths change with each row, so a table stays in the live area until it ends, and a
        // Mermaid block until it closes (its code then gives way to the diagram).
        let held = (in_table(finished) && !block_ended) || in_open_mermaid(finished);
        let stable = if held { self.committed } else { lines.len() };
        let out = lines.get(self.committed..stable).map(<[_]>::to_vec).unwrap_or_default();
        self.committed = self.committed.max(stable);
        if block_ended {
            self.base = last_break + 1;
            self.committed = 0;
        }
        out
    }

    /// The lines not committed yet (the live area's content), from at most the last
    /// [`LIVE_BYTES`] of text.
    pub fn live(&self) -> Vec<Line<'static>> {
        if let Some(transforming) = &self.transforming {
            // The last answer, and what streamed since as it came; its last lines when long.
            let whole = match &transforming.answer {
                Some((len, markdown)) => format!("{markdown}{}", &self.text[*len..]),
                None => self.text.clone(),
            };
            let mut from = whole.len().saturating_sub(LIVE_BYTES);
            while !whole.is_char_boundary(from) {
                from += 1;
            }
            if from > 0 {
                from = whole[from..].find('\n').map_or(from, |i| from + i + 1);
            }
            return self.render(&whole[from..]);
        }
        let rest = &self.text[self.base..];
        if rest.len() <= LIVE_BYTES {
            let lines = self.render(rest);
            return lines.get(self.committed..).map(<[_]>::to_vec).unwrap_or_default();
        }
        let line_start = rest.rfind('\n').map_or(0, |i| i + 1);
        let mut from = rest.len() - LIVE_BYTES.min(rest.len() - line_start);
        while !rest.is_char_boundary(from) {
            from += 1;
        }
        self.render(&rest[from..])
    }

    /// The block ended: its whole text, and the lines not yet committed.
    pub fn finish(self) -> (String, Vec<Line<'static>>) {
        let lines = self.render(&self.text[self.base..]);
        let rest = lines.get(self.committed..).map(<[_]>::to_vec).unwrap_or_default();
        (self.text, rest)
    }

    /// The text so far.
    pub fn into_text(self) -> String {
        self.text
    }

    /// The block streamed again from its start (the history is being drawn again): the new
    /// block, and every line it has finished.
    pub fn restart(self) -> (Self, Vec<Line<'static>>) {
        if self.transforming.is_some() {
            return (self, Vec::new());
        }
        // Line by line, as it streamed: the committed blocks are left behind as they were.
        let mut block = Self::new(self.kind);
        let mut lines = Vec::new();
        for piece in self.text.split_inclusive('\n') {
            lines.extend(block.push(piece));
        }
        (block, lines)
    }
}

/// Whether the last line of `text` with content belongs to a list or is indented (a blank line
/// there may continue the list rather than end it).
fn in_list(text: &str) -> bool {
    let Some(last) = text.lines().rev().find(|l| !l.trim().is_empty()) else { return false };
    let trimmed = last.trim_start();
    let numbered =
        trimmed.split_once(['.', ')']).is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    last.starts_with([' ', '\t']) || trimmed.starts_with(['-', '*', '+']) || numbered
}

/// Whether the last line of `text` with content is a table row.
fn in_table(text: &str) -> bool {
    text.lines().rev().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim_start().starts_with('|'))
}

/// Whether `text` ends inside a fenced block that is drawn as a Mermaid diagram once it closes.
fn in_open_mermaid(text: &str) -> bool {
    let mut open: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            open = match open {
                Some(_) => None,
                None => Some(trimmed.trim_start_matches(['`', '~'])),
            };
        }
    }
    open.is_some_and(markdown::mermaid::draws)
}

/// Whether `text` ends inside a fenced code block (an odd number of fence lines).
fn inside_fence(text: &str) -> bool {
    text.lines().filter(|l| l.trim_start().starts_with("```") || l.trim_start().starts_with("~~~")).count() % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::plain;

    #[test]
    fn finished_lines_are_committed_once_and_the_rest_at_the_end() {
        let mut block = StreamingBlock::new(BlockKind::Text);
        assert!(block.push("Hello wo").is_empty());
        assert_eq!(plain(&block.live()), "Hello wo");
        assert_eq!(plain(&block.push("rld\nsecond")), "Hello world");
        assert_eq!(plain(&block.push(" line\n\nthird")), "second line");
        assert_eq!(plain(&block.live()), "\nthird");
        let (restarted, finished) = block.restart();
        assert_eq!(plain(&finished), "Hello world\nsecond line");
        assert_eq!(plain(&restarted.live()), "\nthird");
        assert_eq!(plain(&restarted.finish().1), "\nthird");
    }

    #[test]
    fn streaming_in_any_pieces_commits_what_a_whole_render_shows() {
        let text = "# Title\n\nIntro line\nsecond line\n\n```rust\nfn a() {}\n\nfn b() {}\n```\n\n1. one\n2. two\n\n3. three\n\n| a | b |\n|---|---|\n| wide cell | 2 |\n\nend";
        let whole = plain(&markdown::render(text));
        for size in [1, 2, 3, 7, 64] {
            let mut block = StreamingBlock::new(BlockKind::Text);
            let mut out = Vec::new();
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(size) {
                out.extend(block.push(&piece.iter().collect::<String>()));
            }
            let (all, rest) = block.finish();
            out.extend(rest);
            assert_eq!(plain(&out), whole, "pieces of {size}");
            assert_eq!(all, text);
        }
    }

    #[test]
    fn a_transformed_block_is_held_whole_and_drawn_from_the_last_answer() {
        let mut block = StreamingBlock::transformed(BlockKind::Text, 7);
        assert!(block.push("a --> b\n\nc").is_empty());
        assert_eq!(plain(&block.live()), "a --> b\n\nc");
        block.set_transformed(7, 9, "a → b\n\n".to_owned());
        block.push(" --> d");
        assert_eq!(plain(&block.live()), "a → b\n\nc --> d");
        // An answer for another block changes nothing.
        block.set_transformed(8, 1, "x".to_owned());
        assert_eq!(plain(&block.live()), "a → b\n\nc --> d");
        let (text, lines) = block.finish();
        assert_eq!(text, "a --> b\n\nc --> d");
        assert_eq!(plain(&lines), "a --> b\n\nc --> d");
    }

    #[test]
    fn a_mermaid_block_waits_until_it_closes_and_is_then_drawn() {
        let mut block = StreamingBlock::new(BlockKind::Text);
        assert_eq!(plain(&block.push("Before.\n\n")), "Before.");
        assert!(block.push("```mermaid\ngraph LR\n").is_empty(), "held while open");
        assert!(block.push("A[Build] --> B[Deploy]\n").is_empty(), "held while open");
        let drawn = plain(&block.push("```\n\nAfter.\n"));
        assert!(drawn.contains("Build") && drawn.contains('│') && !drawn.contains("```"), "{drawn}");
        assert!(drawn.ends_with("After."), "{drawn}");
    }

    #[test]
    fn a_long_unfinished_line_shows_its_tail() {
        let mut block = StreamingBlock::new(BlockKind::Text);
        block.push(&"a".repeat(LIVE_BYTES * 3));
        let live = plain(&block.live());
        assert_eq!(live.len(), LIVE_BYTES);
    }
}
