//! Reading a session file: header check, line-by-line parsing, migration, and the warnings a
//! damaged file produces.
//!
//! The file is streamed line by line, so loading never holds the raw text and the parsed entries
//! at once. Nothing here writes: a torn last line (the process was killed mid-write) or a broken
//! line in the middle is skipped and reported as a [`LoadWarning`]; a first line that is not a
//! session header makes the whole file refused.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use crate::entry::SessionEntry;
use crate::error::{Result, SessionError};
use crate::header::{CURRENT_VERSION, SessionHeader};
use crate::migrate::migrate;
use crate::parse::{LineOutcome, entry_from_line, entry_from_value};

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
}

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
        }
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
    warnings: &mut Vec<LoadWarning>,
) {
    match outcome {
        LineOutcome::Entry(e) => entries.push(e),
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
/// not a header is [`SessionError::InvalidHeader`].
pub(crate) fn load_file(path: &Path) -> Result<LoadedFile> {
    let file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => SessionError::NotFound { path: path.to_path_buf() },
        _ => SessionError::io("Cannot open session file", path, e),
    })?;
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
    let mut warnings = Vec::new();

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
            match serde_json::from_slice::<Value>(line) {
                Ok(v) => values.push((number, v)),
                Err(e) => warnings.push(invalid_json_warning(number, terminated, e.to_string())),
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
        warnings,
    })
}

/// The header of `path` if its first line is one, reading no more than the first line (up to
/// 64 KiB). Used when scanning directories.
pub(crate) fn read_header(path: &Path) -> Option<SessionHeader> {
    let file = File::open(path).ok()?;
    let mut reader = BufReader::with_capacity(8192, file).take(64 * 1024);
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
