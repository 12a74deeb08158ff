//! The steering and follow-up queues and the modes that drain them.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::message::AgentMessage;

/// How many queued messages one poll takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum QueueMode {
    /// Every queued message at once.
    #[serde(rename = "all")]
    All,
    /// Only the oldest.
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
}

impl QueueMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::OneAtATime => "one-at-a-time",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "all" => Some(Self::All),
            "one-at-a-time" => Some(Self::OneAtATime),
            _ => None,
        }
    }
}

/// When steering messages may interrupt a batch of tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InterruptMode {
    /// After each tool finishes; remaining calls are skipped.
    #[default]
    Immediate,
    /// Only after the whole turn.
    Wait,
}

impl InterruptMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Immediate => "immediate",
            Self::Wait => "wait",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "immediate" => Some(Self::Immediate),
            "wait" => Some(Self::Wait),
            _ => None,
        }
    }
}

/// A FIFO of user messages waiting to be delivered into a run.
#[derive(Debug, Clone, Default)]
pub struct MessageQueue {
    messages: VecDeque<AgentMessage>,
}

impl MessageQueue {
    pub fn push(&mut self, message: AgentMessage) {
        self.messages.push_back(message);
    }

    /// Takes what one poll delivers under `mode`.
    pub fn take(&mut self, mode: QueueMode) -> Vec<AgentMessage> {
        match mode {
            QueueMode::All => self.messages.drain(..).collect(),
            QueueMode::OneAtATime => self.messages.pop_front().into_iter().collect(),
        }
    }

    pub fn clear(&mut self) {
        self.messages.clear();
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The queued messages, oldest first.
    pub fn messages(&self) -> impl Iterator<Item = &AgentMessage> {
        self.messages.iter()
    }

    /// The queued messages' text, oldest first.
    pub fn texts(&self) -> Vec<String> {
        self.messages
            .iter()
            .map(|m| match m {
                AgentMessage::User(u) | AgentMessage::Developer(u) => u.text(),
                AgentMessage::Custom(c) => c.content.text_joined(""),
                other => other.role().to_owned(),
            })
            .collect()
    }
}
