//! Time-traveling stream rules in the session: the matcher watches the assistant's stream as it
//! arrives; an interrupting match aborts the stream at once and emits `ttsr_triggered`, and the
//! lifecycle then drops the cut-off reply (`ttsr.contextMode: discard`), injects the rules as a
//! hidden `ttsr-injection` message and continues. A match whose rules do not interrupt its
//! source is injected once the run stops. Injected rules are remembered (and restored from a
//! resumed session's injection messages), so each fires once unless `ttsr.repeatMode` says
//! otherwise.

use std::time::Duration;

use rho_agent::AgentEvent;
use rho_rpc::SessionEvent;
use rho_session::entry_message;
use rho_types::AgentMessage;
use rho_types::types::{StopReason, now_ms};

use super::AgentSession;
use crate::config::settings::TtsrContextMode;
use crate::ttsr::{INJECTION_CUSTOM_TYPE, Rule, TtsrMatch, TtsrMatcher, injection_message};

/// The pause before the run continues with the injection, as the reference waits.
const RESUME_DELAY: Duration = Duration::from_millis(50);

/// What the matcher found that the lifecycle still has to act on.
#[derive(Default)]
pub(crate) struct TtsrState {
    pub matcher: Option<TtsrMatcher>,
    /// The stream was aborted for these rules: retry with them injected.
    pub interrupted: Option<Vec<Rule>>,
    /// Rules matched without interrupting: injected when the run stops.
    pub deferred: Vec<Rule>,
}

impl AgentSession {
    /// Feeds the matcher one agent event (called by the run's sink before it forwards it).
    pub(crate) fn ttsr_observe(&self, event: &AgentEvent) {
        let found = {
            let mut ttsr = self.inner.ttsr.lock();
            let Some(matcher) = ttsr.matcher.as_mut() else { return };
            match event {
                AgentEvent::TurnStart => {
                    matcher.turn_start();
                    None
                }
                AgentEvent::TurnEnd { .. } => {
                    matcher.turn_end();
                    None
                }
                AgentEvent::MessageUpdate { event } => matcher.on_event(event),
                _ => None,
            }
        };
        if let Some(found) = found {
            self.ttsr_fired(found);
        }
    }

    fn ttsr_fired(&self, found: TtsrMatch) {
        let rules = found.rpc_rules();
        {
            let mut ttsr = self.inner.ttsr.lock();
            if found.interrupt {
                if ttsr.interrupted.is_some() {
                    return;
                }
                ttsr.interrupted = Some(found.rules);
            } else {
                ttsr.deferred.extend(found.rules);
                return;
            }
        }
        self.inner.agent.abort();
        self.emit(SessionEvent::TtsrTriggered { rules });
    }

    /// Whether the lifecycle has rules to inject before it may end.
    pub(crate) fn ttsr_pending(&self) -> bool {
        let ttsr = self.inner.ttsr.lock();
        ttsr.interrupted.is_some() || !ttsr.deferred.is_empty()
    }

    /// Injects the pending rules (dropping the reply they interrupted, unless the context mode
    /// keeps it). True when the conversation should continue.
    pub(crate) async fn ttsr_inject(&self) -> bool {
        let (rules, interrupted, context_mode) = {
            let mut ttsr = self.inner.ttsr.lock();
            let interrupted = ttsr.interrupted.is_some();
            let mut rules = ttsr.interrupted.take().unwrap_or_default();
            rules.append(&mut ttsr.deferred);
            (rules, interrupted, self.settings().ttsr().context_mode)
        };
        if rules.is_empty() {
            return false;
        }
        if interrupted {
            tokio::time::sleep(RESUME_DELAY).await;
            if context_mode == TtsrContextMode::Discard {
                self.drop_last_reply(StopReason::Aborted);
            }
        }
        let message = injection_message(&rules, now_ms());
        self.record(message);
        if let Some(matcher) = self.inner.ttsr.lock().matcher.as_mut() {
            matcher.mark_injected(rules.iter().map(|r| r.name.as_str()));
        }
        true
    }

    /// The rules the branch already injected (a resumed session does not repeat them).
    pub(crate) fn restore_ttsr(&self) {
        let names: Vec<String> = self
            .session()
            .branch_entries()
            .into_iter()
            .filter_map(entry_message)
            .filter_map(|m| match m {
                AgentMessage::Custom(c) if c.custom_type == INJECTION_CUSTOM_TYPE => c.details,
                _ => None,
            })
            .flat_map(|details| {
                details["rules"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect::<Vec<_>>())
                    .unwrap_or_default()
            })
            .collect();
        let mut ttsr = self.inner.ttsr.lock();
        ttsr.interrupted = None;
        ttsr.deferred.clear();
        if let Some(matcher) = ttsr.matcher.as_mut() {
            matcher.restore_injected(names.iter().map(String::as_str));
        }
    }
}

/// The matcher for a session's rules (none when there are no rules).
pub(crate) fn matcher_for(
    rules: Vec<crate::ttsr::CompiledRule>,
    settings: &crate::config::Settings,
    cwd: &std::path::Path,
) -> Option<TtsrMatcher> {
    let matcher = TtsrMatcher::new(rules, settings.ttsr(), cwd.to_path_buf());
    matcher.has_rules().then_some(matcher)
}
