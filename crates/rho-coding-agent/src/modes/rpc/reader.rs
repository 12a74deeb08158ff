//! Reading stdin as lines: split on `\n` only (never on U+2028 / U+2029), the last line kept
//! even without a trailing newline, bytes handed over as they are (the parser strips a trailing
//! `\r` and reports invalid UTF-8). Lines may be large (a 10 MB prompt is one line).

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

pub struct Lines<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
}

pub fn lines<R: AsyncRead + Unpin>(input: R) -> Lines<R> {
    Lines { reader: BufReader::with_capacity(64 * 1024, input), buf: Vec::new() }
}

impl<R: AsyncRead + Unpin> Lines<R> {
    /// The next line without its `\n`; `None` at end of input (a read error counts as the end).
    pub async fn next_line(&mut self) -> Option<Vec<u8>> {
        self.buf.clear();
        match self.reader.read_until(b'\n', &mut self.buf).await {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                if self.buf.last() == Some(&b'\n') {
                    self.buf.pop();
                }
                Some(std::mem::take(&mut self.buf))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn splits_on_newline_only_and_keeps_the_last_line() {
        let input: &[u8] = "a\u{2028}b\r\n\n{\"x\":1}".as_bytes();
        let mut lines = lines(input);
        assert_eq!(lines.next_line().await.unwrap(), "a\u{2028}b\r".as_bytes());
        assert_eq!(lines.next_line().await.unwrap(), b"");
        assert_eq!(lines.next_line().await.unwrap(), b"{\"x\":1}");
        assert_eq!(lines.next_line().await, None);
    }
}
