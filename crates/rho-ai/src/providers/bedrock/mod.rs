//! Amazon Bedrock's `ConverseStream` (`bedrock-converse-stream`), reached as pi 0.73 reaches it
//! through AWS's SDK: `POST {endpoint}/model/{model id}/converse-stream` with a JSON body
//! ([`format`]), answered with AWS's binary event stream ([`stream`]).
//!
//! - **Auth.** A Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`, or a key configured for the
//!   provider) goes as a bearer token, unless `AWS_BEDROCK_SKIP_AUTH=1`. Otherwise the request is signed with SigV4 (service `bedrock`)
//!   by aws-sigv4, with credentials from AWS's default chain ([`credentials`]).
//! - **Region.** `AWS_REGION` or `AWS_DEFAULT_REGION`; else the region of a standard endpoint
//!   the model names; else, with `AWS_PROFILE`, the profile's; else `us-east-1`.
//! - **Endpoint.** A model whose base URL is not a standard `bedrock-runtime.{region}` host (a
//!   VPC endpoint, a proxy) is sent there; a standard one is kept only when no region or
//!   profile is configured, and otherwise the configured region's endpoint is used.
//!   `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` (or `AWS_ENDPOINT_URL`) overrides both, as in every
//!   AWS SDK.
//! - **Errors.** An error status is reported with pi's readable prefix for the exception named
//!   in `x-amzn-errortype` ("Validation error: …").

mod credentials;
mod format;
mod stream;
#[cfg(test)]
mod tests;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::ProviderError;
use crate::model::Model;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions};
use crate::types::{Context, StopReason};

/// How a path segment is escaped (every character but the unreserved ones, as AWS's SDKs do):
/// a model id that is an ARN keeps its `:` and `/` inside the one segment.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

pub(super) async fn run(
    model: &Model,
    context: Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let env = super::env_value;
    let configured_region = env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION"));
    let profile = env("AWS_PROFILE").is_some();
    let profile_region = match (&configured_region, profile) {
        (None, true) => credentials::profile_region().await,
        _ => None,
    };
    let place = Place::resolve(
        &model.base_url,
        configured_region.as_deref(),
        profile,
        profile_region.as_deref(),
        env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME").or_else(|| env("AWS_ENDPOINT_URL")).as_deref(),
    );
    let body = format::build_body(
        model,
        &context,
        options,
        format::Target { region: &place.region, cache: format::CacheRetention::from_env() },
    );
    // The request holds the conversation now; it is not kept a second time while it is out.
    drop(context);
    let bytes = super::body_bytes(body, options).await?;
    let url = format!(
        "{}/model/{}/converse-stream",
        place.endpoint.trim_end_matches('/'),
        utf8_percent_encode(&model.id, PATH_SEGMENT)
    );
    let base = [("content-type", "application/json"), ("accept", "application/vnd.amazon.eventstream")];
    let mut headers = super::request_headers(&base, model, options)?;
    // A Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`, or one configured for the provider), not
    // the marker that says AWS credentials are there.
    let key = options.api_key.as_deref().map(str::trim).filter(|k| super::is_real_key(k)).map(str::to_owned);
    let bearer = key.filter(|_| env("AWS_BEDROCK_SKIP_AUTH").as_deref() != Some("1"));
    match bearer {
        Some(token) => {
            let value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| ProviderError::Config("the Bedrock API key is not a valid header value".into()))?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        None => {
            let found = tokio::select! {
                biased;
                () = options.cancel.cancelled() => return Err(Interrupted::Cancelled),
                found = credentials::credentials(&place.region) => found,
            };
            let credentials = found.map_err(ProviderError::Login)?;
            sign(&mut headers, &url, &bytes, &credentials, &place.region)?;
        }
    }
    let request = crate::sse::client()?.post(&url).headers(headers).body(bytes);
    let response =
        crate::sse::send_described(request, &options.cancel, options.hooks.response.as_ref(), describe_error).await?;
    let frames = stream::Frames::new(response.bytes_stream(), options.idle_timeout);
    stream::consume(frames, emitter, &options.cancel).await
}

/// Where a request goes and the region it is signed for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Place {
    endpoint: String,
    region: String,
}

impl Place {
    fn resolve(
        base_url: &str,
        configured_region: Option<&str>,
        profile: bool,
        profile_region: Option<&str>,
        endpoint_override: Option<&str>,
    ) -> Self {
        let base_url = base_url.trim();
        let standard_region = standard_endpoint_region(base_url);
        let explicit = !base_url.is_empty()
            && match standard_region {
                None => true,
                Some(_) => configured_region.is_none() && !profile,
            };
        let region = configured_region
            .or(standard_region.filter(|_| explicit))
            .or(profile_region)
            .unwrap_or("us-east-1")
            .to_owned();
        let endpoint = match endpoint_override {
            Some(url) => url.to_owned(),
            None if explicit => base_url.to_owned(),
            None => format!("https://bedrock-runtime.{region}.amazonaws.com"),
        };
        Self { endpoint, region }
    }
}

/// The region of a standard Bedrock runtime endpoint (`bedrock-runtime[-fips].{region}.
/// amazonaws.com[.cn]`), `None` for any other URL.
fn standard_endpoint_region(url: &str) -> Option<&str> {
    let host = url.split_once("://")?.1.split(['/', '?', '#']).next()?;
    let host =
        host.rsplit_once(':').filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit())).map_or(host, |(h, _)| h);
    let rest = host.strip_prefix("bedrock-runtime-fips.").or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let region = rest.strip_suffix(".amazonaws.com").or_else(|| rest.strip_suffix(".amazonaws.com.cn"))?;
    (!region.is_empty() && region.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
        .then_some(region)
}

/// Signs the request with SigV4 for the `bedrock` service, adding `x-amz-date`,
/// `x-amz-security-token` (temporary credentials) and `authorization` to `headers`.
fn sign(
    headers: &mut HeaderMap,
    url: &str,
    body: &[u8],
    credentials: &aws_credential_types::Credentials,
    region: &str,
) -> Result<(), ProviderError> {
    use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
    let failed = |e: &dyn std::fmt::Display| ProviderError::Request(format!("could not sign the Bedrock request: {e}"));
    let identity = credentials.clone().into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("bedrock")
        .time(std::time::SystemTime::now())
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| failed(&e))?
        .into();
    let pairs: Vec<(&str, &str)> = headers.iter().filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?))).collect();
    let signable =
        SignableRequest::new("POST", url, pairs.into_iter(), SignableBody::Bytes(body)).map_err(|e| failed(&e))?;
    let (instructions, _) = sign(signable, &params).map_err(|e| failed(&e))?.into_parts();
    let (signed, _) = instructions.into_parts();
    for header in signed {
        let name = HeaderName::from_bytes(header.name().as_bytes()).map_err(|e| failed(&e))?;
        let value = HeaderValue::from_str(header.value()).map_err(|e| failed(&e))?;
        headers.insert(name, value);
    }
    Ok(())
}

/// An error status's text: the exception named by `x-amzn-errortype` with pi's readable prefix,
/// then the body's message.
fn describe_error(headers: &HeaderMap, body: &str) -> String {
    let message = crate::sse::error_message_from_body(body);
    let kind = headers
        .get("x-amzn-errortype")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(':').next().unwrap_or(v).trim())
        .filter(|v| !v.is_empty());
    match kind {
        Some(kind) => format!("{}: {message}", stream::error_prefix(kind)),
        None => message,
    }
}
