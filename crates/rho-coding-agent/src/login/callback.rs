//! The loopback callback of a login: a one-route HTTP listener on `127.0.0.1` that the
//! provider's page redirects the browser to with `?code=…&state=…` (or `?code=…` alone for a
//! provider that sends no state, whose route is a random path instead). Only the request line
//! is read; every request gets a small HTML page back, and the first one carrying a code with
//! the expected state ends the wait.

use std::time::Duration;

use rho_ai::oauth::answer::{CodeAndState, parse_callback_at};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The longest request head read.
const MAX_HEAD: usize = 16 * 1024;

/// Waits on `listener` for a callback to `path` with `expected_state` (`None`: the provider
/// sends none); returns what it carried (its code always there).
pub async fn wait_for_code(
    listener: TcpListener,
    path: String,
    expected_state: Option<String>,
    provider: &'static str,
) -> CodeAndState {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let head = match tokio::time::timeout(Duration::from_secs(10), read_head(&mut stream)).await {
            Ok(Some(head)) => head,
            _ => continue,
        };
        let target = head.split_whitespace().nth(1).unwrap_or_default().to_owned();
        let (status, message, code) = match parse_callback_at(&target, &path) {
            None => ("404 Not Found", "This is not the login callback.".to_owned(), None),
            Some(answer @ CodeAndState { code: Some(_), .. }) if answer.state == expected_state => (
                "200 OK",
                format!("{provider} login complete: you can close this window and go back to rho."),
                Some(answer),
            ),
            Some(CodeAndState { state: Some(_), code: Some(_), .. }) => {
                ("400 Bad Request", "The login's state does not match: start again with rho login.".to_owned(), None)
            }
            Some(_) => ("400 Bad Request", "The callback has no code or no state.".to_owned(), None),
        };
        let body = format!("<!doctype html><html><body><p>{message}</p></body></html>");
        let reply = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
        if let Some(code) = code {
            return code;
        }
    }
}

/// The request head (up to the blank line), or `None` when the peer sends none.
async fn read_head(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(head).ok()
}
