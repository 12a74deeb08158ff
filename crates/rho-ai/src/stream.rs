//! Streaming a model's reply: [`stream`] picks the provider for the model's API, runs it in its
//! own task and hands back an [`AssistantMessageStream`] of events.
//!
//! Providers never touch the channel directly; they drive an [`Emitter`], which builds the
//! message, numbers the content blocks, emits the events in order, prices the usage and turns
//! cancellation and failures into the final `error` event. A stream therefore always ends with
//! exactly one `done` or `error`.

use std::sync::Arc;

use futures::future::BoxFuture;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use rho_types::Text;

use crate::error::ProviderError;
use crate::event::AssistantMessageEvent;
use crate::model::{Model, ThinkingLevel};
use crate::partial_json;
use crate::providers;
use crate::sse::{Interrupted, SseStream};
use crate::transport::Transport;
use crate::types::{
    AssistantContent, AssistantMessage, Context, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
};

/// The text of `errorMessage` for a request cancelled by its token.
pub const ABORTED_MESSAGE: &str = "Request was aborted";

/// Token budgets for budget-based thinking, per level (settings `thinkingBudgets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkingBudgets {
    pub minimal: u64,
    pub low: u64,
    pub medium: u64,
    pub high: u64,
}

impl Default for ThinkingBudgets {
    fn default() -> Self {
        Self { minimal: 1024, low: 2048, medium: 8192, high: 16384 }
    }
}

impl ThinkingBudgets {
    pub fn for_level(&self, level: ThinkingLevel) -> u64 {
        match level {
            ThinkingLevel::Off => 0,
            ThinkingLevel::Minimal => self.minimal,
            ThinkingLevel::Low => self.low,
            ThinkingLevel::Medium => self.medium,
            ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => self.high,
        }
    }
}

/// How the model must use tools on this request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    #[default]
    Auto,
    /// Force a call of the named tool.
    Tool(String),
}

/// How long a server should keep the conversation's prompt cached (pi's `cacheRetention`).
/// Providers that cache by themselves are only told the key and, where they have one, the
/// longer retention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheRetention {
    /// No caching asked for: no cache markers and no cache key.
    None,
    /// The provider's default (Anthropic's five minutes).
    Short,
    /// An hour, or a day where the provider offers that (`prompt_cache_retention: "24h"`).
    Long,
}

#[derive(Debug, Clone)]
pub struct StreamOptions {
    pub api_key: Option<String>,
    /// Why there is no `api_key` when the provider's subscription login should have given one
    /// (it expired and could not be refreshed): the request is not made, and the reply fails
    /// with this text instead of going out unauthenticated.
    pub login_problem: Option<String>,
    /// `Off` sends no reasoning option.
    pub thinking: ThinkingLevel,
    pub thinking_budgets: ThinkingBudgets,
    /// Output cap; defaults to `min(model.maxTokens, 32000)`.
    pub max_tokens: Option<u64>,
    pub temperature: Option<f64>,
    /// Sent as the prompt-cache key where the API has one.
    pub session_id: Option<String>,
    /// Unset: `long` when `PI_CACHE_RETENTION=long`, else `short`, as pi decides it. Read by the
    /// Chat Completions provider.
    pub cache_retention: Option<CacheRetention>,
    pub tool_choice: ToolChoice,
    /// Extra request headers (resolved values), after the model's own.
    pub headers: Vec<(String, String)>,
    /// Fail when no byte arrives for this long.
    pub idle_timeout: Duration,
    /// How a provider reachable two ways is reached (ChatGPT's Codex backend).
    pub transport: Transport,
    pub cancel: CancellationToken,
    /// What sees the request on its way out and the response on its way in (extensions).
    pub hooks: RequestHooks,
    /// Streams the reply instead of rho-ai's providers (an extension's `streamSimple`).
    pub custom: Option<Arc<dyn CustomProvider>>,
}

