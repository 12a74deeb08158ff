//! A stdio server's process as rmcp's transport, with a bound on what one message may be.
//!
//! rmcp reads a stdio server's messages one line each and drops a line over 16 MiB without a
//! word, so a tool call whose answer is that large waits out its whole timeout. Here the
//! server's stdout is read through [`Bounded`]: a line that passes the bound ends the stream
//! instead, which closes the connection at once (every call waiting on it fails then), and the
//! server's [`Oversized`] mark says why. The process is stopped as rmcp stops its own children:
//! stdin closed, then SIGTERM, then SIGKILL, each after a short wait; dropped, it is killed.

use std::io;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{ChildStdin, ChildStdout};

/// The longest message a server may send: rmcp's own bound for a line.
pub(crate) const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How long a server has to exit after stdin closes, and again after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// Which connection of a server ended on a message over the bound (its generation; 0: none).
#[derive(Debug, Default)]
pub(crate) struct Oversized(AtomicU64);

impl Oversized {
    pub(crate) fn happened_on(&self, generation: u64) -> bool {
        generation != 0 && self.0.load(Ordering::Acquire) == generation
    }
}

/// A reader that ends (EOF) instead of passing on a line longer than [`MAX_MESSAGE_BYTES`].
pub(crate) struct Bounded<R> {
    inner: R,
    /// Bytes of the current line passed on so far.
    line: usize,
    limit: usize,
    ended: bool,
    mark: Arc<Oversized>,
    generation: u64,
}

impl<R> Bounded<R> {
    pub(crate) fn new(inner: R, limit: usize, mark: Arc<Oversized>, generation: u64) -> Self {
        Self { inner, line: 0, limit, ended: false, mark, generation }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Bounded<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if self.ended {
            return Poll::Ready(Ok(()));
        }
        let start = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let mut line = this.line;
        for (i, byte) in buf.filled()[start..].iter().enumerate() {
            if *byte == b'\n' {
                line = 0;
                continue;
            }
            line += 1;
            if line > this.limit {
                // Pass on nothing of the line past the bound, and nothing after it.
                buf.set_filled(start + i);
                this.ended = true;
                this.mark.0.store(this.generation, Ordering::Release);
                tracing::warn!("an MCP server sent a message over {} bytes; closing its connection", this.limit);
                return Poll::Ready(Ok(()));
            }
        }
        this.line = line;
        Poll::Ready(Ok(()))
    }
}

/// The running server and the transport over its stdin and (bounded) stdout.
pub(crate) struct ChildTransport {
    child: Option<Box<dyn ChildWrapper>>,
    transport: AsyncRwTransport<RoleClient, Bounded<ChildStdout>, ChildStdin>,
}

impl ChildTransport {
    /// Starts `command` with piped stdin and stdout and `stderr` as given.
    pub(crate) fn spawn(
        mut command: CommandWrap,
        stderr: Stdio,
        mark: Arc<Oversized>,
        generation: u64,
    ) -> io::Result<Self> {
        command.command_mut().stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(stderr);
        let mut child = command.spawn()?;
        let stdin = child.stdin().take().ok_or_else(|| io::Error::other("no stdin pipe"))?;
        let stdout = child.stdout().take().ok_or_else(|| io::Error::other("no stdout pipe"))?;
        let stdout = Bounded::new(stdout, MAX_MESSAGE_BYTES, mark, generation);
        let transport = AsyncRwTransport::new(stdout, stdin);
        Ok(Self { child: Some(child), transport })
    }

    async fn stop(&mut self) -> io::Result<()> {
        let result = self.transport.close().await;
        let Some(child) = self.child.as_mut() else { return result };
        if !exited_within(child, EXIT_WAIT).await {
            let _ = child.signal(nix::sys::signal::Signal::SIGTERM as i32);
            if !exited_within(child, EXIT_WAIT).await {
                Box::into_pin(child.kill()).await?;
            }
        }
        self.child = None;
        result
    }
}

async fn exited_within(child: &mut Box<dyn ChildWrapper>, wait: Duration) -> bool {
    matches!(tokio::time::timeout(wait, child.wait()).await, Ok(Ok(_)))
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            tokio::spawn(async move {
                if let Err(e) = Box::into_pin(child.kill()).await {
                    tracing::warn!("cannot kill an MCP server: {e}");
                }
            });
        }
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.stop()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn a_line_past_the_bound_ends_the_stream_and_marks_the_connection() {
        let mark = Arc::new(Oversized::default());
        let input: &[u8] = b"short\n0123456789abc\nafter\n";
        let mut reader = Bounded::new(input, 8, mark.clone(), 7);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"short\n01234567");
        assert!(mark.happened_on(7));
        assert!(!mark.happened_on(8));

        let fine = Arc::new(Oversized::default());
        let mut reader = Bounded::new(&b"12345678\n12345678\n"[..], 8, fine.clone(), 1);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"12345678\n12345678\n");
        assert!(!fine.happened_on(1));
    }
}
