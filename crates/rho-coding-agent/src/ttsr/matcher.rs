//! The stream side of TTSR: fed every streamed assistant event, it keeps one buffer per content
//! block (text, thinking, or a tool call's decoded arguments, see [`super::args_stream`]) and
//! reports the rules whose conditions match.
//!
//! Cost per delta: the buffers only grow, and a rule that did not match before a delta can
//! only match now with a match that ends in the new text. So each check searches from
//! [`MATCH_WINDOW`] bytes before the delta (`Regex::is_match_at`, which keeps `^` and `\b`
//! correct at that position) instead of rescanning the whole buffer with every regex: the cost
//! is O(rules × (window + delta)), independent of the message's length. The price: a match
//! that starts more than the window before the delta it completes in is missed; rule
//! conditions are short phrases, so the window is generous. When a tool call's path becomes
//! known (which can bring glob-scoped rules into scope), its whole buffer is searched once.
//!
//! Repeat control: a rule fires at most once per turn; after the session calls
//! [`TtsrMatcher::mark_injected`], `ttsr.repeatMode: once` keeps it silent for the session and
//! `after-gap` lets it fire again once `ttsr.repeatGap` turns have ended since.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use rho_ai::event::AssistantMessageEvent;
use rho_rpc::TtsrRule;

use super::args_stream::ArgsDecoder;
use super::compile::CompiledRule;
use super::inject::injection_text;
use super::rule::Rule;
use super::scope::{StreamSource, path_candidates};
use crate::config::settings::{TtsrInterruptMode, TtsrRepeatMode, TtsrSettings};

/// How far before each delta a search starts, in bytes.
pub const MATCH_WINDOW: usize = 4096;

/// Rules that fired on one delta.
#[derive(Debug, Clone, PartialEq)]
pub struct TtsrMatch {
    pub rules: Vec<Rule>,
    pub source: StreamSource,
    /// The tool call's name and id for tool-argument matches.
    pub tool_name: Option<String>,
    pub tool_call_id: Option<String>,
    /// Abort the stream now and retry with the injection (some rule's interrupt mode covers
    /// this source); otherwise deliver the injection after the message completes.
    pub interrupt: bool,
}

impl TtsrMatch {
    /// `ttsr_triggered.rules`.
    pub fn rpc_rules(&self) -> Vec<TtsrRule> {
        self.rules.iter().map(Rule::to_rpc).collect()
    }

    /// The text to inject.
    pub fn injection_text(&self) -> String {
        injection_text(&self.rules)
    }

    pub fn rule_names(&self) -> Vec<&str> {
        self.rules.iter().map(|r| r.name.as_str()).collect()
    }
}

/// Whether `mode` interrupts a match from `source`.
pub fn interrupts(mode: TtsrInterruptMode, source: StreamSource) -> bool {
    match mode {
        TtsrInterruptMode::Always => true,
        TtsrInterruptMode::Never => false,
        TtsrInterruptMode::ProseOnly => source != StreamSource::Tool,
        TtsrInterruptMode::ToolOnly => source == StreamSource::Tool,
    }
}

#[derive(Debug)]
struct Stream {
    source: StreamSource,
    buffer: String,
    tool_name: Option<String>,
    tool_call_id: Option<String>,
    decoder: ArgsDecoder,
    paths: Vec<String>,
}

impl Stream {
    fn new(source: StreamSource) -> Self {
        Self {
            source,
            buffer: String::new(),
            tool_name: None,
            tool_call_id: None,
            decoder: ArgsDecoder::default(),
            paths: Vec::new(),
        }
    }
}

/// One session's TTSR state.
#[derive(Debug)]
pub struct TtsrMatcher {
    rules: Vec<CompiledRule>,
    settings: TtsrSettings,
    cwd: PathBuf,
    watch_text: bool,
    watch_thinking: bool,
    watch_tools: bool,
    streams: HashMap<usize, Stream>,
    fired: HashSet<String>,
    injected: HashMap<String, u64>,
    turns: u64,
}

impl TtsrMatcher {
    /// A matcher for `rules`; tool-call paths are resolved against `cwd`. With
    /// `ttsr.enabled: false` nothing ever fires.
    pub fn new(rules: Vec<CompiledRule>, settings: TtsrSettings, cwd: PathBuf) -> Self {
        let rules = if settings.enabled { rules } else { Vec::new() };
        let watch_text = rules.iter().any(|r| r.scope.text);
        let watch_thinking = rules.iter().any(|r| r.scope.thinking);
        let watch_tools = rules.iter().any(|r| r.scope.listens_to_tools());
        Self {
            rules,
            settings,
            cwd,
            watch_text,
            watch_thinking,
            watch_tools,
            streams: HashMap::new(),
            fired: HashSet::new(),
            injected: HashMap::new(),
            turns: 0,
        }
    }

