//! The interactive mode's state, and what the session's events do to it: streamed text and
//! thinking go through a [`StreamingBlock`], finished blocks, tool calls and notices are queued
//! for the history, queue updates and retries feed the live area.

use std::time::Instant;

use ratatui::crossterm::event::Event;
use ratatui::text::Line;
use rho_agent::AgentEvent;
use rho_ai::AssistantMessageEvent;
use rho_rpc::{NotifyType, SessionEvent, UiMethod};
use rho_types::AgentMessage;
use rho_types::types::UserContent;
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

use super::blocks;
use super::components::Components;
use super::dialogs::Dialog;
use super::editor::Editor;
use super::rendered::HeldHistory;
use super::select::Select;
use super::stream::{BlockKind, StreamingBlock};
use super::subagents::TaskBoard;
use super::title::TerminalTitle;
use super::tool_blocks::{self, TASK_TOOL};
use super::transcript::{self, Entry, Shown, Toggles, Transcript};
use super::tree_items::TreeFilter;
use super::widgets::ExtensionWidgets;
use super::{call_order, notices, replay};
use rho_coding_agent::ui::{ComponentUpdate, UiAnswer};
use rho_coding_agent::{AgentSession, AgentSessionEvent};

/// Everything the main loop waits for.
pub enum AppEvent {
    Input(Event),
    Session(Box<AgentSessionEvent>),
    /// Lines for the history, from a command that finished.
    Lines(Vec<Line<'static>>),
    /// Entries for the history (a conversation replayed).
    Entries(Vec<Entry>),
    /// A tool opened a dialog.
    Dialog(UiMethod, oneshot::Sender<UiAnswer>),
    /// A tool's fire-and-forget UI request.
    UiNotify(UiMethod),
    /// An extension's terminal component rendered or closed.
    Component(ComponentUpdate),
    /// The extensions were unloaded: what they put on screen goes.
    ResetExtensions,
    /// An extension's renderer drew a history block (`None`: rho's own rendering).
    Rendered(u64, Option<Vec<String>>),
    /// The markdown transformers answered for a held history block (`None`: as it was).
    Transformed(u64, Option<Box<Shown>>),
    /// The markdown transformers answered for the streaming block `id`'s first `len` bytes.
    StreamTransformed {
        id: u64,
        len: usize,
        markdown: Option<String>,
    },
    /// The working directory's files, listed for `@` mentions.
    Files(Vec<String>),
    /// `/tree`: a step back from a task (instructions typed, a summary cancelled).
    Tree(super::tree::TreeStep),
}

/// The working directory's files for `@` mentions: listed on the first `@`, once.
#[derive(Debug, Default)]
pub enum FileList {
    #[default]
    NotListed,
    Listing,
    Listed(Vec<String>),
}

/// What the list on screen is picking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picking {
    Model,
    Session,
    /// `/fork`: a user message to fork before.
    Fork,
    /// `/tree`: an entry of the session tree to continue from.
    Tree,
    /// `/tree`: whether to summarize the branch left (`choice:entry id`).
    TreeSummary,
    /// `/settings`: the menu (stays open).
    Settings,
    /// `/settings`: a value of one setting (`id=value`).
    SettingValue,
    /// `/scoped-models`: the models Ctrl+P cycles (stays open).
    ScopedModels,
    /// A tool's select or confirm dialog.
    Dialog,
    /// `/login`: a login provider.
    Login,
    /// `/logout`: a login to remove.
    Logout,
    /// `/thinking`: a thinking level.
    Thinking,
    /// `/trust`: the project's trust decision.
    Trust,
    /// `/rewind`: a user message to rewind to before.
    Rewind,
    /// `/rewind`: what to restore (`choice:entry id`).
    RewindChoice,
}

/// An automatic retry waiting: which attempt comes and when.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub attempt: u32,
    pub max_attempts: u32,
    pub until: Instant,
}

impl Retry {
    /// `Retrying (1/3) in 2s…`, counting down.
    pub fn text(&self, now: Instant) -> String {
        let seconds = self.until.saturating_duration_since(now).as_millis().div_ceil(1000);
        format!("Retrying ({}/{}) in {seconds}s…", self.attempt, self.max_attempts)
    }
}

/// A tool's result, kept to be drawn again (Ctrl+O, a resize).
#[derive(Debug)]
pub struct ToolOutput {
    pub name: String,
    pub args: Option<Map<String, Value>>,
    pub content: Vec<UserContent>,
    pub details: Option<Value>,
    pub is_error: bool,
}