/// A provider implemented outside rho-ai: it makes the request and drives the [`Emitter`] (the
/// stream's start, blocks and usage); its `Ok` stop reason ends the stream with `done`, an
/// `Err` with `error`, exactly as a built-in provider's would.
pub trait CustomProvider: Send + Sync + std::fmt::Debug {
    fn run<'a>(
        &'a self,
        model: &'a Model,
        context: &'a Context,
        options: &'a StreamOptions,
        emitter: &'a mut Emitter,
    ) -> BoxFuture<'a, Result<StopReason, Interrupted>>;
}

/// Sees a request's JSON body just before it is sent and returns the body to send (pi's
/// `before_provider_request`).
pub type PayloadHook = Arc<dyn Fn(serde_json::Value) -> BoxFuture<'static, serde_json::Value> + Send + Sync>;

/// Sees a request's headers just before it is sent and returns the headers to send (pi 1.6's
/// `before_provider_headers`); a header left out is not sent.
pub type HeadersHook = Arc<dyn Fn(Vec<(String, String)>) -> BoxFuture<'static, Vec<(String, String)>> + Send + Sync>;

/// Told a response's status and headers before its body is read (pi's
/// `after_provider_response`).
pub type ResponseHook = Arc<dyn Fn(u16, Vec<(String, String)>) + Send + Sync>;

/// Told each event's data as the provider sent it, before rho reads it (pi 1.6's
/// `provider_stream_event`).
pub type StreamEventHook = Arc<dyn Fn(&str) + Send + Sync>;

/// The hooks around one request; none by default.
#[derive(Clone, Default)]
pub struct RequestHooks {
    pub payload: Option<PayloadHook>,
    pub headers: Option<HeadersHook>,
    pub response: Option<ResponseHook>,
    pub stream_event: Option<StreamEventHook>,
}

impl std::fmt::Debug for RequestHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHooks")
            .field("payload", &self.payload.is_some())
            .field("headers", &self.headers.is_some())
            .field("response", &self.response.is_some())
            .field("stream_event", &self.stream_event.is_some())
            .finish()
    }
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            api_key: None,
            login_problem: None,
            thinking: ThinkingLevel::Off,
            thinking_budgets: ThinkingBudgets::default(),
            max_tokens: None,
            temperature: None,
            session_id: None,
            cache_retention: None,
            tool_choice: ToolChoice::Auto,
            headers: Vec::new(),
            idle_timeout: Duration::from_secs(300),
            transport: Transport::default(),
            cancel: CancellationToken::new(),
            hooks: RequestHooks::default(),
            custom: None,
        }
    }
}

impl StreamOptions {
    /// The output cap for `model`: the explicit one, else `min(model.maxTokens, 32000)`.
    pub fn max_tokens_for(&self, model: &Model) -> u64 {
        self.max_tokens.unwrap_or_else(|| model.max_tokens.clamp(1, 32_000))
    }
}

/// The events of one streamed reply. Always ends with `done` or `error`.
#[derive(Debug)]
pub struct AssistantMessageStream {
    rx: mpsc::Receiver<AssistantMessageEvent>,
}

impl AssistantMessageStream {
    pub async fn next(&mut self) -> Option<AssistantMessageEvent> {
        self.rx.recv().await
    }

    /// Drains the stream and returns the final message (the `done` message or the `error`
    /// message).
    pub async fn result(mut self) -> AssistantMessage {
        let mut last = None;
        while let Some(event) = self.rx.recv().await {
            match event {
                AssistantMessageEvent::Done { message, .. } => return message,
                AssistantMessageEvent::Error { error, .. } => return error,
                other => last = Some(other),
            }
        }
        drop(last);
        let mut msg = AssistantMessage::empty("", "", "");
        msg.stop_reason = StopReason::Error;
        msg.error_message = Some("Stream ended without a result".into());
        msg
    }
}

