//! Finding `oldText` in a file the way the reference does (exactly after line-ending
//! normalization, else after fuzzy normalization) while keeping a map back to the original
//! bytes, so the replacement touches only the matched region: every byte outside it is left as
//! it was (the reference rewrites the whole file in normalized form when it matches fuzzily).
//!
//! A [`View`] is the normalized text plus segments pairing each normalized range with the
//! original range it came from. Line endings (`\r\n`, lone `\r`) become `\n`. In fuzzy mode each
//! character cluster (a starter and the marks that follow it) is NFKC-normalized on its own,
//! smart quotes, Unicode dashes and special spaces become ASCII, and trailing whitespace of every
//! line normalizes to nothing. Normalizing per cluster rather than per string differs from
//! whole-string NFKC only for sequences that compose across starters (decomposed Hangul is kept
//! together), and both the file and `oldText` go through the same function.
//!
//! Memory is bounded by the file: a view that changes nothing borrows the file's text, and the
//! fuzzy pass normalizes one cluster at a time into a reused buffer (ASCII goes through as it
//! is), so a file of one long line costs no more than one of many.

use std::borrow::Cow;
use std::ops::Range;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// How much a [`View`] normalizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Line endings only (`\r\n` and `\r` → `\n`).
    LineEndings,
    /// Line endings, NFKC, trailing whitespace, quotes, dashes and spaces.
    Fuzzy,
}

#[derive(Debug, Clone, Copy)]
struct Segment {
    orig: usize,
    orig_len: usize,
    norm: usize,
    norm_len: usize,
    /// Normalized text equals the original, so offsets inside map one to one.
    identity: bool,
}

impl Segment {
    fn norm_end(&self) -> usize {
        self.norm + self.norm_len
    }
}

/// A normalized text and its map back to the original.
#[derive(Debug)]
pub struct View<'a> {
    pub text: Cow<'a, str>,
    segments: Vec<Segment>,
    orig_len: usize,
}

/// Where a normalized match lies in the original, and the normalized text of the clusters the
/// match only partly covers (they are replaced whole, so these parts are put back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    pub orig: Range<usize>,
    pub prefix: String,
    pub suffix: String,
}

/// JavaScript's notion of whitespace (what `trimEnd` strips).
fn is_js_whitespace(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}'
}

fn fuzzy_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

/// Continues the cluster before it: combining marks and Hangul vowel/trailing jamo.
fn extends_cluster(c: char) -> bool {
    canonical_combining_class(c) != 0 || ('\u{1160}'..='\u{11FF}').contains(&c)
}

fn normalize_cluster(cluster: &str) -> String {
    if cluster.len() == 1 && cluster.is_ascii() {
        return cluster.to_owned();
    }
    cluster.nfkc().map(fuzzy_char).collect()
}

struct Builder {
    text: String,
    segments: Vec<Segment>,
}

impl Builder {
    fn push(&mut self, orig: Range<usize>, norm: &str, identity: bool) {
        if orig.is_empty() {
            return;
        }
        if identity
            && let Some(last) = self.segments.last_mut()
            && last.identity
            && last.orig + last.orig_len == orig.start
        {
            last.orig_len += orig.len();
            last.norm_len += norm.len();
            self.text.push_str(norm);
            return;
        }
        self.segments.push(Segment {
            orig: orig.start,
            orig_len: orig.len(),
            norm: self.text.len(),
            norm_len: norm.len(),
            identity,
        });
        self.text.push_str(norm);
    }

