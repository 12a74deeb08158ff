//! The summary requests of a compaction, and the compaction's result.
//!
//! The history summary goes to the session's current model with the summarization system
//! prompt and 80 % of the reserve as output cap; a model that reasons thinks at the session's
//! level, as pi 1.6 asks it. A split turn adds a second request, run at the same time, for the
//! turn's beginning (half the reserve, the same level); the two texts are merged under a rule.
//! The file lists close the summary.
//!
//! A request that fails with a transient error is tried again as pi 1.6 does it (`retry.*`:
//! `baseDelayMs` doubling, at most `maxRetries` more times), and whoever asked hears of each try
//! ([`SummaryRetry`]); the usage of every request is added up for the result.

use std::sync::Arc;
use std::time::Duration;

use rho_ai::{StreamOptions, ToolChoice};
use rho_session::NewCompaction;
use rho_types::types::{
    AssistantContent, Context, Message, StopReason, Usage, UserContent, UserMessage, UserMessageContent, now_ms,
};
use rho_types::{AgentMessage, Model, ThinkingLevel, convert_to_llm};
use serde_json::Value;

use super::CompactionError;
use super::file_ops::format_file_operations;
use super::prepare::CompactionPreparation;
use super::prompts::{SUMMARIZATION_SYSTEM_PROMPT, summary_prompt, turn_prefix_prompt};
use super::serialize::serialize_conversation;

/// The history part of a split-turn summary when nothing precedes the turn.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// Who answers a summary request, and how to reach them.
#[derive(Debug, Clone)]
pub struct SummaryRequest<'a> {
    /// The session's current model.
    pub model: &'a Model,
    /// API key, headers and cancel token (the rest is set per request: output cap, reasoning,
    /// tool choice).
    pub options: StreamOptions,
    /// The focus a user gave (`/compact <instructions>`, `/tree` custom instructions).
    pub custom_instructions: Option<&'a str>,
    /// How a request that failed with a transient error is tried again; `None`: it is not.
    pub retry: Option<SummaryRetry>,
    /// The session's thinking level: a summary of a reasoning model thinks as the conversation
    /// does (pi 1.6; `off` and models that do not reason send none).
    pub thinking: ThinkingLevel,
}

impl SummaryRequest<'_> {
    /// The level the summary requests ask for.
    pub(crate) fn thinking(&self) -> ThinkingLevel {
        if self.model.reasoning { self.thinking } else { ThinkingLevel::Off }
    }
}

/// The retries of a summary request, and who hears of them.
#[derive(Clone)]
pub struct SummaryRetry {
    pub max_retries: u32,
    pub base_delay_ms: u64,
    /// The longest wait before a try.
    pub max_delay_ms: u64,
    pub notify: Arc<dyn Fn(SummaryRetryEvent) + Send + Sync>,
}

impl std::fmt::Debug for SummaryRetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryRetry").field("max_retries", &self.max_retries).finish_non_exhaustive()
    }
}

/// What a summary request's retries report (pi 1.6's `summarization_retry_*` events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryRetryEvent {
    /// The request failed and is tried again after `delay_ms`.
    Scheduled { attempt: u32, max_attempts: u32, delay_ms: u64, error_message: String },
    /// The wait is over; the request is sent again.
    AttemptStart,
    /// The retries are over: the request succeeded, failed for good or was cancelled.
    Finished,
}

/// A finished compaction, to be appended as a `compaction` entry (and reported as the RPC
/// `CompactionResult`).
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionOutput {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    /// `{readFiles, modifiedFiles}`.
    pub details: Value,
    /// What the summary requests cost (an extension that wrote the summary may not say).
    pub usage: Option<Usage>,
}

impl CompactionOutput {
    /// The entry to append for this compaction.
    pub fn into_new_compaction(self) -> NewCompaction {
        NewCompaction {
            summary: self.summary,
            first_kept_entry_id: self.first_kept_entry_id,
            tokens_before: self.tokens_before,
            details: Some(self.details),
            from_hook: None,
            short_summary: None,
        }
    }
}

/// The output cap of the history summary: `floor(0.8 × reserveTokens)`.
pub fn history_max_tokens(reserve_tokens: u64) -> u64 {
    reserve_tokens * 4 / 5
}

/// The output cap of the turn-prefix summary: `floor(0.5 × reserveTokens)`.
pub fn turn_prefix_max_tokens(reserve_tokens: u64) -> u64 {
    reserve_tokens / 2
}

