//! The diff `edit` reports in `details.diff`, in the reference's compact format: a line diff with
//! numbered lines (`-<old>`, `+<new>`, ` <old>` for context, numbers padded to a common width),
//! removed lines before added ones, four lines of context around each change, ` <pad> ...` where
//! lines are skipped, unchanged runs between two changes shown whole, and no hunk headers.

use similar::{Algorithm, ChangeTag, TextDiff};

/// The diff text and the new file's line number of the first change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffResult {
    pub diff: String,
    pub first_changed_line: Option<usize>,
}

struct Part {
    tag: ChangeTag,
    lines: Vec<String>,
}

fn parts(old: &str, new: &str) -> Vec<Part> {
    let diff = TextDiff::configure().algorithm(Algorithm::Myers).diff_lines(old, new);
    let mut parts: Vec<Part> = Vec::new();
    for change in diff.iter_all_changes() {
        let value = change.value();
        let line = value.strip_suffix('\n').unwrap_or(value).to_owned();
        match parts.last_mut() {
            Some(part) if part.tag == change.tag() => part.lines.push(line),
            _ => parts.push(Part { tag: change.tag(), lines: vec![line] }),
        }
    }
    parts
}

/// Diffs `old` against `new` (both with `\n` line endings) showing `context` lines around
/// changes.
pub fn generate_diff_string(old: &str, new: &str, context: usize) -> DiffResult {
    let parts = parts(old, new);
    let max_line = old.split('\n').count().max(new.split('\n').count());
    let width = max_line.to_string().len();
    let blank = " ".repeat(width);
    let mut out: Vec<String> = Vec::new();
    let (mut old_no, mut new_no) = (1usize, 1usize);
    let mut last_was_change = false;
    let mut first_changed_line = None;

    for (i, part) in parts.iter().enumerate() {
        if part.tag != ChangeTag::Equal {
            first_changed_line.get_or_insert(new_no);
            for line in &part.lines {
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
        let mut shown: &[String] = &part.lines;
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
            out.push(format!(" {old_no:>width$} {line}"));
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
    fn unchanged_runs_between_changes_are_shown_whole() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl";
        let new = "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL";
        let r = generate_diff_string(old, new, 4);
        let lines: Vec<&str> = r.diff.lines().collect();
        assert_eq!(lines.first(), Some(&"- 1 a"));
        assert_eq!(lines[1], "+ 1 A");
        assert_eq!(lines.len(), 2 + 10 + 2);
        assert_eq!(lines.last(), Some(&"+12 L"));
        assert_eq!(r.first_changed_line, Some(1));
    }

    #[test]
    fn additions_count_new_lines() {
        let r = generate_diff_string("a\nb", "a\nx\nb", 4);
        assert_eq!(r.diff, " 1 a\n+2 x\n 2 b");
        assert_eq!(r.first_changed_line, Some(2));
    }
}
