//! A shell command's output as the bash tool and the user shell keep it: a rolling buffer of the
//! newest chunks (about 100 KiB, enough to tail-truncate to 50 KiB) and, once the output passes
//! 50 KiB or is truncated at all, a spill file `<tmp>/rho-bash-<16 hex>.log` holding all of it
//! (`rho-bash-<owner token>-<16 hex>.log` under the process guardian, which removes them when
//! rho is killed; a clean exit removes them itself).
//! The reference creates that file only past 50 KiB and so names an `undefined` file when output
//! is cut by the line limit alone; rho always has a file to point to.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use crate::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, TruncationResult, truncate_tail};

/// Bytes kept in the rolling buffer before the oldest chunks are dropped.
const ROLLING_BYTES: usize = 2 * DEFAULT_MAX_BYTES;

/// The spill files this process created, removed by [`remove_spill_files`] when it ends.
static SPILL_FILES: parking_lot::Mutex<Vec<PathBuf>> = parking_lot::Mutex::new(Vec::new());

/// Removes every spill file this process created (called as rho exits: the files outlive the
/// commands that wrote them, so the model can read them, but not the process).
pub fn remove_spill_files() {
    let files = std::mem::take(&mut *SPILL_FILES.lock());
    for path in files {
        let _ = std::fs::remove_file(path);
    }
}

/// The start of the name of every spill file of the process whose owner token is `token`.
pub fn spill_prefix(token: Option<&str>) -> String {
    match token {
        Some(token) => format!("rho-bash-{token}-"),
        None => "rho-bash-".to_owned(),
    }
}

/// A fresh, exclusively created `<tmp>/rho-bash-[<owner token>-]<16 hex>.log`.
fn create_spill_file() -> std::io::Result<(PathBuf, File)> {
    let dir = std::env::temp_dir();
    let prefix = spill_prefix(crate::guardian::owner_env().map(|(_, token)| token));
    let mut last_err = None;
    for _ in 0..8 {
        let id = uuid::Uuid::new_v4();
        let bytes = id.as_bytes();
        let hex: String = bytes[..6].iter().chain(&bytes[10..12]).map(|b| format!("{b:02x}")).collect();
        let path = dir.join(format!("{prefix}{hex}.log"));
        // In the shared temporary folder: readable by the user alone.
        match std::os::unix::fs::OpenOptionsExt::mode(File::options().write(true).create_new(true), 0o600).open(&path) {
            Ok(file) => {
                SPILL_FILES.lock().push(path.clone());
                return Ok((path, file));
            }
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.unwrap_or_else(|| std::io::Error::other("no spill file name available")))
}

/// The state of the output at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The retained text, tail-truncated.
    pub truncation: TruncationResult,
    /// The spill file, when there is one.
    pub full_output_path: Option<PathBuf>,
    /// Bytes of the last line of the retained text (for the partial-line notice).
    pub last_line_bytes: usize,
}

/// Rolling buffer plus spill file.
#[derive(Default)]
pub struct OutputBuffer {
    chunks: VecDeque<Vec<u8>>,
    buffered: usize,
    total_bytes: usize,
    total_newlines: usize,
    /// Whether the output so far ends inside a line (no final newline).
    open_line: bool,
    spill: Option<(PathBuf, Option<File>)>,
}

