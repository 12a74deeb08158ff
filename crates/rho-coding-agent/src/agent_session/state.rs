//! `get_state`, and the queue-mode settings it reports (`set_steering_mode`,
//! `set_follow_up_mode`, `set_interrupt_mode`), which apply to the live agent and are saved as
//! the user's settings.

use rho_rpc::RpcSessionState;
use rho_types::{InterruptMode, QueueMode};
use serde_json::Value;

use super::AgentSession;

impl AgentSession {
    /// The sandbox the session's commands and writes are confined to; `None` for full access.
    pub(crate) fn sandbox(&self) -> Option<std::sync::Arc<rho_sandbox::Sandbox>> {
        super::tools::sandbox(&self.inner.paths.cwd, &self.settings())
    }

    /// The `get_state` payload.
    pub(crate) fn state(&self) -> RpcSessionState {
        let has_model = *self.inner.has_model.lock();
        let agent = &self.inner.agent;
        let model = has_model.then(|| agent.model());
        let thinking_level = has_model.then(|| agent.thinking_level());
        let modes = agent.queue_modes();
        let (message_count, system_prompt) = (agent.message_count(), agent.system_prompt());
        let queued = self.queued_count();
        let (session_file, session_id, session_name) = {
            let session = self.session();
            (
                session.session_file().map(|p| p.to_string_lossy().into_owned()),
                session.session_id().to_owned(),
                session.name().map(str::to_owned),
            )
        };
        let (tokens_per_second, context_usage) = (self.tokens_per_second(), self.context_usage());
        RpcSessionState {
            model,
            thinking_level,
            is_streaming: self.is_streaming(),
            is_compacting: self.is_compacting(),
            steering_mode: modes.steering.as_str().to_owned(),
            follow_up_mode: modes.follow_up.as_str().to_owned(),
            interrupt_mode: modes.interrupt.as_str().to_owned(),
            session_file,
            session_id,
            session_name,
            auto_compaction_enabled: self.auto_compaction_enabled(),
            message_count,
            queued_message_count: queued,
            pending_message_count: queued,
            todo_phases: self.todo_phases(),
            system_prompt: Some(system_prompt),
            dump_tools: Some(self.dump_tools()),
            fast_mode_enabled: false,
            fast_mode_active: false,
            tokens_per_second,
            context_usage,
            mcp_servers: self.mcp_servers(),
            sandbox: self.sandbox().map(|sandbox| {
                let policy = sandbox.policy();
                rho_rpc::response::SandboxState {
                    mode: policy.mode.to_string(),
                    writable_roots: policy.writable_roots.iter().map(|r| r.display().to_string()).collect(),
                    network: policy.network,
                }
            }),
        }
    }

    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.inner.agent.set_steering_mode(mode);
        self.save_setting("steeringMode", mode.as_str());
    }

    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.inner.agent.set_follow_up_mode(mode);
        self.save_setting("followUpMode", mode.as_str());
    }

    pub(crate) fn set_interrupt_mode(&self, mode: InterruptMode) {
        self.inner.agent.set_interrupt_mode(mode);
        self.save_setting("interruptMode", mode.as_str());
    }

    fn save_setting(&self, key: &str, value: &str) {
        if let Err(e) = self.settings().set_global(key, Value::String(value.to_owned())) {
            tracing::warn!("could not save {key}: {e}");
        }
    }
}
