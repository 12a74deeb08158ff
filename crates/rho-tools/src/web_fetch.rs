//! The `web_fetch` tool: one http(s) URL fetched with rho's HTTP client (its TLS roots, proxies
//! and certificates), at most [`MAX_BODY_BYTES`] read; an HTML page comes back as readable text
//! with its links, other text as it is, anything else refused. The output stops at 2000 lines or
//! 50KB, as `read`'s does. Off when the sandbox keeps the network closed.

use std::time::Duration;

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::Value;

use crate::ToolOptions;
use crate::abort::abortable;
use crate::args::Args;
use crate::params::{self, Parameters, WebFetchParams};
use crate::truncate::{TruncationOptions, format_size, truncate_head};

const DESCRIPTION: &str = "Fetch a web page or other text over http or https. HTML is returned as readable text with its links; JSON, plain text and other text as they are. Output is truncated to 2000 lines or 50KB; binary content is refused.";

/// The most of a response body read; the rest is left unread.
const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;
/// The whole request, redirects included.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The width HTML is laid out at.
const TEXT_WIDTH: usize = 100;

pub struct WebFetchTool {
    options: ToolOptions,
}

impl WebFetchTool {
    pub fn new(options: ToolOptions) -> Self {
        Self { options }
    }
}

impl Tool for WebFetchTool {
    fn name(&self) -> &str {
        "web_fetch"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        WebFetchParams::schema()
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let WebFetchParams { url } = params::parse(&args)?;
            if let Some(sandbox) = &self.options.sandbox
                && !sandbox.policy().network
            {
                return Err(ToolError::new(format!(
                    "The {} sandbox keeps the network closed: {url} was not fetched (sandbox.network: true opens it)",
                    sandbox.policy().mode
                )));
            }
            let parsed = reqwest::Url::parse(&url).map_err(|e| ToolError::new(format!("Not a URL: {url} ({e})")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(ToolError::new(format!("Only http and https URLs are fetched, not {}:", parsed.scheme())));
            }
            abortable(&ctx.cancel, fetch(parsed)).await
        })
    }
}

async fn fetch(url: reqwest::Url) -> Result<AgentToolResult, ToolError> {
    let client = rho_ai::http::client(|builder| {
        builder
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::limited(5))
            .user_agent(concat!("rho/", env!("CARGO_PKG_VERSION")))
    })
    .map_err(ToolError::new)?;
    let shown = redacted(&url);
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "text/html, text/plain, application/json, */*;q=0.5")
        .send()
        .await
        .map_err(|e| ToolError::new(format!("Fetching {shown} failed: {}", without_url(&e))))?;
    let status = response.status();
    let final_url = redacted(response.url());
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mut body = Vec::new();
    let mut cut = false;
    while let Some(chunk) =
        response.chunk().await.map_err(|e| ToolError::new(format!("Reading {shown} failed: {}", without_url(&e))))?
    {
        let room = MAX_BODY_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if chunk.len() > room {
            cut = true;
            break;
        }
    }
    let text = as_text(&content_type, &body).ok_or_else(|| {
        ToolError::new(format!("{final_url} is not text ({content_type}, {}): not shown", format_size(body.len())))
    })?;
    let mut header = format!("URL: {final_url}\nStatus: {status}\n");
    if cut {
        header.push_str(&format!("(only the first {} of the body were read)\n", format_size(MAX_BODY_BYTES)));
    }
    let truncation = truncate_head(&text, TruncationOptions::default());
    let mut output = format!("{header}\n{}", truncation.content);
    if truncation.truncated {
        output.push_str(&format!(
            "\n\n[Showing {} of {} lines ({} of {}).]",
            truncation.output_lines,
            truncation.total_lines,
            format_size(truncation.output_bytes),
            format_size(truncation.total_bytes)
        ));
    }
    if !status.is_success() {
        return Err(ToolError::new(output));
    }
    Ok(AgentToolResult::text(output))
}

/// The body as text: HTML laid out with its links, other text as it is; `None` for content
/// that is not text.
fn as_text(content_type: &str, body: &[u8]) -> Option<String> {
    let media = content_type.split(';').next().unwrap_or_default().trim();
    let html = matches!(media, "text/html" | "application/xhtml+xml")
        || (media.is_empty()
            && body
                .iter()
                .take(512)
                .copied()
                .collect::<Vec<u8>>()
                .to_ascii_lowercase()
                .windows(5)
                .any(|w| w == b"<html"));
    if html {
        return html2text::from_read(body, TEXT_WIDTH).ok();
    }
    let textual = media.starts_with("text/")
        || matches!(media, "application/json" | "application/xml" | "application/javascript")
        || media.ends_with("+json")
        || media.ends_with("+xml")
        || (media.is_empty() && std::str::from_utf8(body).is_ok());
    textual.then(|| String::from_utf8_lossy(body).into_owned())
}

/// The URL without its user-info and query (where tokens travel).
fn redacted(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    if shown.query().is_some() {
        shown.set_query(Some("***"));
    }
    shown.to_string()
}

/// reqwest's error without the URL it repeats (the caller names the URL, redacted).
fn without_url(error: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut deepest = None;
    while let Some(cause) = source {
        deepest = Some(cause.to_string());
        source = cause.source();
    }
    match deepest {
        Some(cause) => cause,
        None if error.is_timeout() => "timed out".to_owned(),
        None => "the request failed".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_text_with_links_and_other_text_stays() {
        let page =
            b"<html><body><h1>Title</h1><p>Read <a href=\"https://example.com/doc\">the doc</a>.</p></body></html>";
        let text = as_text("text/html; charset=utf-8", page).unwrap();
        assert!(
            text.contains("Title") && text.contains("the doc") && text.contains("https://example.com/doc"),
            "{text}"
        );
        assert_eq!(as_text("application/json", b"{\"a\": 1}").unwrap(), "{\"a\": 1}");
        assert!(as_text("image/png", b"\x89PNG\r\n").is_none());
        let url = reqwest::Url::parse("https://user:pw@example.com/a?token=secret").unwrap();
        assert_eq!(redacted(&url), "https://example.com/a?***");
    }
}
