//! Reading a session file: header check, line-by-line parsing, migration, and the warnings a
//! damaged file produces.
//!
//! The file is streamed line by line, so loading never holds the raw text and the parsed entries
//! at once. Nothing here writes: a torn last line (the process was killed mid-write) or a broken
//! line in the middle is skipped and reported as a [`LoadWarning`]; a first line that is not a
//! session header makes the whole file refused.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek};
use std::path::Path;

use serde_json::Value;

use crate::entry::SessionEntry;
use crate::error::{Result, SessionError};
use crate::header::{CURRENT_VERSION, SessionHeader};
use crate::migrate::migrate;
use crate::parse::{LineOutcome, entry_from_line, entry_from_value, value_from_line};

/// Something in a session file that was skipped or kept in a degraded form while loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// 1-based line number in the file.
    pub line: usize,
    pub kind: LoadWarningKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadWarningKind {
    /// The last line has no newline and does not parse: a write was cut short. Skipped.
    TornLastLine,
    /// A line that is not JSON. Skipped.
    InvalidJson(String),
    /// A JSON line that cannot be a tree node (no `type` or `id`). Skipped.
    NotAnEntry(String),
    /// A pi entry type whose fields rho cannot read; kept verbatim but not interpreted.
    Unreadable(String),
    /// The lines with problems past the first [`MAX_WARNINGS`], counted rather than listed (a
    /// file of 100,000 bad lines says so in one line); `line` is the last of them.
    More(usize),
    /// Entries of types rho does not read (a newer pi's, a fork's), by type with how many: kept
    /// as they are and written back unchanged. Said once per file; `line` is the first of them.
    UnknownTypes(Vec<(String, usize)>),
}

/// Problems listed one by one; the rest are counted in one [`LoadWarningKind::More`].
pub const MAX_WARNINGS: usize = 20;

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            LoadWarningKind::TornLastLine => {
                write!(f, "line {}: incomplete last line (an interrupted write) skipped", self.line)
            }
            LoadWarningKind::InvalidJson(e) => {
                write!(f, "line {}: not valid JSON, skipped ({e})", self.line)
            }
            LoadWarningKind::NotAnEntry(e) => {
                write!(f, "line {}: not a session entry, skipped ({e})", self.line)
            }
            LoadWarningKind::Unreadable(e) => write!(f, "line {}: {e}", self.line),
            LoadWarningKind::More(n) => {
                let noun = if *n == 1 { "line" } else { "lines" };
                write!(f, "{n} more {noun} with problems, up to line {}, not listed", self.line)
            }
            LoadWarningKind::UnknownTypes(types) => {
                let list: Vec<String> = types.iter().map(|(t, n)| format!("{t} ({n})")).collect();
                write!(f, "entries of types rho does not read are kept as they are: {}", list.join(", "))
            }
        }
    }
}

/// The problems found while loading: the first [`MAX_WARNINGS`] listed, the rest counted.
#[derive(Debug, Default)]
struct Warnings {
    listed: Vec<LoadWarning>,
    more: usize,
    last_line: usize,
    /// Entry types rho does not read: how many, and the first line of one.
    unknown: std::collections::BTreeMap<String, usize>,
    first_unknown_line: Option<usize>,
}

impl Warnings {
    fn push(&mut self, warning: LoadWarning) {
        if self.listed.len() < MAX_WARNINGS {
            self.listed.push(warning);
        } else {
            self.more += 1;
            self.last_line = warning.line;
        }
    }

    fn unknown_type(&mut self, entry_type: &str, line: usize) {
        *self.unknown.entry(entry_type.to_owned()).or_default() += 1;
        self.first_unknown_line.get_or_insert(line);
    }