/// Streams `model`'s reply to `context`. The request starts at once in its own task.
pub fn stream(model: &Model, context: Context, mut options: StreamOptions) -> AssistantMessageStream {
    let (tx, rx) = mpsc::channel(256);
    // A base URL with `{NAME}` placeholders (Cloudflare's) is filled from the environment now.
    let filled = crate::cloudflare::fill_base_url(model, |name| std::env::var(name).ok());
    let model = match &filled {
        Ok(Some(filled)) => filled.clone(),
        _ => model.clone(),
    };
    tokio::spawn(async move {
        let mut emitter = Emitter::new(&model, tx, options.cancel.clone());
        if let Err(problem) = filled {
            emitter.finish_interrupted(ProviderError::Config(problem).into()).await;
            return;
        }
        if options.cancel.is_cancelled() {
            emitter.finish_interrupted(Interrupted::Cancelled).await;
            return;
        }
        if let Some(problem) = options.login_problem.clone().filter(|_| options.api_key.is_none()) {
            emitter.finish_interrupted(ProviderError::Login(problem).into()).await;
            return;
        }
        crate::cloudflare::gateway_auth(&model, &mut options);
        let result = match options.custom.clone() {
            Some(custom) => custom.run(&model, &context, &options, &mut emitter).await,
            None => providers::run(&model, context, &options, &mut emitter).await,
        };
        match result {
            Ok(stop) => emitter.finish(stop).await,
            Err(interrupted) => emitter.finish_interrupted(interrupted).await,
        }
    });
    AssistantMessageStream { rx }
}

/// Decodes `sse`, a reply body already at hand, the way `model`'s API streams it: the provider's
/// streaming half without the request (for recorded replies and benchmarks).
pub fn stream_sse(model: &Model, sse: SseStream, options: StreamOptions) -> AssistantMessageStream {
    let (tx, rx) = mpsc::channel(256);
    let model = model.clone();
    tokio::spawn(async move {
        let mut emitter = Emitter::new(&model, tx, options.cancel.clone());
        let result = providers::decode(&model, sse, &options, &mut emitter).await;
        match result {
            Ok(stop) => emitter.finish(stop).await,
            Err(interrupted) => emitter.finish_interrupted(interrupted).await,
        }
    });
    AssistantMessageStream { rx }
}

/// Streams and waits for the final message.
pub async fn complete(model: &Model, context: Context, options: StreamOptions) -> AssistantMessage {
    stream(model, context, options).result().await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
    ToolCall,
}

/// Builds the message and emits its events; the one path from provider chunks to events.
#[derive(Debug)]
pub struct Emitter {
    tx: mpsc::Sender<AssistantMessageEvent>,
    message: AssistantMessage,
    cost: crate::types::ModelCost,
    /// The prices of the models the provider may answer with instead (pi 1.6's
    /// `compat.allowedFallbackModels` of the same provider), by id.
    fallback_costs: Vec<(String, crate::types::ModelCost)>,
    started: bool,
    /// Blocks still open: (content index, kind, raw JSON of a tool call's arguments).
    open: Vec<(usize, BlockKind, String)>,
    began: Instant,
    first_token: Option<Instant>,
    cancel: CancellationToken,
    receiver_gone: bool,
}

/// The priced fallbacks of `model` (`compat.allowedFallbackModels` of its own provider).
fn fallback_costs(model: &Model) -> Vec<(String, crate::types::ModelCost)> {
    let Some(allowed) = model.compat.as_ref().and_then(|c| c.get("allowedFallbackModels")).and_then(|a| a.as_array())
    else {
        return Vec::new();
    };
    allowed
        .iter()
        .filter(|f| f.get("provider").and_then(|p| p.as_str()) == Some(model.provider.as_str()))
        .filter_map(|f| {
            let id = f.get("model")?.as_str()?.to_owned();
            let cost = serde_json::from_value(f.get("cost")?.clone()).ok()?;
            Some((id, cost))
        })
        .collect()
}

impl Emitter {
    fn new(model: &Model, tx: mpsc::Sender<AssistantMessageEvent>, cancel: CancellationToken) -> Self {
        Self {
            tx,
            message: AssistantMessage::empty(&model.api, &model.provider, &model.id),
            cost: model.cost.clone(),
            fallback_costs: fallback_costs(model),
            started: false,
            open: Vec::new(),
            began: Instant::now(),
            first_token: None,
            cancel,
            receiver_gone: false,
        }
    }

