//! GitHub Copilot's models, as pi 0.73 reaches them: each speaks one of the APIs rho has (Chat
//! Completions, Responses, Anthropic Messages) at the address the Copilot token names (its
//! `proxy-ep`, `proxy.` becoming `api.`; else `copilot-api.<enterprise domain>`, else the
//! individual plan's), with the token as Bearer and, per request, who started it
//! (`X-Initiator: user` when the last message is the user's, else `agent`), `Openai-Intent:
//! conversation-edits`, and `Copilot-Vision-Request: true` when an image is sent. The editor's
//! identity headers come with the catalogue's models. `RHO_COPILOT_BASE_URL` moves the API
//! (tests and proxies).

use std::borrow::Cow;

use crate::model::Model;
use crate::stream::StreamOptions;
use crate::types::{Context, Message, UserContent};

pub const PROVIDER: &str = "github-copilot";

/// The individual plan's API, when the token names none.
const DEFAULT_BASE_URL: &str = "https://api.individual.githubcopilot.com";

/// The variable that moves the API whatever the token names.
pub const BASE_URL_ENV: &str = "RHO_COPILOT_BASE_URL";

/// `model` and `options` as a Copilot request needs them; anything else as it is.
pub(super) fn adapt<'a>(
    model: &'a Model,
    context: &Context,
    options: &'a StreamOptions,
) -> (Cow<'a, Model>, Cow<'a, StreamOptions>) {
    if model.provider != PROVIDER {
        return (Cow::Borrowed(model), Cow::Borrowed(options));
    }
    let mut model = model.clone();
    // A Copilot token names its API; any other key keeps the model's base URL.
    let moved = std::env::var(BASE_URL_ENV).ok().filter(|u| !u.is_empty());
    let named = options.api_key.as_deref().filter(|t| t.contains("proxy-ep=")).map(|t| base_url(t, None));
    if let Some(url) = moved.or(named) {
        model.base_url = url;
    }
    let mut options = options.clone();
    let mut headers = vec![
        ("X-Initiator".to_owned(), initiator(context).to_owned()),
        ("Openai-Intent".to_owned(), "conversation-edits".to_owned()),
    ];
    if has_images(context) {
        headers.push(("Copilot-Vision-Request".to_owned(), "true".to_owned()));
    }
    // The caller's own headers still win.
    headers.append(&mut options.headers);
    options.headers = headers;
    (Cow::Owned(model), Cow::Owned(options))
}

/// The API requests with `token` go to: `RHO_COPILOT_BASE_URL` when set, else the token's.
pub fn api_base_url(token: &str) -> String {
    std::env::var(BASE_URL_ENV).ok().filter(|u| !u.is_empty()).unwrap_or_else(|| base_url(token, None))
}

/// The API the token is for: its `proxy-ep` with `proxy.` made `api.`; else the enterprise's;
/// else the individual plan's.
pub fn base_url(token: &str, enterprise_domain: Option<&str>) -> String {
    let proxy = token.split(';').find_map(|part| part.trim().strip_prefix("proxy-ep=")).filter(|h| !h.is_empty());
    match (proxy, enterprise_domain) {
        (Some(host), _) => {
            format!("https://{}", host.strip_prefix("proxy.").map_or(host.to_owned(), |rest| format!("api.{rest}")))
        }
        (None, Some(domain)) => format!("https://copilot-api.{domain}"),
        (None, None) => DEFAULT_BASE_URL.to_owned(),
    }
}

/// `user` when the user's message is the last, else `agent` (a turn after a tool's result).
fn initiator(context: &Context) -> &'static str {
    match context.messages.last() {
        Some(Message::User(_)) | None => "user",
        Some(_) => "agent",
    }
}

fn has_images(context: &Context) -> bool {
    context.messages.iter().any(|m| match m {
        Message::User(u) => u.content.blocks().iter().any(|b| matches!(b, UserContent::Image(_))),
        Message::ToolResult(r) => r.content.iter().any(|b| matches!(b, UserContent::Image(_))),
        Message::Assistant(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_comes_from_the_tokens_proxy_endpoint() {
        let token = "tid=1;exp=2;sku=free;proxy-ep=proxy.individual.githubcopilot.com;st=dotcom";
        assert_eq!(base_url(token, None), "https://api.individual.githubcopilot.com");
        assert_eq!(
            base_url("tid=1;proxy-ep=proxy.business.githubcopilot.com", None),
            "https://api.business.githubcopilot.com"
        );
        assert_eq!(base_url("tid=1", Some("acme.ghe.com")), "https://copilot-api.acme.ghe.com");
        assert_eq!(base_url("tid=1", None), DEFAULT_BASE_URL);
    }
}
