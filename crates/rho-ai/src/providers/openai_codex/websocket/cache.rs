//! A session's websocket, kept open between its requests as the reference keeps it: reused
//! when idle and still open, closed after five idle minutes, and never shared by two requests
//! at once (a second concurrent request opens a socket of its own, closed after it). A session
//! whose websocket failed once uses the event stream from then on.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;
use std::time::Duration;

use parking_lot::Mutex;
use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use super::connect::{self, Socket};
use super::continuation::Continuation;
use crate::sse::Interrupted;

/// How long a session's idle websocket stays open.
const IDLE_TTL: Duration = Duration::from_secs(5 * 60);

/// A session's websocket: `idle` while no request uses it, `None` while one does.
#[derive(Default)]
struct Entry {
    idle: Option<Socket>,
    /// What the connection's last response leaves on the server to continue from.
    continuation: Option<Continuation>,
    /// Counts the times the socket was put back, so a stale expiry leaves a newer one alone.
    generation: u64,
}

static SOCKETS: LazyLock<Mutex<HashMap<String, Entry>>> = LazyLock::new(Mutex::default);
static SSE_ONLY: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);

/// Whether `session`'s websocket failed before (its requests go over the event stream).
pub(crate) fn sse_only(session: Option<&str>) -> bool {
    session.is_some_and(|id| SSE_ONLY.lock().contains(id))
}

/// Sends `session`'s later requests over the event stream.
pub(crate) fn record_failure(session: Option<&str>) {
    if let Some(id) = session {
        SSE_ONLY.lock().insert(id.to_owned());
    }
}

/// A socket lent to one request.
pub(crate) struct Lease {
    pub(crate) socket: Socket,
    /// Whether it carried a request before.
    pub(crate) reused: bool,
    /// The session whose cached socket this is; `None` for a socket used once.
    session: Option<String>,
    pub(crate) continuation: Option<Continuation>,
}

impl Lease {
    /// Whether the socket is the session's own, kept for its next request.
    pub(crate) fn is_cached(&self) -> bool {
        self.session.is_some()
    }
}

enum Found {
    /// The session's idle socket, what it can continue from, and whether it is still open.
    Idle(Box<Socket>, Option<Continuation>, bool),
    Busy,
    Nothing,
}

/// The session's idle socket when it is still open, else a new one (cached for the session
/// unless another request holds the session's).
pub(crate) async fn acquire(
    session: Option<&str>,
    url: &str,
    headers: HeaderMap,
    cancel: &CancellationToken,
) -> Result<Lease, Interrupted> {
    let Some(id) = session else {
        let socket = connect::connect(url, headers, cancel).await?;
        return Ok(Lease { socket, reused: false, session: None, continuation: None });
    };
    let found = {
        let mut sockets = SOCKETS.lock();
        match sockets.get_mut(id) {
            Some(entry) => match entry.idle.take() {
                Some(mut socket) => {
                    let open = connect::still_open(&mut socket);
                    Found::Idle(Box::new(socket), entry.continuation.take().filter(|_| open), open)
                }
                None => Found::Busy,
            },
            None => {
                sockets.insert(id.to_owned(), Entry::default());
                Found::Nothing
            }
        }
    };
    match found {
        Found::Idle(socket, continuation, true) => {
            Ok(Lease { socket: *socket, reused: true, session: Some(id.to_owned()), continuation })
        }
        Found::Busy => {
            let socket = connect::connect(url, headers, cancel).await?;
            Ok(Lease { socket, reused: false, session: None, continuation: None })
        }
        // Closed while idle, or none yet: a new connection, with nothing to continue from
        // (what the server keeps belongs to the connection).
        Found::Idle(_, _, false) | Found::Nothing => match connect::connect(url, headers, cancel).await {
            Ok(socket) => Ok(Lease { socket, reused: false, session: Some(id.to_owned()), continuation: None }),
            Err(e) => {
                SOCKETS.lock().remove(id);
                Err(e)
            }
        },
    }
}

/// Gives the socket back after its request: kept for the session's next request with what it
/// can continue from when `keep`, else closed.
pub(crate) fn release(lease: Lease, keep: bool, continuation: Option<Continuation>) {
    let Lease { socket, session, .. } = lease;
    let Some(id) = session else {
        connect::close(socket, "done");
        return;
    };
    if !keep {
        SOCKETS.lock().remove(&id);
        connect::close(socket, "done");
        return;
    }
    let generation = {
        let mut sockets = SOCKETS.lock();
        let entry = sockets.entry(id.clone()).or_default();
        entry.idle = Some(socket);
        entry.continuation = continuation;
        entry.generation += 1;
        entry.generation
    };
    tokio::spawn(async move {
        tokio::time::sleep(IDLE_TTL).await;
        let expired = {
            let mut sockets = SOCKETS.lock();
            let stale = sockets.get(&id).is_some_and(|e| e.generation == generation && e.idle.is_some());
            if stale { sockets.remove(&id).and_then(|e| e.idle) } else { None }
        };
        if let Some(socket) = expired {
            connect::close(socket, "idle_timeout");
        }
    });
}
