//! Anthropic's message threads (pi 1.6; beta `message-threads-2026-08-12`): the server keeps a
//! session's conversation, so the request after a clean reply sends only what came after that
//! reply, with `thread: {type: "continue", previous_message_id}` and without `system` and
//! `tools` (the thread keeps its own); a full request starts a thread (`thread: {type:
//! "create"}`). A continuation is sent only when what the server holds is the start of the
//! conversation as it is now: a hash of the request's fixed settings and of the messages the
//! server has (normalised so that moved cache markers and string-or-block content hash the same)
//! must match the one recorded with the reply. Each reply is continued at most once.
//!
//! A rejected continuation (expired, raced, changed settings) is sent again whole as a new
//! thread; an endpoint that cannot use threads gets the request without `thread` and no more
//! threads for the session. On by default for `api.anthropic.com` only (a gateway that drops
//! the unknown field would answer a continuation without the conversation);
//! `compat.supportsMessageThreads` says otherwise.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use parking_lot::Mutex;
use serde_json::{Map, Value, json};

use crate::error::ProviderError;
use crate::model::Model;
use crate::stream::StreamOptions;
use crate::types::AssistantMessage;

/// The beta a request that may use threads names.
pub(crate) const BETA: &str = "message-threads-2026-08-12";

/// Rejections of a continuation that a new thread mends.
const NEW_THREAD_ERRORS: [&str; 4] =
    ["thread_not_found", "thread_already_continued", "thread_continue_in_flight", "thread_fingerprint_mismatch"];

/// The most sessions whose thread is remembered; past it the least recently used is forgotten
/// (its thread has most likely expired on the server anyway).
const MAX_SESSIONS: usize = 10_000;

#[derive(Debug, Clone, PartialEq)]
enum State {
    /// The endpoint rejected threads: requests go without `thread`.
    Off,
    /// The last clean reply: the messages the server holds and their hash, and the reply's id.
    At { prefix_count: usize, prefix_hash: u64, reply_id: String },
}

/// By session id: the state and when it was last set (for the cap).
static STATES: LazyLock<Mutex<HashMap<String, (u64, State)>>> = LazyLock::new(Mutex::default);
static CLOCK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn set(session: &str, state: State) {
    let tick = CLOCK.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut states = STATES.lock();
    states.insert(session.to_owned(), (tick, state));
    if states.len() > MAX_SESSIONS
        && let Some(oldest) = states.iter().min_by_key(|(_, (tick, _))| *tick).map(|(k, _)| k.clone())
    {
        states.remove(&oldest);
    }
}

/// The session whose requests may use threads: `model`'s endpoint takes them and the request
/// belongs to a session.
pub(crate) fn session<'a>(model: &Model, options: &'a StreamOptions) -> Option<&'a str> {
    let supported =
        model.compat_bool("supportsMessageThreads").unwrap_or_else(|| model.base_url.contains("api.anthropic.com"));
    options.session_id.as_deref().filter(|_| supported)
}

/// A request of a session that may use threads: the full body it was built as, and what is sent.
pub(crate) struct Threaded {
    session: String,
    /// The request as built, without `thread` (what a resend starts from, and what a reply is
    /// recorded against).
    full: Value,
    /// `full`'s settings hash input, computed once.
    settings: String,
    /// The body to send first.
    pub body: Value,
    /// What was sent last carries `thread`.
    with_thread: bool,
}

impl Threaded {
    /// Plans `full`'s request for `session`: a continuation when the recorded reply can be
    /// continued, a new thread otherwise, or the body as it is once threads are off.
    pub(crate) fn plan(session: &str, model: &Model, full: Value, betas: &str) -> Self {
        let settings = settings_of(model, &full, betas);
        let state = STATES.lock().get(session).map(|(_, state)| state.clone());
        let with_thread = state != Some(State::Off);
        let body = match state {
            Some(State::Off) => full.clone(),
            Some(State::At { prefix_count, prefix_hash, reply_id })
                if messages(&full).len() > prefix_count
                    && prefix_hash == hash(&settings, &messages(&full)[..prefix_count]) =>
            {
                // Each reply is continued once; a concurrent request starts a thread of its own.
                STATES.lock().remove(session);
                continuation(&full, prefix_count, &reply_id)
            }
            _ => created(&full),
        };
        Self { session: session.to_owned(), full, settings, body, with_thread }
    }