impl ToolOutput {
    pub(super) fn finished(&self) -> tool_blocks::Finished<'_> {
        tool_blocks::Finished {
            name: &self.name,
            args: self.args.as_ref(),
            content: &self.content,
            details: self.details.as_ref(),
            is_error: self.is_error,
        }
    }
}

pub struct App {
    pub session: AgentSession,
    pub tx: UnboundedSender<AppEvent>,
    pub editor: Editor,
    pub stream: Option<StreamingBlock>,
    /// Blocks waiting to be inserted above the viewport.
    pub history: Vec<Line<'static>>,
    /// What the history shows, to draw it again.
    pub transcript: Transcript,
    /// The terminal's history is to be cleared and `history` is all of it (drawn again).
    pub redraw: bool,
    pub steering: Vec<String>,
    pub follow_up: Vec<String>,
    /// A compaction or summary in progress.
    pub status: Option<String>,
    /// A retry waiting to start.
    pub retry: Option<Retry>,
    /// The error the last failed attempt of this prompt printed: a retry that fails the same way
    /// says so in a short line instead of printing it again.
    last_error: Option<String>,
    pub select: Option<(Picking, Select)>,
    /// A tool's dialog waiting for an answer.
    pub dialog: Option<Dialog>,
    /// The highlighted completion.
    pub completion: usize,
    pub expand_tools: bool,
    /// Large pastes, shown in the editor as `[paste #n +N lines]` and put back on sending.
    pub pastes: Vec<(String, String)>,
    /// Ctrl+T: thinking blocks are summed up in one line instead of shown.
    pub hide_thinking: bool,
    /// A hidden thinking block is streaming: its text so far.
    hidden_thinking: Option<String>,
    /// Tools running now: call id and the name.
    pub running: Vec<(String, String)>,
    /// The calls of this run not yet shown with their results.
    calls: call_order::CallOrder,
    /// The sub-agents of each running task call.
    pub tasks: Vec<TaskBoard>,
    /// Statuses and widgets set through the UI service.
    pub widgets: ExtensionWidgets,
    /// Extensions' terminal components.
    pub components: Components,
    /// History waiting behind a block an extension's renderer draws.
    pub held: HeldHistory,
    /// The last streaming block held for markdown transformers.
    pub transform_ids: u64,
    pub quit: bool,
    /// A `!command` is running (Escape kills it).
    pub shell_running: bool,
    /// Ctrl+Z was pressed: the main loop stops the process.
    pub suspend: bool,
    pub ctrl_c_at: Option<Instant>,
    /// When Escape was last pressed on an empty, idle editor (twice opens `/tree`).
    pub escape_at: Option<Instant>,
    /// The `/tree` list's view (set from `treeFilterMode` each time it opens).
    pub tree_filter: TreeFilter,
    /// A one-off hint under the editor ("Press Ctrl+C again to quit").
    pub hint: Option<String>,
    pub tick: usize,
    /// An OSC 52 sequence to write before the next frame (`/copy`).
    pub osc52: Option<String>,
    /// The terminal's title (`setTitle`).
    pub title: TerminalTitle,
    /// The last history line was blank.
    last_blank: bool,
    pub files: FileList,
    /// The highlighted file of the `@` list.
    pub mention: usize,
    /// Escape closed the `@` list (until the next edit).
    pub mention_closed: bool,
    /// The entries a Tab path completion matched, shown until the next key.
    pub path_choices: Vec<String>,
}

impl App {
    pub fn new(session: AgentSession, tx: UnboundedSender<AppEvent>) -> Self {
        Self {
            session,
            tx,
            editor: Editor::default(),
            stream: None,
            history: Vec::new(),
            transcript: Transcript::default(),
            redraw: false,
            steering: Vec::new(),
            follow_up: Vec::new(),
            status: None,
            retry: None,
            last_error: None,
            select: None,
            dialog: None,
            completion: 0,
            expand_tools: false,
            pastes: Vec::new(),
            hide_thinking: false,
            hidden_thinking: None,
            running: Vec::new(),
            calls: call_order::CallOrder::default(),
            tasks: Vec::new(),
            widgets: ExtensionWidgets::default(),
            components: Components::default(),
            held: HeldHistory::default(),
            transform_ids: 0,
            quit: false,
            shell_running: false,
            suspend: false,
            ctrl_c_at: None,
            escape_at: None,
            tree_filter: TreeFilter::default(),
            hint: None,
            tick: 0,
            osc52: None,
            title: TerminalTitle::default(),
            last_blank: true,
            files: FileList::NotListed,
            mention: 0,
            mention_closed: false,
            path_choices: Vec::new(),
        }
    }

