//! [`MockServer`]: binds a loopback port, serves the script with axum in a background task, and
//! stops when dropped (pending stalls end and open streams are cut).

use parking_lot::Mutex;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use axum::Router;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::handler::handle;
use crate::oauth::{IssuedTokens, OAuthGrants};
use crate::queue::TurnQueue;
use crate::record::{RecordedRequest, Recorder};
use crate::script::{Script, Turn};

/// What the request handler shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub queue: Mutex<TurnQueue>,
    pub recorder: Recorder,
    /// Requests received so far; the next request's number is this plus one.
    pub requests_seen: AtomicU64,
    /// Tool call ids generated so far.
    pub ids_made: AtomicU64,
    pub shutdown: watch::Receiver<bool>,
    pub oauth: Mutex<OAuthGrants>,
    /// Anthropic's message threads.
    pub threads: Mutex<crate::threads::Threads>,
}

/// How to start a server beyond the script.
#[derive(Debug, Clone, Default)]
pub struct MockOptions {
    /// Where to listen; `127.0.0.1:0` (any free port) when `None`.
    pub addr: Option<SocketAddr>,
    /// Append every request as a JSON line to this file.
    pub record: Option<PathBuf>,
}

/// A running scripted model server.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
}

impl MockServer {
    /// Binds 127.0.0.1:0 and starts serving in a tokio task; the server stops when dropped.
    pub async fn start(script: Script) -> std::io::Result<MockServer> {
        Self::start_with(script, MockOptions::default()).await
    }

    pub async fn start_on(addr: SocketAddr, script: Script) -> std::io::Result<MockServer> {
        let options = MockOptions { addr: Some(addr), record: None };
        Self::start_with(script, options).await
    }

    /// Like [`MockServer::start`], also appending every request as a JSON line to `path`.
    pub async fn start_with_record(script: Script, path: impl AsRef<Path>) -> std::io::Result<MockServer> {
        let options = MockOptions { addr: None, record: Some(path.as_ref().to_owned()) };
        Self::start_with(script, options).await
    }

    pub async fn start_with(script: Script, options: MockOptions) -> std::io::Result<MockServer> {
        let recorder = match &options.record {
            Some(path) => Recorder::with_file(path)?,
            None => Recorder::default(),
        };
        let addr = options.addr.unwrap_or_else(|| SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            queue: Mutex::new(TurnQueue::new(script.turns)),
            recorder,
            requests_seen: AtomicU64::new(0),
            ids_made: AtomicU64::new(0),
            shutdown: shutdown_rx.clone(),
            oauth: Mutex::default(),
            threads: Mutex::default(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        // Events are small and often paced: send each at once instead of waiting for an ACK.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let mut stop = shutdown_rx;
        let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
            let _ = stop.wait_for(|down| *down).await;
        });
        tokio::spawn(async move {
            if let Err(e) = serve.await {
                tracing::warn!("mock-llm: server stopped: {e}");
            }
        });
        tracing::debug!("mock-llm: listening on http://{addr}");
        Ok(MockServer { addr, shared, shutdown })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// "http://127.0.0.1:PORT" (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.recorder.all()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.requests().pop()
    }

    /// Appends turns to the running script.
    pub fn push_turns(&self, turns: Vec<Turn>) {
        self.queue().push(turns);
    }

    /// Makes the token endpoints accept `refresh_token` once, giving `issued`.
    pub fn accept_oauth_refresh(&self, refresh_token: &str, issued: IssuedTokens) {
        self.oauth().accept_refresh(refresh_token, issued);
    }

    /// Makes the token endpoints accept the authorization code `code` once, giving `issued`.
    pub fn accept_oauth_code(&self, code: &str, issued: IssuedTokens) {
        self.oauth().accept_code(code, issued);
    }

    /// The next GitHub device login (`/login/device/code`) gives `github_token` at its second
    /// poll of `/login/oauth/access_token`.
    pub fn accept_github_device(&self, github_token: &str) {
        self.oauth().accept_device(github_token);
    }

    /// The next standard device login (Kimi Code's `/api/oauth/device_authorization`, xAI's
    /// `/oauth2/device/code`) gives `issued` at its second poll of the token endpoint.
    pub fn accept_device_login(&self, issued: IssuedTokens) {
        self.oauth().accept_device_login(issued);
    }

    fn oauth(&self) -> parking_lot::MutexGuard<'_, OAuthGrants> {
        self.shared.oauth.lock()
    }

    /// How many turns are still unconsumed.
    /// Anthropic requests that name a `thread` are refused as by an endpoint that knows none.
    pub fn refuse_threads(&self) {
        self.shared.threads.lock().refused = true;
    }

    /// Every Anthropic message thread expires: a continuation is refused (`thread_not_found`).
    pub fn expire_threads(&self) {
        self.shared.threads.lock().forget();
    }

    pub fn remaining_turns(&self) -> usize {
        self.queue().len()
    }

    /// Stops accepting connections and cuts open streams; dropping the server does the same.
    pub fn shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    fn queue(&self) -> parking_lot::MutexGuard<'_, TurnQueue> {
        self.shared.queue.lock()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}
