//! A session's events as spans and metrics. A prompt is one span, from its first `agent_start`
//! to `agent_settled` (retries and continuations inside it included); each model request (an
//! assistant message, `message_start` to `message_end`) and each tool call
//! (`tool_execution_start` to `_end`) is a child span of it. Every span and measurement carries
//! the session's id, read as the event arrives (it follows session switches). Only names,
//! counts, durations and outcomes are recorded: no prompt, reply or tool text.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Array, Context, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::Span;
use parking_lot::Mutex;
use rho_agent::AgentEvent;
use rho_types::AgentMessage;
use rho_types::types::{AssistantMessage, StopReason};

use crate::attributes as a;
use crate::pipeline::{self, Pipeline};

/// Watches one session's events; built only when telemetry is on.
pub struct SessionObserver {
    pipeline: &'static Pipeline,
    session_id: Arc<Mutex<String>>,
    run: Mutex<Run>,
}

impl std::fmt::Debug for SessionObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionObserver").finish_non_exhaustive()
    }
}

/// What is open in the current prompt.
#[derive(Default)]
struct Run {
    prompt: Option<Prompt>,
    request: Option<Timed>,
    tools: HashMap<String, Timed>,
}

struct Prompt {
    context: Context,
    totals: Totals,
}

#[derive(Default)]
struct Totals {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    cost: f64,
    requests: i64,
    tool_calls: i64,
}

/// A span (when traces are exported) and when it began.
struct Timed {
    span: Option<Span>,
    started: Instant,
}

impl SessionObserver {
    /// An observer for the session whose id `session_id` holds; `None` when telemetry is off.
    pub fn new(session_id: Arc<Mutex<String>>) -> Option<Self> {
        Some(Self { pipeline: pipeline::get()?, session_id, run: Mutex::new(Run::default()) })
    }

