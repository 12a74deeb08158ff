//! `rho -r`: the session picker before any session is open (this directory's sessions or every
//! project's, newest first, with search), drawn in the same inline viewport the mode then uses.

use std::path::Path;

use ratatui::crossterm::event::{Event, KeyEventKind};
use ratatui::widgets::Paragraph;
use tokio::sync::mpsc::UnboundedReceiver;

use super::app::AppEvent;
use super::resume;
use super::select::SelectOutcome;
use super::terminal::Tui;

/// What the person did with the picker.
pub enum Picked {
    Session(String),
    /// There is no session to pick: start a new one.
    None,
    Cancelled,
}

pub async fn pick_session(
    tui: &mut Tui,
    events: &mut UnboundedReceiver<AppEvent>,
    dir: &Path,
    agent_dir: &Path,
) -> std::io::Result<Picked> {
    let Some(mut select) = resume::list(dir, agent_dir) else {
        return Ok(Picked::None);
    };
    loop {
        let lines = select.lines();
        tui.set_height(u16::try_from(lines.len()).unwrap_or(u16::MAX))?;
        tui.draw(|frame| frame.render_widget(Paragraph::new(lines), frame.area()))?;
        let Some(event) = events.recv().await else { return Ok(Picked::Cancelled) };
        if let AppEvent::Input(Event::Key(key)) = event
            && key.kind != KeyEventKind::Release
        {
            match select.key(key) {
                SelectOutcome::Shortcut('\t', _) => resume::switch_scope(&mut select, dir, agent_dir),
                // The session list is not a toggling one.
                SelectOutcome::Pending
                | SelectOutcome::Toggled(_)
                | SelectOutcome::Shortcut(..)
                | SelectOutcome::Move(..) => {}
                SelectOutcome::Cancelled => return Ok(Picked::Cancelled),
                SelectOutcome::Chosen(path) => return Ok(Picked::Session(path)),
            }
        }
    }
}
