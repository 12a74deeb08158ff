//! Claude Code's hooks in the session ([`crate::claude_hooks`]): read once from the settings when
//! the session is made, and run where their events happen: a prompt's text
//! (`UserPromptSubmit`, and what `SessionStart` added), after a tool call (`PostToolUse`, through
//! the loop's hooks), when a prompt's work would end (`Stop`), before a compaction
//! (`PreCompact`), and when a session starts or ends.

use std::sync::Arc;

use parking_lot::Mutex;
use rho_types::AgentMessage;
use rho_types::message::CustomMessage;
use rho_types::types::{StopReason, UserMessageContent};
use tokio::task::JoinHandle;

use super::AgentSession;
use crate::claude_hooks::{
    CompactTrigger, HookEnv, PostToolHooks, PromptHooks, PromptVerdict, SessionHooks, WithPostToolHooks,
};

/// The custom message type of what a `Stop` hook tells the model.
const STOP_FEEDBACK: &str = "hook_feedback";

/// The session's hooks.
pub(crate) struct ClaudeHooks {
    pub env: Arc<HookEnv>,
    prompt: Option<PromptHooks>,
    /// `PostToolUse`, after the extensions' own hooks.
    post_tool: Option<Arc<PostToolHooks>>,
    session: Option<Arc<SessionHooks>>,
    /// `SessionStart` runs whose context the next prompt takes.
    started: Mutex<Vec<JoinHandle<Vec<String>>>>,
}

impl AgentSession {
    /// Reads the hooks of the settings; `resumed` says whether the session had entries
    /// (`SessionStart`'s source `resume`, else `startup`).
    pub(super) fn install_claude_hooks(&self, resumed: bool) {
        let settings = self.settings().clone();
        let sandbox = super::tools::sandbox(&self.inner.paths.cwd, &settings).map(|s| s.for_user());
        let env = Arc::new(HookEnv { cwd: self.inner.paths.cwd.clone(), session: self.session_info(), sandbox });
        let subagent = crate::task::depth_from_env() > 0;
        let hooks = ClaudeHooks {
            prompt: PromptHooks::from_settings(&settings, &env),
            post_tool: PostToolHooks::from_settings(&settings, &env).map(Arc::new),
            session: SessionHooks::from_settings(&settings, &env, subagent),
            started: Mutex::default(),
            env: env.clone(),
        };
        if let Some(post) = hooks.post_tool.clone() {
            self.inner.agent.set_hooks(Some(Arc::new(WithPostToolHooks { first: None, post })));
        }
        let _ = self.inner.claude_hooks.set(hooks);
        self.start_session_hooks(if resumed { "resume" } else { "startup" });
    }

    fn claude_hooks(&self) -> Option<&ClaudeHooks> {
        self.inner.claude_hooks.get()
    }

    /// The session events' hooks, when the settings have some.
    pub(crate) fn session_hooks(&self) -> Option<&Arc<SessionHooks>> {
        self.claude_hooks()?.session.as_ref()
    }

    /// The `PostToolUse` hooks, which go after the extensions' loop hooks.
    pub(super) fn post_tool_hooks(&self) -> Option<Arc<PostToolHooks>> {
        self.claude_hooks()?.post_tool.clone()
    }

    /// What every hook command runs with.
    pub(crate) fn hook_env(&self) -> Option<Arc<HookEnv>> {
        self.claude_hooks().map(|hooks| hooks.env.clone())
    }

    /// The prompt as the hooks leave it: `SessionStart`'s context and `UserPromptSubmit`'s
    /// after it; `None` when a `UserPromptSubmit` hook blocked it (a notice says why).
    pub(super) async fn hooked_prompt(&self, text: String) -> Option<String> {
        let Some(hooks) = self.claude_hooks() else { return Some(text) };
        let started = std::mem::take(&mut *hooks.started.lock());
        let mut context = Vec::new();
        for run in started {
            context.extend(run.await.unwrap_or_default());
        }
        if let Some(prompt) = &hooks.prompt {
            match prompt.submit(&text).await {
                PromptVerdict::Block(reason) => {
                    let message = format!("Prompt blocked by a UserPromptSubmit hook: {reason}");
                    self.emit_notice(rho_rpc::NotifyType::Error, &message, Some("hooks"));
                    return None;
                }
                PromptVerdict::Send(added) if added.is_empty() => {}
                PromptVerdict::Send(added) => context.push(added),
            }
        }
        if context.is_empty() {
            return Some(text);
        }
        Some(format!("{text}\n\n{}", context.join("\n\n")))
    }

    /// Runs the `SessionStart` hooks for `source` in the background; the next prompt takes
    /// what they add.
    pub(super) fn start_session_hooks(&self, source: &'static str) {
        let (Some(hooks), Some(session)) = (self.claude_hooks(), self.session_hooks().cloned()) else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("SessionStart hooks: no runtime to run them on");
            return;
        };
        hooks.started.lock().push(runtime.spawn(async move { session.session_start(source).await }));
    }

    /// Runs the `SessionEnd` hooks for `reason`, once the session's `SessionStart` runs are
    /// over (what they add is for a session that has ended).
    pub(super) async fn end_session_hooks(&self, reason: &str) {
        let Some(hooks) = self.claude_hooks() else { return };
        let started = std::mem::take(&mut *hooks.started.lock());
        for run in started {
            let _ = run.await;
        }
        if let Some(session) = &hooks.session {
            session.session_end(reason).await;
        }
    }

    /// `Stop`, once a prompt's runs are done and nothing else follows: true when a hook kept
    /// the agent going (its reason is then the model's next message). `active` is Claude
    /// Code's `stop_hook_active`, set once a hook has done so in this prompt.
    pub(super) async fn stop_hooks_continue(&self, active: &mut bool) -> bool {
        let Some(session) = self.session_hooks().filter(|s| s.may_continue()).cloned() else { return false };
        let ended_well = self
            .last_assistant()
            .is_some_and(|reply| !matches!(reply.stop_reason, StopReason::Aborted | StopReason::Error));
        if !ended_well || self.lifecycle_token().is_cancelled() {
            return false;
        }
        let Some(reason) = session.stop(*active).await else { return false };
        if self.lifecycle_token().is_cancelled() {
            return false;
        }
        let message = AgentMessage::Custom(CustomMessage {
            custom_type: STOP_FEEDBACK.to_owned(),
            content: UserMessageContent::Text(format!("Stop hook feedback:\n{reason}").into()),
            display: true,
            details: None,
            attribution: None,
            timestamp: rho_types::types::now_ms(),
        });
        if let Err(e) = self.inner.transcript.append(message) {
            tracing::warn!("Stop hook: its feedback could not be recorded: {e}");
            return false;
        }
        // The session's lock is let go before the entry is announced (which takes it again).
        let appended = self.session().leaf_id().cloned();
        if let Some(id) = appended {
            self.announce_entry(&id);
        }
        *active = true;
        true
    }

    /// Whether `Stop` hooks may keep a prompt going after its last run.
    pub(super) fn settles_through_hooks(&self) -> bool {
        self.session_hooks().is_some_and(|s| s.may_continue())
    }

    /// `PreCompact`: what the hooks that objected say is shown to the user.
    pub(super) async fn pre_compact_hooks(&self, trigger: CompactTrigger, instructions: Option<&str>) {
        let Some(session) = self.session_hooks().cloned() else { return };
        for said in session.pre_compact(trigger, instructions).await {
            self.emit_notice(rho_rpc::NotifyType::Warning, &format!("PreCompact hook: {said}"), Some("hooks"));
        }
    }
}
