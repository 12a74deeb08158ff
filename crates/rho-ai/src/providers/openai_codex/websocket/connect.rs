//! One websocket to the Codex backend: the TCP connection (or a tunnel through the proxy the
//! environment names, [`proxy`]), TLS for `wss://` (rho's, as its HTTP client's), the handshake
//! with the request's headers, and the server's messages read as the payloads of Responses
//! events.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use futures::{FutureExt, SinkExt, StreamExt};
use reqwest::header::HeaderMap;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::ClientConfig;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_util::sync::CancellationToken;

use super::proxy;
use crate::error::ProviderError;
use crate::sse::{EventSource, Interrupted};

/// How long the TCP connection, TLS and the handshake together may take (the HTTP client's
/// connect timeout).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The close code a server uses for a message too large to take.
const MESSAGE_TOO_BIG: u16 = 1009;

/// A byte stream the websocket runs over: plain TCP or TLS.
pub(crate) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

pub(crate) type Socket = WebSocketStream<Box<dyn Io>>;

/// Opens a websocket to `url` (`ws://` or `wss://`) with `headers` on the handshake. Fails with
/// a connection error (a refused upgrade included), or as cancelled.
pub(crate) async fn connect(url: &str, headers: HeaderMap, cancel: &CancellationToken) -> Result<Socket, Interrupted> {
    let open = async {
        let mut request =
            url.into_client_request().map_err(|e| ProviderError::Connection(format!("WebSocket: {e}")))?;
        request.headers_mut().extend(headers);
        let uri = request.uri().clone();
        let secure = uri.scheme_str() == Some("wss");
        let (host, port) = host_and_port(&uri, secure);
        let config = TLS.as_ref().map_err(|e| ProviderError::Connection(format!("WebSocket TLS: {e}")))?;
        let road = match proxy::for_host(secure, &host, port) {
            Some(proxy) => proxy::tunnel(&proxy, &host, port, config).await?,
            None => tcp(&host, port)
                .await
                .map_err(|e| ProviderError::Connection(format!("cannot connect to {url}: {e}")))?,
        };
        let stream = if secure {
            over_tls(config, &host, road)
                .await
                .map_err(|e| ProviderError::Connection(format!("WebSocket TLS with {host}: {e}")))?
        } else {
            road
        };
        let (socket, _response) = tokio_tungstenite::client_async(request, stream).await.map_err(handshake_error)?;
        Ok::<_, ProviderError>(socket)
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Interrupted::Cancelled),
        opened = tokio::time::timeout(CONNECT_TIMEOUT, open) => match opened {
            Ok(result) => result.map_err(Interrupted::from),
            Err(_) => Err(ProviderError::Connection(format!("WebSocket to {url}: no answer in 30 s")).into()),
        },
    }
}

/// The host (an IPv6 address without its brackets) and port `uri` names; the port by default
/// 443 when `secure`, else 80.
pub(super) fn host_and_port(uri: &http::Uri, secure: bool) -> (String, u16) {
    let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned();
    (host, uri.port_u16().unwrap_or(if secure { 443 } else { 80 }))
}

/// A TCP connection to `host:port`, without Nagle's delay.
pub(super) async fn tcp(host: &str, port: u16) -> std::io::Result<Box<dyn Io>> {
    let tcp = TcpStream::connect((host, port)).await?;
    let _ = tcp.set_nodelay(true);
    Ok(Box::new(tcp))
}

/// `stream` with TLS to `host` over it, as `config` sets it up.
pub(super) async fn over_tls(
    config: &Arc<ClientConfig>,
    host: &str,
    stream: Box<dyn Io>,
) -> Result<Box<dyn Io>, String> {
    let name = ServerName::try_from(host.to_owned()).map_err(|e| format!("not a server name: {e}"))?;
    let tls = TlsConnector::from(Arc::clone(config)).connect(name, stream).await.map_err(|e| e.to_string())?;
    Ok(Box::new(tls))
}

