//! ratatui's crossterm backend with one difference: the cursor position can be told in advance.
//! An inline viewport asks the terminal where the cursor is (a round trip through the input)
//! whenever it is created; when the viewport only changes height, rho knows the answer (its own
//! top row) and the question is not sent.

use std::io::Stdout;

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

pub struct ViewportBackend {
    inner: CrosstermBackend<Stdout>,
    /// The answer to the next cursor-position question, when known.
    known_cursor: Option<Position>,
}

impl ViewportBackend {
    pub fn new(known_cursor: Option<Position>) -> Self {
        Self { inner: CrosstermBackend::new(std::io::stdout()), known_cursor }
    }
}

impl Backend for ViewportBackend {
    type Error = std::io::Error;

    fn draw<'a, I>(&mut self, content: I) -> std::io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn append_lines(&mut self, n: u16) -> std::io::Result<()> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> std::io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> std::io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> std::io::Result<Position> {
        match self.known_cursor.take() {
            Some(position) => Ok(position),
            None => self.inner.get_cursor_position(),
        }
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> std::io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> std::io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> std::io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> std::io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Backend::flush(&mut self.inner)
    }

    fn scroll_region_up(&mut self, region: std::ops::Range<u16>, line_count: u16) -> std::io::Result<()> {
        self.inner.scroll_region_up(region, line_count)
    }

    fn scroll_region_down(&mut self, region: std::ops::Range<u16>, line_count: u16) -> std::io::Result<()> {
        self.inner.scroll_region_down(region, line_count)
    }
}
