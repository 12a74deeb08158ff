//! omp's view of the task tool's sub-agents: which run now (`get_subagents`), their transcripts
//! (`get_subagent_messages`), and which of their frames reach the host
//! (`set_subagent_subscription`: `off` by default; `progress` for `subagent_lifecycle` and
//! `subagent_progress`; `events` also for `subagent_event`, every event of their runs).
//!
//! The tracker sits between the session and the stdout queue: it sees every lifecycle event,
//! keeps the live sub-agents and remembers the session files of the last 256 that ended, and
//! lets the frames through only when the host subscribed.

use parking_lot::{Mutex, MutexGuard};
use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use rho_agent::Backpressure;
use rho_rpc::{SessionEvent, SubagentLifecycle, SubagentMessagesData, SubagentSnapshot};
use rho_types::types::now_ms;
use serde_json::Value;

use crate::agent_session::{AgentSessionEvent, SessionEventSink};
use crate::modes::out_queue::OutQueue;

/// How many ended sub-agents' session files stay readable.
const REMEMBERED: usize = 256;

/// What the host subscribed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Subscription {
    #[default]
    Off,
    Progress,
    Events,
}

impl Subscription {
    pub fn parse(level: &str) -> Option<Self> {
        match level {
            "off" => Some(Self::Off),
            "progress" => Some(Self::Progress),
            "events" => Some(Self::Events),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Progress => "progress",
            Self::Events => "events",
        }
    }
}

#[derive(Default)]
struct State {
    subscription: Subscription,
    live: BTreeMap<String, SubagentSnapshot>,
    /// Ended sub-agents' session files, oldest first.
    remembered: VecDeque<(String, String)>,
}

/// The session's event sink in RPC mode: the stdout queue, with the sub-agent tracker in front.
pub struct SubagentTracker {
    out: Arc<OutQueue>,
    state: Mutex<State>,
}

impl SubagentTracker {
    pub fn new(out: Arc<OutQueue>) -> Arc<Self> {
        Arc::new(Self { out, state: Mutex::default() })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    pub fn set_subscription(&self, subscription: Subscription) {
        self.lock().subscription = subscription;
    }

    /// The live sub-agents, by index then id.
    pub fn snapshots(&self) -> Vec<SubagentSnapshot> {
        let mut all: Vec<SubagentSnapshot> = self.lock().live.values().cloned().collect();
        all.sort_by(|a, b| a.index.cmp(&b.index).then_with(|| a.id.cmp(&b.id)));
        all
    }

    /// Forgets every sub-agent (a new or switched session starts with none).
    pub fn reset(&self) {
        let mut state = self.lock();
        state.live.clear();
        state.remembered.clear();
    }

    /// The session file of a live or remembered sub-agent.
    fn file_of(&self, id: &str) -> Option<String> {
        let state = self.lock();
        state
            .live
            .get(id)
            .and_then(|s| s.session_file.clone())
            .or_else(|| state.remembered.iter().rev().find(|(known, _)| known == id).map(|(_, file)| file.clone()))
    }

    fn knows_file(&self, file: &str) -> bool {
        let state = self.lock();
        state.live.values().any(|s| s.session_file.as_deref() == Some(file))
            || state.remembered.iter().any(|(_, known)| known == file)
    }

    /// `get_subagent_messages`: the entries a sub-agent's session file gained since
    /// `from_byte`, up to its last complete line.
    pub fn messages(
        &self,
        subagent_id: Option<&str>,
        session_file: Option<&str>,
        from_byte: Option<&Value>,
    ) -> Result<SubagentMessagesData, String> {
        let from = match from_byte {
            None => 0,
            Some(v) => match v.as_f64() {
                Some(n) if n.is_finite() => n.max(0.0).trunc() as u64,
                _ => return Err("fromByte must be a finite number".into()),
            },
        };
        let file = match (subagent_id, session_file) {
            (Some(id), _) => {
                self.file_of(id).ok_or_else(|| format!("Unknown subagent or session file unavailable: {id}"))?
            }
            (None, Some(file)) if self.knows_file(file) => file.to_owned(),
            (None, Some(_)) => return Err("Unknown subagent session file".into()),
            (None, None) => return Err("get_subagent_messages requires subagentId or sessionFile".into()),
        };
        read_from(Path::new(&file), from).map_err(|e| e.to_string())
    }

    fn observe(&self, lifecycle: &SubagentLifecycle) {
        let mut state = self.lock();
        if lifecycle.status == "started" {
            state.live.insert(
                lifecycle.id.clone(),
                SubagentSnapshot {
                    id: lifecycle.id.clone(),
                    index: lifecycle.index,
                    agent: lifecycle.agent.clone(),
                    agent_source: lifecycle.agent_source.clone(),
                    description: lifecycle.description.clone(),
                    status: "running".into(),
                    task: None,
                    session_file: lifecycle.session_file.clone(),
                    last_update: u64::try_from(now_ms()).unwrap_or_default(),
                    parent_tool_call_id: lifecycle.parent_tool_call_id.clone(),
                },
            );
            return;
        }
        state.live.remove(&lifecycle.id);
        if let Some(file) = &lifecycle.session_file {
            if state.remembered.len() == REMEMBERED {
                state.remembered.pop_front();
            }
            state.remembered.push_back((lifecycle.id.clone(), file.clone()));
        }
    }
}

impl SessionEventSink for SubagentTracker {
    fn emit(&self, event: AgentSessionEvent) {
        if let AgentSessionEvent::Session(SessionEvent::SubagentLifecycle { payload }) = &event {
            self.observe(payload);
            if self.lock().subscription == Subscription::Off {
                return;
            }
        }
        self.out.push_event(event);
    }

