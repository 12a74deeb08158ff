//! A websocket's way through the proxy the environment names, the one rho's HTTP requests take:
//! `HTTPS_PROXY` for `wss://`, `HTTP_PROXY` for `ws://`, `ALL_PROXY` for either, and none for a
//! host `NO_PROXY` lists (the variables read by the same code as the HTTP client's, hyper-util's
//! matcher). The proxy is asked for a tunnel with `CONNECT host:port`, with the proxy URL's
//! credentials as basic authorization; the websocket (after TLS, for `wss://`) runs inside it. A
//! proxy whose URL is `https://` is itself reached over rho's TLS.

use std::sync::Arc;

use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_rustls::rustls::ClientConfig;

use super::connect::{Io, host_and_port, over_tls, tcp};
use crate::error::ProviderError;

/// The most a proxy's answer to `CONNECT` may take, head and all.
const MAX_ANSWER: usize = 16 * 1024;

/// The proxy to reach `host:port` through, if the environment names one for it.
pub(super) fn for_host(secure: bool, host: &str, port: u16) -> Option<Intercept> {
    let scheme = if secure { "https" } else { "http" };
    let destination = format!("{scheme}://{}:{port}", authority_host(host)).parse::<http::Uri>().ok()?;
    Matcher::from_env().intercept(&destination)
}

/// `host` as it is written before a port: an IPv6 address in brackets.
fn authority_host(host: &str) -> String {
    if host.contains(':') { format!("[{host}]") } else { host.to_owned() }
}

/// A tunnel to `host:port` through `proxy`, over which the websocket is then opened; `tls` is
/// rho's set-up, for a proxy reached over `https://`.
pub(super) async fn tunnel(
    proxy: &Intercept,
    host: &str,
    port: u16,
    tls: &Arc<ClientConfig>,
) -> Result<Box<dyn Io>, ProviderError> {
    let uri = proxy.uri();
    let secure = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        other => {
            return Err(ProviderError::Connection(format!(
                "the proxy's scheme {} is not one the websocket can use (http or https); set \"transport\": \"sse\"",
                other.unwrap_or("(none)")
            )));
        }
    };
    let (proxy_host, proxy_port) = host_and_port(uri, secure);
    // Shown without the credentials the proxy's URL may hold.
    let shown = format!("{}://{}:{proxy_port}", if secure { "https" } else { "http" }, authority_host(&proxy_host));
    let tcp = tcp(&proxy_host, proxy_port)
        .await
        .map_err(|e| ProviderError::Connection(format!("cannot connect to the proxy {shown}: {e}")))?;
    let stream = if secure {
        over_tls(tls, &proxy_host, tcp)
            .await
            .map_err(|e| ProviderError::Connection(format!("TLS with the proxy {shown}: {e}")))?
    } else {
        tcp
    };
    let target = format!("{}:{port}", authority_host(host));
    let mut request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(auth) = proxy.basic_auth().and_then(|value| value.to_str().ok()) {
        request.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
    }
    request.push_str("\r\n");
    // Read through a buffer that stays with the stream: nothing the far end sends after the
    // answer's head is lost.
    let mut stream = BufReader::new(stream);
    let failed = |e: std::io::Error| ProviderError::Connection(format!("the proxy {shown}: {e}"));
    stream.write_all(request.as_bytes()).await.map_err(failed)?;
    stream.flush().await.map_err(failed)?;
    let status = read_answer(&mut stream).await.map_err(failed)?;
    match status {
        Some((code, _)) if (200..300).contains(&code) => Ok(Box::new(stream)),
        Some((_, line)) => {
            Err(ProviderError::Connection(format!("the proxy {shown} refused a tunnel to {target}: {line}")))
        }
        None => Err(ProviderError::Connection(format!("the proxy {shown} answered CONNECT with no HTTP status"))),
    }
}

/// Reads the head of the proxy's answer, at most [`MAX_ANSWER`] bytes of it; its status code
/// and status line, `None` when the first line is not an HTTP status line.
async fn read_answer(stream: &mut BufReader<Box<dyn Io>>) -> std::io::Result<Option<(u16, String)>> {
    let mut head = stream.take(MAX_ANSWER as u64);
    let mut status = None;
    let mut line = String::new();
    loop {
        line.clear();
        if head.read_line(&mut line).await? == 0 || !line.ends_with('\n') {
            let why = if head.limit() == 0 { "is too long" } else { "ended early" };
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("the answer to CONNECT {why}")));
        }
        let text = line.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            return Ok(status.flatten());
        }
        if status.is_none() {
            let mut words = text.split_whitespace();
            let code = match (words.next(), words.next()) {
                (Some(version), Some(code)) if version.starts_with("HTTP/") => code.parse().ok(),
                _ => None,
            };
            status = Some(code.map(|code| (code, text.to_owned())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The proxy's answer to `CONNECT` as `read_answer` reads it, then what is left on the stream.
    async fn answer(bytes: &[u8]) -> (std::io::Result<Option<(u16, String)>>, Vec<u8>) {
        let (near, mut far) = tokio::io::duplex(64 * 1024);
        far.write_all(bytes).await.unwrap();
        drop(far);
        let mut stream = BufReader::new(Box::new(near) as Box<dyn Io>);
        let status = read_answer(&mut stream).await;
        let mut rest = Vec::new();
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut rest).await;
        (status, rest)
    }

    #[tokio::test]
    async fn the_status_is_read_and_what_follows_the_head_stays_on_the_stream() {
        let (status, rest) = answer(b"HTTP/1.1 200 Connection established\r\nVia: p\r\n\r\n\x16\x03").await;
        assert_eq!(status.unwrap(), Some((200, "HTTP/1.1 200 Connection established".to_owned())));
        assert_eq!(rest, b"\x16\x03");
        let (status, _) = answer(b"HTTP/1.0 407 Proxy Authentication Required\n\n").await;
        assert_eq!(status.unwrap(), Some((407, "HTTP/1.0 407 Proxy Authentication Required".to_owned())));
    }

    #[tokio::test]
    async fn an_answer_that_is_not_http_is_none() {
        let (status, _) = answer(b"SSH-2.0-OpenSSH_9.6\r\n\r\n").await;
        assert_eq!(status.unwrap(), None);
    }

    #[tokio::test]
    async fn an_answer_cut_short_or_without_end_is_an_error() {
        let (status, _) = answer(b"HTTP/1.1 200 OK\r\n").await;
        assert_eq!(status.unwrap_err().to_string(), "the answer to CONNECT ended early");
        let endless = [b'x'; MAX_ANSWER + 10];
        let (status, _) = answer(&endless).await;
        assert_eq!(status.unwrap_err().to_string(), "the answer to CONNECT is too long");
    }

    #[test]
    fn an_ipv6_host_is_written_in_brackets() {
        assert_eq!(authority_host("::1"), "[::1]");
        assert_eq!(authority_host("chatgpt.com"), "chatgpt.com");
    }
}