/// The TLS set-up every websocket shares: rho's (`crate::http`), offering HTTP/1.1 only, for a
/// websocket upgrade is an HTTP/1.1 request.
static TLS: LazyLock<Result<Arc<ClientConfig>, String>> =
    LazyLock::new(|| crate::http::tls(&[b"http/1.1"]).map(Arc::new).map_err(|e| e.to_string()));

fn handshake_error(e: tungstenite::Error) -> ProviderError {
    match e {
        tungstenite::Error::Http(response) => {
            let status = response.status();
            let body = response.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default();
            let detail = crate::sse::error_message_from_body(&body);
            ProviderError::Connection(format!("WebSocket upgrade refused: {status} {detail}").trim_end().to_owned())
        }
        other => ProviderError::Connection(format!("WebSocket: {other}")),
    }
}

/// Sends one request (`response.create`) as a text message.
pub(crate) async fn send(socket: &mut Socket, text: String, cancel: &CancellationToken) -> Result<(), Interrupted> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Interrupted::Cancelled),
        sent = socket.send(Message::text(text)) => {
            sent.map_err(|e| ProviderError::Connection(format!("WebSocket: {e}")).into())
        }
    }
}

/// Whether an idle socket can carry another request: nothing but pings arrived while it
/// waited (a close, an error or the end of the connection would have).
pub(crate) fn still_open(socket: &mut Socket) -> bool {
    loop {
        match socket.next().now_or_never() {
            None => return true,
            Some(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            Some(_) => return false,
        }
    }
}

/// Closes `socket` as done, without waiting for the server's answer.
pub(crate) fn close(mut socket: Socket, reason: &'static str) {
    tokio::spawn(async move {
        let frame = CloseFrame { code: CloseCode::Normal, reason: reason.into() };
        let _ = tokio::time::timeout(Duration::from_secs(2), socket.close(Some(frame))).await;
    });
}

/// The server's messages, each the JSON of one Responses event, read until the caller has what
/// it needs. Remembers whether any arrived and whether the connection (not the server's answer)
/// failed: a websocket that fails before its first event gives way to the event stream.
pub(crate) struct Replies<'a> {
    socket: &'a mut Socket,
    idle: Duration,
    pub(crate) started: bool,
    pub(crate) broke: bool,
}

impl<'a> Replies<'a> {
    pub(crate) fn new(socket: &'a mut Socket, idle: Duration) -> Self {
        Self { socket, idle, started: false, broke: false }
    }

    fn broken(&mut self, error: ProviderError) -> Result<Option<String>, Interrupted> {
        self.broke = true;
        Err(error.into())
    }
}

impl EventSource for Replies<'_> {
    async fn next_payload(&mut self, cancel: &CancellationToken) -> Result<Option<String>, Interrupted> {
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Interrupted::Cancelled),
                next = tokio::time::timeout(self.idle, self.socket.next()) => next,
            };
            let message = match next {
                Err(_) => return self.broken(ProviderError::Idle(self.idle.as_millis() as u64)),
                Ok(None) => return self.broken(ProviderError::Connection("WebSocket closed".into())),
                Ok(Some(Err(e))) => return self.broken(ProviderError::Connection(format!("WebSocket: {e}"))),
                Ok(Some(Ok(message))) => message,
            };
            match message {
                Message::Text(text) => {
                    self.started = true;
                    return Ok(Some(text.as_str().to_owned()));
                }
                Message::Binary(bytes) => {
                    self.started = true;
                    return match String::from_utf8(bytes.to_vec()) {
                        Ok(text) => Ok(Some(text)),
                        Err(_) => Err(ProviderError::Decode("Codex websocket message is not UTF-8".into()).into()),
                    };
                }
                Message::Close(frame) => return self.broken(ProviderError::Connection(closed(frame.as_ref()))),
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
    }
}

/// `WebSocket closed <code> <reason>`, as the reference words a close.
fn closed(frame: Option<&CloseFrame>) -> String {
    let Some(frame) = frame else { return "WebSocket closed".into() };
    let code = u16::from(frame.code);
    let reason = match frame.reason.as_str() {
        "" if code == MESSAGE_TOO_BIG => "message too big",
        reason => reason,
    };
    format!("WebSocket closed {code} {reason}").trim_end().to_owned()
}
