//! An edit's diff (`details.diff`: `-<n> old`, `+<n> new`, ` <n> context` lines) drawn as pi
//! draws it: removed lines in `toolDiffRemoved`, added ones in `toolDiffAdded`, the rest in
//! `toolDiffContext`; where exactly one line is replaced by one, the words that changed are
//! shown inverse. Tabs become three spaces.

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::style;

/// Lines longer than this many words each are compared by their common ends only (the word
/// comparison takes time and memory in the product of the two lengths).
const MAX_WORDS: usize = 400;

/// A diff as the collapsed view shows it: every `-` and `+` line, and context only while the
/// whole fits in `limit` lines; a run of context left out becomes one `...` line. Returns the
/// lines kept and how many of the diff's lines they stand for.
pub fn collapsed(diff: &str, limit: usize) -> (String, usize) {
    let lines: Vec<&str> = diff.lines().collect();
    if lines.len() <= limit {
        return (diff.to_owned(), lines.len());
    }
    let mut kept: Vec<&str> = Vec::new();
    for line in &lines {
        match parse(line) {
            Some(('-' | '+', ..)) => kept.push(line),
            _ if kept.last() != Some(&ELIDED) => kept.push(ELIDED),
            _ => {}
        }
    }
    (kept.join("\n"), lines.len())
}

/// What stands for the context lines a collapsed diff leaves out.
const ELIDED: &str = "  ...";

/// The diff's lines as spans.
pub fn render(diff: &str) -> Vec<Vec<Span<'static>>> {
    let lines: Vec<&str> = diff.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let run = |from: usize, sign: char| {
            lines[from..].iter().take_while(|l| parse(l).is_some_and(|(s, ..)| s == sign)).count()
        };
        let removed = run(i, '-');
        let added = if removed > 0 { run(i + removed, '+') } else { 0 };
        if removed == 1
            && added == 1
            && let (Some((_, old_no, old)), Some((_, new_no, new))) = (parse(lines[i]), parse(lines[i + 1]))
        {
            let (old, new) = (old.replace('\t', "   "), new.replace('\t', "   "));
            let (old_words, new_words) = changed_words(&old, &new);
            out.push(marked(&format!("-{old_no} "), &old_words, style::removed()));
            out.push(marked(&format!("+{new_no} "), &new_words, style::added()));
            i += 2;
            continue;
        }
        // A run of removed and added lines, or one other line, drawn whole.
        for line in &lines[i..i + (removed + added).max(1)] {
            let line_style = match parse(line) {
                Some(('-', ..)) => style::removed(),
                Some(('+', ..)) => style::added(),
                _ => style::diff_context(),
            };
            out.push(vec![Span::styled(line.replace('\t', "   "), line_style)]);
        }
        i += (removed + added).max(1);
    }
    out
}

/// A diff line's sign, number (with its padding) and text.
fn parse(line: &str) -> Option<(char, &str, &str)> {
    let sign = line.chars().next().filter(|c| matches!(c, '+' | '-' | ' '))?;
    let rest = &line[1..];
    let digits_end = rest.len() - rest.trim_start_matches(' ').len();
    let after_pad = &rest[digits_end..];
    let number_end = digits_end + (after_pad.len() - after_pad.trim_start_matches(|c: char| c.is_ascii_digit()).len());
    let text = rest[number_end..].strip_prefix(' ')?;
    Some((sign, &rest[..number_end], text))
}

/// A word of a line, and whether it changed.
type Word<'a> = (&'a str, bool);

/// `prefix`, then `words` in `base`, the changed ones inverse (but not their leading spaces).
fn marked(prefix: &str, words: &[Word<'_>], base: Style) -> Vec<Span<'static>> {
    let mut spans = vec![Span::styled(prefix.to_owned(), base)];
    let mut k = 0;
    while k < words.len() {
        let changed = words[k].1;
        let mut text = String::new();
        while k < words.len() && words[k].1 == changed {
            text.push_str(words[k].0);
            k += 1;
        }
        if changed {
            let body = text.trim_start();
            let lead = &text[..text.len() - body.len()];
            if !lead.is_empty() {
                spans.push(Span::styled(lead.to_owned(), base));
            }
            if !body.is_empty() {
                spans.push(Span::styled(body.to_owned(), base.add_modifier(Modifier::REVERSED)));
            }
        } else {
            spans.push(Span::styled(text, base));
        }
    }
    spans
}

/// The words of `old` and `new`, each marked whether it changed (is not in their longest
/// common subsequence of words).
fn changed_words<'a>(old: &'a str, new: &'a str) -> (Vec<Word<'a>>, Vec<Word<'a>>) {
    let (a, b) = (words(old), words(new));
    let mut a_changed = vec![true; a.len()];
    let mut b_changed = vec![true; b.len()];
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    a_changed[..prefix].fill(false);
    b_changed[..prefix].fill(false);
    a_changed[a.len() - suffix..].fill(false);
    b_changed[b.len() - suffix..].fill(false);
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    if a_mid.len() <= MAX_WORDS && b_mid.len() <= MAX_WORDS {
        for (i, j) in common(a_mid, b_mid) {
            a_changed[prefix + i] = false;
            b_changed[prefix + j] = false;
        }
    }
    let mark = |w: Vec<&'a str>, c: Vec<bool>| w.into_iter().zip(c).collect();
    (mark(a, a_changed), mark(b, b_changed))
}

/// Index pairs of a longest common subsequence of `a` and `b`.
fn common(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u16; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < n && j < m {
        if a[i] == b[j] {
            pairs.push((i, j));
            (i, j) = (i + 1, j + 1);
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// `text` cut into words: runs of letters, digits and `_`, runs of spaces, and single other
/// characters.
fn words(text: &str) -> Vec<&str> {
    let kind = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut last: Option<u8> = None;
    for (at, c) in text.char_indices() {
        let k = kind(c);
        if at > start && (last != Some(k) || k == 2) {
            out.push(&text[start..at]);
            start = at;
        }
        last = Some(k);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line as text, the inverse parts in [brackets].
    fn shown(lines: &[Vec<Span<'static>>]) -> Vec<String> {
        lines
            .iter()
            .map(|spans| {
                spans
                    .iter()
                    .map(|s| {
                        if s.style.add_modifier.contains(Modifier::REVERSED) {
                            format!("[{}]", s.content)
                        } else {
                            s.content.to_string()
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_replaced_line_marks_the_words_that_changed() {
        let diff = "  1 fn main() {\n- 2     let x = 1;\n+ 2     let y = 1;\n  3 }";
        assert_eq!(shown(&render(diff)), ["  1 fn main() {", "- 2     let [x] = 1;", "+ 2     let [y] = 1;", "  3 }"]);
    }

    #[test]
    fn several_lines_and_unparsed_lines_are_drawn_whole() {
        let diff = "-1 a b\n-2 c\n+1 a\n    ...\n+9 \tnew";
        assert_eq!(shown(&render(diff)), ["-1 a b", "-2 c", "+1 a", "    ...", "+9    new"]);
    }

    #[test]
    fn words_keep_runs_together_and_split_punctuation() {
        assert_eq!(words("let x_1  = f(a);"), ["let", " ", "x_1", "  ", "=", " ", "f", "(", "a", ")", ";"]);
        let (old, new) = changed_words("a b c d", "a x c y");
        let marks = |w: Vec<Word<'static>>| w.into_iter().filter(|(_, c)| *c).map(|(t, _)| t).collect::<Vec<_>>();
        assert_eq!(marks(old), ["b", "d"]);
        assert_eq!(marks(new), ["x", "y"]);
    }
}