    fn push_fuzzy_line(&mut self, source: &str, body: Range<usize>, buffer: &mut String) {
        let line = &source[body.clone()];
        // The line's trailing whitespace normalizes to nothing: find where it starts (after the
        // last cluster that is not all whitespace, whose own trailing whitespace is cut too).
        let mut kept_end = line.len();
        let mut last = None;
        while kept_end > 0 {
            let start = cluster_start(line, kept_end);
            let norm = normalize_cluster(&line[start..kept_end]);
            if !norm.chars().all(is_js_whitespace) {
                let trimmed = norm.trim_end_matches(is_js_whitespace).len();
                last = Some((start, norm[..trimmed].to_owned()));
                break;
            }
            kept_end = start;
        }
        let mut start = 0usize;
        let ends = line.char_indices().skip(1).filter(|(_, c)| !extends_cluster(*c)).map(|(i, _)| i);
        for end in ends.chain(std::iter::once(line.len())).filter(|end| *end > 0) {
            let orig = body.start + start..body.start + end;
            let cluster = &line[start..end];
            match &last {
                // Past the last cluster that stays: trailing whitespace.
                _ if start >= kept_end => self.push(orig, "", false),
                Some((at, norm)) if *at == start => self.push(orig, norm, cluster == norm),
                _ if cluster.len() == 1 && cluster.is_ascii() => self.push(orig, cluster, true),
                _ => {
                    buffer.clear();
                    buffer.extend(cluster.nfkc().map(fuzzy_char));
                    self.push(orig, buffer, cluster == buffer.as_str());
                }
            }
            start = end;
        }
    }
}

/// Where the cluster that ends at `end` starts: at its starter (a line's first character always
/// starts one).
fn cluster_start(line: &str, end: usize) -> usize {
    line[..end].char_indices().rev().find(|(i, c)| *i == 0 || !extends_cluster(*c)).map_or(0, |(i, _)| i)
}

/// Whether fuzzy normalization leaves `source` as it is: ASCII, one `\n` per line break and no
/// trailing whitespace.
fn fuzzy_is_identity(source: &str) -> bool {
    source.is_ascii()
        && !source.contains('\r')
        && source.split('\n').all(|line| !line.ends_with(|c: char| c.is_ascii() && is_js_whitespace(c)))
}

impl<'a> View<'a> {
    pub fn build(source: &'a str, mode: Mode) -> Self {
        let unchanged = match mode {
            Mode::LineEndings => !source.contains('\r'),
            Mode::Fuzzy => fuzzy_is_identity(source),
        };
        if unchanged {
            let whole = Segment { orig: 0, orig_len: source.len(), norm: 0, norm_len: source.len(), identity: true };
            return Self { text: Cow::Borrowed(source), segments: vec![whole], orig_len: source.len() };
        }
        let mut builder = Builder { text: String::with_capacity(source.len()), segments: Vec::new() };
        let mut buffer = String::new();
        let bytes = source.as_bytes();
        let mut line_start = 0usize;
        let mut i = 0usize;
        while i <= bytes.len() {
            let terminator = match bytes.get(i) {
                None => Some(0),
                Some(b'\n') => Some(1),
                Some(b'\r') if bytes.get(i + 1) == Some(&b'\n') => Some(2),
                Some(b'\r') => Some(1),
                Some(_) => None,
            };
            let Some(term_len) = terminator else {
                i += 1;
                continue;
            };
            match mode {
                Mode::LineEndings => {
                    builder.push(line_start..i, &source[line_start..i], true);
                }
                Mode::Fuzzy => builder.push_fuzzy_line(source, line_start..i, &mut buffer),
            }
            if term_len > 0 {
                let identity = term_len == 1 && bytes[i] == b'\n';
                builder.push(i..i + term_len, "\n", identity);
            }
            i += term_len.max(1);
            line_start = i;
        }
        Self { text: Cow::Owned(builder.text), segments: builder.segments, orig_len: source.len() }
    }

    /// The original range behind the normalized range `range` (which must lie on character
    /// boundaries of [`View::text`]).
    pub fn to_original(&self, range: Range<usize>) -> Splice {
        let mut splice = Splice { orig: self.orig_len..self.orig_len, prefix: String::new(), suffix: String::new() };
        let first = self.segments.partition_point(|seg| seg.norm_end() <= range.start);
        if let Some(seg) = self.segments.get(first) {
            if seg.identity {
                splice.orig.start = seg.orig + (range.start - seg.norm);
            } else {
                splice.orig.start = seg.orig;
                splice.prefix = self.text[seg.norm..range.start].to_owned();
            }
        }
        if range.end <= range.start {
            splice.orig.end = splice.orig.start;
            splice.prefix.clear();
            return splice;
        }
        let last = self.segments.partition_point(|seg| seg.norm_end() < range.end);
        if let Some(seg) = self.segments.get(last) {
            if seg.identity {
                splice.orig.end = seg.orig + (range.end - seg.norm);
            } else {
                splice.orig.end = seg.orig + seg.orig_len;
                splice.suffix = self.text[range.end..seg.norm_end()].to_owned();
            }
        }
        splice
    }
}