    fn finish(mut self) -> Vec<LoadWarning> {
        if let Some(line) = self.first_unknown_line {
            let types = std::mem::take(&mut self.unknown).into_iter().collect();
            self.listed.push(LoadWarning { line, kind: LoadWarningKind::UnknownTypes(types) });
        }
        if self.more > 0 {
            self.listed.push(LoadWarning { line: self.last_line, kind: LoadWarningKind::More(self.more) });
        }
        self.listed
    }
}

/// A session file as read from disk, migrated in memory.
#[derive(Debug)]
pub(crate) struct LoadedFile {
    /// The header, with `version` already set to the current version.
    pub header: SessionHeader,
    pub entries: Vec<SessionEntry>,
    /// The version the file on disk has.
    pub file_version: u32,
    /// The file does not end with `\n` (a torn or unterminated last line).
    pub needs_newline: bool,
    pub warnings: Vec<LoadWarning>,
}

/// Reads lines, remembering whether the last one was newline-terminated.
struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    number: usize,
    last_byte: Option<u8>,
}

impl<R: BufRead> LineReader<R> {
    /// The next line without its `\n`, its number, and whether it had a `\n`.
    fn next_line(&mut self) -> io::Result<Option<(usize, &[u8], bool)>> {
        self.buf.clear();
        if self.inner.read_until(b'\n', &mut self.buf)? == 0 {
            return Ok(None);
        }
        self.number += 1;
        self.last_byte = self.buf.last().copied();
        let terminated = self.buf.last() == Some(&b'\n');
        let len = self.buf.len() - usize::from(terminated);
        Ok(Some((self.number, &self.buf[..len], terminated)))
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn invalid_json_warning(line: usize, terminated: bool, error: String) -> LoadWarning {
    let kind = if terminated { LoadWarningKind::InvalidJson(error) } else { LoadWarningKind::TornLastLine };
    LoadWarning { line, kind }
}

fn push_outcome(
    outcome: LineOutcome,
    line: usize,
    terminated: bool,
    entries: &mut Vec<SessionEntry>,
    warnings: &mut Warnings,
) {
    match outcome {
        LineOutcome::Entry(e) => {
            // An xcsh `model_change` is understood (its model is read), whatever its shape.
            if let SessionEntry::Other(o) = &e
                && o.entry_type() != "model_change"
            {
                warnings.unknown_type(o.entry_type(), line);
            }
            entries.push(e);
        }
        LineOutcome::Degraded(e, reason) => {
            entries.push(e);
            warnings.push(LoadWarning { line, kind: LoadWarningKind::Unreadable(reason) });
        }
        LineOutcome::NotAnEntry(reason) => {
            warnings.push(LoadWarning { line, kind: LoadWarningKind::NotAnEntry(reason) })
        }
        LineOutcome::InvalidJson(e) => warnings.push(invalid_json_warning(line, terminated, e)),
    }
}

/// Opens and parses `path`. A missing file is [`SessionError::NotFound`]; a first line that is
/// not a header is [`SessionError::InvalidHeader`], and so is anything but a regular file (a
/// path a host supplies may name a FIFO, which would never answer, or `/dev/zero`, which never
/// ends) and a file whose first line is too long to be a header (it is not read whole).
pub(crate) fn load_file(path: &Path) -> Result<LoadedFile> {
    let not_session = |reason: String| SessionError::InvalidHeader { path: path.to_path_buf(), reason };
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => SessionError::NotFound { path: path.to_path_buf() },
        _ => SessionError::io("Cannot open session file", path, e),
    })?;
    if !meta.is_file() {
        return Err(not_session(format!("it is {}, not a regular file", file_kind(&meta))));
    }
    let file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => SessionError::NotFound { path: path.to_path_buf() },
        _ => SessionError::io("Cannot open session file", path, e),
    })?;
    if meta.len() > MAX_HEADER_BYTES {
        let mut head = Vec::with_capacity(MAX_HEADER_BYTES as usize);
        (&file)
            .take(MAX_HEADER_BYTES)
            .read_to_end(&mut head)
            .map_err(|e| SessionError::io("Cannot read session file", path, e))?;
        if !head.contains(&b'\n') {
            return Err(not_session("its first line is longer than any session header".to_owned()));
        }
        (&file).seek(io::SeekFrom::Start(0)).map_err(|e| SessionError::io("Cannot read session file", path, e))?;
    }
    let read_err = |e| SessionError::io("Cannot read session file", path, e);
    let mut reader = LineReader {
        inner: BufReader::with_capacity(1 << 16, file),
        buf: Vec::with_capacity(4096),
        number: 0,
        last_byte: None,
    };

    let mut header = loop {
        match reader.next_line().map_err(read_err)? {
            None => {
                return Err(SessionError::InvalidHeader {
                    path: path.to_path_buf(),
                    reason: "the file has no session header (it is empty)".to_owned(),
                });
            }
            Some((_, line, _)) if is_blank(line) => continue,
            Some((_, line, _)) => {
                break SessionHeader::parse_line(line)
                    .map_err(|reason| SessionError::InvalidHeader { path: path.to_path_buf(), reason })?;
            }
        }
    };

    let file_version = header.version;
    let mut entries = Vec::new();
    let mut warnings = Warnings::default();

    if file_version >= CURRENT_VERSION {
        while let Some((number, line, terminated)) = reader.next_line().map_err(read_err)? {
            if is_blank(line) {
                continue;
            }
            let outcome = entry_from_line(line);
            push_outcome(outcome, number, terminated, &mut entries, &mut warnings);
        }
    } else {
        let mut values: Vec<(usize, Value)> = Vec::new();
        while let Some((number, line, terminated)) = reader.next_line().map_err(read_err)? {
            if is_blank(line) {
                continue;
            }
            match value_from_line(line) {
                Ok(v) => values.push((number, v)),
                Err(e) => warnings.push(invalid_json_warning(number, terminated, e)),
            }
        }
        let (numbers, mut lines): (Vec<usize>, Vec<Value>) = values.into_iter().unzip();
        migrate(file_version, &mut lines);
        for (number, value) in numbers.into_iter().zip(lines) {
            push_outcome(entry_from_value(value), number, true, &mut entries, &mut warnings);
        }
        header.version = CURRENT_VERSION;
    }

    Ok(LoadedFile {
        header,
        entries,
        file_version,
        needs_newline: reader.last_byte.is_some_and(|b| b != b'\n'),
        warnings: warnings.finish(),
    })
}

