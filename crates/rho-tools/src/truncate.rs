//! The shared output limits (2000 lines / 50 KiB, 500-character lines) and the two truncation
//! directions: head (keep the beginning: read, grep, find, ls) and tail (keep the end: bash).
//!
//! Lines are `split('\n')` pieces, so a trailing newline makes a final empty line and `""` is one
//! line; sizes are UTF-8 bytes. Neither direction ever emits a partial line, except tail
//! truncation when the last line alone is over the byte limit (then its end is kept). The result
//! is what tools store as `details.truncation`, kept text included.

use serde::Serialize;

pub const DEFAULT_MAX_LINES: usize = 2000;
pub const DEFAULT_MAX_BYTES: usize = 51200;
pub const GREP_MAX_LINE_LENGTH: usize = 500;

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    Lines,
    Bytes,
}

/// The limits of one truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncationOptions {
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Default for TruncationOptions {
    fn default() -> Self {
        Self { max_lines: DEFAULT_MAX_LINES, max_bytes: DEFAULT_MAX_BYTES }
    }
}

impl TruncationOptions {
    /// Only the byte limit applies (grep, find, ls).
    pub fn bytes_only() -> Self {
        Self { max_lines: usize::MAX, max_bytes: DEFAULT_MAX_BYTES }
    }
}

/// What a truncation kept and why; serialized as the protocol's `details.truncation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncationResult {
    pub content: String,
    pub truncated: bool,
    pub truncated_by: Option<TruncatedBy>,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    pub last_line_partial: bool,
    pub first_line_exceeds_limit: bool,
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl TruncationResult {
    fn untouched(content: &str, total_lines: usize, opts: TruncationOptions) -> Self {
        Self {
            content: content.to_owned(),
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: content.len(),
            output_lines: total_lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: opts.max_lines,
            max_bytes: opts.max_bytes,
        }
    }

    /// The value stored under `details.truncation`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// The lines of `text` as pi 1.6 counts them: none in an empty text, and a final newline ends the
/// last line rather than starting another.
pub fn count_lines(text: &str) -> usize {
    lines_of(text).map_or(0, |body| body.bytes().filter(|&b| b == b'\n').count() + 1)
}

/// `text` without the newline that ends its last line; `None` when it has no line at all.
fn lines_of(text: &str) -> Option<&str> {
    (!text.is_empty()).then(|| text.strip_suffix('\n').unwrap_or(text))
}

/// Keeps the beginning: whole lines while under both limits.
pub fn truncate_head(content: &str, opts: TruncationOptions) -> TruncationResult {
    let total_lines = count_lines(content);
    let total_bytes = content.len();
    if total_lines <= opts.max_lines && total_bytes <= opts.max_bytes {
        return TruncationResult::untouched(content, total_lines, opts);
    }
    let mut result = TruncationResult {
        content: String::new(),
        truncated: true,
        truncated_by: Some(TruncatedBy::Bytes),
        total_lines,
        total_bytes,
        output_lines: 0,
        output_bytes: 0,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: opts.max_lines,
        max_bytes: opts.max_bytes,
    };
    let body = lines_of(content).unwrap_or_default();
    let first_len = body.find('\n').unwrap_or(body.len());
    if first_len > opts.max_bytes {
        result.first_line_exceeds_limit = true;
        return result;
    }
    let mut lines = 0usize;
    let mut end = 0usize;
    let mut stopped_on_bytes = false;
    for (i, line) in body.split('\n').enumerate() {
        if i >= opts.max_lines {
            break;
        }
        let with_sep = line.len() + usize::from(i > 0);
        if end + with_sep > opts.max_bytes {
            stopped_on_bytes = true;
            break;
        }
        end += with_sep;
        lines += 1;
    }
    result.truncated_by =
        Some(if !stopped_on_bytes && lines >= opts.max_lines { TruncatedBy::Lines } else { TruncatedBy::Bytes });
    result.content = body[..end].to_owned();
    result.output_lines = lines;
    result.output_bytes = end;
    result
}

/// Keeps the end: whole lines while under both limits; when the last line alone is too long,
/// its final `max_bytes` (cut forward to a character boundary).
pub fn truncate_tail(content: &str, opts: TruncationOptions) -> TruncationResult {
    let total_lines = count_lines(content);
    let total_bytes = content.len();
    if total_lines <= opts.max_lines && total_bytes <= opts.max_bytes {
        return TruncationResult::untouched(content, total_lines, opts);
    }
    let body = lines_of(content).unwrap_or_default();
    let mut lines = 0usize;
    let mut used = 0usize;
    let mut start = body.len();
    let mut truncated_by = TruncatedBy::Lines;
    let mut last_line_partial = false;
    let mut partial: Option<String> = None;
    for line in body.rsplit('\n') {
        if lines >= opts.max_lines {
            break;
        }
        let with_sep = line.len() + usize::from(lines > 0);
        if used + with_sep > opts.max_bytes {
            truncated_by = TruncatedBy::Bytes;
            if lines == 0 {
                let mut cut = line.len() - opts.max_bytes;
                while !line.is_char_boundary(cut) {
                    cut += 1;
                }
                partial = Some(line[cut..].to_owned());
                last_line_partial = true;
                lines = 1;
            }
            break;
        }
        used += with_sep;
        lines += 1;
        start -= with_sep;
    }
    if lines >= opts.max_lines && used <= opts.max_bytes && !last_line_partial {
        truncated_by = TruncatedBy::Lines;
    }
    let kept = partial.unwrap_or_else(|| body[start..].to_owned());
    TruncationResult {
        output_bytes: kept.len(),
        content: kept,
        truncated: true,
        truncated_by: Some(truncated_by),
        total_lines,
        total_bytes,
        output_lines: lines,
        last_line_partial,
        first_line_exceeds_limit: false,
        max_lines: opts.max_lines,
        max_bytes: opts.max_bytes,
    }
}

/// `truncateLine`: a line over `max_chars` UTF-16 units keeps its first `max_chars` and gets
/// `... [truncated]`; the flag says whether it was cut.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    let mut units = 0usize;
    let mut cut = None;
    for (i, c) in line.char_indices() {
        let width = c.len_utf16();
        if units + width > max_chars {
            cut = Some(i);
            break;
        }
        units += width;
    }
    match cut {
        Some(i) => (format!("{}... [truncated]", &line[..i]), true),
        None => (line.to_owned(), false),
    }
}