    /// Whether any rule is active (the session can skip feeding events otherwise).
    pub fn has_rules(&self) -> bool {
        !self.rules.is_empty()
    }

    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().map(|r| &r.rule)
    }

    /// `turn_start`: new buffers, and rules may fire again this turn.
    pub fn turn_start(&mut self) {
        self.streams.clear();
        self.fired.clear();
    }

    /// `turn_end`: one more turn towards `repeatGap`.
    pub fn turn_end(&mut self) {
        self.turns += 1;
    }

    /// The session injected these rules.
    pub fn mark_injected<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            self.injected.insert(name.to_owned(), self.turns);
        }
    }

    /// A resumed session's injected rules (its `ttsr_injection` entries), counted as injected
    /// at turn 0.
    pub fn restore_injected<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            self.injected.insert(name.to_owned(), 0);
        }
    }

    /// The names of every rule injected so far (to persist).
    pub fn injected_rule_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.injected.keys().cloned().collect();
        names.sort();
        names
    }

    fn can_fire(&self, name: &str) -> bool {
        if self.fired.contains(name) {
            return false;
        }
        match self.injected.get(name) {
            None => true,
            Some(at) => match self.settings.repeat_mode {
                TtsrRepeatMode::Once => false,
                TtsrRepeatMode::AfterGap => self.turns.saturating_sub(*at) >= self.settings.repeat_gap,
            },
        }
    }

    /// Feeds one streamed event; returns the rules it made fire.
    pub fn on_event(&mut self, event: &AssistantMessageEvent) -> Option<TtsrMatch> {
        if self.rules.is_empty() {
            return None;
        }
        match event {
            AssistantMessageEvent::TextStart { content_index } => {
                self.streams.insert(*content_index, Stream::new(StreamSource::Text));
                None
            }
            AssistantMessageEvent::ThinkingStart { content_index } => {
                self.streams.insert(*content_index, Stream::new(StreamSource::Thinking));
                None
            }
            AssistantMessageEvent::ToolCallStart { content_index, id, name } => {
                let mut stream = Stream::new(StreamSource::Tool);
                stream.tool_name = Some(name.clone());
                stream.tool_call_id = Some(id.clone());
                self.streams.insert(*content_index, stream);
                None
            }
            AssistantMessageEvent::TextDelta { content_index, delta } if self.watch_text => {
                self.check(*content_index, StreamSource::Text, delta)
            }
            AssistantMessageEvent::ThinkingDelta { content_index, delta } if self.watch_thinking => {
                self.check(*content_index, StreamSource::Thinking, delta)
            }
            AssistantMessageEvent::ToolCallDelta { content_index, delta } if self.watch_tools => {
                self.check(*content_index, StreamSource::Tool, delta)
            }
            _ => None,
        }
    }

    fn check(&mut self, index: usize, source: StreamSource, delta: &str) -> Option<TtsrMatch> {
        let stream = self.streams.entry(index).or_insert_with(|| Stream::new(source));
        if stream.source != source {
            *stream = Stream::new(source);
        }
        let old_len = stream.buffer.len();
        let mut rescan = false;
        if source == StreamSource::Tool {
            if stream.decoder.feed(delta, &mut stream.buffer) {
                let cwd = &self.cwd;
                stream.paths = stream.decoder.paths().iter().flat_map(|p| path_candidates(p, cwd)).collect();
                rescan = true;
            }
        } else {
            stream.buffer.push_str(delta);
        }
        if stream.buffer.len() == old_len && !rescan {
            return None;
        }
        let mut start = if rescan { 0 } else { old_len.saturating_sub(MATCH_WINDOW) };
        while !stream.buffer.is_char_boundary(start) {
            start -= 1;
        }
        let stream = self.streams.get(&index)?;
        let tool = stream.tool_name.as_deref();
        let matched: Vec<&CompiledRule> = self
            .rules
            .iter()
            .filter(|r| {
                self.can_fire(&r.rule.name)
                    && r.applies(source, tool, &stream.paths)
                    && r.matches_from(&stream.buffer, start)
            })
            .collect();
        if matched.is_empty() {
            return None;
        }
        let global = self.settings.interrupt_mode;
        let interrupt = matched.iter().any(|r| interrupts(r.rule.interrupt_mode.unwrap_or(global), source));
        let found = TtsrMatch {
            rules: matched.iter().map(|r| r.rule.clone()).collect(),
            source,
            tool_name: stream.tool_name.clone(),
            tool_call_id: stream.tool_call_id.clone(),
            interrupt,
        };
        self.fired.extend(found.rules.iter().map(|r| r.name.clone()));
        Some(found)
    }
}

#[cfg(test)]
#[path = "matcher_tests.rs"]
mod tests;
