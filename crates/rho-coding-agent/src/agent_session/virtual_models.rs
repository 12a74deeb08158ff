//! Requests made with a virtual model (pi 1.6's docs/virtual-models.md): the selection stays the
//! virtual model (`model_change`, `get_state`, `ctx.model`), and each request goes where the
//! extension's router sends it, a physical model with credentials, at a level clamped to it. The
//! reply names that physical model. What the router returns as `state` is stored on the branch as
//! a `pi.virtual-model-state` custom entry and handed back on the next request, so it follows
//! forks and survives compaction. A failed reply that a retry drops is kept for the retry's
//! `failed`.

use parking_lot::Mutex;
use rho_agent::Route;
use rho_extensions::RouteRequest;
use rho_session::SessionEntry;
use rho_types::types::AssistantMessage;
use rho_types::{AgentMessage, Model, ThinkingLevel, convert_to_llm};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::AgentSession;

/// The custom entry type that stores a router's state (pi 1.6's name).
pub(crate) const STATE_ENTRY: &str = "pi.virtual-model-state";

/// Why a request is made, as a router is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteReason {
    /// The first request after a message the user wrote.
    User,
    /// Any other request of the agent loop (after tool results, extension messages).
    Continuation,
    /// An automatic retry after a failed request.
    Retry,
    /// A request outside the agent loop (a summary).
    Direct,
}

impl RouteReason {
    fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Continuation => "continuation",
            Self::Retry => "retry",
            Self::Direct => "direct",
        }
    }
}

/// The failed reply the next request retries (pi's `failed`).
#[derive(Default)]
pub(crate) struct Routing {
    failed: Mutex<Option<AssistantMessage>>,
}

impl AgentSession {
    /// A retry follows: the failed reply being dropped from the context is what the router is
    /// told failed.
    pub(crate) fn remember_failed_reply(&self, reply: AssistantMessage) {
        *self.inner.routing.failed.lock() = Some(reply);
    }

    /// Where a request of the agent loop made with the virtual `model` goes.
    pub(crate) async fn route_request(
        &self,
        model: &Model,
        thinking: ThinkingLevel,
        messages: &[AgentMessage],
        cancel: &CancellationToken,
    ) -> Result<Route, String> {
        let failed = self.inner.routing.failed.lock().take();
        let reason = if failed.is_some() {
            RouteReason::Retry
        } else if user_turn(messages) {
            RouteReason::User
        } else {
            RouteReason::Continuation
        };
        self.route(model, thinking, messages, reason, failed, cancel).await
    }

    /// The model and level a summary is asked of: the selected ones, or, for a virtual model,
    /// where its router sends a request outside the loop.
    pub(crate) async fn direct_model(&self, cancel: &CancellationToken) -> Result<(Model, ThinkingLevel), String> {
        let (model, thinking) = (self.inner.agent.model(), self.thinking_level());
        if !model.is_virtual() {
            return Ok((model, thinking));
        }
        let messages = self.inner.agent.read_messages(<[AgentMessage]>::to_vec);
        let route = self.route(&model, thinking, &messages, RouteReason::Direct, None, cancel).await?;
        Ok((route.model, route.thinking))
    }