    /// One of the agent's events.
    pub fn observe(&self, event: &AgentEvent) {
        match event {
            AgentEvent::AgentStart => self.prompt_start(),
            AgentEvent::MessageStart { message: AgentMessage::Assistant(message) } => self.request_start(message),
            AgentEvent::MessageEnd { message: AgentMessage::Assistant(message) } => self.request_end(message),
            AgentEvent::ToolExecutionStart { tool_call_id, tool_name, .. } => self.tool_start(tool_call_id, tool_name),
            AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, is_error, duration_ms, .. } => {
                self.tool_end(tool_call_id, tool_name, *is_error, *duration_ms);
            }
            _ => {}
        }
    }

    /// The prompt's lifecycle ended (`agent_settled`): its span ends, with whatever it left open.
    pub fn settled(&self, aborted: bool) {
        let mut run = self.run.lock();
        let open = run.request.take().into_iter().chain(run.tools.drain().map(|(_, timed)| timed));
        for mut span in open.filter_map(|timed| timed.span) {
            span.set_attribute(KeyValue::new(a::ABORTED, true));
            span.end();
        }
        let Some(prompt) = run.prompt.take() else {
            return;
        };
        let span = prompt.context.span();
        let t = &prompt.totals;
        span.set_attributes([
            KeyValue::new(a::ABORTED, aborted),
            KeyValue::new(a::INPUT_TOKENS, t.input as i64),
            KeyValue::new(a::OUTPUT_TOKENS, t.output as i64),
            KeyValue::new(a::CACHE_READ_TOKENS, t.cache_read as i64),
            KeyValue::new(a::CACHE_WRITE_TOKENS, t.cache_write as i64),
            KeyValue::new(a::COST_USD, t.cost),
            KeyValue::new(a::MODEL_REQUESTS, t.requests),
            KeyValue::new(a::TOOL_CALLS, t.tool_calls),
        ]);
        span.end();
    }

    fn session(&self) -> KeyValue {
        KeyValue::new(a::SESSION_ID, self.session_id.lock().clone())
    }

    /// A child span of the open prompt (a root span when none is open).
    fn child(&self, run: &Run, name: String, kind: SpanKind, attributes: Vec<KeyValue>) -> Option<Span> {
        let tracer = self.pipeline.tracer.as_ref()?;
        let builder = tracer.span_builder(name).with_kind(kind).with_attributes(attributes);
        let parent = run.prompt.as_ref().map_or_else(Context::new, |p| p.context.clone());
        Some(tracer.build_with_context(builder, &parent))
    }

    fn prompt_start(&self) {
        let mut run = self.run.lock();
        // A retry or a continuation runs the agent again within the same prompt.
        if run.prompt.is_some() {
            return;
        }
        let session = self.session();
        if let Some(instruments) = &self.pipeline.instruments {
            instruments.prompts.add(1, std::slice::from_ref(&session));
        }
        let context = match &self.pipeline.tracer {
            Some(tracer) => {
                let builder = tracer.span_builder(format!("{} rho", a::INVOKE_AGENT)).with_attributes([
                    session,
                    KeyValue::new(a::OPERATION_NAME, a::INVOKE_AGENT),
                    KeyValue::new(a::AGENT_NAME, "rho"),
                ]);
                Context::new().with_span(tracer.build_with_context(builder, &Context::new()))
            }
            None => Context::new(),
        };
        run.prompt = Some(Prompt { context, totals: Totals::default() });
    }

    fn request_start(&self, message: &AssistantMessage) {
        let mut run = self.run.lock();
        let attributes = vec![
            self.session(),
            KeyValue::new(a::OPERATION_NAME, a::CHAT),
            KeyValue::new(a::SYSTEM, message.provider.clone()),
            KeyValue::new(a::PROVIDER_NAME, message.provider.clone()),
            KeyValue::new(a::REQUEST_MODEL, message.model.clone()),
            KeyValue::new(a::API, message.api.clone()),
        ];
        let span = self.child(&run, format!("{} {}", a::CHAT, message.model), SpanKind::Client, attributes);
        if let Some(mut earlier) = run.request.replace(Timed { span, started: Instant::now() }).and_then(|t| t.span) {
            earlier.end();
        }
    }

    fn request_end(&self, message: &AssistantMessage) {
        let mut run = self.run.lock();
        let started = run.request.take();
        let usage = &message.usage;
        if let Some(prompt) = &mut run.prompt {
            let t = &mut prompt.totals;
            t.input += usage.input;
            t.output += usage.output;
            t.cache_read += usage.cache_read;
            t.cache_write += usage.cache_write;
            t.cost += usage.cost.total;
            t.requests += 1;
        }
        drop(run);
        let elapsed = started.as_ref().map(|t| t.started.elapsed());
        if let Some(instruments) = &self.pipeline.instruments {
            let model = [
                self.session(),
                KeyValue::new(a::SYSTEM, message.provider.clone()),
                KeyValue::new(a::REQUEST_MODEL, message.model.clone()),
            ];
            let with = |extra: KeyValue| {
                let mut attributes = model.to_vec();
                attributes.push(extra);
                attributes
            };
            instruments.model_requests.add(1, &with(KeyValue::new(a::STOP_REASON, message.stop_reason.as_str())));
            for (kind, count) in [
                ("input", usage.input),
                ("output", usage.output),
                ("cache_read", usage.cache_read),
                ("cache_write", usage.cache_write),
            ] {
                if count > 0 {
                    instruments.tokens.add(count, &with(KeyValue::new(a::TOKEN_TYPE, kind)));
                }
            }
            if usage.cost.total > 0.0 {
                instruments.cost.add(usage.cost.total, &model);
            }
            if let Some(elapsed) = elapsed {
                instruments.model_request_duration.record(elapsed.as_secs_f64(), &model);
            }
        }
        let Some(mut span) = started.and_then(|t| t.span) else {
            return;
        };
        let mut attributes = vec![
            KeyValue::new(a::RESPONSE_MODEL, message.model.clone()),
            KeyValue::new(a::STOP_REASON, message.stop_reason.as_str()),
            KeyValue::new(
                a::FINISH_REASONS,
                Value::Array(Array::String(vec![StringValue::from(message.stop_reason.as_str())])),
            ),
            KeyValue::new(a::INPUT_TOKENS, usage.input as i64),
            KeyValue::new(a::OUTPUT_TOKENS, usage.output as i64),
            KeyValue::new(a::CACHE_READ_TOKENS, usage.cache_read as i64),
            KeyValue::new(a::CACHE_WRITE_TOKENS, usage.cache_write as i64),
            KeyValue::new(a::COST_USD, usage.cost.total),
        ];
        if let Some(id) = &message.response_id {
            attributes.push(KeyValue::new(a::RESPONSE_ID, id.clone()));
        }
        if let Some(ttft) = message.ttft {
            attributes.push(KeyValue::new(a::TTFT_MS, i64::from(ttft)));
        }
        span.set_attributes(attributes);
        match message.stop_reason {
            StopReason::Error => {
                span.set_status(Status::error(message.error_message.clone().unwrap_or_default()));
            }
            StopReason::Aborted => span.set_attribute(KeyValue::new(a::ABORTED, true)),
            _ => {}
        }
        span.end();
    }

    fn tool_start(&self, id: &str, name: &str) {
        let mut run = self.run.lock();
        let attributes = vec![
            self.session(),
            KeyValue::new(a::OPERATION_NAME, a::EXECUTE_TOOL),
            KeyValue::new(a::TOOL_NAME, name.to_owned()),
            KeyValue::new(a::TOOL_CALL_ID, id.to_owned()),
        ];
        let span = self.child(&run, format!("{} {name}", a::EXECUTE_TOOL), SpanKind::Internal, attributes);
        run.tools.insert(id.to_owned(), Timed { span, started: Instant::now() });
    }

    fn tool_end(&self, id: &str, name: &str, is_error: bool, duration_ms: Option<u64>) {
        let mut run = self.run.lock();
        if let Some(prompt) = &mut run.prompt {
            prompt.totals.tool_calls += 1;
        }
        let started = run.tools.remove(id);
        let duration = match (duration_ms, &started) {
            (Some(ms), _) => Some(Duration::from_millis(ms)),
            (None, Some(t)) => Some(t.started.elapsed()),
            (None, None) => None,
        };
        // A call that ended without starting (refused before it ran) still gets its span.
        let span = match started {
            Some(timed) => timed.span,
            None => {
                let attributes = vec![
                    self.session(),
                    KeyValue::new(a::OPERATION_NAME, a::EXECUTE_TOOL),
                    KeyValue::new(a::TOOL_NAME, name.to_owned()),
                    KeyValue::new(a::TOOL_CALL_ID, id.to_owned()),
                ];
                self.child(&run, format!("{} {name}", a::EXECUTE_TOOL), SpanKind::Internal, attributes)
            }
        };
        drop(run);
        let outcome = KeyValue::new(a::TOOL_OUTCOME, if is_error { "error" } else { "ok" });
        if let Some(instruments) = &self.pipeline.instruments {
            let attributes = [self.session(), KeyValue::new(a::TOOL_NAME, name.to_owned()), outcome];
            instruments.tool_calls.add(1, &attributes);
            if let Some(duration) = duration {
                instruments.tool_call_duration.record(duration.as_secs_f64(), &attributes);
            }
        }
        let Some(mut span) = span else {
            return;
        };
        span.set_attribute(KeyValue::new(a::TOOL_IS_ERROR, is_error));
        if let Some(ms) = duration_ms {
            span.set_attribute(KeyValue::new(a::TOOL_DURATION_MS, ms as i64));
        }
        if is_error {
            span.set_status(Status::error("the tool call failed"));
        }
        span.end();
    }
}
