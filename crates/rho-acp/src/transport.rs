//! stdio as the SDK's line transport: newline-delimited JSON-RPC messages.
//!
//! stdin is read on a thread of its own (as in RPC mode): a read of stdin cannot be
//! interrupted, and a runtime thread stuck in one would hold shutdown until its timeout. stdout
//! has one writer, the SDK's outgoing queue, which hands this sink whole messages; each is
//! written with its newline and flushed. Nothing else in this mode writes to stdout.

use std::io::{self, BufRead, BufReader};
use std::pin::Pin;

use futures::{Sink, Stream};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// Lines read from stdin (a line that is not UTF-8 is passed on lossily: the SDK answers it as
/// a parse error).
pub(super) type Incoming = Pin<Box<dyn Stream<Item = io::Result<String>> + Send>>;
/// Whole messages to stdout.
pub(super) type Outgoing = Pin<Box<dyn Sink<String, Error = io::Error> + Send>>;

/// stdin and stdout, as the transport reads and writes them.
pub(super) fn stdio() -> io::Result<(Outgoing, Incoming)> {
    let (tx, rx) = mpsc::channel::<String>(64);
    std::thread::Builder::new().name("rho-stdin".into()).spawn(move || {
        let mut reader = BufReader::with_capacity(64 * 1024, io::stdin());
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    while matches!(line.last(), Some(b'\n' | b'\r')) {
                        line.pop();
                    }
                    // Moved, not copied, when it is UTF-8 (a long prompt is held once).
                    let text =
                        String::from_utf8(line).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                    if tx.blocking_send(text).is_err() {
                        return;
                    }
                }
            }
        }
    })?;
    let incoming = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|line| (Ok(line), rx)) });
    let outgoing = futures::sink::unfold(tokio::io::stdout(), |mut out, message: String| async move {
        out.write_all(message.as_bytes()).await?;
        out.write_all(b"\n").await?;
        out.flush().await?;
        Ok::<_, io::Error>(out)
    });
    Ok((Box::pin(outgoing), Box::pin(incoming)))
}
