//! Keeping the host's copy of the session in step: which entries it has (by session id and
//! count, since a session's entries only grow) and what it last heard of the agent's state
//! (`ctx.model`, `pi.getActiveTools()`, `ctx.isIdle()`, …, which extensions read without
//! awaiting). Only what changed is sent.

use rho_extensions::protocol::{HostState, ScopedModelState, SessionReset, SessionSync};
use serde_json::{Map, Value};

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
    let commands = session
        .slash_commands()
        .iter()
        .filter(|c| !matches!(c.source, rho_rpc::SlashCommandSource::Extension))
        .map(to_json)
        .collect();
    let scoped_models = session
        .scoped_models()
        .iter()
        .map(|s| ScopedModelState {
            model: to_json(&s.model),
            thinking_level: s.thinking.map(|level| level.as_str().to_owned()),
        })
        .collect();
    let state = HostState {
        model: session.model().map(|m| to_json(&m)),
        thinking_level: session.thinking_level().as_str().to_owned(),
        idle: !session.is_streaming(),
        pending_messages: session.queued_count(),
        session_name: session.session_name(),
        active_tools: session.active_tool_names(),
        all_tools: session.all_tools_info(),
        system_prompt: session.system_prompt(),
        context_usage: session.context_usage().map(|u| to_json(&u)),
        commands,
        scoped_models,
    };
    match to_json(&state) {
        Value::Object(fields) => fields,
        _ => Map::new(),
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
