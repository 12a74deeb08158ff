//! Markdown to terminal lines: headings (as pi draws them: the first two levels without their
//! marks), emphasis, inline code, fenced and indented code blocks, lists, block quotes, links,
//! rules and tables ([`table`]). A source line break stays a line break (so a reply's
//! prefix renders to a prefix of its lines, which lets streaming commit finished lines early);
//! wrapping to the terminal's width is left to the paragraph that draws the lines. Colours are
//! the theme's `md*` tokens; a fenced block in a known language is highlighted ([`highlight`]).

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{highlight, style};

pub mod mermaid;
mod table;

pub use table::set_width;

/// `text` as lines.
pub fn render(text: &str) -> Vec<Line<'static>> {
    render_from(text, false)
}

/// `text` as lines, where `continued` means it follows earlier blocks (so its first block
/// starts with the blank line that separates blocks).
pub fn render_from(text: &str, continued: bool) -> Vec<Line<'static>> {
    let mut r = Renderer { block_ended: continued, ..Renderer::default() };
    let options = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match &event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let followed = !text[range.end..].trim().is_empty();
                r.code_closed = code_block_closed(kind, &text[range], followed);
            }
            Event::Start(Tag::Table(_)) => r.table = Some(Table { source: text[range].to_owned(), ..Table::default() }),
            _ => {}
        }
        r.event(event);
    }
    r.flush();
    style::expand_tabs(&mut r.lines);
    r.lines
}

#[derive(Default)]
struct Renderer {
    lines: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// The open lists: the next number of an ordered one, `None` for bullets.
    lists: Vec<Option<u64>>,
    /// The marker of the item whose first line is being built.
    item_marker: Option<String>,
    quote_depth: usize,
    /// The code block being read: its language (empty when none) and text so far.
    code_block: Option<(String, String)>,
    /// Whether that block has ended in the source (then its closing fence is drawn).
    code_closed: bool,
    /// A block ended: the next one starts after a blank line.
    block_ended: bool,
    link_url: Option<String>,
    /// The table being read.
    table: Option<Table>,
}

