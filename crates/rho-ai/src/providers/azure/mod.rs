//! Azure OpenAI's Responses API (`azure-openai-responses`), as pi reaches it: the Responses
//! wire at `{base}/responses?api-version={version}` with the key in `api-key`, the model named by
//! its deployment. The base URL is `AZURE_OPENAI_BASE_URL`, else
//! `https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1`, else the model's (an Azure
//! host's bare or `/openai` path becomes `/openai/v1`); the version is `AZURE_OPENAI_API_VERSION`
//! (default `v1`); `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`model=deployment,…`) names deployments
//! that are not called as their model.

#[cfg(test)]
mod tests;

use serde_json::Value;

use super::openai_responses::{format, stream};
use crate::error::ProviderError;
use crate::model::Model;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions};
use crate::types::{Context, StopReason};

const DEFAULT_API_VERSION: &str = "v1";

pub(super) async fn run(
    model: &Model,
    context: Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let env = super::env_value;
    let config = Config::resolve(model, env).map_err(ProviderError::Config)?;
    let mut body = format::build_body(model, &context, options);
    // The request holds the conversation now; it is not kept a second time while it is out.
    drop(context);
    if let Value::Object(fields) = &mut body {
        // `store: false` stays, as pi 1.6 sends it (pi 0.73 left it to the service).
        fields.insert("model".into(), Value::String(config.deployment));
    }
    let base: Vec<(&str, &str)> =
        options.api_key.as_deref().filter(|k| !k.is_empty()).map(|k| ("api-key", k)).into_iter().collect();
    let headers = super::request_headers(&base, model, options)?;
    let url = format!("{}?api-version={}", super::endpoint(&config.base_url, "responses"), config.api_version);
    let sse = super::post_sse(&url, headers, body, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}

/// Where a request goes and what it names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Config {
    base_url: String,
    api_version: String,
    deployment: String,
}

impl Config {
    fn resolve(model: &Model, env: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let base = env("AZURE_OPENAI_BASE_URL")
            .or_else(|| {
                env("AZURE_OPENAI_RESOURCE_NAME").map(|name| format!("https://{name}.openai.azure.com/openai/v1"))
            })
            .or_else(|| Some(model.base_url.trim().to_owned()).filter(|b| !b.is_empty()))
            .ok_or_else(|| {
                "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or set \
                 the model's baseUrl in models.json."
                    .to_owned()
            })?;
        let deployment = env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP")
            .and_then(|map| {
                map.split(',').find_map(|entry| {
                    let (id, deployment) = entry.split_once('=')?;
                    (id.trim() == model.id && !deployment.trim().is_empty()).then(|| deployment.trim().to_owned())
                })
            })
            .unwrap_or_else(|| model.id.clone());
        Ok(Config {
            base_url: normalize_base(&base)?,
            api_version: env("AZURE_OPENAI_API_VERSION").unwrap_or_else(|| DEFAULT_API_VERSION.to_owned()),
            deployment,
        })
    }
}

/// An Azure host given bare (or with `/openai`) points at its v1 endpoint; other URLs stay.
fn normalize_base(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim().trim_end_matches('/');
    let mut url = reqwest::Url::parse(trimmed)
        .map_err(|_| format!("Invalid Azure OpenAI base URL: {}", crate::redact::url(raw)))?;
    let azure_host =
        url.host_str().is_some_and(|h| h.ends_with(".openai.azure.com") || h.ends_with(".cognitiveservices.azure.com"));
    let path = url.path().trim_end_matches('/').to_owned();
    if azure_host && (path.is_empty() || path == "/openai") {
        url.set_path("/openai/v1");
        url.set_query(None);
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}
