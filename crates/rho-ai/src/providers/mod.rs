//! One module per wire API. Each has a pure "format" half (our messages to the vendor's request
//! JSON) and a streaming half (the vendor's SSE chunks to [`Emitter`] calls).

use crate::error::ProviderError;
use crate::model::{Model, api};
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions};
use crate::types::{Context, StopReason};

/// Runs the provider for `model.api` to the end of its reply.
pub(crate) async fn run(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    match model.api.as_str() {
        api::ANTHROPIC_MESSAGES
        | api::OPENAI_COMPLETIONS
        | api::OPENAI_RESPONSES
        | api::GOOGLE_GENERATIVE_AI => {
            let _ = (context, options, emitter);
            Err(ProviderError::UnsupportedApi(model.api.clone()).into())
        }
        other => Err(ProviderError::UnsupportedApi(other.to_owned()).into()),
    }
}