/// A table's cells as they are read, and its source (drawn when the terminal is too narrow).
#[derive(Default)]
struct Table {
    source: String,
    header: Vec<table::Cell>,
    rows: Vec<Vec<table::Cell>>,
    row: Vec<table::Cell>,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, add: Style) {
        let next = self.style().patch(add);
        self.styles.push(next);
    }

    /// The prefix of a new line: quote bars, the list indent, and an item's marker on its first line.
    fn prefix(&mut self) -> Vec<Span<'static>> {
        let mut prefix = Vec::new();
        for _ in 0..self.quote_depth {
            prefix.push(Span::styled("│ ", style::quote_border()));
        }
        let depth = self.lists.len();
        if depth > 0 {
            let indent = "  ".repeat(depth - 1);
            match self.item_marker.take() {
                Some(marker) => prefix.push(Span::styled(format!("{indent}{marker}"), style::list_bullet())),
                None => prefix.push(Span::raw(format!("{indent}  "))),
            }
        }
        prefix
    }

    fn start_block(&mut self) {
        if self.block_ended && self.lists.is_empty() {
            self.lines.push(Line::default());
        }
        self.block_ended = false;
    }

    fn flush(&mut self) {
        if self.spans.is_empty() && self.item_marker.is_none() {
            return;
        }
        let mut spans = self.prefix();
        spans.append(&mut self.spans);
        self.lines.push(Line::from(spans));
    }

    fn text(&mut self, text: &str) {
        match &mut self.code_block {
            Some((_, code)) => code.push_str(text),
            None => self.spans.push(Span::styled(text.to_owned(), self.style())),
        }
    }

    /// A code block's opening or closing fence line.
    fn fence(&mut self, text: &str) {
        let mut spans = self.prefix();
        spans.push(Span::styled(text.to_owned(), style::code_fence()));
        self.lines.push(Line::from(spans));
    }

    /// The code block's lines, indented: highlighted in its language, else in the code colour.
    fn code_lines(&mut self, lang: &str, code: &str) {
        let lines = highlight::highlight(code, lang).unwrap_or_else(|| {
            let code = code.strip_suffix('\n').unwrap_or(code);
            let lines = if code.is_empty() { Vec::new() } else { code.split('\n').collect() };
            lines.into_iter().map(|l| vec![Span::styled(l.to_owned(), style::code_block())]).collect()
        });
        for mut line in lines {
            line.retain(|span| !span.content.is_empty());
            let mut spans = self.prefix();
            spans.push(Span::raw("  "));
            spans.append(&mut line);
            self.lines.push(Line::from(spans));
        }
    }

    /// A closed mermaid block drawn as its diagram, in place of the fence line already drawn;
    /// false (nothing changed) when it cannot be drawn.
    fn diagram(&mut self, code: &str) -> bool {
        let available = table::width().saturating_sub(self.prefix_width());
        let Some(rows) = mermaid::diagram(code, available) else { return false };
        self.lines.pop();
        for row in rows {
            let mut spans = self.prefix();
            spans.push(Span::styled(row, style::mermaid()));
            self.lines.push(Line::from(spans));
        }
        true
    }

    /// The columns the quote bars and list indent take.
    fn prefix_width(&self) -> usize {
        2 * self.quote_depth + 2 * self.lists.len()
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => self.spans.push(Span::styled(t.into_string(), style::code())),
            Event::SoftBreak | Event::HardBreak => self.flush(),
            Event::Rule => {
                self.start_block();
                self.lines.push(Line::styled("─".repeat(40), style::rule()));
                self.block_ended = true;
            }
            Event::Html(t) | Event::InlineHtml(t) => self.text(t.trim_end_matches('\n')),
            Event::TaskListMarker(done) => self.spans.push(Span::raw(if done { "[x] " } else { "[ ] " })),
            Event::FootnoteReference(t) | Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                let (marks, heading) = match level {
                    HeadingLevel::H1 => ("", style::heading().add_modifier(Modifier::UNDERLINED)),
                    HeadingLevel::H2 => ("", style::heading()),
                    HeadingLevel::H3 => ("### ", style::heading()),
                    HeadingLevel::H4 => ("#### ", style::heading()),
                    HeadingLevel::H5 => ("##### ", style::heading()),
                    HeadingLevel::H6 => ("###### ", style::heading()),
                };
                self.push_style(heading);
                if !marks.is_empty() {
                    self.spans.push(Span::styled(marks, heading));
                }
            }
            Tag::Table(_) => self.start_block(),
            Tag::BlockQuote(_) => {
                self.start_block();
                self.quote_depth += 1;
                self.push_style(style::quote());
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(lang) => lang.into_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.fence(&format!("```{lang}"));
                self.code_block = Some((lang, String::new()));
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.start_block();
                } else {
                    self.flush();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_owned(),
                };
                self.item_marker = Some(marker);
            }
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.push_style(style::link());
                self.link_url = Some(dest_url.into_string());
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.block_ended = true;
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
                self.block_ended = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.styles.pop();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.block_ended = true;
            }
            TagEnd::CodeBlock => {
                let block = self.code_block.take();
                if let Some((lang, code)) = &block
                    && self.code_closed
                    && mermaid::draws(lang)
                    && self.diagram(code)
                {
                    self.block_ended = true;
                    return;
                }
                if let Some((lang, code)) = block {
                    self.code_lines(&lang, &code);
                }
                if self.code_closed {
                    self.fence("```");
                }
                self.block_ended = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.block_ended = true;
            }
            TagEnd::Item => self.flush(),
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.spans);
                if let Some(table) = &mut self.table {
                    table.row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header = std::mem::take(&mut table.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.lines.extend(table::render(&t.header, &t.rows, t.source.trim_end()));
                }
                self.block_ended = true;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link_url.take() {
                    self.spans.push(Span::styled(format!(" ({url})"), style::link_url()));
                }
            }
            _ => {}
        }
    }
}

