//! Reading stdin as lines: split on `\n` only (never on U+2028 / U+2029), the last line kept
//! even without a trailing newline, bytes handed over as they are (the parser strips a trailing
//! `\r` and reports invalid UTF-8). Lines may be large (a 10 MB prompt is one line).
//!
//! The reading happens on a thread of its own, not on the runtime's blocking pool: a read of
//! stdin cannot be interrupted, and a pool thread stuck in one would hold the runtime's
//! shutdown until the timeout; a detached thread ends with the process.

use std::io::{BufRead, BufReader, Read};

use tokio::sync::mpsc;

pub struct Lines {
    rx: mpsc::Receiver<Vec<u8>>,
}

/// Starts reading `input` line by line on its own thread.
pub fn lines<R: Read + Send + 'static>(input: R) -> std::io::Result<Lines> {
    // A few lines of slack: the reader runs ahead of the dispatcher, but not without bound.
    let (tx, rx) = mpsc::channel(64);
    std::thread::Builder::new().name("rho-stdin".into()).spawn(move || {
        let mut reader = BufReader::with_capacity(64 * 1024, input);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                    }
                    if tx.blocking_send(line).is_err() {
                        return;
                    }
                }
            }
        }
    })?;
    Ok(Lines { rx })
}

impl Lines {
    /// The next line without its `\n`; `None` at end of input (a read error counts as the end).
    pub async fn next_line(&mut self) -> Option<Vec<u8>> {
        self.rx.recv().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn splits_on_newline_only_and_keeps_the_last_line() {
        let input: &'static [u8] = "a\u{2028}b\r\n\n{\"x\":1}".as_bytes();
        let mut lines = lines(input).unwrap();
        assert_eq!(lines.next_line().await.unwrap(), "a\u{2028}b\r".as_bytes());
        assert_eq!(lines.next_line().await.unwrap(), b"");
        assert_eq!(lines.next_line().await.unwrap(), b"{\"x\":1}");
        assert_eq!(lines.next_line().await, None);
    }
}
