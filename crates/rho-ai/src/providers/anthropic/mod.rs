//! The Anthropic Messages API (`anthropic-messages`): `POST {baseUrl}/v1/messages` with
//! `stream: true`, answered with typed SSE events (`message_start`, `content_block_*`,
//! `message_delta`, `message_stop`).

pub(super) mod claude_code;
pub(super) mod format;
pub(super) mod stream;
#[cfg(test)]
mod tests;
mod threads;

use crate::model::Model;
use crate::sse::Interrupted;
use crate::stream::{Emitter, StreamOptions};
use crate::types::{Context, StopReason};

/// The API version every request names.
const API_VERSION: &str = "2023-06-01";

pub(super) async fn run(
    model: &Model,
    mut context: Context,
    options: &StreamOptions,
    emitter: &mut Emitter,
) -> Result<StopReason, Interrupted> {
    let mut request = format::build_request(model, &context, options);
    let key = options.api_key.as_deref().filter(|k| !k.is_empty());
    let subscription = key.is_some_and(claude_code::is_subscription_token);
    // A subscription's replies name the tools as Claude Code does: their specs map them back.
    let tools = if subscription { std::mem::take(&mut context.tools) } else { Vec::new() };
    // The request holds the conversation now; it is not kept a second time while it is out.
    drop(context);
    let thread_session = threads::session(model, options);
    // A session that may use threads names their beta on every request (also once the endpoint
    // turned them off: the resend that found it out was accepted with it).
    let listed = match (request.betas(), thread_session) {
        (Some(betas), Some(_)) => Some(format!("{betas},{}", threads::BETA)),
        (None, Some(_)) => Some(threads::BETA.to_owned()),
        (betas, None) => betas,
    };
    let mut base: Vec<(&str, &str)> = vec![("anthropic-version", API_VERSION)];
    let (bearer, betas, user_agent);
    match key {
        Some(key) if subscription => {
            bearer = format!("Bearer {key}");
            betas = claude_code::betas(listed.as_deref());
            user_agent = format!("claude-cli/{}", claude_code::CLAUDE_CODE_VERSION);
            base.extend([
                ("authorization", bearer.as_str()),
                ("anthropic-beta", betas.as_str()),
                ("user-agent", user_agent.as_str()),
                ("x-app", "cli"),
            ]);
            claude_code::adapt_body(&mut request.body);
        }
        // Copilot's Anthropic models take the Copilot token as Bearer.
        Some(key) if model.provider == super::copilot::PROVIDER => {
            bearer = format!("Bearer {key}");
            base.extend([("authorization", bearer.as_str()), ("anthropic-dangerous-direct-browser-access", "true")]);
        }
        Some(key) => base.push(("x-api-key", key)),
        None => {}
    }
    if let (false, Some(betas)) = (subscription, listed.as_deref()) {
        base.push(("anthropic-beta", betas));
    }
    let headers = super::request_headers(&base, model, options)?;
    let url = super::endpoint(&model.base_url, "v1/messages");
    let named_tools = subscription.then_some(tools.as_slice());
    let Some(session) = thread_session else {
        let sse = super::post_sse(&url, headers, request.body, options).await?;
        return stream::consume(sse, emitter, &options.cancel, named_tools).await;
    };
    let mut threaded = threads::Threaded::plan(session, model, request.body, listed.as_deref().unwrap_or_default());
    let first = std::mem::take(&mut threaded.body);
    let sse = match super::post_sse(&url, headers.clone(), first, options).await {
        Ok(sse) => sse,
        Err(Interrupted::Failed(error)) => match threaded.after_rejection(&error) {
            Some(again) => super::post_sse(&url, headers, again, options).await?,
            None => return Err(Interrupted::Failed(error)),
        },
        Err(cancelled) => return Err(cancelled),
    };
    let stop = stream::consume(sse, emitter, &options.cancel, named_tools).await?;
    if matches!(stop, StopReason::Stop | StopReason::Length | StopReason::ToolUse) {
        threaded.record(model, emitter.message());
    }
    Ok(stop)
}
