//! The Anthropic Messages API (`anthropic-messages`): `POST {baseUrl}/v1/messages` with
//! `stream: true`, answered with typed SSE events (`message_start`, `content_block_*`,
//! `message_delta`, `message_stop`).

pub(super) mod format;
pub(super) mod stream;
#[cfg(test)]
mod tests;

use crate::model::Model;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions};
use crate::types::{Context, StopReason};

/// The API version every request names.
const API_VERSION: &str = "2023-06-01";

pub(super) async fn run(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let request = format::build_request(model, context, options);
    let mut base: Vec<(&str, &str)> = vec![("anthropic-version", API_VERSION)];
    if let Some(key) = options.api_key.as_deref().filter(|k| !k.is_empty()) {
        base.push(("x-api-key", key));
    }
    if let Some(beta) = request.beta {
        base.push(("anthropic-beta", beta));
    }
    let headers = super::request_headers(&base, model, options)?;
    let url = super::endpoint(&model.base_url, "v1/messages");
    let sse = super::post_sse(&url, headers, &request.body, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}
