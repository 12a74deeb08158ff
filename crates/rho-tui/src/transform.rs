//! Extensions' markdown transformers (`registerMarkdownTransformer`) on what the history draws:
//! a user message, an assistant's text and thinking (as they stream and when they end), a
//! custom message without a renderer of its own, and messages replayed from the session. The
//! markdown goes to the extension host and rho draws what comes back; the block waits in the
//! held history meanwhile (see [`rendered`](super::rendered)), so the order stays as it was, and
//! a host that fails or is slow leaves the markdown as it was. Display only: the session and the
//! model keep the original.

use std::time::{Duration, Instant};

use rho_extensions::RenderRequest;
use rho_types::AgentMessage;
use rho_types::types::{AssistantContent, UserMessageContent};
use serde_json::{Map, Value};

use super::app::{App, AppEvent};
use super::rendered::width;
use super::stream::{BlockKind, StreamingBlock};
use super::transcript::{Entry, Shown};
use super::{blocks, markdown};

/// The least time between two transforms of a block while it streams (each sends the whole
/// text so far to the host; the block's end is transformed whatever the time).
const STREAM_TRANSFORM_EVERY: Duration = Duration::from_millis(50);

/// Where markdown is drawn (pi's `messageType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    User,
    Assistant,
    AssistantThinking,
    Custom,
}

impl Surface {
    pub fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::AssistantThinking => "assistant-thinking",
            Self::Custom => "custom",
        }
    }

    fn of(kind: BlockKind) -> Self {
        match kind {
            BlockKind::Text => Self::Assistant,
            BlockKind::Thinking => Self::AssistantThinking,
        }
    }

    fn request(self, markdown: String, is_streaming: bool) -> RenderRequest {
        RenderRequest::Markdown {
            markdown,
            message_type: self.name().to_owned(),
            is_streaming,
            available_width: width(),
            message_id: None,
            timestamp: None,
        }
    }
}

impl App {
    /// Whether an extension's markdown transformer runs on `surface`.
    pub fn transforms(&self, surface: Surface) -> bool {
        self.session.extension_transforms_markdown(surface.name())
    }

    /// A new streaming block: held whole for the transformers when one runs on its kind.
    pub fn new_block(&mut self, kind: BlockKind) -> StreamingBlock {
        if !self.transforms(Surface::of(kind)) {
            return StreamingBlock::new(kind);
        }
        self.transform_ids += 1;
        StreamingBlock::transformed(kind, self.transform_ids)
    }

    /// Asks for a transform of the streaming block's text so far (`isStreaming`), unless one is
    /// being asked for already or was a moment ago: the live area draws the last answer.
    pub fn ask_stream_transform(&mut self) {
        let Some(block) = self.stream.as_mut() else { return };
        let kind = block.kind;
        let recent =
            |t: &super::stream::Transforming| t.asked_at.is_some_and(|at| at.elapsed() < STREAM_TRANSFORM_EVERY);
        if block.transforming.as_ref().is_none_or(|t| t.asking || recent(t)) {
            return;
        }
        let text = block.text().to_owned();
        let Some(transforming) = block.transforming.as_mut() else { return };
        transforming.asking = true;
        transforming.asked_at = Some(Instant::now());
        let id = transforming.id;
        let (session, tx) = (self.session.clone(), self.tx.clone());
        tokio::spawn(async move {
            let len = text.len();
            let answer = session.extension_transform_markdown(Surface::of(kind).request(text, true)).await;
            let _ = tx.send(AppEvent::StreamTransformed { id, len, markdown: answer });
        });
    }

    /// A transform of the streaming block `id` answered.
    pub fn stream_transformed(&mut self, id: u64, len: usize, markdown: Option<String>) {
        if let Some(block) = self.stream.as_mut() {
            match markdown {
                Some(markdown) => block.set_transformed(id, len, markdown),
                None => block.set_transformed(id, 0, String::new()),
            }
        }
    }

