//! The start-up header (version, model, cwd, the AGENTS.md files, templates and skills, the main
//! keys) and the footer under the editor (cwd, session name and the budget's use when a budget
//! is set; tokens in/out/cache, cost, context usage, model and thinking level).

use std::path::Path;

use ratatui::text::{Line, Span};

use super::{notices, style};
use rho_coding_agent::AgentSession;

/// `~` for the home directory.
pub fn short_path(path: &Path) -> String {
    let text = path.display().to_string();
    match dirs::home_dir().map(|h| h.display().to_string()) {
        Some(home) if !home.is_empty() && home != "/" && text.starts_with(&home) => format!("~{}", &text[home.len()..]),
        _ => text,
    }
}

/// 999, 1.2k, 12k, 1.2M.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1000.0),
        10_000..1_000_000 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

fn model_label(session: &AgentSession) -> String {
    match session.model() {
        Some(model) => {
            let level =
                if model.reasoning { format!(" • {}", session.thinking_level().as_str()) } else { String::new() };
            format!("{}/{}{level}", model.provider, model.id)
        }
        None => "no model".to_owned(),
    }
}

/// The first screen's lines; `newline` is the key that makes a new line in the editor.
pub fn header(session: &AgentSession, newline: &str) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled("rho", style::heading()),
        Span::styled(format!(" v{}", env!("CARGO_PKG_VERSION")), style::dim()),
        Span::raw("  "),
        Span::styled(model_label(session), style::accent()),
    ])];
    lines.push(Line::styled(short_path(session.cwd()), style::dim()));
    let resources = session.resources();
    if !resources.context_files.is_empty() {
        let files: Vec<String> = resources.context_files.iter().map(|f| short_path(&f.path)).collect();
        lines.push(Line::styled(format!("Loaded: {}", files.join(", ")), style::dim()));
    }
    let commands: Vec<String> = session.slash_commands().into_iter().map(|c| format!("/{}", c.name)).collect();
    if !commands.is_empty() {
        lines.push(Line::styled(format!("Commands: {}", commands.join(" ")), style::dim()));
    }
    lines.push(Line::styled(
        format!("Enter send · {newline} newline · Esc abort · Ctrl+C clear/quit · / commands · /hotkeys"),
        style::dim(),
    ));
    lines
}

/// The two footer lines for a terminal `width` wide.
pub fn footer(session: &AgentSession, width: u16) -> Vec<Line<'static>> {
    let mut first = short_path(session.cwd());
    if let Some(name) = session.session_name() {
        first.push_str(" • ");
        first.push_str(&name);
    }
    let sandbox = session.settings().sandbox();
    if sandbox.mode != rho_sandbox::SandboxMode::DangerFullAccess {
        first.push_str(" • sandbox: ");
        first.push_str(sandbox.mode.as_str());
        if sandbox.mode == rho_sandbox::SandboxMode::WorkspaceWrite && sandbox.network {
            first.push_str(" + network");
        }
    }
    // Every branch counts: what was spent before a `/tree` jump was spent all the same.
    let totals = session.usage_all_branches();
    let t = &totals.tokens;
    let mut parts = vec![format!("↑{}", tokens(t.input)), format!("↓{}", tokens(t.output))];
    if t.cache_read > 0 {
        parts.push(format!("R{}", tokens(t.cache_read)));
    }
    if t.cache_write > 0 {
        parts.push(format!("W{}", tokens(t.cache_write)));
    }
    parts.push(format!("${:.3}", totals.cost));
    if let Some(usage) = &session.context_usage() {
        let percent = usage.percent.map_or("?".to_owned(), |p| format!("{p:.1}%"));
        parts.push(format!("{percent}/{}", tokens(usage.context_window)));
    }
    let left = parts.join(" ");
    let right = model_label(session);
    let used = left.chars().count() + right.chars().count();
    let gap = usize::from(width).saturating_sub(used).max(2);
    let top = match session.budget() {
        Some(budget) => {
            let text = notices::budget_footer(&budget.snapshot(), budget.limits());
            let gap = usize::from(width).saturating_sub(first.chars().count() + text.content.chars().count()).max(2);
            Line::from(vec![Span::styled(first, style::dim()), Span::raw(" ".repeat(gap)), text])
        }
        None => Line::styled(first, style::dim()),
    };
    vec![
        top,
        Line::from(vec![
            Span::styled(left, style::dim()),
            Span::raw(" ".repeat(gap)),
            Span::styled(right, style::dim()),
        ]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(999), "999");
        assert_eq!(tokens(1234), "1.2k");
        assert_eq!(tokens(123_456), "123k");
        assert_eq!(tokens(2_500_000), "2.5M");
    }
}
