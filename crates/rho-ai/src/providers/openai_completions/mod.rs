//! OpenAI Chat Completions (`openai-completions`) and every server that speaks it: `POST
//! {baseUrl}/chat/completions` with `stream: true`. The bearer token is omitted when there is
//! no key (local servers). A server that keeps a session on one replica by headers
//! (`compat.sendSessionAffinityHeaders`, OpenRouter by default) is sent the session id in the
//! headers its `sessionAffinityFormat` names.

mod cache;
mod chat_template;
mod compat;
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
    let compat = compat::Compat::for_model(model);
    // The request holds the conversation now; it is not kept a second time while it is out.
    drop(context);
    let auth = options.api_key.as_deref().filter(|k| !k.is_empty()).map(|k| format!("Bearer {k}"));
    let mut base: Vec<(&str, &str)> = auth.as_deref().map(|a| ("authorization", a)).into_iter().collect();
    base.extend(compat.affinity_headers(options.session_id.as_deref().unwrap_or_default()));
    let headers = super::request_headers(&base, model, options)?;
    let url = super::endpoint(&model.base_url, "chat/completions");
    let sse = super::post_sse(&url, headers, body, options).await?;
    stream::consume(sse, emitter, &options.cancel).await
}
