//! The live viewport under the history: the streaming block's unfinished lines, the todo list,
//! the running sub-agents and the widgets above the editor, the working indicator with the
//! queued messages, the editor between two rules (or an open list, or an extension's component
//! in its place) and the widgets below it, the command completions, the `@` file list or a path
//! completion's choices, and the footer with the statuses. Its height follows its content.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use rho_rpc::WidgetPlacement;

use super::app::App;
use super::{footer, style, todos};

const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Editor rows shown at most (it scrolls to the cursor past that).
const MAX_EDITOR_ROWS: usize = 10;
/// Completions shown at most.
const MAX_COMPLETIONS: usize = 8;

/// One frame's content, measured.
pub struct View {
    live: Paragraph<'static>,
    live_height: u16,
    live_scroll: u16,
    lines: Vec<Line<'static>>,
    /// The cursor's row among `lines` and its column.
    cursor: Option<(u16, u16)>,
}

impl View {
    pub fn build(app: &mut App, width: u16, screen_height: u16) -> Self {
        let pending = app.stream.as_ref().map(|s| s.live()).unwrap_or_default();
        let live = Paragraph::new(pending).wrap(Wrap { trim: false });
        let full = u16::try_from(live.line_count(width)).unwrap_or(u16::MAX);
        let live_height = full.min(screen_height / 2);
        let live_scroll = full - live_height;

        let mut lines = above_editor(app, (screen_height - live_height) / 2);
        if app.is_working() {
            let spinner = SPINNER[app.tick % SPINNER.len()];
            let what = match (&app.retry, &app.status, app.running.last()) {
                (Some(retry), _, _) => retry.text(Instant::now()),
                (None, Some(status), _) => status.clone(),
                (None, None, Some((_, tool))) => format!("Running {tool}…"),
                (None, None, None) => "Working…".to_owned(),
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{spinner} "), style::accent()),
                Span::raw(what),
                Span::styled(" (Esc to abort)", style::dim()),
            ]));
        } else if let Some(status) = &app.status {
            lines.push(Line::styled(status.clone(), style::dim()));
        }
        for text in &app.steering {
            lines.push(queued_line("Steering", text));
        }
        for text in &app.follow_up {
            lines.push(queued_line("Follow-up", text));
        }

        if let Some(dialog) = app.dialog.as_ref().filter(|d| d.typed) {
            lines.push(Line::from(vec![
                Span::styled("? ", style::warning()),
                Span::styled(dialog.title.clone(), style::bold()),
                Span::styled(" (Enter answers, Esc dismisses)", style::dim()),
            ]));
        }
        let rule = Line::styled("─".repeat(usize::from(width)), style::dim());
        let mut cursor = None;
        if let Some((_, select)) = &app.select {
            lines.push(rule.clone());
            lines.extend(select.lines());
        } else if let Some((_, component)) = app.components.focused() {
            lines.extend(component.iter().cloned());
        } else if let Some((_, editor)) = app.extension_editor() {
            lines.extend(editor.iter().cloned());
            lines.extend(app.widgets.lines(WidgetPlacement::BelowEditor));
        } else {
            lines.push(rule.clone());
            let (rows, (col, row)) = app.editor.layout(width.saturating_sub(2));
            let first = usize::from(row).saturating_sub(MAX_EDITOR_ROWS - 1);
            let editor_top = lines.len();
            for (i, text) in rows.into_iter().enumerate().skip(first).take(MAX_EDITOR_ROWS) {
                let marker = if i == 0 { Span::styled("› ", style::user()) } else { Span::raw("  ") };
                lines.push(Line::from(vec![marker, Span::raw(text)]));
            }
            let cursor_row = editor_top + usize::from(row) - first;
            cursor = Some((u16::try_from(cursor_row).unwrap_or(0), col + 2));
            lines.push(rule);
            lines.extend(app.widgets.lines(WidgetPlacement::BelowEditor));
            for (i, c) in app.completions().iter().enumerate().take(MAX_COMPLETIONS) {
                let selected = i == app.completion;
                let name_style = if selected { style::selected() } else { style::accent() };
                lines.push(Line::from(vec![
                    Span::styled(if selected { "→ " } else { "  " }, style::selected()),
                    Span::styled(format!("/{:<20}", c.name), name_style),
                    Span::styled(c.description.clone(), style::dim()),
                ]));
            }
            for (i, path) in app.mentions().into_iter().enumerate() {
                let selected = i == app.mention;
                let path_style = if selected { style::selected() } else { style::accent() };
                lines.push(Line::from(vec![
                    Span::styled(if selected { "→ " } else { "  " }, style::selected()),
                    Span::styled(format!("@{path}"), path_style),
                ]));
            }
            if app.listing_files() {
                lines.push(Line::styled("  Listing files…", style::dim()));
            }
            for name in app.path_choices.iter().take(MAX_COMPLETIONS) {
                lines.push(Line::styled(format!("  {name}"), style::dim()));
            }
            if app.path_choices.len() > MAX_COMPLETIONS {
                let more = app.path_choices.len() - MAX_COMPLETIONS;
                lines.push(Line::styled(format!("  … {more} more"), style::dim()));
            }
        }
        if let Some(hint) = &app.hint {
            lines.push(Line::styled(hint.clone(), style::warning()));
        }
        match app.components.footer() {
            Some(custom) => lines.extend(custom.iter().cloned()),
            None => {
                lines.extend(footer::footer(&app.session, width));
                lines.extend(app.widgets.status_line());
            }
        }
        Self { live, live_height, live_scroll, lines, cursor }
    }

    pub fn height(&self) -> u16 {
        self.live_height + u16::try_from(self.lines.len()).unwrap_or(u16::MAX)
    }

    pub fn render(self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let live_height = self.live_height.min(area.height);
        if live_height > 0 {
            let live_area = Rect { height: live_height, ..area };
            frame.render_widget(self.live.scroll((self.live_scroll, 0)), live_area);
        }
        let rest = Rect { y: area.y + live_height, height: area.height - live_height, ..area };
        if let Some((row, col)) = self.cursor
            && row < rest.height
        {
            frame.set_cursor_position((rest.x + col.min(rest.width.saturating_sub(1)), rest.y + row));
        }
        frame.render_widget(Paragraph::new(self.lines), rest);
    }
}

/// The todo list, the running sub-agents and the widgets above the editor, cut to `max` rows
/// (at least 3) so that the editor stays on screen.
fn above_editor(app: &App, max: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let todo = todos::lines(&app.session.todo_phases());
    if !todo.is_empty() {
        lines.push(Line::default());
        lines.extend(todo);
    }
    let now = Instant::now();
    for board in &app.tasks {
        lines.extend(board.lines(now));
    }
    lines.extend(app.widgets.lines(WidgetPlacement::AboveEditor));
    let max = usize::from(max).max(3);
    if lines.len() > max {
        let hidden = lines.len() - (max - 1);
        lines.truncate(max - 1);
        lines.push(Line::styled(format!("  … {hidden} more lines"), style::dim()));
    }
    lines
}

fn queued_line(kind: &str, text: &str) -> Line<'static> {
    let first: String = text.lines().next().unwrap_or_default().chars().take(120).collect();
    Line::from(vec![Span::styled(format!("  {kind}: "), style::dim()), Span::styled(first, style::dim())])
}
