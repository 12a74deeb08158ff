//! Keeping the host's copy of the session in step: which entries it has (by session id and
//! count, since a session's entries only grow) and what it last heard of the agent's state
//! (`ctx.model`, `pi.getActiveTools()`, `ctx.isIdle()`, …, which extensions read without
//! awaiting). Only what changed is sent.

use rho_extensions::protocol::{SessionReset, SessionSync};
use serde_json::{Map, Value, json};

use crate::agent_session::AgentSession;

#[derive(Default)]
pub(super) struct Synced {
    session_id: Option<String>,
    count: usize,
    leaf: Option<String>,
    state: Map<String, Value>,
}

impl Synced {
    /// The whole session, from its header.
    pub fn full(&mut self, session: &AgentSession) -> SessionSync {
        self.session_id = None;
        self.changes(session).unwrap_or_default()
    }

    /// The entries added since the last sync (the whole session when it was replaced); `None`
    /// when nothing changed.
    pub fn changes(&mut self, session: &AgentSession) -> Option<SessionSync> {
        let file = session.session();
        let id = file.session_id();
        let leaf = file.leaf_id().map(ToString::to_string);
        let reset = (self.session_id.as_deref() != Some(id)).then(|| {
            self.count = 0;
            SessionReset {
                header: serde_json::to_value(file.header()).unwrap_or(Value::Null),
                file: file.session_file().map(|p| p.display().to_string()),
                dir: file.session_dir().map(|p| p.display().to_string()),
            }
        });
        let entries = file.entries();
        if reset.is_none() && entries.len() == self.count && leaf == self.leaf {
            return None;
        }
        let new = entries.get(self.count..).unwrap_or_default();
        let sync = SessionSync {
            reset,
            entries: new.iter().filter_map(|e| serde_json::to_value(e).ok()).collect(),
            leaf_id: leaf.clone(),
        };
        self.session_id = Some(id.to_owned());
        self.count = entries.len();
        self.leaf = leaf;
        Some(sync)
    }

    /// The fields of the agent's state that changed since the last sync.
    pub fn state_changes(&mut self, session: &AgentSession) -> Option<Value> {
        let now = state_of(session);
        let mut changed = Map::new();
        for (key, value) in now {
            if self.state.get(&key) != Some(&value) {
                self.state.insert(key.clone(), value.clone());
                changed.insert(key, value);
            }
        }
        (!changed.is_empty()).then_some(Value::Object(changed))
    }
}

/// What the host's synchronous getters answer from.
fn state_of(session: &AgentSession) -> Map<String, Value> {
    let mut state = Map::new();
    state.insert("model".into(), session.model().map_or(Value::Null, |m| to_json(&m)));
    state.insert("thinkingLevel".into(), json!(session.thinking_level().as_str()));
    state.insert("idle".into(), json!(!session.is_streaming()));
    state.insert("pendingMessages".into(), json!(session.queued_count()));
    state.insert("sessionName".into(), session.session_name().map_or(Value::Null, Value::String));
    state.insert("activeTools".into(), json!(session.active_tool_names()));
    state.insert("allTools".into(), Value::Array(session.all_tools_info()));
    state.insert("systemPrompt".into(), Value::String(session.system_prompt()));
    state.insert("contextUsage".into(), session.context_usage().map_or(Value::Null, |u| to_json(&u)));
    let commands: Vec<Value> = session
        .slash_commands()
        .iter()
        .filter(|c| !matches!(c.source, rho_rpc::SlashCommandSource::Extension))
        .map(to_json)
        .collect();
    state.insert("commands".into(), Value::Array(commands));
    let scoped: Vec<Value> = session
        .scoped_models()
        .iter()
        .map(|s| json!({"model": to_json(&s.model), "thinkingLevel": s.thinking.map(|level| level.as_str())}))
        .collect();
    state.insert("scopedModels".into(), Value::Array(scoped));
    state
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
