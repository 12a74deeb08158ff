//! Applying one `edit` call's replacements to a file body, as pi 0.73 does: every `oldText` is
//! matched against the original content (never against the result of an earlier edit), each
//! must be found and unique, matches may touch but not overlap, and the replacements are applied
//! from last to first. The error texts are pi's, in their one-edit and `edits[i]` forms.
//!
//! Unlike the reference, which rewrites the whole file in fuzzy-normalized form as soon as one
//! edit needs a fuzzy match, every match is mapped back to the original bytes
//! ([`crate::edit_match`]), so untouched lines, and their line endings, stay byte-identical.

use std::ops::Range;

use rho_agent::ToolError;

use crate::edit_match::{Mode, View, count_occurrences, normalize_fuzzy, normalize_line_endings};

/// One `{oldText, newText}` entry of `edits`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub old_text: String,
    pub new_text: String,
}

/// Why an edit call changed nothing, in the reference's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("Edit tool input is invalid. edits must contain at least one replacement.")]
    NoEdits,
    #[error("Could not edit file: {path}. Error code: {code}.")]
    Access { path: String, code: String },
    #[error("Cannot edit {path}: the file is not valid UTF-8 text.")]
    NotUtf8 { path: String },
    #[error("oldText must not be empty in {path}.")]
    EmptyOldText { path: String },
    #[error("edits[{index}].oldText must not be empty in {path}.")]
    EmptyOldTextAt { path: String, index: usize },
    #[error(
        "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
    )]
    NotFound { path: String },
    #[error(
        "Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace and newlines."
    )]
    NotFoundAt { path: String, index: usize },
    #[error(
        "Found {count} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
    )]
    Duplicate { path: String, count: usize },
    #[error(
        "Found {count} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
    )]
    DuplicateAt { path: String, index: usize, count: usize },
    #[error(
        "edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target disjoint regions."
    )]
    Overlap { path: String, first: usize, second: usize },
    #[error(
        "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    )]
    NoChange { path: String },
    #[error("No changes made to {path}. The replacements produced identical content.")]
    NoChanges { path: String },
}

impl From<EditError> for ToolError {
    fn from(e: EditError) -> Self {
        ToolError::new(e.to_string())
    }
}

/// The file's line ending: CRLF when its first `\n` is preceded by `\r`.
pub fn uses_crlf(text: &str) -> bool {
    match text.find('\n') {
        Some(lf) => lf > 0 && text.as_bytes()[lf - 1] == b'\r',
        None => false,
    }
}

/// A located edit: the original bytes it replaces and what goes there.
struct Match {
    index: usize,
    orig: Range<usize>,
    replacement: String,
}

/// `body` (a file without its BOM) with every edit applied; `path` is named in errors as given.
pub fn apply_edits(body: &str, edits: &[Replacement], path: &str) -> Result<String, EditError> {
    let path = path.to_owned();
    let total = edits.len();
    let one = total == 1;
    let edits: Vec<(String, String)> = edits
        .iter()
        .map(|e| (normalize_line_endings(&e.old_text).into_owned(), normalize_line_endings(&e.new_text).into_owned()))
        .collect();
    if let Some(index) = edits.iter().position(|(old, _)| old.is_empty()) {
        return Err(if one { EditError::EmptyOldText { path } } else { EditError::EmptyOldTextAt { path, index } });
    }

    let exact = View::build(body, Mode::LineEndings);
    let fuzzy = View::build(body, Mode::Fuzzy);
    let crlf = uses_crlf(body);
    let mut matches = Vec::with_capacity(total);
    for (index, (old, new)) in edits.iter().enumerate() {
        let fuzzy_old = normalize_fuzzy(old);
        let splice = if let Some(at) = exact.text.find(old.as_str()) {
            exact.to_original(at..at + old.len())
        } else if let Some(at) = fuzzy.text.find(&fuzzy_old) {
            fuzzy.to_original(at..at + fuzzy_old.len())
        } else {
            return Err(if one { EditError::NotFound { path } } else { EditError::NotFoundAt { path, index } });
        };
        let count = count_occurrences(&fuzzy.text, &fuzzy_old);
        if count > 1 {
            return Err(if one {
                EditError::Duplicate { path, count }
            } else {
                EditError::DuplicateAt { path, index, count }
            });
        }
        let mut replacement = splice.prefix;
        replacement.push_str(new);
        replacement.push_str(&splice.suffix);
        if crlf {
            replacement = replacement.replace('\n', "\r\n");
        }
        matches.push(Match { index, orig: splice.orig, replacement });
    }

    matches.sort_by_key(|m| m.orig.start);
    for pair in matches.windows(2) {
        if let [previous, current] = pair
            && previous.orig.end > current.orig.start
        {
            return Err(EditError::Overlap { path, first: previous.index, second: current.index });
        }
    }

    // Built once, piece by piece: the file is copied one time whatever the number of edits.
    let grown: usize = matches.iter().map(|m| m.replacement.len()).sum();
    let mut out = String::with_capacity(body.len() + grown);
    let mut at = 0;
    for m in &matches {
        out.push_str(&body[at..m.orig.start]);
        out.push_str(&m.replacement);
        at = m.orig.end;
    }
    out.push_str(&body[at..]);
    if normalize_line_endings(body) == normalize_line_endings(&out) {
        return Err(if one { EditError::NoChange { path } } else { EditError::NoChanges { path } });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn edit(old: &str, new: &str) -> Replacement {
        Replacement { old_text: old.to_owned(), new_text: new.to_owned() }
    }

    #[test]
    fn detects_crlf_from_the_first_line_break() {
        assert!(uses_crlf("a\r\nb\n"));
        assert!(!uses_crlf("a\nb\r\n"));
        assert!(!uses_crlf("no breaks"));
        assert!(!uses_crlf("\n"));
    }

    #[test]
    fn edits_apply_against_the_original_in_any_order() {
        let out = apply_edits("a\nb\nc\n", &[edit("c", "C"), edit("a", "A")], "f").unwrap();
        assert_eq!(out, "A\nb\nC\n");
    }

    #[test]
    fn touching_edits_are_allowed_and_overlapping_ones_are_not() {
        assert_eq!(apply_edits("abcd", &[edit("cd", "CD"), edit("ab", "AB")], "f").unwrap(), "ABCD");
        let err = apply_edits("abcd", &[edit("cd", "X"), edit("abc", "Y")], "f").unwrap_err();
        assert_eq!(err, EditError::Overlap { path: "f".into(), first: 1, second: 0 });
        let err = apply_edits("abcd", &[edit("bc", "X"), edit("bc", "Y")], "f").unwrap_err();
        assert_eq!(err, EditError::Overlap { path: "f".into(), first: 0, second: 1 });
    }

    #[test]
    fn the_first_failing_edit_is_named() {
        let err = apply_edits("a a b", &[edit("b", "B"), edit("a", "x"), edit("z", "y")], "f").unwrap_err();
        assert_eq!(err, EditError::DuplicateAt { path: "f".into(), index: 1, count: 2 });
        let err = apply_edits("a b", &[edit("a", "A"), edit("\r", "x"), edit("", "y")], "f").unwrap_err();
        assert_eq!(err, EditError::EmptyOldTextAt { path: "f".into(), index: 2 });
    }

    #[test]
    fn crlf_files_keep_crlf_in_every_replacement() {
        let out = apply_edits("a\r\nb\r\nc\r\n", &[edit("a\nb", "A\nB"), edit("c\n", "C\nD\n")], "f").unwrap();
        assert_eq!(out, "A\r\nB\r\nC\r\nD\r\n");
    }
}
