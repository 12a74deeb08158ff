//! A markdown table drawn with box borders, as pi draws one: the header bold, a rule under it and
//! between rows, each column as wide as its widest cell while the table fits the terminal, else
//! narrowed (no narrower than its longest word, up to 30 columns) with the cells wrapped. A
//! terminal too narrow for even that gets the table's source lines.

use std::sync::atomic::{AtomicU16, Ordering};

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// The width tables are fitted to: the terminal's, set by the interactive mode.
static WIDTH: AtomicU16 = AtomicU16::new(80);

/// Words longer than this may be broken to let the table fit.
const MAX_UNBROKEN_WORD: usize = 30;

/// Sets the width tables are fitted to (the terminal's).
pub fn set_width(width: u16) {
    WIDTH.store(width.max(1), Ordering::Relaxed);
}

pub(super) fn width() -> usize {
    usize::from(WIDTH.load(Ordering::Relaxed))
}

/// A cell: its styled spans.
pub type Cell = Vec<Span<'static>>;

/// The table's lines: `header` and `rows` fitted to the terminal, or `source` when it is too
/// narrow for one column per cell.
pub fn render(header: &[Cell], rows: &[Vec<Cell>], source: &str) -> Vec<Line<'static>> {
    render_at(header, rows, source, width())
}

fn render_at(header: &[Cell], rows: &[Vec<Cell>], source: &str, available: usize) -> Vec<Line<'static>> {
    let columns = header.len().max(rows.iter().map(Vec::len).max().unwrap_or(0));
    if columns == 0 {
        return Vec::new();
    }
    let overhead = 3 * columns + 1;
    if available < overhead + columns {
        return source.lines().map(|l| Line::raw(l.to_owned())).collect();
    }
    let widths = column_widths(header, rows, columns, available - overhead);
    let border = |left: &str, middle: &str, right: &str| {
        let cells: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        Line::raw(format!("{left}─{}─{right}", cells.join(&format!("─{middle}─"))))
    };
    let mut lines = vec![border("┌", "┬", "┐")];
    lines.extend(row_lines(header, &widths, true));
    lines.push(border("├", "┼", "┤"));
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            lines.push(border("├", "┼", "┤"));
        }
        lines.extend(row_lines(row, &widths, false));
    }
    lines.push(border("└", "┴", "┘"));
    lines
}

fn text_width(cell: &Cell) -> usize {
    cell.iter().map(|s| s.content.width()).sum()
}

fn longest_word(cell: &Cell) -> usize {
    let words = cell.iter().flat_map(|s| s.content.split_whitespace());
    words.map(|w| w.width().min(MAX_UNBROKEN_WORD)).max().unwrap_or(0).max(1)
}

/// Each column's width: its widest cell when the table fits `available`, else shrunk towards its
/// longest word (or further, evenly, when even those do not fit).
fn column_widths(header: &[Cell], rows: &[Vec<Cell>], columns: usize, available: usize) -> Vec<usize> {
    let mut natural = vec![0; columns];
    let mut least = vec![1; columns];
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (i, cell) in row.iter().enumerate().take(columns) {
            natural[i] = natural[i].max(text_width(cell));
            least[i] = least[i].max(longest_word(cell));
        }
    }
    for i in 0..columns {
        natural[i] = natural[i].max(1);
        least[i] = least[i].min(natural[i]);
    }
    if natural.iter().sum::<usize>() <= available {
        return natural;
    }
    if least.iter().sum::<usize>() > available {
        // Even the longest words do not fit: shares of what there is, by those words' widths.
        let total: usize = least.iter().sum();
        let mut widths: Vec<usize> = least.iter().map(|w| (w * available / total).max(1)).collect();
        fill(&mut widths, &least, available);
        return widths;
    }
    let spare = available - least.iter().sum::<usize>();
    let wants: usize = natural.iter().zip(&least).map(|(n, l)| n - l).sum();
    let mut widths: Vec<usize> = natural.iter().zip(&least).map(|(n, l)| l + (n - l) * spare / wants.max(1)).collect();
    fill(&mut widths, &natural, available);
    widths
}

/// Hands out what rounding left, one column at a time, to those under `limit`.
fn fill(widths: &mut [usize], limit: &[usize], available: usize) {
    let mut left = available.saturating_sub(widths.iter().sum());
    while left > 0 {
        let before = left;
        for (w, l) in widths.iter_mut().zip(limit) {
            if left > 0 && *w < *l {
                *w += 1;
                left -= 1;
            }
        }
        if left == before {
            break;
        }
    }
}