    async fn emit(&mut self, event: AssistantMessageEvent) {
        if self.receiver_gone {
            return;
        }
        if self.tx.send(event).await.is_err() {
            // Nobody listens any more: stop the provider at its next await.
            self.receiver_gone = true;
            self.cancel.cancel();
        }
    }

    /// The finished message for the stream's last event: its content moved out, not copied
    /// (a long reply is not held twice); nothing is emitted after it.
    fn take_message(&mut self) -> AssistantMessage {
        let content = std::mem::take(&mut self.message.content);
        AssistantMessage { content, ..self.message.clone() }
    }

    /// The message built so far.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    pub fn usage_mut(&mut self) -> &mut Usage {
        &mut self.message.usage
    }

    /// The provider says which model answered: another than the one asked is named in the
    /// message (`responseModel`), and one of the model's fallbacks is priced at its own prices.
    pub fn answered_by(&mut self, model_id: &str) {
        if model_id.is_empty() || model_id == self.message.model {
            return;
        }
        self.message.response_model = Some(model_id.into());
        if let Some((_, cost)) = self.fallback_costs.iter().find(|(id, _)| id == model_id) {
            self.cost = cost.clone();
        }
    }

    pub fn set_response_id(&mut self, id: impl Into<String>) {
        self.message.response_id = Some(id.into());
    }

    /// The stop reason as the provider said it, kept beside the one it maps to.
    pub fn set_raw_stop_reason(&mut self, reason: impl Into<String>) {
        self.message.raw_stop_reason = Some(reason.into());
    }

    /// Emits `start` once, carrying the response id and usage known so far.
    pub async fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        // Priced as far as it is known, as the reference reports it from the first event on.
        self.message.usage.finish(&self.cost);
        let mut partial = self.message.clone();
        partial.content.clear();
        self.emit(AssistantMessageEvent::Start { partial }).await;
    }

    fn mark_token(&mut self) {
        if self.first_token.is_none() {
            self.first_token = Some(Instant::now());
        }
    }

    fn open_index(&self, kind: BlockKind) -> Option<usize> {
        self.open.iter().rev().find(|(_, k, _)| *k == kind).map(|(i, _, _)| *i)
    }

    /// Opens a text block and returns its content index.
    pub async fn open_text(&mut self) -> usize {
        self.start().await;
        let index = self.message.content.len();
        self.message.content.push(AssistantContent::Text(TextContent::new("")));
        self.open.push((index, BlockKind::Text, String::new()));
        self.emit(AssistantMessageEvent::TextStart { content_index: index }).await;
        index
    }

    /// Appends to the text block at `index`. An owned delta is moved into its event, not
    /// copied (a provider may hand over megabytes at once).
    pub async fn text_delta(&mut self, index: usize, delta: impl Into<Text>) {
        self.owned_text_delta(index, delta.into()).await;
    }

    async fn owned_text_delta(&mut self, index: usize, delta: Text) {
        if delta.is_empty() {
            return;
        }
        self.mark_token();
        if let Some(AssistantContent::Text(t)) = self.message.content.get_mut(index) {
            t.text.append(&delta);
        }
        self.emit(AssistantMessageEvent::TextDelta { content_index: index, delta }).await;
    }

    /// Appends to the open text block, first closing any other open block and opening a text
    /// block when none is open (for APIs whose blocks are implicit).
    pub async fn text(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let index = match self.open_index(BlockKind::Text) {
            Some(i) if self.open.last().map(|(j, _, _)| *j) == Some(i) => i,
            _ => {
                self.close_all().await;
                self.open_text().await
            }
        };
        self.text_delta(index, delta).await;
    }

    pub async fn set_text_signature(&mut self, index: usize, signature: String) {
        if let Some(AssistantContent::Text(t)) = self.message.content.get_mut(index) {
            t.text_signature = Some(signature);
        }
    }

    pub async fn open_thinking(&mut self) -> usize {
        self.start().await;
        let index = self.message.content.len();
        self.message.content.push(AssistantContent::Thinking(ThinkingContent {
            thinking: Text::default(),
            thinking_signature: None,
            redacted: None,
        }));
        self.open.push((index, BlockKind::Thinking, String::new()));
        self.emit(AssistantMessageEvent::ThinkingStart { content_index: index }).await;
        index
    }

    /// Appends to the thinking block at `index`; an owned delta is moved into its event.
    pub async fn thinking_delta(&mut self, index: usize, delta: impl Into<Text>) {
        self.owned_thinking_delta(index, delta.into()).await;
    }

    async fn owned_thinking_delta(&mut self, index: usize, delta: Text) {
        if delta.is_empty() {
            return;
        }
        self.mark_token();
        if let Some(AssistantContent::Thinking(t)) = self.message.content.get_mut(index) {
            t.thinking.append(&delta);
        }
        self.emit(AssistantMessageEvent::ThinkingDelta { content_index: index, delta }).await;
    }

    /// Like [`Emitter::text`] for thinking.
    pub async fn thinking(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let index = match self.open_index(BlockKind::Thinking) {
            Some(i) if self.open.last().map(|(j, _, _)| *j) == Some(i) => i,
            _ => {
                self.close_all().await;
                self.open_thinking().await
            }
        };
        self.thinking_delta(index, delta).await;
    }

    pub fn set_thinking_signature(&mut self, index: usize, signature: String) {
        if let Some(AssistantContent::Thinking(t)) = self.message.content.get_mut(index) {
            match &mut t.thinking_signature {
                Some(existing) => existing.push_str(&signature),
                None => t.thinking_signature = Some(signature),
            }
        }
    }

    /// Sets a thinking block's signature, replacing any earlier one (for APIs that send the
    /// whole signature again rather than in pieces).
    pub fn replace_thinking_signature(&mut self, index: usize, signature: String) {
        if let Some(AssistantContent::Thinking(t)) = self.message.content.get_mut(index) {
            t.thinking_signature = Some(signature);
        }
    }

    /// Marks the thinking block at `index` as redacted (its text is the provider's stand-in).
    pub fn set_thinking_redacted(&mut self, index: usize) {
        if let Some(AssistantContent::Thinking(t)) = self.message.content.get_mut(index) {
            t.redacted = Some(true);
        }
    }

    /// The index of the open thinking block, if any.
    pub fn open_thinking_index(&self) -> Option<usize> {
        self.open_index(BlockKind::Thinking)
    }

    /// Adds a complete redacted-thinking block.
    pub async fn redacted_thinking(&mut self, data: String) {
        self.start().await;
        self.message.content.push(AssistantContent::RedactedThinking(crate::types::RedactedThinkingContent { data }));
    }

    pub async fn open_tool_call(&mut self, id: String, name: String) -> usize {
        self.start().await;
        self.mark_token();
        let index = self.message.content.len();
        self.message.content.push(AssistantContent::ToolCall(ToolCall {
            id: id.clone(),
            name: name.clone(),
            arguments: serde_json::Map::new(),
            thought_signature: None,
            intent: None,
        }));
        self.open.push((index, BlockKind::ToolCall, String::new()));
        self.emit(AssistantMessageEvent::ToolCallStart { content_index: index, id, name }).await;
        index
    }

    pub async fn tool_call_delta(&mut self, index: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some((_, _, raw)) = self.open.iter_mut().find(|(i, k, _)| *i == index && *k == BlockKind::ToolCall) {
            raw.push_str(delta);
        }
        self.emit(AssistantMessageEvent::ToolCallDelta { content_index: index, delta: delta.to_owned() }).await;
    }

    /// Sets the id or name of a tool call that is still open (some APIs send them late).
    pub fn update_tool_call(&mut self, index: usize, id: Option<&str>, name: Option<&str>) {
        if let Some(AssistantContent::ToolCall(call)) = self.message.content.get_mut(index) {
            if let Some(id) = id {
                id.clone_into(&mut call.id);
            }
            if let Some(name) = name {
                name.clone_into(&mut call.name);
            }
        }
    }

    pub fn set_thought_signature(&mut self, index: usize, signature: String) {
        if let Some(AssistantContent::ToolCall(call)) = self.message.content.get_mut(index) {
            call.thought_signature = Some(signature);
        }
    }

    /// Adds a complete tool call (for APIs that deliver calls whole): start, one delta with the
    /// whole arguments JSON, end.
    pub async fn tool_call(
        &mut self,
        id: String,
        name: String,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> usize {
        self.close_all().await;
        let index = self.open_tool_call(id, name).await;
        let raw = serde_json::to_string(&arguments).unwrap_or_else(|_| "{}".into());
        self.tool_call_delta(index, &raw).await;
        self.close(index).await;
        index
    }

    /// Closes the block at `index`, emitting its `*_end`.
    pub async fn close(&mut self, index: usize) {
        let Some(pos) = self.open.iter().position(|(i, _, _)| *i == index) else {
            return;
        };
        let (index, kind, raw) = self.open.remove(pos);
        let event = match (kind, self.message.content.get_mut(index)) {
            (BlockKind::Text, Some(AssistantContent::Text(t))) => AssistantMessageEvent::TextEnd {
                content_index: index,
                content: t.text.clone(),
                signature: t.text_signature.clone(),
            },
            (BlockKind::Thinking, Some(AssistantContent::Thinking(t))) => AssistantMessageEvent::ThinkingEnd {
                content_index: index,
                content: t.thinking.clone(),
                signature: t.thinking_signature.clone(),
            },
            (BlockKind::ToolCall, Some(AssistantContent::ToolCall(call))) => {
                call.arguments = parse_arguments(&raw);
                AssistantMessageEvent::ToolCallEnd { content_index: index, tool_call: call.clone() }
            }
            _ => return,
        };
        self.emit(event).await;
    }

    /// Closes every open block, oldest first.
    pub async fn close_all(&mut self) {
        while let Some((index, _, _)) = self.open.first() {
            let index = *index;
            self.close(index).await;
        }
    }

    fn stamp(&mut self) {
        let ms = |d: std::time::Duration| u32::try_from(d.as_millis()).unwrap_or(u32::MAX);
        let duration = ms(self.began.elapsed());
        self.message.duration = Some(duration);
        self.message.duration_ms = Some(duration);
        if let Some(first) = self.first_token {
            self.message.ttft = Some(ms(first.duration_since(self.began)));
        }
    }

    /// Ends the stream successfully.
    async fn finish(mut self, stop: StopReason) {
        self.close_all().await;
        self.start().await;
        let stop = if stop == StopReason::Stop && self.message.tool_calls().next().is_some() {
            StopReason::ToolUse
        } else {
            stop
        };
        self.message.stop_reason = stop;
        self.message.usage.finish(&self.cost);
        self.stamp();
        let message = self.take_message();
        self.emit(AssistantMessageEvent::Done { reason: stop, message }).await;
    }

    /// Ends the stream with an `error` event: aborted when cancelled, error otherwise. A request
    /// that failed before the provider answered still gets its `start`, so every stream has
    /// the same frame.
    async fn finish_interrupted(mut self, interrupted: Interrupted) {
        self.start().await;
        // Tool calls still streaming keep the arguments parsed so far.
        for (index, kind, raw) in std::mem::take(&mut self.open) {
            if kind == BlockKind::ToolCall
                && let Some(AssistantContent::ToolCall(call)) = self.message.content.get_mut(index)
            {
                call.arguments = partial_json::parse_object(&raw);
            }
        }
        let (reason, failure) = match interrupted {
            Interrupted::Cancelled => {
                self.message.error_message = Some(ABORTED_MESSAGE.into());
                (StopReason::Aborted, None)
            }
            Interrupted::Failed(e) => {
                let e = e.capped();
                self.message.error_message = Some(e.to_string());
                (StopReason::Error, Some(Arc::new(e)))
            }
        };
        self.message.stop_reason = reason;
        self.message.usage.finish(&self.cost);
        self.stamp();
        let error = self.take_message();
        self.emit(AssistantMessageEvent::Error { reason, error, failure }).await;
    }
}

/// Parses a finished tool call's arguments; malformed JSON keeps what can be recovered.
fn parse_arguments(raw: &str) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => partial_json::parse_object(raw),
    }
}
