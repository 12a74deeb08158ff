//! Cloudflare's two providers as pi 0.73 serves them: their base URLs name the account (and the
//! AI Gateway) as `{CLOUDFLARE_ACCOUNT_ID}` / `{CLOUDFLARE_GATEWAY_ID}`, filled from the
//! environment when a request is made; the AI Gateway takes the key as `cf-aig-authorization`
//! instead of the provider's own authorization header.

use crate::model::Model;
use crate::stream::StreamOptions;

const GATEWAY: &str = "cloudflare-ai-gateway";

/// `model` with its base URL's `{NAME}` placeholders filled from `env`; the error names the
/// first one that is not set, as pi's does.
pub(crate) fn fill_base_url(model: &Model, env: impl Fn(&str) -> Option<String>) -> Result<Option<Model>, String> {
    if !model.base_url.contains('{') {
        return Ok(None);
    }
    let mut url = String::with_capacity(model.base_url.len());
    let mut rest = model.base_url.as_str();
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
        let name = &rest[open + 1..close];
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        url.push_str(&rest[..open]);
        if valid {
            match env(name).filter(|v| !v.is_empty()) {
                Some(value) => url.push_str(&value),
                None => return Err(format!("{name} is required for provider {} but is not set.", model.provider)),
            }
        } else {
            url.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    url.push_str(rest);
    Ok(Some(Model { base_url: url, ..model.clone() }))
}

/// The AI Gateway's authorization: the key moves to `cf-aig-authorization`.
pub(crate) fn gateway_auth(model: &Model, options: &mut StreamOptions) {
    if model.provider != GATEWAY {
        return;
    }
    if let Some(key) = options.api_key.take().filter(|k| !k.is_empty()) {
        options.headers.retain(|(name, _)| !name.eq_ignore_ascii_case("cf-aig-authorization"));
        options.headers.push(("cf-aig-authorization".to_owned(), format!("Bearer {key}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, base_url: &str) -> Model {
        crate::providers::test_fixtures::model("openai-completions", provider, "m", base_url)
    }

    #[test]
    fn placeholders_are_filled_or_named() {
        let env = |name: &str| (name == "CLOUDFLARE_ACCOUNT_ID").then(|| "acct".to_owned());
        let workers = model(
            "cloudflare-workers-ai",
            "https://api.cloudflare.com/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1",
        );
        assert_eq!(
            fill_base_url(&workers, env).unwrap().unwrap().base_url,
            "https://api.cloudflare.com/client/v4/accounts/acct/ai/v1"
        );
        let gateway = model(
            GATEWAY,
            "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/compat",
        );
        assert_eq!(
            fill_base_url(&gateway, env).unwrap_err(),
            "CLOUDFLARE_GATEWAY_ID is required for provider cloudflare-ai-gateway but is not set."
        );
        assert!(fill_base_url(&model("x", "https://plain"), env).unwrap().is_none());
    }

    #[test]
    fn the_gateway_takes_the_key_in_its_own_header() {
        let mut options = StreamOptions { api_key: Some("cf-key".into()), ..StreamOptions::default() };
        gateway_auth(&model(GATEWAY, "https://g"), &mut options);
        assert_eq!(options.api_key, None);
        assert_eq!(options.headers, [("cf-aig-authorization".to_owned(), "Bearer cf-key".to_owned())]);
        let mut options = StreamOptions { api_key: Some("k".into()), ..StreamOptions::default() };
        gateway_auth(&model("cloudflare-workers-ai", "https://w"), &mut options);
        assert_eq!(options.api_key.as_deref(), Some("k"));
    }
}
