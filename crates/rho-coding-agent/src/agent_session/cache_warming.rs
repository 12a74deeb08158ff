//! Prompt-cache warming (pi 1.6's `cacheWarming`: `idle`, the default, `streaming` or `off`):
//! after a reply, the request that got it is sent again with a one-token output cap shortly
//! before the cache entry it wrote would expire (at 90% of the model's `promptCache.short`
//! lifetime, keeping at least ten seconds), so the next real request reads the conversation from
//! the cache instead of writing it anew. Each refresh is sent only when it pays for itself: the
//! chance that a real request follows in time (certain while a run goes on, 15% once the agent is
//! idle) times what a cache miss would cost, less the refresh, must be at least $0.05. Warming
//! stops when the conversation changes, after 60 minutes (30 once idle), with `off`, or once idle
//! with `streaming`. A refresh leaves the session's Anthropic thread alone and is recorded as a
//! `usage` entry (`cache_warm`) of the session, announced with `entry_appended`.

use std::time::Duration;

use parking_lot::Mutex;
use rho_types::AgentMessage;
use rho_types::types::{AssistantMessage, ModelCost, StopReason};
use rho_types::{Model, ThinkingLevel};
use tokio_util::sync::CancellationToken;

use super::AgentSession;

/// A refresh is sent only when it is expected to save at least this many dollars.
const MINIMUM_EXPECTED_SAVINGS: f64 = 0.05;
/// The chance that a real request comes before the entry expires while the agent is idle.
const IDLE_CONTINUATION_PROBABILITY: f64 = 0.15;
const MAX_AGE: Duration = Duration::from_secs(60 * 60);
const MAX_IDLE_AGE: Duration = Duration::from_secs(30 * 60);

/// The warming in progress, if any: cancelled when the next reply starts another.
#[derive(Default)]
pub(crate) struct CacheWarmer {
    run: Mutex<Option<CancellationToken>>,
}

impl CacheWarmer {
    fn replace(&self, next: Option<CancellationToken>) {
        if let Some(previous) = std::mem::replace(&mut *self.run.lock(), next) {
            previous.cancel();
        }
    }
}

/// What a refresh repeats: the request as it was sent, before its reply.
struct Warmed {
    model: Model,
    thinking: ThinkingLevel,
    /// The conversation's length with the reply, and the reply's time: while both hold, the
    /// conversation is the one the entry was written for.
    count: usize,
    reply_at: i64,
    prompt_tokens: u64,
}

