//! The interactive mode's colours: one place that knows the palette, and `NO_COLOR`, which keeps
//! the attributes (bold, dim, italic) and drops every colour.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};

/// True when `NO_COLOR` is set to a non-empty value (no-color.org).
pub fn no_color() -> bool {
    static NO_COLOR: OnceLock<bool> = OnceLock::new();
    *NO_COLOR.get_or_init(|| std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()))
}

fn fg(color: Color) -> Style {
    if no_color() { Style::new() } else { Style::new().fg(color) }
}

pub fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

pub fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn accent() -> Style {
    fg(Color::Cyan)
}

pub fn user() -> Style {
    fg(Color::Blue).add_modifier(Modifier::BOLD)
}

pub fn heading() -> Style {
    fg(Color::Magenta).add_modifier(Modifier::BOLD)
}

pub fn code() -> Style {
    fg(Color::Yellow)
}

pub fn thinking() -> Style {
    Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC)
}

pub fn tool() -> Style {
    fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

pub fn error() -> Style {
    fg(Color::Red)
}

pub fn warning() -> Style {
    fg(Color::Yellow)
}

pub fn added() -> Style {
    fg(Color::Green)
}

pub fn removed() -> Style {
    fg(Color::Red)
}

pub fn selected() -> Style {
    fg(Color::Cyan).add_modifier(Modifier::BOLD)
}
