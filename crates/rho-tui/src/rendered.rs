//! History drawn by extensions' renderers: a custom message (`registerMessageRenderer`) and an
//! extension tool's call and result (`renderCall`, `renderResult`) are rendered in the extension
//! host, which answers a moment later. The history is printed into the terminal's scrollback
//! and cannot be changed afterwards, so what follows such a block waits with it, in order, until
//! the renderer answers (or [`RENDER_TIMEOUT`] passes: rho's own rendering is printed then).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ratatui::text::Line;
use rho_extensions::RenderRequest;
use rho_types::AgentMessage;
use serde_json::{Map, Value, json};

use super::app::{App, AppEvent, ToolOutput};
use super::components::ansi_lines;
use super::transcript::{Entry, Shown};
use super::transform::Surface;

/// How long the history waits for a renderer (the host gives up on it a little earlier).
const RENDER_TIMEOUT: Duration = Duration::from_millis(2500);

/// History lines waiting behind a block an extension is rendering.
#[derive(Debug, Default)]
pub struct HeldHistory {
    queue: VecDeque<Held>,
    next_id: u64,
}

#[derive(Debug)]
enum Held {
    Ready(Shown),
    Rendering { id: u64, fallback: Shown, deadline: Instant },
}

impl HeldHistory {
    /// Whether lines pushed now must wait.
    pub fn is_holding(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn hold(&mut self, shown: Shown) {
        self.queue.push_back(Held::Ready(shown));
    }

    pub(super) fn wait_for(&mut self, fallback: Shown) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.queue.push_back(Held::Rendering { id, fallback, deadline: Instant::now() + RENDER_TIMEOUT });
        id
    }

    /// The renderer of block `id` answered: what it drew, or `None` for rho's own.
    pub(super) fn answer(&mut self, id: u64, shown: Option<Shown>) {
        for held in &mut self.queue {
            if let Held::Rendering { id: waiting, fallback, .. } = held
                && *waiting == id
            {
                *held = Held::Ready(shown.unwrap_or_else(|| std::mem::take(fallback)));
                return;
            }
        }
    }

    /// The lines that need wait no longer, in order (a block past its time in rho's rendering).
    fn release(&mut self, now: Instant) -> Vec<Shown> {
        let mut out = Vec::new();
        while let Some(front) = self.queue.front_mut() {
            match front {
                Held::Ready(shown) => out.push(std::mem::take(shown)),
                Held::Rendering { fallback, deadline, .. } if *deadline <= now => out.push(std::mem::take(fallback)),
                Held::Rendering { .. } => break,
            }
            self.queue.pop_front();
        }
        out
    }
}

impl App {
    /// Prints `fallback`, or what an extension's renderer draws instead when `request` is given.
    fn push_rendered(&mut self, request: Option<RenderRequest>, fallback: Entry) {
        let fallback = self.shown(fallback);
        let Some(request) = request else {
            self.push_shown(fallback);
            return;
        };
        let id = self.held.wait_for(fallback);
        let (session, tx) = (self.session.clone(), self.tx.clone());
        tokio::spawn(async move {
            let lines = session.extension_render(request).await;
            let _ = tx.send(AppEvent::Rendered(id, lines));
        });
    }

    /// A renderer answered.
    pub fn rendered(&mut self, id: u64, lines: Option<Vec<String>>) {
        let shown = lines.map(|lines| {
            let mut block = vec![Line::default()];
            block.extend(ansi_lines(&lines));
            Shown::recorded(Entry::Lines(block.clone()), block)
        });
        self.held.answer(id, shown);
        self.release_held();
    }

    /// Prints what waited and need wait no longer.
    pub fn release_held(&mut self) {
        for shown in self.held.release(Instant::now()) {
            self.push_now(shown);
        }
    }

    /// A custom message an extension sent, by its renderer when it has one (else its text
    /// through the markdown transformers, when one runs on `custom`).
    pub fn push_custom_message(&mut self, message: &AgentMessage) {
        let AgentMessage::Custom(custom) = message else { return };
        if !custom.display {
            return;
        }
        if !self.session.extension_renders_message(&custom.custom_type) && self.transforms(Surface::Custom) {
            self.push_transformed_message(message.clone(), None);
            return;
        }
        let fallback = Entry::Lines(super::blocks::custom(custom));
        let request = self.session.extension_renders_message(&custom.custom_type).then(|| RenderRequest::Message {
            message: serde_json::to_value(message).unwrap_or(Value::Null),
            width: width(),
            expanded: self.expand_tools,
        });
        self.push_rendered(request, fallback);
    }