    /// A held streaming block ended: `fallback` (its text as it is) waits for the transform.
    pub fn push_transformed_block(&mut self, kind: BlockKind, text: String, fallback: Shown) {
        let make = move |markdown: String| match kind {
            BlockKind::Text => {
                let lines = markdown::render(&markdown);
                Shown::recorded(Entry::Markdown(markdown), lines)
            }
            BlockKind::Thinking => {
                let mut lines = blocks::thinking(&markdown);
                lines.push(ratatui::text::Line::default());
                Shown::recorded(Entry::Thinking(markdown), lines)
            }
        };
        self.push_transformed(fallback, move |session| async move {
            let markdown = session.extension_transform_markdown(Surface::of(kind).request(text, false)).await?;
            Some(make(markdown))
        });
    }

    /// A user's message, through the transformers when one runs on `user`.
    pub fn push_user(&mut self, text: &str) {
        let lines = blocks::user(text);
        if !self.transforms(Surface::User) {
            self.push(lines);
            return;
        }
        let fallback = Shown::recorded(Entry::Lines(lines.clone()), lines);
        let text = text.to_owned();
        self.push_transformed(fallback, move |session| async move {
            let markdown = session.extension_transform_markdown(Surface::User.request(text, false)).await?;
            let lines = blocks::user(&markdown);
            Some(Shown::recorded(Entry::Lines(lines.clone()), lines))
        });
    }

    /// A message of the conversation (replayed, or a custom one as it comes) with its markdown
    /// transformed where a transformer runs.
    pub fn push_transformed_message(&mut self, message: AgentMessage, args: Option<Map<String, Value>>) {
        let toggles = self.toggles();
        let fallback = self.shown(Entry::Message(Box::new(message.clone()), args.clone()));
        let surfaces: Vec<Surface> = [Surface::User, Surface::Assistant, Surface::AssistantThinking, Surface::Custom]
            .into_iter()
            .filter(|s| self.transforms(*s))
            .collect();
        self.push_transformed(fallback, move |session| async move {
            let transform = async |surface: Surface, text: String| {
                if !surfaces.contains(&surface) {
                    return text;
                }
                let request = surface.request(text.clone(), false);
                session.extension_transform_markdown(request).await.unwrap_or(text)
            };
            let mut message = message;
            match &mut message {
                AgentMessage::User(user) => {
                    let text = transform(Surface::User, user.text()).await;
                    user.content = UserMessageContent::Text(text.into());
                }
                AgentMessage::Assistant(assistant) => {
                    for block in &mut assistant.content {
                        match block {
                            AssistantContent::Text(t) => {
                                t.text = transform(Surface::Assistant, t.text.to_string()).await.into();
                            }
                            AssistantContent::Thinking(t) => {
                                let text = t.thinking.to_string();
                                t.thinking = transform(Surface::AssistantThinking, text).await.into();
                            }
                            _ => {}
                        }
                    }
                }
                AgentMessage::Custom(custom) => {
                    let text = transform(Surface::Custom, custom.content.text_joined("\n")).await;
                    custom.content = UserMessageContent::Text(text.into());
                }
                _ => {}
            }
            let entry = Entry::Message(Box::new(message), args);
            let lines = entry.lines(toggles);
            Some(Shown::recorded(entry, lines))
        });
    }

    /// Whether a message has markdown a transformer runs on.
    pub fn message_is_transformed(&self, message: &AgentMessage) -> bool {
        match message {
            AgentMessage::User(_) => self.transforms(Surface::User),
            AgentMessage::Assistant(a) => a.content.iter().any(|block| match block {
                AssistantContent::Text(_) => self.transforms(Surface::Assistant),
                AssistantContent::Thinking(_) => self.transforms(Surface::AssistantThinking),
                _ => false,
            }),
            AgentMessage::Custom(c) => {
                c.display && !self.session.extension_renders_message(&c.custom_type) && self.transforms(Surface::Custom)
            }
            _ => false,
        }
    }

    /// Holds `fallback`'s place in the history until `transform` answers (its `None`, or no
    /// answer in time, prints `fallback`).
    fn push_transformed<F>(&mut self, fallback: Shown, transform: impl FnOnce(rho_coding_agent::AgentSession) -> F)
    where
        F: Future<Output = Option<Shown>> + Send + 'static,
    {
        let id = self.held.wait_for(fallback);
        let tx = self.tx.clone();
        let future = transform(self.session.clone());
        tokio::spawn(async move {
            let _ = tx.send(AppEvent::Transformed(id, future.await.map(Box::new)));
        });
    }
}