    /// What to send after `error` answered the first request: the request whole as a new thread
    /// when the thread could not be continued, or without `thread` when the endpoint cannot use
    /// threads (then off for the session). `None`: the error is not about the thread.
    pub(crate) fn after_rejection(&mut self, error: &ProviderError) -> Option<Value> {
        let ProviderError::Http { status, message, code, .. } = error else { return None };
        let code = code.as_deref();
        if !self.with_thread {
            return None;
        }
        if code.is_some_and(|c| NEW_THREAD_ERRORS.contains(&c)) {
            return Some(created(&self.full));
        }
        // An endpoint that does not know the field rejects it without a code ("thread: Extra
        // inputs are not permitted").
        let unsupported = code == Some("thread_unsupported_request")
            || (code.is_none() && *status == 400 && message.contains("thread"));
        if !unsupported {
            return None;
        }
        set(&self.session, State::Off);
        self.with_thread = false;
        Some(self.full.clone())
    }

    /// Records where the session's next request can continue: after `reply`, the clean answer
    /// to a request sent with a thread (a reply a fallback model gave is not kept by the server).
    pub(crate) fn record(self, model: &Model, reply: &AssistantMessage) {
        if !self.with_thread || reply.response_model.is_some() {
            return;
        }
        let Some(reply_id) = reply.response_id.clone() else { return };
        let Value::Object(mut full) = self.full else { return };
        let Some(Value::Array(mut prefix)) = full.remove("messages") else { return };
        // The reply as the next request will send it.
        let replied = super::format::assistant_as_sent(model, reply);
        prefix.extend(replied);
        let prefix_hash = hash(&self.settings, &prefix);
        set(&self.session, State::At { prefix_count: prefix.len(), prefix_hash, reply_id });
    }
}

fn messages(body: &Value) -> &[Value] {
    body.get("messages").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn created(full: &Value) -> Value {
    with_thread(full.clone(), json!({"type": "create"}))
}

fn continuation(full: &Value, prefix_count: usize, reply_id: &str) -> Value {
    let Value::Object(full) = full else { return full.clone() };
    let mut body: Map<String, Value> = full
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "system" | "tools" | "messages"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    body.insert("messages".into(), Value::Array(messages_of(full)[prefix_count..].to_vec()));
    with_thread(Value::Object(body), json!({"type": "continue", "previous_message_id": reply_id}))
}

fn messages_of(body: &Map<String, Value>) -> &[Value] {
    body.get("messages").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn with_thread(mut body: Value, thread: Value) -> Value {
    if let Value::Object(map) = &mut body {
        map.insert("thread".into(), thread);
    }
    body
}

/// The settings a thread is fixed to, as sent: the endpoint, and the fields a continuation
/// leaves out (`system`, `tools`) or the server checks.
fn settings_of(model: &Model, body: &Value, betas: &str) -> String {
    let field = |key: &str| body.get(key).cloned().unwrap_or(Value::Null);
    json!([
        model.provider,
        model.base_url,
        field("model"),
        field("system"),
        field("tools"),
        field("thinking"),
        field("output_config"),
        field("tool_choice"),
        betas,
        field("fallbacks"),
    ])
    .to_string()
}

/// The hash of `settings` and `messages`, normalised: cache markers move from request to
/// request, and the newest user message's string content is sent as one text block.
fn hash(settings: &str, messages: &[Value]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    settings.hash(&mut hasher);
    for message in messages {
        normalised(message).to_string().hash(&mut hasher);
    }
    hasher.finish()
}

fn normalised(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| match (k.as_str(), v) {
                    ("content", Value::String(text)) => (k.clone(), json!([{"type": "text", "text": text}])),
                    _ => (k.clone(), normalised(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalised).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(base_url: &str) -> Model {
        let mut model = crate::catalog::models().find(|m| m.api == "anthropic-messages").unwrap();
        model.base_url = base_url.to_owned();
        model
    }

    #[test]
    fn threads_are_on_for_anthropics_own_endpoint_or_when_compat_says_so() {
        let options = StreamOptions { session_id: Some("s".into()), ..StreamOptions::default() };
        assert_eq!(session(&model("https://api.anthropic.com"), &options), Some("s"));
        let mut proxied = model("https://proxy.example.com");
        assert_eq!(session(&proxied, &options), None);
        proxied.compat = Some(serde_json::from_value(json!({"supportsMessageThreads": true})).unwrap());
        assert_eq!(session(&proxied, &options), Some("s"));
        assert_eq!(session(&proxied, &StreamOptions::default()), None, "no session, no thread");
    }

    #[test]
    fn moved_cache_markers_and_string_content_hash_the_same() {
        let marked = [
            json!({"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}),
        ];
        let plain = [json!({"role": "user", "content": "hi"})];
        assert_eq!(hash("s", &marked), hash("s", &plain));
        assert_ne!(hash("s", &plain), hash("other settings", &plain));
    }
}
