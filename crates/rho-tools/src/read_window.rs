//! The part of a text file `read` returns, found in one pass over the file and held alone: the
//! lines are counted as they stream by, and only the window's first bytes (enough for the
//! 50 KiB cut) are kept. A 1 GB file costs the time to read it and a few hundred KiB of
//! memory, never its size.

use std::io::Read;

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// The window of a text (from line `start`, at most `limit` lines), as far as it is kept.
#[derive(Debug, Default)]
pub(crate) struct Window {
    /// Lines in the whole text (newlines + 1, as `count_lines` counts them).
    pub total_lines: usize,
    /// The window's first bytes: all of it, or the first `keep` bytes.
    pub kept: Vec<u8>,
    /// Lines and bytes in the whole window.
    pub lines: usize,
    pub bytes: usize,
    /// Bytes of the window's first line (without its newline).
    pub first_line_bytes: usize,
}

/// Scans `reader` for the window from line `start` (0-based) of at most `limit` lines, keeping
/// its first `keep` bytes.
pub(crate) fn scan(mut reader: impl Read, start: usize, limit: Option<usize>, keep: usize) -> std::io::Result<Window> {
    let end = limit.map(|limit| start.saturating_add(limit));
    let mut window = Window::default();
    // The line the next byte belongs to (0-based).
    let mut line = 0usize;
    let mut in_first_line = true;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            let inside = line >= start && end.is_none_or(|end| line < end);
            // Up to and including the next newline.
            let (piece, newline) = match rest.iter().position(|&b| b == b'\n') {
                Some(at) => (&rest[..=at], true),
                None => (rest, false),
            };
            if inside {
                // The window's last line ends before its newline.
                let last_line = newline && end.is_some_and(|end| line + 1 == end);
                let content = if last_line { &piece[..piece.len() - 1] } else { piece };
                let room = keep.saturating_sub(window.kept.len());
                window.kept.extend_from_slice(&content[..content.len().min(room)]);
                window.bytes += content.len();
                if in_first_line {
                    window.first_line_bytes += piece.len() - usize::from(newline);
                }
            }
            if newline {
                if inside {
                    in_first_line = false;
                }
                line += 1;
            }
            rest = &rest[piece.len()..];
        }
    }
    window.total_lines = line + 1;
    let last = end.map_or(window.total_lines, |end| end.min(window.total_lines));
    window.lines = last.saturating_sub(start);
    Ok(window)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(text: &str, start: usize, limit: Option<usize>, keep: usize) -> (Window, String) {
        let w = scan(text.as_bytes(), start, limit, keep).unwrap();
        let kept = String::from_utf8(w.kept.clone()).unwrap();
        (w, kept)
    }

    #[test]
    fn counts_every_line_and_keeps_the_window() {
        let (w, kept) = window("a\nbb\nccc\n", 1, None, 100);
        assert_eq!((w.total_lines, w.lines, w.bytes, w.first_line_bytes), (4, 3, 7, 2));
        assert_eq!(kept, "bb\nccc\n");
        let (w, kept) = window("a\nbb\nccc", 0, Some(2), 100);
        assert_eq!((w.total_lines, w.lines, w.bytes), (3, 2, 4));
        assert_eq!(kept, "a\nbb");
        let (w, kept) = window("a\nbb\nccc", 2, Some(5), 100);
        assert_eq!((w.lines, kept.as_str()), (1, "ccc"));
        let (w, kept) = window("", 0, None, 100);
        assert_eq!((w.total_lines, w.lines, kept.as_str()), (1, 1, ""));
    }

    #[test]
    fn keeps_no_more_than_asked_and_still_counts_to_the_end() {
        let text = "x".repeat(10) + "\n" + &"y".repeat(300_000) + "\nz";
        let (w, kept) = window(&text, 1, None, 50);
        assert_eq!(kept, "y".repeat(50));
        assert_eq!((w.total_lines, w.lines, w.bytes, w.first_line_bytes), (3, 2, 300_002, 300_000));
    }

    #[test]
    fn a_window_past_the_end_is_empty() {
        let (w, kept) = window("a\nb", 5, None, 100);
        assert_eq!((w.total_lines, w.lines, kept.as_str()), (2, 0, ""));
    }
}