/// Why one summary request produced no text.
#[derive(Debug)]
pub(crate) enum RequestFailure {
    Cancelled,
    Failed(String),
}

/// One summary request: the system prompt, one user message, no tools, tried again after a
/// transient failure when `retry` says so. Returns the reply's text blocks joined by newlines,
/// and the usage of every try.
pub(crate) async fn request_summary(
    model: &Model,
    base: &StreamOptions,
    retry: Option<&SummaryRetry>,
    prompt: String,
    max_tokens: u64,
    thinking: ThinkingLevel,
) -> Result<(String, Usage), RequestFailure> {
    if base.cancel.is_cancelled() {
        return Err(RequestFailure::Cancelled);
    }
    let mut usage = Usage::default();
    let mut attempt = 0;
    loop {
        let outcome = request_once(model, base, prompt.clone(), max_tokens, thinking, &mut usage).await;
        let (message, retry) = match (outcome, retry) {
            (Err(RequestFailure::Failed(message)), Some(retry))
                if attempt < retry.max_retries && rho_ai::error::is_retryable_message(&message) =>
            {
                (message, retry)
            }
            (other, retry) => {
                if let Some(retry) = retry.filter(|_| attempt > 0) {
                    (retry.notify)(SummaryRetryEvent::Finished);
                }
                return other.map(|text| (text, usage));
            }
        };
        attempt += 1;
        let delay_ms = retry.base_delay_ms.saturating_mul(1 << (attempt - 1).min(30)).min(retry.max_delay_ms);
        (retry.notify)(SummaryRetryEvent::Scheduled {
            attempt,
            max_attempts: retry.max_retries,
            delay_ms,
            error_message: message,
        });
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(delay_ms)) => {}
            () = base.cancel.cancelled() => {
                (retry.notify)(SummaryRetryEvent::Finished);
                return Err(RequestFailure::Cancelled);
            }
        }
        (retry.notify)(SummaryRetryEvent::AttemptStart);
    }
}