    fn backpressure(&self) -> Option<Arc<Backpressure>> {
        self.out.backpressure()
    }

    fn wants_subagent_progress(&self) -> bool {
        self.lock().subscription != Subscription::Off
    }

    fn wants_subagent_events(&self) -> bool {
        self.lock().subscription == Subscription::Events
    }
}

/// The whole lines of `path` from byte `from` on (from 0 again, `reset`, when the file is now
/// shorter than that: it was replaced).
fn read_from(path: &Path, from: u64) -> std::io::Result<SubagentMessagesData> {
    let session_file = path.to_string_lossy().into_owned();
    let empty = |at: u64, reset: bool| SubagentMessagesData {
        session_file: session_file.clone(),
        from_byte: at,
        next_byte: at,
        reset,
        entries: Vec::new(),
        messages: Vec::new(),
    };
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(empty(from, false)),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    let (start, reset) = if from > size { (0, true) } else { (from, false) };
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(complete);
    let entries: Vec<Value> = bytes.split(|b| *b == b'\n').filter_map(|l| serde_json::from_slice(l).ok()).collect();
    let messages = entries.iter().filter(|e| e["type"] == "message").map(|e| e["message"].clone()).collect();
    Ok(SubagentMessagesData {
        from_byte: start,
        next_byte: start + complete as u64,
        reset,
        entries,
        messages,
        session_file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_whole_lines_from_an_offset_and_resets_on_a_shorter_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(
            &path,
            "{\"type\":\"session\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\"}}\n{\"type\":\"mess",
        )
        .unwrap();
        let first = read_from(&path, 0).unwrap();
        assert_eq!(first.session_file, path.to_string_lossy());
        assert_eq!((first.entries.len(), first.messages.len()), (2, 1));
        let next = read_from(&path, first.next_byte).unwrap();
        assert!(next.entries.is_empty() && next.next_byte == first.next_byte);
        let reset = read_from(&path, 10_000).unwrap();
        assert!(reset.reset && reset.from_byte == 0);
        let missing = read_from(&dir.path().join("none.jsonl"), 7).unwrap();
        assert_eq!((missing.from_byte, missing.next_byte, missing.reset), (7, 7, false));
    }
}
