//! The interactive mode's styles: each one a token of the active theme ([`theme`]), and
//! `NO_COLOR`, which keeps the attributes (bold, dim, italic) and drops every colour.

use std::sync::OnceLock;

use ratatui::style::{Modifier, Style};

use super::theme::{self, Token};

/// True when `NO_COLOR` is set to a non-empty value (no-color.org).
pub fn no_color() -> bool {
    static NO_COLOR: OnceLock<bool> = OnceLock::new();
    *NO_COLOR.get_or_init(|| std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()))
}

/// The foreground of `token` (nothing under `NO_COLOR`, or for a token of the default colour).
pub fn token(token: Token) -> Style {
    match theme::color(token) {
        Some(color) if !no_color() => Style::new().fg(color),
        _ => Style::new(),
    }
}

/// The background of `token`.
fn background(token: Token) -> Style {
    match theme::color(token) {
        Some(color) if !no_color() => Style::new().bg(color),
        _ => Style::new(),
    }
}

/// Tertiary text: the theme's `dim` colour, or the dim attribute without colours.
pub fn dim() -> Style {
    if no_color() { Style::new().add_modifier(Modifier::DIM) } else { token(Token::Dim) }
}

pub fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn accent() -> Style {
    token(Token::Accent)
}

/// The marker of a user message.
pub fn user() -> Style {
    token(Token::Accent).add_modifier(Modifier::BOLD)
}

/// The text of a user message, on its background.
pub fn user_text() -> Style {
    token(Token::UserMessageText).patch(background(Token::UserMessageBg))
}

pub fn heading() -> Style {
    token(Token::MdHeading).add_modifier(Modifier::BOLD)
}

/// Inline code.
pub fn code() -> Style {
    token(Token::MdCode)
}

/// A code block's text where it is not highlighted.
pub fn code_block() -> Style {
    token(Token::MdCodeBlock)
}

/// A code block's fence line.
/// A Mermaid diagram's boxes, edges and labels (pi draws the boxes in its muted border colour).
pub fn mermaid() -> Style {
    token(Token::MdCodeBlockBorder)
}

pub fn code_fence() -> Style {
    token(Token::MdCodeBlockBorder)
}

pub fn quote() -> Style {
    token(Token::MdQuote)
}

pub fn quote_border() -> Style {
    token(Token::MdQuoteBorder)
}

pub fn rule() -> Style {
    token(Token::MdHr)
}

pub fn list_bullet() -> Style {
    token(Token::MdListBullet)
}

pub fn link() -> Style {
    token(Token::MdLink).add_modifier(Modifier::UNDERLINED)
}

pub fn link_url() -> Style {
    token(Token::MdLinkUrl)
}

pub fn thinking() -> Style {
    let italic = Style::new().add_modifier(Modifier::ITALIC);
    if no_color() { italic.add_modifier(Modifier::DIM) } else { token(Token::ThinkingText).patch(italic) }
}

/// A tool's name.
pub fn tool() -> Style {
    token(Token::ToolTitle).add_modifier(Modifier::BOLD)
}

/// A tool's output.
pub fn tool_output() -> Style {
    if no_color() { Style::new().add_modifier(Modifier::DIM) } else { token(Token::ToolOutput) }
}

pub fn error() -> Style {
    token(Token::Error)
}

pub fn warning() -> Style {
    token(Token::Warning)
}

pub fn added() -> Style {
    token(Token::ToolDiffAdded)
}

pub fn removed() -> Style {
    token(Token::ToolDiffRemoved)
}

/// A diff's unchanged lines.
pub fn diff_context() -> Style {
    if no_color() { Style::new().add_modifier(Modifier::DIM) } else { token(Token::ToolDiffContext) }
}

pub fn selected() -> Style {
    token(Token::Accent).add_modifier(Modifier::BOLD)
}

/// A tab as pi draws it: three spaces (a terminal cell cannot hold a tab, and one left in a
/// line would be dropped, running columns together and losing code's indentation).
pub const TAB: &str = "   ";

/// Replaces the tabs in `lines` with [`TAB`].
pub fn expand_tabs(lines: &mut [ratatui::text::Line<'static>]) {
    for span in lines.iter_mut().flat_map(|line| line.spans.iter_mut()) {
        if span.content.contains('\t') {
            span.content = span.content.replace('\t', TAB).into();
        }
    }
}