    /// Adds lines to the history (after any block an extension is still rendering); blank
    /// lines that would follow a blank line are dropped.
    pub fn push(&mut self, lines: impl IntoIterator<Item = Line<'static>>) {
        let lines: Vec<_> = lines.into_iter().collect();
        self.push_shown(Shown::recorded(Entry::Lines(lines.clone()), lines));
    }

    /// Adds an entry to the history, drawn as the history is drawn now (a message's markdown
    /// through the extensions' transformers when one runs on it).
    pub fn push_entry(&mut self, entry: Entry) {
        let entry = match entry {
            Entry::Message(message, args) if self.message_is_transformed(&message) => {
                self.push_transformed_message(*message, args);
                return;
            }
            entry => entry,
        };
        let shown = self.shown(entry);
        self.push_shown(shown);
    }

    pub(super) fn shown(&self, entry: Entry) -> Shown {
        let lines = entry.lines(self.toggles());
        Shown::recorded(entry, lines)
    }

    pub(super) fn push_shown(&mut self, shown: Shown) {
        if self.held.is_holding() {
            self.held.hold(shown);
            return;
        }
        self.push_now(shown);
    }

    pub(super) fn push_now(&mut self, shown: Shown) {
        transcript::append(&mut self.history, shown.lines, &mut self.last_blank);
        if let Some(entry) = shown.entry {
            self.transcript.record(entry);
        }
    }

    /// How the history is drawn now.
    pub fn toggles(&self) -> Toggles {
        Toggles { hide_thinking: self.hide_thinking, expanded: self.expand_tools }
    }

    /// The whole history to be drawn again (a resize, Ctrl+T, Ctrl+O, a theme) at the next
    /// frame: however many ask before it, it is drawn once.
    pub fn redraw_history(&mut self) {
        self.redraw = true;
    }

    /// The history drawn again: the terminal's history is to be cleared and `history` becomes
    /// the transcript written anew, a block still streaming with it.
    pub fn rebuild_history(&mut self) {
        self.follow_thinking_toggle();
        self.history = self.transcript.render(self.toggles());
        let mut last_blank = self.history.last().is_none_or(transcript::is_blank);
        if let Some(block) = self.stream.take() {
            let (block, lines) = block.restart();
            transcript::append(&mut self.history, lines, &mut last_blank);
            self.stream = Some(block);
        }
        self.last_blank = last_blank;
    }

    /// A thinking block still streaming follows Ctrl+T: its text so far kept out of sight while
    /// thinking is hidden, streamed on screen (from its start) once shown.
    fn follow_thinking_toggle(&mut self) {
        if self.hide_thinking {
            if let Some(block) = self.stream.take_if(|b| b.kind == BlockKind::Thinking) {
                self.hidden_thinking = Some(block.into_text());
            }
        } else if let Some(text) = self.hidden_thinking.take() {
            let mut block = self.new_block(BlockKind::Thinking);
            let lines = block.push(&text);
            self.push([Line::default()]);
            self.push_shown(Shown::drawn(lines));
            self.stream = Some(block);
        }
    }

    pub fn is_working(&self) -> bool {
        self.session.is_streaming()
    }

