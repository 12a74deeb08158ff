//! The `web_search` tool: a query sent to a search API the user has a key for — Brave Search
//! (`BRAVE_API_KEY`) or Tavily (`TAVILY_API_KEY`) — with rho's HTTP client, and the results as a
//! numbered list (title, URL, snippet), narrowed to `allowed_domains` and without
//! `blocked_domains`. Off when the sandbox keeps the network closed.

use std::time::Duration;

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Value, json};

use crate::ToolOptions;
use crate::abort::abortable;
use crate::args::Args;
use crate::params::{self, Parameters, WebSearchParams};

const DESCRIPTION: &str = "Search the web and return the results: each one's title, URL and a snippet. allowed_domains keeps only results from those sites; blocked_domains leaves theirs out. Fetch a result with web_fetch to read it.";

/// The whole request.
const TIMEOUT: Duration = Duration::from_secs(30);
/// How many results are asked for.
const COUNT: u32 = 10;

/// A search API and the key for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchApi {
    Brave { key: String, base_url: String },
    Tavily { key: String, base_url: String },
}

impl SearchApi {
    /// The API named by `provider` (`brave` or `tavily`; `None`: the first with a key), its key
    /// from the environment; `base_url` replaces the API's address.
    pub fn from_env(provider: Option<&str>, base_url: Option<&str>) -> Option<SearchApi> {
        let key = |var: &str| std::env::var(var).ok().filter(|k| !k.trim().is_empty());
        let brave = || {
            let base_url = base_url.unwrap_or("https://api.search.brave.com").to_owned();
            key("BRAVE_API_KEY").map(|key| SearchApi::Brave { key, base_url })
        };
        let tavily = || {
            let base_url = base_url.unwrap_or("https://api.tavily.com").to_owned();
            key("TAVILY_API_KEY").map(|key| SearchApi::Tavily { key, base_url })
        };
        match provider {
            Some("brave") => brave(),
            Some("tavily") => tavily(),
            _ => brave().or_else(tavily),
        }
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hit {
    title: String,
    url: String,
    snippet: String,
}

pub struct WebSearchTool {
    options: ToolOptions,
    api: SearchApi,
}

impl WebSearchTool {
    pub fn new(options: ToolOptions, api: SearchApi) -> Self {
        Self { options, api }
    }
}

impl Tool for WebSearchTool {
    fn name(&self) -> &str {
        "web_search"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        WebSearchParams::schema()
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let WebSearchParams { query, allowed_domains, blocked_domains } = params::parse(&args)?;
            if query.trim().is_empty() {
                return Err(ToolError::new("The query is empty"));
            }
            if let Some(sandbox) = &self.options.sandbox
                && !sandbox.policy().network
            {
                return Err(ToolError::new(format!(
                    "The {} sandbox keeps the network closed: nothing was searched (sandbox.network: true opens it)",
                    sandbox.policy().mode
                )));
            }
            let hits = abortable(&ctx.cancel, search(&self.api, &query)).await?;
            let (allowed, blocked) = (allowed_domains.unwrap_or_default(), blocked_domains.unwrap_or_default());
            let hits: Vec<Hit> = hits
                .into_iter()
                .filter(|hit| {
                    let host = host_of(&hit.url);
                    (allowed.is_empty() || allowed.iter().any(|d| under(&host, d)))
                        && !blocked.iter().any(|d| under(&host, d))
                })
                .collect();
            let mut text = format!("Search results for \"{query}\":\n");
            if hits.is_empty() {
                text.push_str("\nNo results.");
            }
            for (n, hit) in hits.iter().enumerate() {
                text.push_str(&format!("\n{}. {}\n   {}\n", n + 1, hit.title, hit.url));
                if !hit.snippet.is_empty() {
                    text.push_str(&format!("   {}\n", hit.snippet));
                }
            }
            let results: Vec<Value> = hits.iter().map(|h| json!({"title": h.title, "url": h.url})).collect();
            Ok(AgentToolResult::text(text.trim_end().to_owned()).with_details(json!({"results": results})))
        })
    }
}

/// The results of `query`.
async fn search(api: &SearchApi, query: &str) -> Result<Vec<Hit>, ToolError> {
    let client = rho_ai::http::client(|b| b.timeout(TIMEOUT).user_agent(concat!("rho/", env!("CARGO_PKG_VERSION"))))
        .map_err(ToolError::new)?;
    let (request, name) = match api {
        SearchApi::Brave { key, base_url } => {
            let endpoint = format!("{}/res/v1/web/search", base_url.trim_end_matches('/'));
            let url = reqwest::Url::parse_with_params(&endpoint, [("q", query), ("count", &COUNT.to_string())])
                .map_err(|e| ToolError::new(format!("Brave Search's address {endpoint} is not a URL: {e}")))?;
            let request =
                client.get(url).header("X-Subscription-Token", key).header(reqwest::header::ACCEPT, "application/json");
            (request, "Brave Search")
        }
        SearchApi::Tavily { key, base_url } => {
            let request = client
                .post(format!("{}/search", base_url.trim_end_matches('/')))
                .bearer_auth(key)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(json!({"query": query, "max_results": COUNT}).to_string());
            (request, "Tavily")
        }
    };
    let response = request.send().await.map_err(|e| ToolError::new(format!("{name} could not be reached: {e}")))?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|e| ToolError::new(format!("{name}'s answer was cut off: {e}")))?;
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if !status.is_success() {
        let said = body.get("message").or_else(|| body.get("detail")).or_else(|| body.get("error"));
        let said = said.map(|m| m.to_string()).unwrap_or_default();
        return Err(ToolError::new(format!("{name} answered {status} {said}").trim_end().to_owned()));
    }
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().trim().to_owned();
    let hits = match api {
        SearchApi::Brave { .. } => body.pointer("/web/results"),
        SearchApi::Tavily { .. } => body.get("results"),
    };
    let snippet_key = if matches!(api, SearchApi::Brave { .. }) { "description" } else { "content" };
    Ok(hits
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|hit| Hit { title: text(hit, "title"), url: text(hit, "url"), snippet: plain(&text(hit, snippet_key)) })
        .filter(|hit| !hit.url.is_empty())
        .collect())
}

/// A snippet without the markup search APIs put in it (`<strong>`), on one line.
fn plain(snippet: &str) -> String {
    let mut out = String::with_capacity(snippet.len());
    let mut in_tag = false;
    for c in snippet.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if in_tag => {}
            c if c.is_whitespace() => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            c => out.push(c),
        }
    }
    out.trim().to_owned()
}

/// A URL's host, lower-case.
fn host_of(url: &str) -> String {
    reqwest::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_ascii_lowercase)).unwrap_or_default()
}

/// Whether `host` is `domain` or under it.
fn under(host: &str, domain: &str) -> bool {
    let domain = domain.trim().trim_start_matches("*.").to_ascii_lowercase();
    !domain.is_empty() && (host == domain || host.ends_with(&format!(".{domain}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_and_snippets_read_as_meant() {
        assert!(under("docs.rs", "docs.rs") && under("www.docs.rs", "docs.rs") && !under("notdocs.rs", "docs.rs"));
        assert!(under("a.example.com", "*.example.com"));
        assert_eq!(plain("The <strong>Rust</strong>\n book"), "The Rust book");
    }
}
