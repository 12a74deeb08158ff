//! The OpenAI Responses API (`openai-responses`): `POST {baseUrl}/responses` with
//! `stream: true`, answered with typed `response.*` events.

pub(super) mod format;
pub(super) mod stream;
#[cfg(test)]
mod tests;

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
    let auth = options.api_key.as_deref().filter(|k| !k.is_empty()).map(|k| format!("Bearer {k}"));
    let mut base: Vec<(&str, &str)> = auth.as_deref().map(|a| ("authorization", a)).into_iter().collect();
    base.extend(session_headers(model, options));
    let headers = super::request_headers(&base, model, options)?;
    let url = super::endpoint(&model.base_url, "responses");
    let sse = super::post_sse(&url, headers, body, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}

/// The session's id as pi sends it with each request, so that the server routes the session's
/// requests to the same prompt cache: `session_id` (unless `compat.sendSessionIdHeader` is
/// false) and `x-client-request-id`.
pub(super) fn session_headers<'a>(model: &Model, options: &'a StreamOptions) -> Vec<(&'static str, &'a str)> {
    let Some(session) = options.session_id.as_deref().filter(|s| !s.is_empty()) else { return Vec::new() };
    let mut headers = Vec::with_capacity(2);
    if model.compat_bool("sendSessionIdHeader").unwrap_or(true) {
        headers.push(("session_id", session));
    }
    headers.push(("x-client-request-id", session));
    headers
}