impl OutputBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every byte pushed so far (not just the retained ones).
    pub fn total_bytes(&self) -> usize {
        self.total_bytes
    }

    /// The lines of everything pushed so far, as pi 1.6 counts them: a final newline ends the
    /// last line rather than starting another.
    pub fn total_lines(&self) -> usize {
        self.total_newlines + usize::from(self.open_line)
    }

    /// Whether the output so far ends with a newline (and is not empty).
    pub fn ends_with_newline(&self) -> bool {
        self.total_bytes > 0 && !self.open_line
    }

    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.total_bytes += chunk.len();
        self.total_newlines += chunk.iter().filter(|&&b| b == b'\n').count();
        self.open_line = chunk.last() != Some(&b'\n');
        if self.spill.is_none() && self.total_bytes > DEFAULT_MAX_BYTES {
            self.open_spill();
        }
        self.write_spill(chunk);
        self.chunks.push_back(chunk.to_vec());
        self.buffered += chunk.len();
        while self.buffered > ROLLING_BYTES && self.chunks.len() > 1 {
            if let Some(old) = self.chunks.pop_front() {
                self.buffered -= old.len();
            }
        }
    }

    fn open_spill(&mut self) {
        match create_spill_file() {
            Ok((path, mut file)) => {
                let mut ok = true;
                for chunk in &self.chunks {
                    ok &= file.write_all(chunk).is_ok();
                }
                if !ok {
                    tracing::warn!(path = %path.display(), "could not write the bash output file");
                }
                self.spill = Some((path, Some(file)));
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not create the bash output file");
            }
        }
    }

    fn write_spill(&mut self, chunk: &[u8]) {
        if let Some((path, Some(file))) = &mut self.spill
            && let Err(e) = file.write_all(chunk)
        {
            tracing::warn!(path = %path.display(), error = %e, "could not write the bash output file");
        }
    }

    /// The retained text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        let mut bytes = Vec::with_capacity(self.buffered);
        for chunk in &self.chunks {
            bytes.extend_from_slice(chunk);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The tail-truncated text; creates the spill file if the text is truncated and there is
    /// none yet (then nothing was dropped, so the buffer is the whole output).
    pub fn snapshot(&mut self) -> Snapshot {
        let text = self.text();
        let mut truncation = truncate_tail(&text, TruncationOptions::default());
        // Lines dropped from the front count too: the notice numbers lines as the full output
        // (the spill file) has them, so a `read` at that offset lands where it says.
        if self.buffered < self.total_bytes {
            truncation.total_lines = self.total_lines();
            truncation.total_bytes = self.total_bytes;
            truncation.truncated = true;
            truncation.truncated_by.get_or_insert(crate::truncate::TruncatedBy::Bytes);
        }
        if truncation.truncated && self.spill.is_none() {
            self.open_spill();
        }
        let last_line_bytes = text.rsplit('\n').next().map_or(0, str::len);
        Snapshot { truncation, full_output_path: self.spill.as_ref().map(|(p, _)| p.clone()), last_line_bytes }
    }

    /// All of the output, for programs (bash's `structuredContent.output`): whole when it is at
    /// most `max` bytes, else its first and last halves of `max` with the bytes left out named
    /// between them (`true` then). Read from the spill file when there is one.
    pub fn full_output(&self, max: usize) -> (String, bool) {
        let Some((path, _)) = &self.spill else {
            return (self.text(), false);
        };
        let Ok(bytes) = std::fs::read(path) else {
            return (self.text(), self.buffered < self.total_bytes);
        };
        if bytes.len() <= max {
            return (String::from_utf8_lossy(&bytes).into_owned(), false);
        }
        let head_len = max / 2;
        let tail_len = max - head_len;
        let head = &bytes[..head_len];
        let mut tail = &bytes[bytes.len() - tail_len..];
        // The tail starts on a character: continuation bytes are skipped.
        while tail.first().is_some_and(|b| b & 0xc0 == 0x80) {
            tail = &tail[1..];
        }
        let head = match std::str::from_utf8(head) {
            Ok(text) => text.to_owned(),
            Err(e) => String::from_utf8_lossy(&head[..e.valid_up_to()]).into_owned(),
        };
        let omitted = bytes.len() - head_len - tail_len;
        (format!("{head}\n\n[... {omitted} bytes omitted ...]\n\n{}", String::from_utf8_lossy(tail)), true)
    }

    /// Final snapshot; the spill file is flushed and closed.
    pub fn finish(&mut self) -> Snapshot {
        let snapshot = self.snapshot();
        if let Some((_, file)) = &mut self.spill
            && let Some(mut f) = file.take()
        {
            let _ = f.flush();
        }
        snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_needs_no_file() {
        let mut out = OutputBuffer::new();
        out.push(b"hello\n");
        let snap = out.finish();
        assert!(!snap.truncation.truncated);
        assert!(snap.full_output_path.is_none());
        assert_eq!(out.total_lines(), 1, "the final newline ends the line");
    }

    #[test]
    fn large_output_spills_everything_and_keeps_a_tail() {
        let mut out = OutputBuffer::new();
        let line = format!("{}\n", "x".repeat(99));
        for _ in 0..3000 {
            out.push(line.as_bytes());
        }
        let snap = out.finish();
        assert!(snap.truncation.truncated);
        assert!(out.text().len() <= ROLLING_BYTES + 100);
        let path = snap.full_output_path.unwrap();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with("rho-bash-") && name.ends_with(".log"));
        assert_eq!(name.len(), "rho-bash-".len() + 16 + ".log".len());
        let saved = std::fs::read(&path).unwrap();
        assert_eq!(saved.len(), 3000 * 100);
        // In the shared temporary folder, readable by the user alone.
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(out.total_bytes(), 300_000);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn line_truncation_alone_still_creates_the_file() {
        let mut out = OutputBuffer::new();
        let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
        out.push(text.as_bytes());
        let snap = out.finish();
        assert!(snap.truncation.truncated);
        let path = snap.full_output_path.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        std::fs::remove_file(path).unwrap();
    }
}
