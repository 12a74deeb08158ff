//! What the history shows, kept as what it was drawn from so that it can be drawn again.
//!
//! The history lives in the terminal's scrollback, where nothing can be changed once written.
//! When what it shows must change — the width (a resize re-wraps every line), thinking hidden
//! or shown (Ctrl+T), tool output folded or expanded (Ctrl+O), the theme — rho clears the screen
//! and the scrollback and writes the transcript again, as pi does. The transcript keeps the
//! newest [`MAX_WEIGHT`] lines' worth of entries; a note says when older ones were let go.

use std::collections::VecDeque;

use ratatui::text::Line;
use rho_types::AgentMessage;
use serde_json::{Map, Value};

use super::app::ToolOutput;
use super::{blocks, markdown, replay, style, tool_blocks};

/// The most lines the transcript keeps (a terminal's scrollback holds a few thousand).
pub const MAX_WEIGHT: usize = replay::MAX_LINES;

/// How the history is drawn now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Toggles {
    pub hide_thinking: bool,
    pub expanded: bool,
}

/// One block of the history, as it was made.
#[derive(Debug)]
pub enum Entry {
    /// Lines that are the same however the history is drawn.
    Lines(Vec<Line<'static>>),
    /// A finished text block (markdown).
    Markdown(String),
    /// A finished thinking block.
    Thinking(String),
    /// A tool call as it started.
    ToolCall { name: String, args: Map<String, Value> },
    /// A tool call's result.
    ToolResult(Box<ToolOutput>),
    /// A message of a replayed conversation, with the arguments of the call it answers.
    Message(Box<AgentMessage>, Option<Map<String, Value>>),
}

impl Entry {
    /// The lines this entry is drawn as.
    pub fn lines(&self, toggles: Toggles) -> Vec<Line<'static>> {
        match self {
            Self::Lines(lines) => lines.clone(),
            Self::Markdown(text) => markdown::render(text),
            Self::Thinking(_) if toggles.hide_thinking => {
                vec![Line::default(), blocks::notice(HIDDEN_THINKING), Line::default()]
            }
            Self::Thinking(text) => {
                let mut lines = vec![Line::default()];
                lines.extend(blocks::thinking(text));
                lines.push(Line::default());
                lines
            }
            Self::ToolCall { name, args } => blocks::tool_call(name, args, toggles.expanded),
            Self::ToolResult(output) => tool_blocks::result(&output.finished(), toggles.expanded),
            Self::Message(message, args) => match message.as_ref() {
                AgentMessage::Assistant(a) if toggles.hide_thinking => {
                    let mut shown = a.clone();
                    shown.content.retain(|b| !matches!(b, rho_types::types::AssistantContent::Thinking(_)));
                    blocks::message_after(&AgentMessage::Assistant(shown), args.as_ref(), toggles.expanded)
                }
                message => blocks::message_after(message, args.as_ref(), toggles.expanded),
            },
        }
    }

    /// About how many lines the entry takes at most (what bounds the transcript).
    fn weight(&self) -> usize {
        let text_lines = |text: &str| text.lines().count() + 1;
        match self {
            Self::Lines(lines) => lines.len(),
            Self::Markdown(text) | Self::Thinking(text) => text_lines(text),
            Self::ToolCall { args, .. } => 2 + args.get("content").and_then(Value::as_str).map_or(0, text_lines),
            Self::ToolResult(output) => {
                1 + output.content.iter().filter_map(|c| c.as_text()).map(text_lines).sum::<usize>()
            }
            Self::Message(..) => self.lines(Toggles { hide_thinking: false, expanded: true }).len(),
        }
    }
}

/// Lines to draw now, and the entry the transcript keeps for them (none for the lines of a
/// block still streaming: the block's entry comes with its last lines).
#[derive(Debug, Default)]
pub struct Shown {
    pub lines: Vec<Line<'static>>,
    pub entry: Option<Entry>,
}

impl Shown {
    pub fn drawn(lines: Vec<Line<'static>>) -> Self {
        Self { lines, entry: None }
    }

    pub fn recorded(entry: Entry, lines: Vec<Line<'static>>) -> Self {
        Self { lines, entry: Some(entry) }
    }
}

