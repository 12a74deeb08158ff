//! The HTTP client an MCP server over streamable HTTP is reached with: rho's own (its TLS, from
//! `rho_ai::http`), set up as MCP's transport needs it.
//!
//! - No idle connection is kept for reuse: a response the transport did not read to its end
//!   would otherwise hold a pooled connection, and Linux's delayed ACK stalls the next request
//!   on it by some 40 ms.
//! - A redirect is followed only when it keeps the request whole and stays with the server: a
//!   307 or 308 (a 301, 302 or 303 turns the POST of a message into a GET without it) to the same
//!   origin (another one would be sent the session id and the configured headers, credentials
//!   among them). Any other redirect is answered to the transport as it came, and a chain
//!   longer than [`MAX_REDIRECTS`] is an error.

use reqwest::StatusCode;
use reqwest::redirect::{Attempt, Policy};

/// How many redirects one request may follow.
const MAX_REDIRECTS: usize = 10;

/// The client for one server's streamable HTTP transport, or why it could not be built.
pub(crate) fn client() -> Result<reqwest::Client, String> {
    rho_ai::http::client(|builder| builder.pool_max_idle_per_host(0).redirect(Policy::custom(follow)))
}

fn follow(attempt: Attempt<'_>) -> reqwest::redirect::Action {
    let keeps_body = matches!(attempt.status(), StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT);
    let started_at = attempt.previous().first().map(|url| url.origin());
    if !keeps_body || started_at != Some(attempt.url().origin()) {
        return attempt.stop();
    }
    if attempt.previous().len() > MAX_REDIRECTS {
        return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
    }
    // The path only: the origin is the same, and a query may carry a key.
    tracing::debug!(status = %attempt.status(), to = attempt.url().path(), "following a redirect of the MCP server");
    attempt.follow()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::Router;
    use axum::http::{StatusCode, header::LOCATION};
    use axum::routing::post;
    use parking_lot::Mutex;

    use super::*;

    /// A server whose `/start` answers `status` with `Location: location`, whose `/moved`
    /// answers 200 with the body it was sent, and whose `/loop` redirects to itself. The
    /// paths it was asked for are recorded.
    async fn serve(status: StatusCode, location: String) -> (String, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = |path: &'static str, seen: &Arc<Mutex<Vec<String>>>| {
            let seen = Arc::clone(seen);
            move || seen.lock().push(path.to_owned())
        };
        let (start, moved, again) = (record("/start", &seen), record("/moved", &seen), record("/loop", &seen));
        let app = Router::new()
            .route(
                "/start",
                post(move || async move {
                    start();
                    (status, [(LOCATION, location)])
                }),
            )
            .route(
                "/moved",
                post(move |body: String| async move {
                    moved();
                    body
                }),
            )
            .route(
                "/loop",
                post(move || async move {
                    again();
                    (StatusCode::TEMPORARY_REDIRECT, [(LOCATION, "/loop")])
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (address, seen)
    }

    async fn send(url: &str) -> Result<(StatusCode, String), reqwest::Error> {
        let response = client().unwrap().post(url).body("the message").send().await?;
        let status = StatusCode::from_u16(response.status().as_u16()).unwrap();
        Ok((status, response.text().await?))
    }

    #[tokio::test]
    async fn a_redirect_that_keeps_the_message_and_the_server_is_followed() {
        for status in [StatusCode::TEMPORARY_REDIRECT, StatusCode::PERMANENT_REDIRECT] {
            let (address, seen) = serve(status, "/moved".into()).await;
            let answer = send(&format!("{address}/start")).await.unwrap();
            assert_eq!(answer, (StatusCode::OK, "the message".to_owned()), "{status}");
            assert_eq!(*seen.lock(), ["/start", "/moved"], "{status}");
        }
    }

    #[tokio::test]
    async fn a_redirect_that_would_lose_the_message_is_answered_as_it_came() {
        for status in [StatusCode::MOVED_PERMANENTLY, StatusCode::FOUND, StatusCode::SEE_OTHER] {
            let (address, seen) = serve(status, "/moved".into()).await;
            let (answered, _) = send(&format!("{address}/start")).await.unwrap();
            assert_eq!(answered, status);
            assert_eq!(*seen.lock(), ["/start"], "{status}");
        }
    }

    #[tokio::test]
    async fn a_redirect_to_another_server_is_answered_as_it_came() {
        let (elsewhere, seen_elsewhere) = serve(StatusCode::OK, String::new()).await;
        let (address, seen) = serve(StatusCode::TEMPORARY_REDIRECT, format!("{elsewhere}/moved")).await;
        let (answered, _) = send(&format!("{address}/start")).await.unwrap();
        assert_eq!(answered, StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(*seen.lock(), ["/start"]);
        assert!(seen_elsewhere.lock().is_empty());
    }

    #[tokio::test]
    async fn a_chain_of_redirects_ends_in_an_error() {
        let (address, seen) = serve(StatusCode::OK, String::new()).await;
        let error = send(&format!("{address}/loop")).await.unwrap_err();
        assert!(error.is_redirect(), "{error}");
        assert_eq!(seen.lock().len(), MAX_REDIRECTS + 1);
    }
}