/// The longest first line read as a possible header.
const MAX_HEADER_BYTES: u64 = 64 * 1024;

/// What a path that is not a regular file is, for the error.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// The header of `path` if its first line is one, reading no more than the first line (up to
/// 64 KiB). Used when scanning directories.
pub(crate) fn read_header(path: &Path) -> Option<SessionHeader> {
    // Never a FIFO or a device found in a sessions folder: opening one could block the scan.
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = File::open(path).ok()?;
    let mut reader = BufReader::with_capacity(8192, file).take(MAX_HEADER_BYTES);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        if !is_blank(&line) {
            break;
        }
    }
    SessionHeader::parse_line(line.strip_suffix(b"\n").unwrap_or(&line)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-03-15T10:00:00.000Z","cwd":"/p"}"#;
    const ENTRY: &str = r#"{"type":"custom","customType":"x","id":"aaaaaaaa","parentId":null,"timestamp":"t"}"#;

    fn load(content: &str) -> Result<LoadedFile> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, content).unwrap();
        load_file(&path)
    }

    #[test]
    fn the_line_reader_numbers_lines_and_tells_terminated_ones() {
        let mut reader = LineReader { inner: &b"a\n\nb\nc"[..], buf: Vec::new(), number: 0, last_byte: None };
        let mut seen = Vec::new();
        while let Some((n, line, terminated)) = reader.next_line().unwrap() {
            seen.push((n, String::from_utf8(line.to_vec()).unwrap(), terminated));
        }
        assert_eq!(
            seen,
            [(1, "a".into(), true), (2, String::new(), true), (3, "b".into(), true), (4, "c".into(), false)]
        );
        assert_eq!(reader.last_byte, Some(b'c'));
    }

    #[test]
    fn a_missing_final_newline_is_remembered() {
        let whole = load(&format!("{HEADER}\n{ENTRY}\n")).unwrap();
        assert!(!whole.needs_newline);
        assert!(whole.warnings.is_empty());
        let unterminated = load(&format!("{HEADER}\n{ENTRY}")).unwrap();
        assert!(unterminated.needs_newline);
        assert_eq!(unterminated.entries.len(), 1);
        let header_only = load(HEADER).unwrap();
        assert!(header_only.needs_newline);
        assert!(header_only.entries.is_empty());
    }

    #[test]
    fn only_an_unterminated_broken_line_counts_as_torn() {
        let torn = load(&format!("{HEADER}\n{ENTRY}\n{{\"type\":\"cus")).unwrap();
        assert_eq!(torn.warnings, [LoadWarning { line: 3, kind: LoadWarningKind::TornLastLine }]);
        assert!(torn.needs_newline);
        let broken = load(&format!("{HEADER}\n{{\"type\":\"cus\n{ENTRY}\n")).unwrap();
        assert!(matches!(broken.warnings[0].kind, LoadWarningKind::InvalidJson(_)));
        assert_eq!(broken.warnings[0].line, 2);
        assert_eq!(broken.entries.len(), 1);
    }

    #[test]
    fn leading_blank_lines_before_the_header_are_skipped() {
        let loaded = load(&format!("\n  \n{HEADER}\n\n{ENTRY}\n")).unwrap();
        assert_eq!(loaded.header.id, "s1");
        assert_eq!(loaded.entries.len(), 1);
        assert_eq!(loaded.file_version, 3);
    }

    #[test]
    fn old_versions_are_reported_with_their_version_and_loaded_current() {
        let v2 = r#"{"type":"session","version":2,"id":"s2","timestamp":"t","cwd":"/p"}"#;
        let loaded = load(&format!("{v2}\n{ENTRY}\nnot json\n")).unwrap();
        assert_eq!((loaded.file_version, loaded.header.version), (2, CURRENT_VERSION));
        assert_eq!(loaded.entries.len(), 1);
        assert_eq!(loaded.warnings.len(), 1);
        assert_eq!(loaded.warnings[0].line, 3);

        let half = r#"{"type":"custom","customType":"\ud83d","id":"b","parentId":null,"timestamp":"t"}"#;
        let loaded = load(&format!("{v2}\n{half}\n")).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        assert!(matches!(&loaded.entries[0], SessionEntry::Custom(c) if c.custom_type == "\u{fffd}"));
    }

    #[test]
    fn read_header_reads_the_first_line_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, format!("\n{HEADER}\ngarbage")).unwrap();
        assert_eq!(read_header(&path).unwrap().id, "s1");
        std::fs::write(&path, HEADER).unwrap();
        assert_eq!(read_header(&path).unwrap().cwd, "/p");
        std::fs::write(&path, format!("{ENTRY}\n{HEADER}\n")).unwrap();
        assert!(read_header(&path).is_none());
        std::fs::write(&path, "").unwrap();
        assert!(read_header(&path).is_none());
        assert!(read_header(&dir.path().join("missing.jsonl")).is_none());
    }

    #[test]
    fn warnings_read_as_sentences() {
        let w = |kind| LoadWarning { line: 7, kind }.to_string();
        assert_eq!(w(LoadWarningKind::NotAnEntry("no id".into())), "line 7: not a session entry, skipped (no id)");
        assert_eq!(w(LoadWarningKind::Unreadable("kept as-is".into())), "line 7: kept as-is");
    }
}