/// One try of a summary request; its usage is added to `usage`.
async fn request_once(
    model: &Model,
    base: &StreamOptions,
    prompt: String,
    max_tokens: u64,
    thinking: ThinkingLevel,
    usage: &mut Usage,
) -> Result<String, RequestFailure> {
    let context = Context {
        system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.to_owned()),
        messages: vec![Message::User(UserMessage {
            content: UserMessageContent::Blocks(vec![UserContent::text(prompt)]),
            synthetic: None,
            attribution: None,
            timestamp: now_ms(),
        })],
        tools: Vec::new(),
    };
    let options =
        StreamOptions { max_tokens: Some(max_tokens), thinking, tool_choice: ToolChoice::Auto, ..base.clone() };
    let reply = rho_ai::complete(model, context, options).await;
    usage.add(&reply.usage);
    match reply.stop_reason {
        StopReason::Aborted => Err(RequestFailure::Cancelled),
        StopReason::Error => Err(RequestFailure::Failed(
            reply.error_message.filter(|m| !m.is_empty()).unwrap_or_else(|| "Unknown error".to_owned()),
        )),
        _ => Ok(reply
            .content
            .iter()
            .filter_map(|b| match b {
                AssistantContent::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")),
    }
}

fn conversation_text(messages: &[AgentMessage]) -> String {
    serialize_conversation(&convert_to_llm(messages))
}

async fn history_summary(
    preparation: &CompactionPreparation,
    request: &SummaryRequest<'_>,
) -> Result<(String, Usage), CompactionError> {
    let prompt = summary_prompt(
        &conversation_text(&preparation.messages_to_summarize),
        preparation.previous_summary.as_deref(),
        request.custom_instructions,
    );
    let thinking = request.thinking();
    let max_tokens = history_max_tokens(preparation.settings.reserve_tokens);
    let retry = request.retry.as_ref();
    request_summary(request.model, &request.options, retry, prompt, max_tokens, thinking).await.map_err(|e| match e {
        RequestFailure::Cancelled => CompactionError::Cancelled,
        RequestFailure::Failed(m) => CompactionError::Summarization(m),
    })
}

async fn turn_prefix_summary(
    preparation: &CompactionPreparation,
    request: &SummaryRequest<'_>,
) -> Result<(String, Usage), CompactionError> {
    let prompt = turn_prefix_prompt(&conversation_text(&preparation.turn_prefix_messages), request.custom_instructions);
    let max_tokens = turn_prefix_max_tokens(preparation.settings.reserve_tokens);
    let retry = request.retry.as_ref();
    request_summary(request.model, &request.options, retry, prompt, max_tokens, request.thinking()).await.map_err(|e| {
        match e {
            RequestFailure::Cancelled => CompactionError::Cancelled,
            RequestFailure::Failed(m) => CompactionError::TurnPrefix(m),
        }
    })
}

/// Summarizes what `preparation` set apart and returns the compaction to record.
///
/// A split turn sends the history and turn-prefix requests at once and merges them as
/// `{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}` (the history being the previous
/// summary, or "No prior history.", when nothing before the turn is summarized; the caller's
/// focus goes to both requests); the first failure ends the
/// compaction (the other request is dropped). A fired cancel token gives
/// [`CompactionError::Cancelled`]; an error reply gives `Summarization failed: <message>` (or
/// `Turn prefix summarization failed: <message>`).
pub async fn compact(
    preparation: &CompactionPreparation,
    request: SummaryRequest<'_>,
) -> Result<CompactionOutput, CompactionError> {
    if request.options.cancel.is_cancelled() {
        return Err(CompactionError::Cancelled);
    }
    let (mut summary, usage) = if preparation.is_split_turn && !preparation.turn_prefix_messages.is_empty() {
        let history = async {
            if preparation.messages_to_summarize.is_empty() {
                let history = preparation.previous_summary.as_deref().unwrap_or(NO_PRIOR_HISTORY);
                Ok((history.to_owned(), Usage::default()))
            } else {
                history_summary(preparation, &request).await
            }
        };
        let prefix = turn_prefix_summary(preparation, &request);
        let ((history, mut usage), (prefix, prefix_usage)) = tokio::try_join!(history, prefix)?;
        usage.add(&prefix_usage);
        (format!("{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}"), usage)
    } else {
        history_summary(preparation, &request).await?
    };

    let read_files = preparation.file_ops.read_files();
    let modified_files = preparation.file_ops.modified_files();
    summary.push_str(&format_file_operations(&read_files, &modified_files));

    Ok(CompactionOutput {
        summary,
        first_kept_entry_id: preparation.first_kept_entry_id.clone(),
        tokens_before: preparation.tokens_before,
        details: preparation.file_ops.details(),
        usage: Some(usage),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::{CompactionSettings, FileOperations};

    #[test]
    fn output_caps_follow_the_reserve() {
        assert_eq!(history_max_tokens(16_384), 13_107);
        assert_eq!(turn_prefix_max_tokens(16_384), 8192);
        assert_eq!(history_max_tokens(5), 4);
        assert_eq!(turn_prefix_max_tokens(5), 2);
    }

    fn preparation() -> CompactionPreparation {
        CompactionPreparation {
            first_kept_entry_id: "abc".into(),
            messages_to_summarize: Vec::new(),
            turn_prefix_messages: Vec::new(),
            is_split_turn: false,
            tokens_before: 10,
            previous_summary: None,
            file_ops: FileOperations::default(),
            settings: CompactionSettings::default(),
        }
    }

    #[tokio::test]
    async fn a_cancelled_token_sends_nothing() {
        let model = Model {
            id: "m".into(),
            name: "m".into(),
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            // Nothing listens here; a request would fail rather than be cancelled.
            base_url: "http://127.0.0.1:9".into(),
            reasoning: false,
            input: vec![],
            cost: Default::default(),
            context_window: 1000,
            max_tokens: 1000,
            headers: Default::default(),
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
            input_limits: None,
            sampling: None,
        };
        let options = StreamOptions::default();
        options.cancel.cancel();
        let request = SummaryRequest {
            model: &model,
            options,
            custom_instructions: None,
            retry: None,
            thinking: ThinkingLevel::Off,
        };
        assert_eq!(compact(&preparation(), request).await, Err(CompactionError::Cancelled));
    }

    #[test]
    fn output_becomes_a_compaction_entry() {
        let output = CompactionOutput {
            summary: "s".into(),
            first_kept_entry_id: "k".into(),
            tokens_before: 5,
            details: serde_json::json!({"readFiles": [], "modifiedFiles": []}),
            usage: None,
        };
        let entry = output.clone().into_new_compaction();
        assert_eq!(entry.summary, "s");
        assert_eq!(entry.first_kept_entry_id, "k");
        assert_eq!(entry.tokens_before, 5);
        assert_eq!(entry.details, Some(output.details));
        assert_eq!(entry.from_hook, None);
    }
}