/// `formatSize`: `512B`, `50.0KB`, `1.5MB` (one decimal, ties rounded up like `toFixed`).
pub fn format_size(bytes: usize) -> String {
    const KIB: u128 = 1024;
    const MIB: u128 = 1024 * 1024;
    let n = bytes as u128;
    let (unit, suffix) = if n < KIB {
        return format!("{bytes}B");
    } else if n < MIB {
        (KIB, "KB")
    } else {
        (MIB, "MB")
    };
    let tenths = (20 * n + unit) / (2 * unit);
    format!("{}.{}{suffix}", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn opts(max_lines: usize, max_bytes: usize) -> TruncationOptions {
        TruncationOptions { max_lines, max_bytes }
    }

    #[test]
    fn format_size_matches_the_reference() {
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(1024), "1.0KB");
        assert_eq!(format_size(1280), "1.3KB");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(1024 * 1024), "1.0MB");
        assert_eq!(format_size(1024 * 1024 * 3 / 2), "1.5MB");
    }

    #[test]
    fn empty_content_has_no_lines() {
        let r = truncate_head("", TruncationOptions::default());
        assert!(!r.truncated);
        assert_eq!(r.total_lines, 0);
        assert_eq!(count_lines("a\nb\n"), 2, "a final newline ends the last line");
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("\n"), 1);
        assert_eq!(r.truncated_by, None);
        let json = r.to_json();
        assert_eq!(json["truncatedBy"], serde_json::Value::Null);
        let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "content",
                "truncated",
                "truncatedBy",
                "totalLines",
                "totalBytes",
                "outputLines",
                "outputBytes",
                "lastLinePartial",
                "firstLineExceedsLimit",
                "maxLines",
                "maxBytes"
            ]
        );
    }

    #[test]
    fn head_stops_on_the_line_limit() {
        let r = truncate_head("a\nb\nc\nd", opts(2, 100));
        assert_eq!(r.content, "a\nb");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!((r.total_lines, r.output_lines, r.output_bytes), (4, 2, 3));
    }

    #[test]
    fn head_stops_on_the_byte_limit_with_whole_lines() {
        let r = truncate_head("aaa\nbbb\nccc", opts(100, 8));
        assert_eq!(r.content, "aaa\nbbb");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!(r.output_bytes, 7);
    }

    #[test]
    fn head_first_line_over_limit_keeps_nothing() {
        let r = truncate_head("0123456789\nx", opts(100, 5));
        assert!(r.first_line_exceeds_limit);
        assert_eq!(r.content, "");
        assert_eq!(r.output_lines, 0);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let r = truncate_tail("a\nb\nc\nd", opts(2, 100));
        assert_eq!(r.content, "c\nd");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!(r.output_lines, 2);
        let r = truncate_tail("aaa\nbbb\nccc", opts(100, 8));
        assert_eq!(r.content, "bbb\nccc");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn tail_keeps_the_end_of_an_overlong_last_line_on_a_char_boundary() {
        let r = truncate_tail("x\nééééé", opts(100, 5));
        assert!(r.last_line_partial);
        assert_eq!(r.content, "éé");
        assert_eq!(r.output_lines, 1);
        assert_eq!(r.output_bytes, 4);
    }

    #[test]
    fn truncate_line_counts_utf16_units() {
        let (s, cut) = truncate_line(&"x".repeat(501), 500);
        assert!(cut);
        assert_eq!(s, format!("{}... [truncated]", "x".repeat(500)));
        let (s, cut) = truncate_line(&"x".repeat(500), 500);
        assert!(!cut);
        assert_eq!(s.len(), 500);
        let (s, cut) = truncate_line("😀😀", 3);
        assert!(cut);
        assert_eq!(s, "😀... [truncated]");
    }
}
