//! Extensions' renderers for the terminal: a custom message's (`registerMessageRenderer`), a
//! custom entry's (`registerEntryRenderer`) and a tool's call and result (`renderCall`,
//! `renderResult`, `registerToolRenderer`) are pi-tui components, rendered in the host to lines
//! the interactive mode prints; markdown transformers (`registerMarkdownTransformer`) change
//! the markdown rho then draws itself. A renderer or transformer that fails or takes longer than
//! [`RENDER_TIMEOUT`] leaves rho's own rendering.

use std::sync::Arc;
use std::time::Duration;

use rho_extensions::{RenderRequest, ToHost};

use super::Extensions;

/// How long the screen waits for a renderer.
pub const RENDER_TIMEOUT: Duration = Duration::from_secs(2);

impl Extensions {
    /// Whether `custom_type` has a renderer.
    pub(crate) fn renders_message(&self, custom_type: &str) -> bool {
        self.registrations().renderers.iter().any(|r| r == custom_type)
    }

    /// Whether custom entries of `custom_type` have a renderer.
    pub(crate) fn renders_entry(&self, custom_type: &str) -> bool {
        self.registrations().entry_renderers.iter().any(|r| r == custom_type)
    }

    /// Whether the tool `name`'s call and result may be drawn by an extension: its own
    /// renderers (an extension tool's), or, when some extension resolves tool renderers, any
    /// tool's (the host answers null for one it leaves to rho).
    pub(crate) fn renders_tool(&self, name: &str) -> (bool, bool) {
        let registrations = self.registrations();
        if registrations.tool_renderers {
            return (true, true);
        }
        registrations
            .tools
            .iter()
            .rfind(|t| t.name == name)
            .map_or((false, false), |t| (t.render_call, t.render_result))
    }

    /// Whether some markdown transformer runs on `surface` (a `messageType`).
    pub(crate) fn transforms_markdown(&self, surface: &str) -> bool {
        self.registrations().markdown_transformers.iter().any(|s| s == surface)
    }

    /// The lines the renderer draws; `None` when it has none, failed or took too long.
    pub(crate) async fn render(self: &Arc<Self>, request: RenderRequest) -> Option<Vec<String>> {
        let answer = self.ask_renderer(request).await?;
        let lines = answer.get("lines")?.as_array()?;
        Some(lines.iter().map(|line| line.as_str().unwrap_or_default().to_owned()).collect())
    }

    /// The markdown the transformers make of a [`RenderRequest::Markdown`]; `None` when the
    /// host failed or took too long.
    pub(crate) async fn transform_markdown(self: &Arc<Self>, request: RenderRequest) -> Option<String> {
        let mut answer = self.ask_renderer(request).await?;
        match answer.get_mut("markdown")?.take() {
            serde_json::Value::String(markdown) => Some(markdown),
            _ => None,
        }
    }

    async fn ask_renderer(self: &Arc<Self>, request: RenderRequest) -> Option<serde_json::Value> {
        let host = self.host().await.ok()?;
        if let Some(session) = self.session() {
            self.sync_to(&host, &session, true);
        }
        let (_, answer) = host.request(&ToHost::Render(Box::new(request)));
        match tokio::time::timeout(RENDER_TIMEOUT, answer).await {
            Ok(Ok(Ok(value))) => Some(value),
            Ok(Ok(Err(e))) => {
                self.report("<extension host>", "render", &e.to_string());
                None
            }
            _ => None,
        }
    }
}