    /// A custom entry an extension appended, drawn by its renderer (nothing without one, as in
    /// pi: custom entries are the extension's state).
    pub fn push_custom_entry(&mut self, entry: &Value) {
        let custom_type = entry.get("customType").and_then(Value::as_str).unwrap_or_default();
        if entry.get("type").and_then(Value::as_str) != Some("custom")
            || !self.session.extension_renders_entry(custom_type)
        {
            return;
        }
        let request = RenderRequest::Entry { entry: entry.clone(), width: width(), expanded: self.expand_tools };
        self.push_rendered(Some(request), Entry::Lines(Vec::new()));
    }

    /// A tool call's line, by the extension tool's `renderCall` when it has one.
    pub fn push_tool_call(&mut self, tool_call_id: &str, tool_name: &str, args: &Map<String, Value>) {
        let fallback = Entry::ToolCall { name: tool_name.to_owned(), args: args.clone() };
        let request = self.session.extension_renders_tool(tool_name).0.then(|| RenderRequest::ToolCall {
            tool_name: tool_name.to_owned(),
            tool_call_id: tool_call_id.to_owned(),
            args: Value::Object(args.clone()),
            width: width(),
            expanded: self.expand_tools,
        });
        self.push_rendered(request, fallback);
    }

    /// Calls and results in the order [`CallOrder`](super::call_order::CallOrder) gives them.
    pub fn show_calls(&mut self, steps: Vec<super::call_order::Step>) {
        for step in steps {
            match step {
                super::call_order::Step::Call { id, name, args } => self.push_tool_call(&id, &name, &args),
                super::call_order::Step::Result { id, output } => self.push_tool_result(&id, output),
            }
        }
    }

    /// A tool's result, by the extension tool's `renderResult` when it has one.
    pub fn push_tool_result(&mut self, tool_call_id: &str, output: ToolOutput) {
        let request = self.session.extension_renders_tool(&output.name).1.then(|| RenderRequest::ToolResult {
            tool_name: output.name.clone(),
            tool_call_id: tool_call_id.to_owned(),
            args: output.args.clone().map(Value::Object).unwrap_or_else(|| json!({})),
            result: json!({"content": output.content, "details": output.details}),
            is_error: output.is_error,
            width: width(),
            expanded: self.expand_tools,
        });
        self.push_rendered(request, Entry::ToolResult(Box::new(output)));
    }
}

/// The terminal's width, which renderers draw at.
pub(super) fn width() -> u16 {
    ratatui::crossterm::terminal::size().map_or(80, |(columns, _)| columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(blocks: &[Shown]) -> Vec<String> {
        blocks.iter().flat_map(|b| &b.lines).map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    fn raw(text: &str) -> Shown {
        Shown::drawn(vec![Line::raw(text.to_owned())])
    }

    #[test]
    fn what_follows_a_block_being_rendered_waits_for_it_in_order() {
        let mut held = HeldHistory::default();
        let now = Instant::now();
        let first = held.wait_for(raw("first, rho's"));
        held.hold(raw("after first"));
        let second = held.wait_for(raw("second, rho's"));
        held.hold(raw("after second"));
        assert!(held.release(now).is_empty());
        // The second answers first: nothing moves until the first has.
        held.answer(second, Some(raw("second, rendered")));
        assert!(held.release(now).is_empty());
        held.answer(first, None);
        assert_eq!(text(&held.release(now)), ["first, rho's", "after first", "second, rendered", "after second"]);
        assert!(!held.is_holding());
    }

    #[test]
    fn a_renderer_that_does_not_answer_in_time_leaves_rhos_rendering() {
        let mut held = HeldHistory::default();
        let now = Instant::now();
        held.wait_for(raw("rho's"));
        held.hold(raw("next"));
        assert!(held.release(now).is_empty());
        assert_eq!(text(&held.release(Instant::now() + RENDER_TIMEOUT)), ["rho's", "next"]);
    }
}
