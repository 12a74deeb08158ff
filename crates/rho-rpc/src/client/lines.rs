//! Reading the server's stdout as LF-terminated lines with a length bound: a line longer than
//! the bound is skipped (and reported) instead of growing memory without limit, and the lines
//! after it are read normally. Bytes are returned as they are; decoding is the caller's.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One line, without its `\n`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    Text(Vec<u8>),
    /// A line of this many bytes, over the bound, was skipped.
    TooLong(usize),
}

pub(crate) struct LineReader<R> {
    inner: R,
    max: usize,
    number: u64,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        Self { inner, max, number: 0 }
    }

    /// The next line and its 1-based number; `None` at end of input. A last line without a
    /// trailing `\n` is still returned.
    pub(crate) async fn next(&mut self) -> std::io::Result<Option<(u64, Line)>> {
        let mut line = Vec::new();
        let mut length = 0usize;
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                if length == 0 {
                    return Ok(None);
                }
                break;
            }
            let (part, used, complete) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], i + 1, true),
                None => (chunk, chunk.len(), false),
            };
            length = length.saturating_add(part.len());
            if length <= self.max {
                line.extend_from_slice(part);
            } else {
                line = Vec::new();
            }
            self.inner.consume(used);
            if complete {
                break;
            }
        }
        self.number += 1;
        let line = if length > self.max { Line::TooLong(length) } else { Line::Text(line) };
        Ok(Some((self.number, line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn all(input: &[u8], max: usize) -> Vec<(u64, Line)> {
        let mut reader = LineReader::new(BufReader::with_capacity(3, input), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next().await.unwrap() {
            out.push(line);
        }
        out
    }

    fn text(s: &str) -> Line {
        Line::Text(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn splits_on_lf_only_and_keeps_a_last_unterminated_line() {
        let lines = all("a\u{2028}b\n\nlong line\ntail".as_bytes(), 100).await;
        assert_eq!(lines, vec![(1, text("a\u{2028}b")), (2, text("")), (3, text("long line")), (4, text("tail"))]);
    }

    #[tokio::test]
    async fn skips_overlong_lines_and_reads_on() {
        let lines = all(b"12345678\nok\n123456", 5).await;
        assert_eq!(lines, vec![(1, Line::TooLong(8)), (2, text("ok")), (3, Line::TooLong(6))]);
    }
}