/// One table row as lines: each cell wrapped to its column, padded, between `│`s.
fn row_lines(row: &[Cell], widths: &[usize], header: bool) -> Vec<Line<'static>> {
    let wrapped: Vec<Vec<Cell>> =
        widths.iter().enumerate().map(|(i, w)| wrap(row.get(i).map_or(&[][..], Vec::as_slice), *w)).collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
    (0..height)
        .map(|line| {
            let mut spans = vec![Span::raw("│ ")];
            for (i, cell) in wrapped.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::raw(" │ "));
                }
                let part = cell.get(line).cloned().unwrap_or_default();
                let pad = widths[i].saturating_sub(text_width(&part));
                for span in part {
                    spans.push(if header { span.patch_style(Modifier::BOLD) } else { span });
                }
                spans.push(Span::raw(" ".repeat(pad)));
            }
            spans.push(Span::raw(" │"));
            Line::from(spans)
        })
        .collect()
}

/// `cell`'s spans wrapped to `width` columns at spaces (a word longer than a line is cut).
fn wrap(cell: &[Span<'static>], width: usize) -> Vec<Cell> {
    let mut lines: Vec<Cell> = vec![Vec::new()];
    let mut used = 0;
    for span in cell {
        for word in span.content.split_inclusive(' ') {
            let mut rest = word;
            while !rest.is_empty() {
                let w = rest.trim_end().width();
                if used > 0 && used + w > width {
                    lines.push(Vec::new());
                    used = 0;
                    rest = rest.trim_start();
                    continue;
                }
                let piece = if w <= width { rest } else { cut(rest, width) };
                used += piece.width();
                if let Some(line) = lines.last_mut() {
                    line.push(Span::styled(piece.to_owned(), span.style));
                }
                rest = &rest[piece.len()..];
                if !rest.is_empty() {
                    lines.push(Vec::new());
                    used = 0;
                }
            }
        }
    }
    for line in &mut lines {
        if let Some(last) = line.last_mut() {
            last.content = last.content.trim_end().to_owned().into();
        }
    }
    if lines.len() > 1 && lines.last().is_some_and(Vec::is_empty) {
        lines.pop();
    }
    lines
}

/// The longest start of `text` at most `width` columns wide (at least one character).
fn cut(text: &str, width: usize) -> &str {
    let mut end = 0;
    let mut taken = 0;
    for (at, c) in text.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if taken + w > width && end > 0 {
            break;
        }
        taken += w;
        end = at + c.len_utf8();
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::plain;

    fn cells(texts: &[&str]) -> Vec<Cell> {
        texts.iter().map(|t| vec![Span::raw((*t).to_owned())]).collect()
    }

    #[test]
    fn a_table_that_fits_is_drawn_at_its_natural_width() {
        let lines =
            render_at(&cells(&["Name", "Size"]), &[cells(&["a.rs", "10"]), cells(&["main.rs", "2000"])], "", 80);
        assert_eq!(
            plain(&lines),
            "┌─────────┬──────┐\n│ Name    │ Size │\n├─────────┼──────┤\n│ a.rs    │ 10   │\n├─────────┼──────┤\n│ main.rs │ 2000 │\n└─────────┴──────┘"
        );
        assert!(lines[1].spans.iter().any(|s| s.content == "Name" && s.style.add_modifier.contains(Modifier::BOLD)));
    }

    #[test]
    fn a_wide_table_is_narrowed_and_its_cells_wrapped() {
        let long = "a fairly long description of the thing";
        let lines = render_at(&cells(&["Key", "Description"]), &[cells(&["k", long])], "", 30);
        let text = plain(&lines);
        assert!(lines.iter().all(|l| l.width() <= 30), "{text}");
        let words: Vec<&str> = text.split(|c: char| c == '│' || c.is_whitespace()).filter(|w| !w.is_empty()).collect();
        for word in long.split(' ') {
            assert!(words.contains(&word), "{word} in\n{text}");
        }
    }

    #[test]
    fn too_narrow_a_terminal_gets_the_source() {
        let lines = render_at(&cells(&["a", "b", "c"]), &[], "| a | b | c |\n|---|---|---|", 6);
        assert_eq!(plain(&lines), "| a | b | c |\n|---|---|---|");
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_cuts_what_is_longer_than_a_line() {
        let plain_cell = |c: &[Cell]| c.iter().map(|l| plain(&[Line::from(l.clone())])).collect::<Vec<_>>();
        assert_eq!(plain_cell(&wrap(&[Span::raw("one two three")], 7)), ["one two", "three"]);
        assert_eq!(plain_cell(&wrap(&[Span::raw("abcdefghij")], 4)), ["abcd", "efgh", "ij"]);
        assert_eq!(plain_cell(&wrap(&[], 4)), [""]);
    }
}
