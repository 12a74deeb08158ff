//! The diff `edit` reports in `details.diff`, in the reference's compact format: a line diff with
//! numbered lines (`-<old>`, `+<new>`, ` <old>` for context, numbers padded to a common width),
//! removed lines before added ones, four lines of context around each change, ` <pad> ...` where
//! lines are skipped, unchanged runs between two changes shown whole, and no hunk headers.
//!
//! Only the region that changed is diffed (with enough of the unchanged lines around it to draw
//! the same context), so an edit in a large file costs what the change needs, not the file; a
//! line longer than [`MAX_LINE_BYTES`] is shown cut there. The same holds for the unified patch
//! beside it ([`unified_patch`]).

use similar::{Algorithm, ChangeTag, TextDiff};

/// The diff text and the new file's line number of the first change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffResult {
    pub diff: String,
    pub first_changed_line: Option<usize>,
}

/// The longest line a diff shows whole.
pub const MAX_LINE_BYTES: usize = 10_000;

struct Part<'a> {
    tag: ChangeTag,
    lines: Vec<&'a str>,
}

fn parts<'a>(old: &'a str, new: &'a str) -> Vec<Part<'a>> {
    let diff = TextDiff::configure().algorithm(Algorithm::Myers).diff_lines(old, new);
    let mut parts: Vec<Part<'a>> = Vec::new();
    for change in diff.iter_all_changes() {
        let value = change.value();
        let line = value.strip_suffix('\n').unwrap_or(value);
        match parts.last_mut() {
            Some(part) if part.tag == change.tag() => part.lines.push(line),
            _ => parts.push(Part { tag: change.tag(), lines: vec![line] }),
        }
    }
    parts
}

/// The region of `old` and `new` that differs, with `keep` of the unchanged lines before and
/// after it (fewer when there are fewer), and how many unchanged lines come before the region.
pub struct Region<'a> {
    pub old: &'a str,
    pub new: &'a str,
    pub lines_before: usize,
}

/// [`Region`] of two texts with `\n` line endings.
pub fn changed_region<'a>(old: &'a str, new: &'a str, keep: usize) -> Region<'a> {
    // Whole lines in common at the start.
    let mut prefix = 0;
    let mut prefix_lines = 0usize;
    for (a, b) in old.split_inclusive('\n').zip(new.split_inclusive('\n')) {
        if a != b || !a.ends_with('\n') {
            break;
        }
        prefix += a.len();
        prefix_lines += 1;
    }
    let (old_rest, new_rest) = (&old[prefix..], &new[prefix..]);
    // Whole lines in common at the end (within what follows the prefix).
    let common = old_rest.bytes().rev().zip(new_rest.bytes().rev()).take_while(|(a, b)| a == b).count();
    let line_start = |text: &str, at: usize| at == 0 || text.as_bytes()[at - 1] == b'\n';
    let suffix_text = &old_rest[old_rest.len() - common..];
    let mut suffix = common;
    if !(line_start(old_rest, old_rest.len() - common) && line_start(new_rest, new_rest.len() - common)) {
        suffix = suffix_text.find('\n').map_or(0, |at| common - at - 1);
    }
    // Keep `keep` lines on each side.
    let skip_before = prefix_lines.saturating_sub(keep);
    let start = old.split_inclusive('\n').take(skip_before).map(str::len).sum::<usize>();
    let suffix_part = &old_rest[old_rest.len() - suffix..];
    let kept_after: usize = suffix_part.split_inclusive('\n').take(keep).map(str::len).sum();
    let cut = suffix - kept_after.min(suffix);
    Region { old: &old[start..old.len() - cut], new: &new[start..new.len() - cut], lines_before: skip_before }
}

