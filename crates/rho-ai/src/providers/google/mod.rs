//! The Gemini API (`google-generative-ai`): `POST
//! {baseUrl}/models/{id}:streamGenerateContent?alt=sse` with the key in `x-goog-api-key`.

pub(super) mod format;
pub(super) mod stream;
#[cfg(test)]
mod tests;
mod thinking;

use crate::model::Model;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions};
use crate::types::{Context, StopReason};

pub(super) async fn run(
    model: &Model,
    context: Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let body = format::build_body(model, &context, options);
    // The request holds the conversation now; it is not kept a second time while it is out.
    drop(context);
    let base: Vec<(&str, &str)> =
        options.api_key.as_deref().filter(|k| !k.is_empty()).map(|k| ("x-goog-api-key", k)).into_iter().collect();
    let headers = super::request_headers(&base, model, options)?;
    let path = format!("models/{}:streamGenerateContent?alt=sse", model.id);
    let url = super::endpoint(&model.base_url, &path);
    let sse = super::post_sse(&url, headers, body, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}