/// `\r\n` and lone `\r` as `\n` (the text itself when it has neither).
pub fn normalize_line_endings(text: &str) -> Cow<'_, str> {
    if text.contains('\r') { Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n")) } else { Cow::Borrowed(text) }
}

/// The fuzzy-normalized form of a text.
pub fn normalize_fuzzy(text: &str) -> String {
    View::build(text, Mode::Fuzzy).text.into_owned()
}

/// Non-overlapping occurrences, counted like `haystack.split(needle).length - 1` (an empty
/// needle counts the gaps between UTF-16 units).
pub fn count_occurrences(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return haystack.encode_utf16().count().saturating_sub(1);
    }
    haystack.matches(needle).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn splice_text(source: &str, view: &View, needle: &str, replacement: &str) -> String {
        let at = view.text.find(needle).unwrap();
        let splice = view.to_original(at..at + needle.len());
        format!(
            "{}{}{}{}{}",
            &source[..splice.orig.start],
            splice.prefix,
            replacement,
            splice.suffix,
            &source[splice.orig.end..]
        )
    }

    #[test]
    fn line_ending_view_maps_crlf() {
        let source = "a\r\nb\rc\nd";
        let view = View::build(source, Mode::LineEndings);
        assert_eq!(view.text, "a\nb\nc\nd");
        assert_eq!(splice_text(source, &view, "b\nc", "X"), "a\r\nX\nd");
        assert_eq!(splice_text(source, &view, "d", "Y"), "a\r\nb\rc\nY");
    }

    #[test]
    fn fuzzy_view_normalizes_quotes_dashes_spaces_and_trailing_whitespace() {
        let source = "say \u{201C}hi\u{201D} \u{2014} it\u{2019}s\u{00A0}ok   \nnext\t\n";
        let view = View::build(source, Mode::Fuzzy);
        assert_eq!(view.text, "say \"hi\" - it's ok\nnext\n");
    }

    #[test]
    fn fuzzy_replacement_touches_only_the_match() {
        let source = "keep \u{2018}this\u{2019}   \nit\u{2019}s here  \nand \u{201C}that\u{201D}\n";
        let view = View::build(source, Mode::Fuzzy);
        let out = splice_text(source, &view, "it's here", "it is there");
        assert_eq!(out, "keep \u{2018}this\u{2019}   \nit is there  \nand \u{201C}that\u{201D}\n");
    }

    #[test]
    fn nfkc_clusters_map_back() {
        let source = "x \u{FB01}le e\u{0301}t\u{00E9}";
        let view = View::build(source, Mode::Fuzzy);
        assert_eq!(view.text, "x file \u{00E9}t\u{00E9}");
        assert_eq!(splice_text(source, &view, "ile", "ILE"), "x fILE e\u{0301}t\u{00E9}");
        assert_eq!(splice_text(source, &view, "\u{00E9}t", "E"), "x \u{FB01}le E\u{00E9}");
    }

    #[test]
    fn empty_match_maps_to_a_point() {
        let source = "ab";
        let view = View::build(source, Mode::LineEndings);
        let splice = view.to_original(0..0);
        assert_eq!(splice.orig, 0..0);
    }

    #[test]
    fn counts_like_split() {
        assert_eq!(count_occurrences("aaaa", "aa"), 2);
        assert_eq!(count_occurrences("abc", ""), 2);
        assert_eq!(count_occurrences("", ""), 0);
        assert_eq!(count_occurrences("abc", "x"), 0);
    }
}
