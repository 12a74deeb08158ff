//! The terminal: raw mode, the keyboard protocol that tells Shift+Enter from Enter, bracketed
//! paste, and ratatui's inline viewport at the bottom of the output (no alternate screen:
//! everything inserted above the viewport stays in the terminal's scrollback). The viewport
//! grows and shrinks with its content. The terminal is put back as it was on exit, on a panic
//! (the hook) and on SIGTERM/SIGHUP (the main loop quits through the same path), and around a
//! Ctrl+Z suspension.

use std::io::{Write, stdout};

use ratatui::backend::{Backend, ClearType};
use ratatui::crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use ratatui::crossterm::terminal::{
    BeginSynchronizedUpdate, Clear, ClearType as Erase, EndSynchronizedUpdate, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};
use ratatui::layout::Position;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

use super::backend::ViewportBackend;
use super::tmux::ShiftEnter;

/// xterm's modifyOtherKeys, level 2 (tmux passes modified keys once asked this way), and off.
const MODIFY_OTHER_KEYS: &str = "\x1b[>4;2m";
const MODIFY_OTHER_KEYS_OFF: &str = "\x1b[>4;0m";

/// modifyOtherKeys was asked for (and is to be turned off on the way out).
static MODIFY_OTHER_KEYS_ON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

type Term = Terminal<ViewportBackend>;

/// The interactive terminal; dropping it restores the terminal.
pub struct Tui {
    terminal: Term,
    height: u16,
    /// What tmux (when rho runs in it) does with Shift+Enter.
    pub shift_enter: ShiftEnter,
}

impl Tui {
    pub fn new(height: u16) -> std::io::Result<Self> {
        let shift_enter = ShiftEnter::check();
        enable_raw_mode()?;
        install_panic_hook();
        enable_keys(&shift_enter)?;
        let terminal = inline(height, None)?;
        Ok(Self { terminal, height, shift_enter })
    }

    pub fn width(&self) -> u16 {
        self.terminal.size().map(|s| s.width).unwrap_or(80)
    }

    pub fn screen_height(&self) -> u16 {
        self.terminal.size().map(|s| s.height).unwrap_or(24)
    }

    /// Adds lines to the history above the viewport, wrapped to the terminal's width.
    pub fn insert(&mut self, mut lines: Vec<Line<'static>>) -> std::io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        crate::style::expand_tabs(&mut lines);
        let width = self.width();
        let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
        let height = u16::try_from(paragraph.line_count(width)).unwrap_or(u16::MAX);
        self.terminal.insert_before(height, |buf| paragraph.render(buf.area, buf))
    }

    /// Makes the viewport `height` rows tall (it starts where it starts now, and moves up when
    /// it no longer fits under it).
    pub fn set_height(&mut self, height: u16) -> std::io::Result<()> {
        let height = height.clamp(1, self.screen_height().max(1));
        if height == self.height {
            return Ok(());
        }
        let origin = self.terminal.get_frame().area().y;
        let backend = self.terminal.backend_mut();
        backend.set_cursor_position((0, origin))?;
        backend.clear_region(ClearType::AfterCursor)?;
        Backend::flush(backend)?;
        // The new viewport starts where this one did: no need to ask the terminal.
        self.terminal = inline(height, Some(Position { x: 0, y: origin }))?;
        self.height = height;
        Ok(())
    }

    /// Draws the viewport in one synchronized update (no tearing in terminals that support it).
    pub fn draw(&mut self, render: impl FnOnce(&mut Frame<'_>)) -> std::io::Result<()> {
        self.frame(Vec::new(), false, self.height, render)
    }

    /// One frame in one synchronized update: the screen and the scrollback cleared when
    /// `history` is the whole history drawn again, `history` inserted above the viewport, the
    /// viewport resized to `height`, then drawn.
    ///
    /// A viewport that shrinks does so before the history goes in, so that the history takes
    /// the rows it leaves instead of pushing the screen up (the end of a long reply, whose
    /// unfinished lines filled the viewport, moves them into the history where they were).
    pub fn frame(
        &mut self,
        history: Vec<Line<'static>>,
        whole: bool,
        height: u16,
        render: impl FnOnce(&mut Frame<'_>),
    ) -> std::io::Result<()> {
        execute!(stdout(), BeginSynchronizedUpdate)?;
        let drawn = (|| {
            if whole {
                self.clear_all()?;
            }
            if height < self.height {
                self.set_height(height)?;
                self.insert(history)?;
            } else {
                self.insert(history)?;
                self.set_height(height)?;
            }
            self.terminal.draw(render).map(|_| ())
        })();
        execute!(stdout(), EndSynchronizedUpdate)?;
        drawn
    }

    /// The screen and the scrollback emptied, the viewport at the top.
    fn clear_all(&mut self) -> std::io::Result<()> {
        // The screen first: some terminals keep what a screen clear removes in the scrollback.
        execute!(stdout(), Clear(Erase::All), Clear(Erase::Purge), cursor::MoveTo(0, 0))?;
        self.terminal = inline(self.height, Some(Position { x: 0, y: 0 }))?;
        Ok(())
    }

    /// Ctrl+Z: the viewport cleared and the terminal restored, the process stopped (as the
    /// shell's job control expects); once continued, the terminal set up again and the viewport
    /// redrawn where the cursor is.
    pub fn suspend(&mut self) -> std::io::Result<()> {
        self.clear_viewport();
        restore();
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGTSTP);
        enable_raw_mode()?;
        enable_keys(&self.shift_enter)?;
        self.terminal = inline(self.height, None)?;
        Ok(())
    }

    fn clear_viewport(&mut self) {
        let origin = self.terminal.get_frame().area().y;
        let backend = self.terminal.backend_mut();
        let _ = backend.set_cursor_position((0, origin));
        let _ = backend.clear_region(ClearType::AfterCursor);
        let _ = Backend::flush(backend);
    }

    /// Writes an escape sequence straight to the terminal (OSC 52).
    pub fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut out = stdout();
        out.write_all(bytes)?;
        out.flush()
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        // The viewport (editor, footer) goes; the history stays.
        self.clear_viewport();
        restore();
    }
}

/// An inline viewport `height` rows tall at the cursor (`cursor`, when known; else the terminal
/// is asked).
fn inline(height: u16, cursor: Option<Position>) -> std::io::Result<Term> {
    Terminal::with_options(ViewportBackend::new(cursor), TerminalOptions { viewport: Viewport::Inline(height) })
}

/// Bracketed paste and the keyboard protocol that tells Shift+Enter from Enter: the kitty one
/// (terminals that do not know it ignore the request; those that do report Shift+Enter and a
/// lone Escape unambiguously), and under tmux modifyOtherKeys when tmux passes keys so.
fn enable_keys(shift_enter: &ShiftEnter) -> std::io::Result<()> {
    execute!(
        stdout(),
        EnableBracketedPaste,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    )?;
    if *shift_enter == ShiftEnter::Extended {
        let mut out = stdout();
        out.write_all(MODIFY_OTHER_KEYS.as_bytes())?;
        out.flush()?;
        MODIFY_OTHER_KEYS_ON.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(())
}

/// Puts the terminal back: keyboard protocol, paste mode, cursor, cooked mode.
pub fn restore() {
    if MODIFY_OTHER_KEYS_ON.swap(false, std::sync::atomic::Ordering::Relaxed) {
        let mut out = stdout();
        let _ = out.write_all(MODIFY_OTHER_KEYS_OFF.as_bytes()).and_then(|()| out.flush());
    }
    let _ = execute!(stdout(), PopKeyboardEnhancementFlags, DisableBracketedPaste, cursor::Show);
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