    async fn route(
        &self,
        model: &Model,
        thinking: ThinkingLevel,
        messages: &[AgentMessage],
        reason: RouteReason,
        failed: Option<AssistantMessage>,
        cancel: &CancellationToken,
    ) -> Result<Route, String> {
        let name = format!("Virtual model {}", model.selector());
        let extensions = self.extensions().cloned().ok_or_else(|| rho_agent::not_registered(model))?;
        let state = (reason != RouteReason::Direct).then(|| self.router_state(model)).flatten();
        let request = RouteRequest {
            provider: model.provider.clone(),
            model_id: model.id.clone(),
            reason: reason.as_str().to_owned(),
            thinking_level: thinking.as_str().to_owned(),
            messages: serde_json::to_value(convert_to_llm(messages)).unwrap_or(Value::Null),
            state,
            failed: failed.and_then(|reply| serde_json::to_value(reply).ok()),
        };
        // A router that throws ends the request with its own words, as in pi.
        let answer = extensions.route(request, cancel).await.map_err(|e| e.to_string())?;
        let text = |key: &str| answer.get(key).and_then(Value::as_str).unwrap_or_default();
        let routed = format!("{name} routed to {}/{}", text("provider"), text("id"));
        let registry = self.registry();
        let target = registry
            .find(text("provider"), text("id"))
            .filter(|m| !m.is_virtual())
            .ok_or_else(|| format!("{routed}, which is not a physical model."))?
            .clone();
        if !registry.has_key(&target.provider) {
            return Err(format!("{routed}, which has no credentials."));
        }
        if reason != RouteReason::Direct
            && let Some(state) = answer.get("state")
        {
            let data = json!({"provider": model.provider, "modelId": model.id, "state": state});
            self.append_custom_entry(STATE_ENTRY, Some(data)).map_err(|e| format!("{name}: {e}"))?;
        }
        let asked = ThinkingLevel::parse(text("thinkingLevel")).unwrap_or(thinking);
        let thinking = if target.reasoning { target.clamp_thinking(asked) } else { ThinkingLevel::Off };
        Ok(Route { model: target, thinking })
    }

    /// The context window usage and compaction are measured against: the selected model's, or,
    /// for a virtual model, that of the physical model of the latest good reply (the virtual
    /// model's own limit before any).
    pub(crate) fn context_window(&self) -> u64 {
        let (window, is_virtual) = self.inner.agent.read_model(|m| (m.context_window, m.is_virtual()));
        if !is_virtual {
            return window;
        }
        let answered = self.inner.agent.read_messages(|messages| {
            messages
                .iter()
                .rev()
                .filter_map(AgentMessage::as_assistant)
                .find(|reply| !reply.is_failed())
                .map(|reply| (reply.provider.clone(), reply.model.clone()))
        });
        answered
            .and_then(|(provider, id)| self.registry().find(&provider, &id).map(|m| m.context_window))
            .unwrap_or(window)
    }

    /// The virtual model the current branch selects, when it still is registered: its last
    /// `model_change` chose it, and the replies since name the models it routed to (pi 1.6's
    /// branch selection).
    pub(crate) fn chosen_virtual_model(&self) -> Option<Model> {
        let chosen = self.session().branch_entries().into_iter().rev().find_map(|entry| match entry {
            SessionEntry::ModelChange(change) => Some((change.provider.clone(), change.model_id.clone())),
            _ => None,
        })?;
        self.registry().find(&chosen.0, &chosen.1).filter(|m| m.is_virtual()).cloned()
    }

    /// Once the extensions are loaded: a resumed branch that selected a virtual model selects it
    /// again (at start, before it was registered, the model that answered last stood in).
    pub(crate) fn restore_virtual_selection(&self) {
        let Some(model) = self.chosen_virtual_model() else { return };
        if self.inner.agent.read_model(|current| current.provider == model.provider && current.id == model.id) {
            return;
        }
        let level = model.clamp_thinking(self.inner.agent.thinking_level());
        self.inner.agent.set_model(model, level);
        *self.inner.has_model.lock() = true;
    }

    /// The state the router of `model` last stored on the current branch.
    fn router_state(&self, model: &Model) -> Option<Value> {
        let session = self.session();
        session.branch_entries().into_iter().rev().find_map(|entry| match entry {
            SessionEntry::Custom(custom) if custom.custom_type == STATE_ENTRY => {
                let data = custom.data.as_ref()?;
                let ours = data.get("provider").and_then(Value::as_str) == Some(model.provider.as_str())
                    && data.get("modelId").and_then(Value::as_str) == Some(model.id.as_str());
                ours.then(|| data.get("state").cloned()).flatten()
            }
            _ => None,
        })
    }
}

/// Whether the user wrote one of the messages since the last reply: the request answers them.
fn user_turn(messages: &[AgentMessage]) -> bool {
    messages
        .iter()
        .rev()
        .take_while(|m| !matches!(m, AgentMessage::Assistant(_)))
        .any(|m| matches!(m, AgentMessage::User(_)))
}