/// A unified patch of `old` against `new` (both with `\n` line endings) with `context` lines
/// around changes, headed by `path` on both sides.
pub fn unified_patch(old: &str, new: &str, context: usize, path: &str) -> String {
    // One more line than the context: no hunk then starts at the region's first line, where an
    // empty range would be numbered from the region rather than the file.
    let region = changed_region(old, new, context + 1);
    let diff = TextDiff::from_lines(region.old, region.new);
    let mut out = String::new();
    for hunk in diff.unified_diff().context_radius(context).iter_hunks() {
        if out.is_empty() {
            out.push_str(&format!("--- {path}\n+++ {path}\n"));
        }
        // Numbered from the file's first line, not the region's.
        let (first, last) = (hunk.ops()[0], hunk.ops()[hunk.ops().len() - 1]);
        let old_range = hunk_range(first.old_range().start, last.old_range().end, region.lines_before);
        let new_range = hunk_range(first.new_range().start, last.new_range().end, region.lines_before);
        out.push_str(&format!("@@ -{old_range} +{new_range} @@\n"));
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => ' ',
            };
            out.push(sign);
            let value = change.value();
            let line = value.strip_suffix('\n').unwrap_or(value);
            out.push_str(&clip(line));
            out.push('\n');
            if change.missing_newline() {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// A unified hunk's range of lines `start..end` (0-based, in the region) as the header writes it:
/// `start,count`, only `start` for one line, and the line before for none.
fn hunk_range(start: usize, end: usize, lines_before: usize) -> String {
    let count = end.saturating_sub(start);
    let first = start + lines_before + 1;
    match count {
        1 => first.to_string(),
        0 => format!("{},0", first - 1),
        _ => format!("{first},{count}"),
    }
}

/// A line as a diff shows it: whole up to [`MAX_LINE_BYTES`], else cut there with a note of
/// what was left out (a minified file's one line must not fill the result).
fn clip(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= MAX_LINE_BYTES {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut cut = MAX_LINE_BYTES;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… ({} more bytes)", &line[..cut], line.len() - cut))
}

/// Diffs `old` against `new` (both with `\n` line endings) showing `context` lines around
/// changes.
pub fn generate_diff_string(old: &str, new: &str, context: usize) -> DiffResult {
    // One more line than the context on each side keeps the `...` where the whole diff has it.
    diff_keeping(old, new, context, context + 1)
}

fn diff_keeping(old: &str, new: &str, context: usize, keep: usize) -> DiffResult {
    let max_line = old.split('\n').count().max(new.split('\n').count());
    let region = changed_region(old, new, keep);
    let parts = parts(region.old, region.new);
    let width = max_line.to_string().len();
    let blank = " ".repeat(width);
    let mut out: Vec<String> = Vec::new();
    let (mut old_no, mut new_no) = (1 + region.lines_before, 1 + region.lines_before);
    let mut last_was_change = false;
    let mut first_changed_line = None;

    for (i, part) in parts.iter().enumerate() {
        if part.tag != ChangeTag::Equal {
            first_changed_line.get_or_insert(new_no);
            for line in &part.lines {
                let line = clip(line);
                if part.tag == ChangeTag::Insert {
                    out.push(format!("+{new_no:>width$} {line}"));
                    new_no += 1;
                } else {
                    out.push(format!("-{old_no:>width$} {line}"));
                    old_no += 1;
                }
            }
            last_was_change = true;
            continue;
        }
        let next_is_change = parts.get(i + 1).is_some_and(|next| next.tag != ChangeTag::Equal);
        if !last_was_change && !next_is_change {
            old_no += part.lines.len();
            new_no += part.lines.len();
            continue;
        }
        // Between two changes a long run keeps its ends: `context` lines each side of a `...`.
        if last_was_change && next_is_change && part.lines.len() > context * 2 {
            for line in &part.lines[..context] {
                out.push(format!(" {old_no:>width$} {}", clip(line)));
                old_no += 1;
                new_no += 1;
            }
            out.push(format!(" {blank} ..."));
            let skipped = part.lines.len() - context * 2;
            old_no += skipped;
            new_no += skipped;
            for line in &part.lines[part.lines.len() - context..] {
                out.push(format!(" {old_no:>width$} {}", clip(line)));
                old_no += 1;
                new_no += 1;
            }
            last_was_change = false;
            continue;
        }
        let mut shown: &[&str] = &part.lines;
        let mut skip_start = 0;
        let mut skip_end = 0;
        if !last_was_change {
            skip_start = shown.len().saturating_sub(context);
            shown = &shown[skip_start..];
        }
        if !next_is_change && shown.len() > context {
            skip_end = shown.len() - context;
            shown = &shown[..context];
        }
        if skip_start > 0 {
            out.push(format!(" {blank} ..."));
            old_no += skip_start;
            new_no += skip_start;
        }
        for line in shown {
            out.push(format!(" {old_no:>width$} {}", clip(line)));
            old_no += 1;
            new_no += 1;
        }
        if skip_end > 0 {
            out.push(format!(" {blank} ..."));
            old_no += skip_end;
            new_no += skip_end;
        }
        last_was_change = false;
    }
    DiffResult { diff: out.join("\n"), first_changed_line }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_reference_example() {
        let r = generate_diff_string("line1\nline2\nline3", "line1\nreplaced\nline3", 4);
        assert_eq!(r.diff, " 1 line1\n-2 line2\n+2 replaced\n 3 line3");
        assert_eq!(r.first_changed_line, Some(2));
    }

    #[test]
    fn context_is_limited_and_elided() {
        let old: Vec<String> = (1..=20).map(|i| format!("l{i}")).collect();
        let mut new = old.clone();
        new[9] = "changed".to_owned();
        let r = generate_diff_string(&old.join("\n"), &new.join("\n"), 4);
        let expected = [
            "    ...",
            "  6 l6",
            "  7 l7",
            "  8 l8",
            "  9 l9",
            "-10 l10",
            "+10 changed",
            " 11 l11",
            " 12 l12",
            " 13 l13",
            " 14 l14",
            "    ...",
        ]
        .join("\n");
        assert_eq!(r.diff, expected);
        assert_eq!(r.first_changed_line, Some(10));
    }

    #[test]
    fn a_run_between_changes_keeps_its_ends_when_longer_than_twice_the_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl";
        let new = "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL";
        let r = generate_diff_string(old, new, 4);
        let expected = [
            "- 1 a", "+ 1 A", "  2 b", "  3 c", "  4 d", "  5 e", "    ...", "  8 h", "  9 i", " 10 j", " 11 k",
            "-12 l", "+12 L",
        ];
        assert_eq!(r.diff.lines().collect::<Vec<_>>(), expected);
        assert_eq!(r.first_changed_line, Some(1));
        // Eight lines between (twice the context) are shown whole.
        let r = generate_diff_string("a\nb\nc\nd\ne\nf\ng\nh\ni\nj", "A\nb\nc\nd\ne\nf\ng\nh\ni\nJ", 4);
        assert_eq!(r.diff.lines().count(), 2 + 8 + 2);
    }

    /// Texts of a few short lines from a small alphabet, so that changes, repeats and missing
    /// final newlines all come up.
    fn texts() -> Vec<String> {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        (0..300)
            .map(|_| {
                let lines: Vec<&str> = (0..next() % 14).map(|_| ["a", "b", "c", "", "dd"][next() % 5]).collect();
                let mut text = lines.join("\n");
                if next() % 2 == 0 {
                    text.push('\n');
                }
                text
            })
            .collect()
    }

    #[test]
    fn diffing_the_changed_region_gives_what_diffing_everything_gives() {
        let texts = texts();
        for pair in texts.windows(2) {
            let (old, new) = (&pair[0], &pair[1]);
            for context in [0, 1, 4] {
                assert_eq!(
                    generate_diff_string(old, new, context),
                    diff_keeping(old, new, context, usize::MAX),
                    "{old:?} → {new:?} ({context})"
                );
                // The patch is the unified diff similar writes of the whole texts.
                let whole = TextDiff::from_lines(old.as_str(), new.as_str())
                    .unified_diff()
                    .context_radius(context)
                    .header("f", "f")
                    .to_string();
                assert_eq!(unified_patch(old, new, context, "f"), whole, "{old:?} → {new:?} ({context})");
            }
        }
    }

    #[test]
    fn a_long_line_is_shown_cut() {
        let long = "x".repeat(MAX_LINE_BYTES + 5);
        let r = generate_diff_string(&format!("{long}a"), &format!("{long}b"), 4);
        let cut = format!("{}… (6 more bytes)", "x".repeat(MAX_LINE_BYTES));
        assert_eq!(r.diff, format!("-1 {cut}\n+1 {cut}"));
        let patch = unified_patch(&format!("{long}a\n"), &format!("{long}b\n"), 4, "f");
        assert_eq!(patch, format!("--- f\n+++ f\n@@ -1 +1 @@\n-{cut}\n+{cut}\n"));
    }

    #[test]
    fn additions_count_new_lines() {
        let r = generate_diff_string("a\nb", "a\nx\nb", 4);
        assert_eq!(r.diff, " 1 a\n+2 x\n 2 b");
        assert_eq!(r.first_changed_line, Some(2));
    }
}
