//! Gemini on Google Cloud's Vertex AI (`google-vertex`), as pi 0.73 reaches it: the Gemini wire
//! (the same request body and event stream as `google-generative-ai`) at Vertex's endpoints.
//! With an API key (`GOOGLE_CLOUD_API_KEY`, or one configured for the provider) a request goes
//! to `https://aiplatform.googleapis.com/v1/publishers/google/models/{model}` with the key in
//! `x-goog-api-key`; otherwise to `https://{location}-aiplatform.googleapis.com/v1/projects/
//! {project}/locations/{location}/publishers/google/models/{model}` (`aiplatform.googleapis.com`
//! for the `global` location) with an access token from Application Default Credentials
//! ([`adc`]). The project is `GOOGLE_CLOUD_PROJECT` (or `GCLOUD_PROJECT`), the location
//! `GOOGLE_CLOUD_LOCATION`. A model's base URL without the `{location}` placeholder replaces the
//! host (and the `v1` when it names a version).

pub mod adc;
#[cfg(test)]
mod tests;

use super::google::{format, stream};
use crate::error::ProviderError;
use crate::model::Model;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions};
use crate::types::{Context, StopReason};

/// The key a registry reports for Vertex when Application Default Credentials, a project and a
/// location are there (pi's marker): requests then take a token from the credentials.
pub const ADC_MARKER: &str = "<authenticated>";

pub(super) async fn run(
    model: &Model,
    context: Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let env = super::env_value;
    let body = format::build_body(model, &context, options);
    // The request holds the conversation now; it is not kept a second time while it is out.
    drop(context);
    let key =
        options.api_key.as_deref().filter(|k| is_api_key(k)).map(str::to_owned).or_else(|| env("GOOGLE_CLOUD_API_KEY"));
    let (url, auth) = match key {
        Some(key) => (endpoint(model, None), ("x-goog-api-key", key)),
        None => {
            let project = env("GOOGLE_CLOUD_PROJECT").or_else(|| env("GCLOUD_PROJECT")).ok_or_else(|| {
                ProviderError::Config(
                    "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT.".to_owned(),
                )
            })?;
            let location = env("GOOGLE_CLOUD_LOCATION").ok_or_else(|| {
                ProviderError::Config("Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION.".to_owned())
            })?;
            let token = adc::access_token().await.map_err(ProviderError::Login)?;
            (endpoint(model, Some((&project, &location))), ("authorization", format!("Bearer {token}")))
        }
    };
    let base = [(auth.0, auth.1.as_str())];
    let headers = super::request_headers(&base, model, options)?;
    let sse = super::post_sse(&url, headers, body, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}

/// A key that is one: not the ADC marker nor a `<placeholder>`.
fn is_api_key(key: &str) -> bool {
    super::is_real_key(key) && key.trim() != "gcp-vertex-credentials"
}

/// The streaming endpoint: the project's in `location` (ADC), or the publisher's (an API key).
fn endpoint(model: &Model, project: Option<(&str, &str)>) -> String {
    let custom = model.base_url.trim();
    let custom = (!custom.is_empty() && !custom.contains("{location}")).then(|| custom.trim_end_matches('/'));
    let root = match (custom, project) {
        (Some(base), _) if names_version(base) => base.to_owned(),
        (Some(base), _) => format!("{base}/v1"),
        (None, Some((_, "global"))) | (None, None) => "https://aiplatform.googleapis.com/v1".to_owned(),
        (None, Some((_, location))) => format!("https://{location}-aiplatform.googleapis.com/v1"),
    };
    let resource = match project {
        Some((project, location)) => format!("projects/{project}/locations/{location}/publishers/google/models"),
        None => "publishers/google/models".to_owned(),
    };
    format!("{root}/{resource}/{}:streamGenerateContent?alt=sse", model.id)
}

/// Whether a base URL's path names an API version (`/v1`, `/v1beta1`).
fn names_version(base: &str) -> bool {
    let path = base.split_once("://").map_or(base, |(_, rest)| rest.split_once('/').map_or("", |(_, p)| p));
    path.split('/').any(|part| {
        part.strip_prefix('v').is_some_and(|rest| {
            let digits = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            digits.len() < rest.len()
                && (digits.is_empty()
                    || digits.strip_prefix("beta").is_some_and(|d| d.chars().all(|c| c.is_ascii_digit())))
        })
    })
}
