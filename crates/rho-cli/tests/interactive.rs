//! The interactive mode in a pseudo-terminal, its screen read back through a terminal emulator:
//! the editor, commands, tools, widgets, themes and the scrollback. One test binary, one module
//! per area.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod interactive_support;

mod interactive_commands;
mod interactive_editor;
mod interactive_mode;
mod interactive_pi16_commands;
mod interactive_rewind;
mod interactive_screen;
mod interactive_theme;
mod interactive_tools;
mod interactive_widgets;