/// Whether a code block (its source `block`) has ended: a fenced one by its closing fence, an
/// indented one by what `followed` it. One still streaming in has not, and shows no closing
/// fence until it has (so what is drawn of it only grows).
fn code_block_closed(kind: &CodeBlockKind<'_>, block: &str, followed: bool) -> bool {
    match kind {
        CodeBlockKind::Indented => followed,
        CodeBlockKind::Fenced(_) => {
            let mut lines = block.trim_end().lines();
            let last = lines.next_back().unwrap_or_default();
            let fence = last.trim_start_matches(|c: char| c.is_whitespace() || c == '>');
            lines.next().is_some() && (fence.starts_with("```") || fence.starts_with("~~~"))
        }
    }
}

/// The plain text of `lines` (tests and snapshots).
#[cfg(test)]
pub fn plain(lines: &[Line<'_>]) -> String {
    lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_are_drawn_as_pi_draws_them() {
        // Highlighted (Go) and plain code keep their indentation; tab-separated columns stay
        // apart.
        for lang in ["go", ""] {
            let text = format!("```{lang}\nfunc main() {{\n\tfmt.Println(\"hi\")\n}}\n```\n\nname\tsize");
            let out = plain(&render(&text));
            assert!(out.contains("  \u{20}\u{20}\u{20}fmt.Println(\"hi\")"), "{out:?}");
            assert!(out.ends_with("name   size"), "{out:?}");
            assert!(!out.contains('\t'), "{out:?}");
        }
    }

    #[test]
    fn blocks_render_with_their_markers() {
        let text = "# Title\n\nSome **bold** and `code`.\nNext line.\n\n- one\n- two\n  1. inner\n\n```rust\nfn main() {}\n```\n\n> quoted";
        let out = plain(&render(text));
        assert_eq!(
            out,
            "Title\n\nSome bold and code.\nNext line.\n\n• one\n• two\n  1. inner\n\n```rust\n  fn main() {}\n```\n\n│ quoted"
        );
    }

    #[test]
    fn a_prefix_ending_at_a_line_break_renders_to_a_prefix_of_the_lines() {
        let text = "Intro line\nsecond line\n\n```\na\nb\n```\nafter\n\n    indented\n\nend\n";
        let full = render(text);
        for (cut, _) in text.match_indices('\n') {
            let part = render(&text[..=cut]);
            // The last rendered line of a prefix may still grow; the ones before it are final.
            let stable = part.len().saturating_sub(1);
            assert_eq!(plain(&part[..stable]), plain(&full[..stable]), "cut at {cut}");
        }
    }

    #[test]
    fn headings_show_their_marks_from_the_third_level_and_tables_their_borders() {
        assert_eq!(plain(&render("# One\n\n## Two\n\n### Three")), "One\n\nTwo\n\n### Three");
        let table = plain(&render("Before\n\n| a | b |\n|---|---|\n| 1 | **2** |\n\nAfter"));
        assert_eq!(table, "Before\n\n┌───┬───┐\n│ a │ b │\n├───┼───┤\n│ 1 │ 2 │\n└───┴───┘\n\nAfter");
    }

    #[test]
    fn a_code_block_shows_its_closing_fence_once_it_has_one() {
        assert_eq!(plain(&render("```\na\n")), "```\n  a");
        assert_eq!(plain(&render("```\na\n```\n")), "```\n  a\n```");
        assert_eq!(plain(&render("> ```sh\n> ls\n> ```\n")), "│ ```sh\n│   ls\n│ ```");
        assert_eq!(plain(&render("    a\n")), "```\n  a");
        assert_eq!(plain(&render("    a\n\nafter")), "```\n  a\n```\n\nafter");
    }
}