    /// Sends a command's output to the history from another task.
    pub fn reporter(&self) -> impl Fn(Vec<Line<'static>>) + Send + 'static {
        let tx = self.tx.clone();
        move |lines| {
            let _ = tx.send(AppEvent::Lines(lines));
        }
    }

    /// Closes the streaming block: its rest into the history, the block into the transcript.
    pub(super) fn end_stream(&mut self) {
        if let Some(text) = self.hidden_thinking.take() {
            self.push_entry(Entry::Thinking(text));
        }
        if let Some(block) = self.stream.take() {
            let (kind, held) = (block.kind, block.transforming.is_some());
            let (text, mut lines) = block.finish();
            if kind == BlockKind::Thinking {
                lines.push(Line::default());
            }
            let transformed = held.then(|| text.clone());
            let entry = match kind {
                BlockKind::Text => Entry::Markdown(text),
                BlockKind::Thinking => Entry::Thinking(text),
            };
            let shown = Shown::recorded(entry, lines);
            match transformed {
                Some(text) => self.push_transformed_block(kind, text, shown),
                None => self.push_shown(shown),
            }
        }
    }

    fn stream_delta(&mut self, kind: BlockKind, delta: &str) {
        self.follow_thinking_toggle();
        if kind == BlockKind::Thinking && self.hide_thinking {
            if self.stream.is_some() {
                self.end_stream();
            }
            self.hidden_thinking.get_or_insert_default().push_str(delta);
            return;
        }
        if self.stream.as_ref().is_some_and(|b| b.kind != kind) || self.hidden_thinking.is_some() {
            self.end_stream();
        }
        if self.stream.is_none() {
            self.push([Line::default()]);
            self.stream = Some(self.new_block(kind));
        }
        let Some(block) = self.stream.as_mut() else { return };
        let finished = block.push(delta);
        if block.transforming.is_some() {
            self.ask_stream_transform();
        }
        self.push_shown(Shown::drawn(finished));
    }

    pub fn on_session(&mut self, event: AgentSessionEvent) {
        match event {
            AgentSessionEvent::Agent(event) => self.on_agent(event),
            AgentSessionEvent::Session(event) => self.on_session_event(event),
            AgentSessionEvent::ExtensionError(e) => {
                self.push([blocks::error(&format!(
                    "Extension error ({}, {}): {}",
                    e.extension_path, e.event, e.error
                ))]);
            }
            _ => {}
        }
    }

    fn on_agent(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::MessageStart { message: AgentMessage::User(user) } => {
                self.last_error = None;
                self.push_user(&user.text());
            }
            AgentEvent::MessageStart { message: message @ AgentMessage::Custom(_) } => {
                self.end_stream();
                self.push_custom_message(&message);
            }
            AgentEvent::MessageUpdate { event } => match event {
                AssistantMessageEvent::TextDelta { delta, .. } => self.stream_delta(BlockKind::Text, &delta),
                AssistantMessageEvent::ThinkingDelta { delta, .. } => self.stream_delta(BlockKind::Thinking, &delta),
                AssistantMessageEvent::TextEnd { .. } | AssistantMessageEvent::ThinkingEnd { .. } => self.end_stream(),
                _ => {}
            },
            AgentEvent::MessageEnd { message: AgentMessage::Assistant(message) } => {
                self.end_stream();
                let repeated = message.stop_reason == rho_types::types::StopReason::Error
                    && message.error_message.is_some()
                    && self.last_error == message.error_message;
                if repeated {
                    self.push([blocks::error("Error: the same as the last attempt")]);
                } else {
                    self.push(blocks::stop_notice(&message));
                }
                self.last_error =
                    message.error_message.filter(|_| message.stop_reason == rho_types::types::StopReason::Error);
            }
            AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => {
                self.end_stream();
                if tool_name == TASK_TOOL {
                    self.tasks.push(TaskBoard::new(tool_call_id.clone()));
                }
                self.running.push((tool_call_id.clone(), tool_name.clone()));
                let shown = self.calls.start(tool_call_id, tool_name, args);
                self.show_calls(shown);
            }
            AgentEvent::ToolExecutionUpdate { tool_call_id, partial_result, .. } => {
                if let Some(board) = self.tasks.iter_mut().find(|b| b.call_id == tool_call_id) {
                    board.update(partial_result.details.as_ref(), Instant::now());
                }
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, result, is_error, .. } => {
                self.running.retain(|(id, _)| *id != tool_call_id);
                self.tasks.retain(|b| b.call_id != tool_call_id);
                let output = ToolOutput {
                    name: tool_name,
                    args: None,
                    content: result.content,
                    details: result.details,
                    is_error,
                };
                let shown = self.calls.finish(&tool_call_id, output);
                self.show_calls(shown);
            }
            AgentEvent::QueueUpdate { steering, follow_up } => {
                self.steering = steering;
                self.follow_up = follow_up;
            }
            AgentEvent::AgentEnd { .. } => {
                self.end_stream();
                self.running.clear();
                let shown = self.calls.drain();
                self.show_calls(shown);
                self.tasks.clear();
            }
            _ => {}
        }
    }