impl AgentSession {
    /// A reply ended: keep the cache entry of the request that got it warm.
    pub(crate) fn warm_cache_after(&self, reply: &AssistantMessage) {
        self.inner.cache_warmer.replace(None);
        if matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted) || self.warming_mode() == "off" {
            return;
        }
        let model = self.inner.agent.model();
        if model.provider != reply.provider || model.id != reply.model {
            return;
        }
        let thinking = self.inner.agent.thinking_level();
        // Budget thinking derives its budget from the output cap: a one-token replay would be a
        // different request (and might think at length).
        let adaptive = model.compat_bool("forceAdaptiveThinking") == Some(true);
        if model.reasoning && thinking != ThinkingLevel::Off && model.api == "anthropic-messages" && !adaptive {
            return;
        }
        let Some(delay) = model.prompt_cache.as_ref().and_then(|c| c.short).and_then(refresh_delay) else { return };
        let usage = &reply.usage;
        let warmed = Warmed {
            prompt_tokens: usage.input + usage.cache_read + usage.cache_write,
            count: self.inner.agent.message_count(),
            reply_at: reply.timestamp,
            model,
            thinking,
        };
        let token = CancellationToken::new();
        self.inner.cache_warmer.replace(Some(token.clone()));
        let inner = std::sync::Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            loop {
                tokio::select! {
                    () = token.cancelled() => return,
                    () = tokio::time::sleep(delay) => {}
                }
                let Some(session) = inner.upgrade().map(|inner| AgentSession { inner }) else { return };
                let idle = !session.is_streaming();
                let limit = if idle { MAX_IDLE_AGE } else { MAX_AGE };
                let mode = session.warming_mode();
                if token.is_cancelled()
                    || started.elapsed() >= limit
                    || mode == "off"
                    || (mode == "streaming" && idle)
                    || !session.still_current(&warmed)
                    || expected_savings(&warmed.model.cost, warmed.prompt_tokens, idle) < MINIMUM_EXPECTED_SAVINGS
                {
                    return;
                }
                session.refresh_cache(&warmed, &token).await;
            }
        });
    }

    fn warming_mode(&self) -> String {
        self.settings().get_string("cacheWarming").unwrap_or_else(|| "idle".to_owned())
    }

    fn still_current(&self, warmed: &Warmed) -> bool {
        self.inner.agent.read_messages(|messages| {
            messages.len() == warmed.count
                && matches!(messages.last(), Some(AgentMessage::Assistant(a)) if a.timestamp == warmed.reply_at)
        })
    }

    /// The request again, capped at one output token, without retries or the session's thread.
    async fn refresh_cache(&self, warmed: &Warmed, cancel: &CancellationToken) {
        let messages = self.inner.agent.read_messages(|m| rho_types::convert_to_llm(&m[..m.len().saturating_sub(1)]));
        let context = rho_types::types::Context {
            system_prompt: Some(self.inner.agent.system_prompt()).filter(|p| !p.is_empty()),
            messages,
            tools: self.inner.agent.tools().iter().map(|t| t.spec()).collect(),
        };
        let mut options = rho_agent::resolve_request_options(&self.inner.request_options, &warmed.model, cancel).await;
        options.thinking = warmed.thinking;
        options.max_tokens = Some(1);
        options.session_id = None;
        options.cancel = cancel.child_token();
        let reply = rho_ai::complete(&warmed.model, context, options).await;
        if matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted) {
            return;
        }
        let model = reply.response_model.as_deref().unwrap_or(&reply.model);
        let entry = {
            let mut session = self.session();
            let id = session.append_usage("cache_warm", &reply.provider, model, reply.usage);
            id.ok().and_then(|id| session.get_entry(id.as_str()).and_then(|e| serde_json::to_value(e).ok()))
        };
        // Told to the host as pi tells it (`entry_appended`).
        if let Some(entry) = entry {
            self.emit(rho_rpc::SessionEvent::EntryAppended { entry });
        }
    }
}

/// When to refresh an entry that lives `ttl_s` seconds: at 90% of it, keeping ten seconds at
/// least; `None` for a lifetime of ten seconds or less.
fn refresh_delay(ttl_s: f64) -> Option<Duration> {
    let ttl_ms = ttl_s * 1000.0;
    (ttl_ms > 10_000.0).then(|| Duration::from_millis((ttl_ms * 0.9).min(ttl_ms - 10_000.0).max(1.0) as u64))
}

/// What refreshing a `prompt_tokens` entry is expected to save, in dollars: the chance a real
/// request follows in time times what a miss costs over a hit, less the refresh itself.
fn expected_savings(cost: &ModelCost, prompt_tokens: u64, idle: bool) -> f64 {
    let [input, output, cache_read, cache_write] = cost.rates_for(prompt_tokens);
    let tokens = prompt_tokens as f64 / 1_000_000.0;
    let hit = cache_read * tokens;
    let miss = if cache_write > 0.0 { cache_write * tokens } else { input * tokens };
    let refresh = hit + output / 1_000_000.0;
    let probability = if idle { IDLE_CONTINUATION_PROBABILITY } else { 1.0 };
    probability * (miss - hit).max(0.0) - refresh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refresh_comes_before_the_entry_expires() {
        assert_eq!(refresh_delay(300.0), Some(Duration::from_secs(270)));
        assert_eq!(refresh_delay(12.0), Some(Duration::from_secs(2)));
        assert_eq!(refresh_delay(10.0), None);
    }

    #[test]
    fn a_refresh_is_sent_when_it_pays_for_itself() {
        let cost = ModelCost { output: 15.0, cache_read: 0.3, cache_write: 3.75, ..ModelCost::default() };
        // A million tokens: a miss costs $3.45 more than a hit; idle, 15% of that is worth $0.52,
        // less the $0.30 refresh.
        assert!(expected_savings(&cost, 1_000_000, true) >= MINIMUM_EXPECTED_SAVINGS);
        assert!(expected_savings(&cost, 10_000, true) < MINIMUM_EXPECTED_SAVINGS);
        assert!(expected_savings(&cost, 100_000, false) >= MINIMUM_EXPECTED_SAVINGS);
    }
}