/// The note a hidden thinking block leaves.
pub const HIDDEN_THINKING: &str = "Thinking hidden (Ctrl+T shows it)";

/// The history's entries, oldest first, bounded by [`MAX_WEIGHT`].
#[derive(Debug, Default)]
pub struct Transcript {
    entries: VecDeque<(Entry, usize)>,
    weight: usize,
    /// Entries were let go from the front.
    cut: bool,
}

impl Transcript {
    pub fn record(&mut self, entry: Entry) {
        let weight = entry.weight();
        self.weight += weight;
        self.entries.push_back((entry, weight));
        while self.weight > MAX_WEIGHT && self.entries.len() > 1 {
            if let Some((_, w)) = self.entries.pop_front() {
                self.weight -= w;
                self.cut = true;
            }
        }
    }

    /// The whole history drawn as `toggles` say, a blank line never following another.
    pub fn render(&self, toggles: Toggles) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        if self.cut {
            out.push(Line::styled(
                "… earlier history not shown (/tree lists the conversation, /export writes it all)",
                style::dim(),
            ));
        }
        let mut last_blank = true;
        for (entry, _) in &self.entries {
            append(&mut out, entry.lines(toggles), &mut last_blank);
        }
        out
    }
}

/// Appends `lines`, dropping the blank lines that start them when the last line is blank (blank
/// lines inside a block are the block's own and stay).
pub fn append(out: &mut Vec<Line<'static>>, lines: Vec<Line<'static>>, last_blank: &mut bool) {
    let mut leading = true;
    for line in lines {
        let blank = is_blank(&line);
        if leading && blank && *last_blank {
            continue;
        }
        leading = false;
        *last_blank = blank;
        out.push(line);
    }
}

pub fn is_blank(line: &Line<'_>) -> bool {
    line.spans.iter().all(|s| s.content.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use rho_types::types::UserContent;

    use super::*;
    use crate::markdown::plain;

    fn tool(text: &str) -> Entry {
        Entry::ToolResult(Box::new(ToolOutput {
            name: "bash".into(),
            args: None,
            content: vec![UserContent::text(text)],
            details: None,
            is_error: false,
        }))
    }

    #[test]
    fn toggles_change_how_thinking_and_tool_output_are_drawn() {
        let mut transcript = Transcript::default();
        transcript.record(Entry::Thinking("pondering deeply".into()));
        transcript.record(tool(&(1..=10).map(|i| format!("out {i}")).collect::<Vec<_>>().join("\n")));
        let shown = plain(&transcript.render(Toggles::default()));
        // Shell output folds to its last lines.
        assert!(shown.starts_with("pondering deeply\n\n  … (4 earlier lines, Ctrl+O to expand)\n  out 5\n"), "{shown}");
        assert!(shown.ends_with("  out 10"), "{shown}");
        let toggled = plain(&transcript.render(Toggles { hide_thinking: true, expanded: true }));
        assert!(toggled.starts_with(&format!("{HIDDEN_THINKING}\n\n  out 1\n")), "{toggled}");
        assert!(toggled.ends_with("  out 10"), "{toggled}");
    }

    #[test]
    fn blank_lines_inside_a_block_stay_and_between_blocks_collapse() {
        let mut transcript = Transcript::default();
        transcript.record(Entry::Lines(vec![Line::raw("a"), Line::default()]));
        transcript.record(Entry::Lines(vec![Line::default(), Line::raw("b")]));
        transcript.record(tool("one\n\n\nfour"));
        assert_eq!(plain(&transcript.render(Toggles::default())), "a\n\nb\n  one\n  \n  \n  four");
    }

    #[test]
    fn the_oldest_entries_go_past_the_bound_and_a_note_says_so() {
        let mut transcript = Transcript::default();
        for i in 0..MAX_WEIGHT {
            transcript.record(Entry::Lines(vec![Line::raw(format!("line {i}")), Line::raw("more")]));
        }
        let lines = plain(&transcript.render(Toggles::default()));
        assert!(lines.starts_with("… earlier history not shown"), "{}", &lines[..200]);
        assert!(!lines.contains("line 0\n"));
        assert!(lines.contains(&format!("line {}", MAX_WEIGHT - 1)));
        assert!(lines.lines().count() <= MAX_WEIGHT + 1);
    }
}