    fn on_session_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::AutoRetryStart { attempt, max_attempts, delay_ms, .. } => {
                // The failed attempt's error is already in the history; the wait counts down in
                // the working line, as pi shows it.
                self.end_stream();
                let until = Instant::now() + std::time::Duration::from_millis(delay_ms);
                self.retry = Some(Retry { attempt, max_attempts, until });
            }
            SessionEvent::AutoRetryEnd { success, attempt, .. } => {
                // The last attempt's error is the line above: it is not repeated.
                self.retry = None;
                if !success {
                    let attempts = if attempt == 1 { "retry" } else { "retries" };
                    self.push([blocks::error(&format!("Gave up after {attempt} {attempts}"))]);
                }
            }
            SessionEvent::AutoCompactionStart { .. } | SessionEvent::CompactionStart { .. } => {
                self.status = Some("Compacting…".to_owned());
            }
            SessionEvent::AutoCompactionEnd { result, aborted, error_message, .. }
            | SessionEvent::CompactionEnd { result, aborted, error_message, .. } => {
                self.status = None;
                let line = match (result, aborted, error_message) {
                    (_, true, _) => blocks::notice("Compaction aborted"),
                    // The message says what failed ("Compaction failed: …", "Auto-compaction failed: …").
                    (_, _, Some(e)) => blocks::error(&e),
                    (Some(r), _, _) => {
                        blocks::notice(&format!("Compacted the conversation ({} tokens before)", r.tokens_before))
                    }
                    (None, _, None) => blocks::notice("Nothing to compact"),
                };
                self.push([Line::default(), line]);
            }
            SessionEvent::Notice { level, message, .. } => {
                let line = match level {
                    NotifyType::Error => blocks::error(&message),
                    NotifyType::Warning => blocks::warning(&message),
                    _ => blocks::notice(&message),
                };
                self.push([line]);
            }
            SessionEvent::TtsrTriggered { rules } => {
                self.end_stream();
                self.push(notices::stream_rules(&rules));
            }
            SessionEvent::TodoReminder { todos, attempt, max_attempts } => {
                self.end_stream();
                self.push([Line::default(), notices::todo_reminder(todos.len(), attempt, max_attempts)]);
            }
            SessionEvent::SubagentVerificationStart { id, .. } => self.verifying(&id, Some("verifying".to_owned())),
            SessionEvent::SubagentVerificationCommandStart { id, command_name, .. } => {
                self.verifying(&id, Some(format!("verifying: {command_name}")));
            }
            SessionEvent::SubagentVerificationEnd { id, .. } => self.verifying(&id, None),
            SessionEvent::BudgetWarning { scope, snapshot } => {
                let limits = self.session.budget().map(|b| *b.limits());
                self.push([notices::budget(scope, &snapshot, limits.as_ref(), false)]);
            }
            SessionEvent::BudgetExceeded { scope, snapshot } => {
                let limits = self.session.budget().map(|b| *b.limits());
                self.push([notices::budget(scope, &snapshot, limits.as_ref(), true)]);
            }
            SessionEvent::EntryAppended { entry } => self.push_custom_entry(&entry),
            _ => {}
        }
    }

    /// What sub-agent `id`'s verification runs, on the board that has it.
    fn verifying(&mut self, id: &str, what: Option<String>) {
        for board in &mut self.tasks {
            if board.verifying(id, what.clone()) {
                break;
            }
        }
    }

    /// Ctrl+T: thinking blocks hidden or shown, those on screen too.
    pub fn toggle_thinking(&mut self) {
        self.set_hide_thinking(!self.hide_thinking);
        let state = if self.hide_thinking { "hidden" } else { "shown" };
        self.hint = Some(format!("Thinking blocks {state}"));
    }

    pub fn set_hide_thinking(&mut self, hide: bool) {
        if hide != self.hide_thinking {
            self.hide_thinking = hide;
            self.redraw_history();
        }
    }

    /// Ctrl+O: tool output expanded or folded, that on screen too.
    pub fn toggle_tool_output(&mut self) {
        self.expand_tools = !self.expand_tools;
        self.redraw_history();
        let state = if self.expand_tools { "expanded" } else { "folded" };
        self.hint = Some(format!("Tool output {state}"));
    }

    /// The whole conversation so far (a resumed or continued session).
    pub fn replay(&mut self) {
        for entry in replay::tail(&self.session.messages()) {
            self.push_entry(entry);
        }
    }
}
