//! `rho` in a pseudo-terminal: the child's output is fed to a vt100 emulator whose screen the
//! tests read, the cursor-position queries of the inline viewport are answered from that
//! screen (as a terminal would), and keys are written as a terminal sends them.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::common::Env;

pub const ROWS: u16 = 30;
pub const COLS: u16 = 100;
/// How long a screen may take to show what a test waits for.
const SCREEN_TIMEOUT: Duration = Duration::from_secs(30);

/// The cursor position request (DSR 6) the viewport sends.
const CURSOR_QUERY: &[u8] = b"\x1b[6n";

pub mod keys {
    pub const ENTER: &str = "\r";
    pub const ALT_ENTER: &str = "\x1b\r";
    pub const ESCAPE: &str = "\x1b";
    pub const CTRL_C: &str = "\x03";
    pub const CTRL_D: &str = "\x04";
    pub const CTRL_J: &str = "\n";
    pub const CTRL_O: &str = "\x0f";
    pub const TAB: &str = "\t";
    pub const UP: &str = "\x1b[A";
    pub const DOWN: &str = "\x1b[B";
    /// Shift+Enter in the kitty keyboard protocol.
    pub const SHIFT_ENTER: &str = "\x1b[13;2u";
}

pub struct Terminal {
    parser: Arc<Mutex<vt100::Parser>>,
    /// Everything rho wrote, as written.
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
}

impl Terminal {
    /// `rho --model mock/mock-model <args>` in a 100×30 terminal, in `env`'s world.
    pub fn start(env: &Env, args: &[&str]) -> Terminal {
        Self::start_with(env, args, &[])
    }

    /// Like [`start`](Self::start), with more environment variables.
    pub fn start_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Terminal {
        Self::start_sized(env, args, vars, ROWS, COLS)
    }

    /// Like [`start_with`](Self::start_with), in a terminal of `rows` × `cols`.
    pub fn start_sized(env: &Env, args: &[&str], vars: &[(&str, &str)], rows: u16, cols: u16) -> Terminal {
        let mut all = Vec::new();
        if !args.contains(&"--model") {
            all.extend(["--model", "mock/mock-model"]);
        }
        all.extend(args);
        Self::spawn(env, &all, vars, rows, cols)
    }

    /// `rho` with no model named, as a fresh install starts.
    pub fn start_without_model(env: &Env) -> Terminal {
        Self::spawn(env, &[], &[], ROWS, COLS)
    }

    /// `rho` with exactly `args` (a command such as `config`, which takes no model).
    pub fn start_command(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Terminal {
        Self::spawn(env, args, vars, ROWS, COLS)
    }

    fn spawn(env: &Env, args: &[&str], vars: &[(&str, &str)], rows: u16, cols: u16) -> Terminal {
        let pty = native_pty_system().openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_rho"));
        cmd.args(args);
        cmd.cwd(&env.cwd);
        cmd.env("RHO_CODING_AGENT_DIR", &env.agent_dir);
        cmd.env("HOME", env.dir.path());
        cmd.env("TERM", "xterm-256color");
        cmd.env("RHO_NODE", crate::common::extensions::test_node());
        for key in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "NO_COLOR",
            "RHO_LOG",
            "TMUX",
            "RHO_CODING_AGENT_SESSION_DIR",
            "PI_CODING_AGENT_SESSION_DIR",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            cmd.env_remove(key);
        }
        for (key, value) in vars {
            cmd.env(key, value);
        }
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 2000)));
        let writer: Arc<Mutex<Box<dyn Write + Send>>> = Arc::new(Mutex::new(pty.master.take_writer().unwrap()));
        let mut reader = pty.master.try_clone_reader().unwrap();
        let raw: Arc<Mutex<Vec<u8>>> = Arc::default();
        let (screen, answer, log) = (parser.clone(), writer.clone(), raw.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            let mut carry: Vec<u8> = Vec::new();
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                log.lock().unwrap().extend_from_slice(&buf[..n]);
                carry.extend_from_slice(&buf[..n]);
                // Feed up to each cursor query, answer it from the screen as it is then.
                while let Some(at) = carry.windows(CURSOR_QUERY.len()).position(|w| w == CURSOR_QUERY) {
                    let reply = {
                        let mut parser = screen.lock().unwrap();
                        parser.process(&carry[..at]);
                        let (row, col) = parser.screen().cursor_position();
                        format!("\x1b[{};{}R", row + 1, col + 1)
                    };
                    carry.drain(..at + CURSOR_QUERY.len());
                    let mut w = answer.lock().unwrap();
                    let _ = w.write_all(reply.as_bytes()).and_then(|()| w.flush());
                }
                // Keep a possible partial query for the next read.
                let keep = (1..CURSOR_QUERY.len()).rev().find(|k| carry.ends_with(&CURSOR_QUERY[..*k])).unwrap_or(0);
                let feed = carry.len() - keep;
                screen.lock().unwrap().process(&carry[..feed]);
                carry.drain(..feed);
            }
        });
        Terminal { parser, raw, writer, child, _master: pty.master }
    }

    /// rho's process id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("rho runs")
    }

    /// The visible screen, trailing spaces and blank lines dropped.
    pub fn screen(&self) -> String {
        let contents = self.parser.lock().unwrap().screen().contents();
        let lines: Vec<&str> = contents.lines().map(str::trim_end).collect();
        lines.join("\n").trim_end().to_owned()
    }

    /// The scrollback and the screen, top to bottom, trailing spaces and blank lines dropped.
    pub fn scrollback_and_screen(&self) -> String {
        let mut parser = self.parser.lock().unwrap();
        let screen = parser.screen_mut();
        let (rows, cols) = screen.size();
        let (rows, cols) = (usize::from(u16::from(rows)), u16::from(cols));
        screen.set_scrollback(usize::MAX);
        let kept = screen.scrollback();
        let mut lines: Vec<String> = Vec::new();
        // Page by page from the top: a page at offset `o` shows the lines from `kept - o` on.
        let mut next = 0;
        while next < kept + rows {
            let offset = kept.saturating_sub(next);
            screen.set_scrollback(offset);
            let top = kept - offset;
            for (i, row) in screen.rows(0, cols).enumerate() {
                if top + i >= next {
                    lines.push(row.trim_end().to_owned());
                }
            }
            next = top + rows;
        }
        screen.set_scrollback(0);
        lines.join("\n").trim_end().to_owned()
    }

    /// Everything rho wrote so far, escape sequences included.
    pub fn raw_output(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// Resizes the terminal (the emulator's screen and the pty, which signals rho).
    pub fn resize(&self, rows: u16, cols: u16) {
        self.parser.lock().unwrap().screen_mut().set_size(rows.try_into().unwrap(), cols.try_into().unwrap());
        self._master.resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).unwrap();
    }

    /// Whether the first cell showing `text` has a colour (foreground) other than the default.
    pub fn is_coloured(&self, text: &str) -> bool {
        self.fg_of(text) != vt100::Color::Default
    }

    /// The foreground colour of the first cell showing `text`.
    pub fn fg_of(&self, text: &str) -> vt100::Color {
        self.first_cell(text).fgcolor()
    }

    /// Whether the first cell showing `text` is drawn inverse.
    pub fn is_inverse(&self, text: &str) -> bool {
        self.first_cell(text).inverse()
    }

    /// The first cell showing `text`.
    fn first_cell(&self, text: &str) -> vt100::Cell {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        let (rows, cols) = (u16::from(rows), u16::from(cols));
        for row in 0..rows {
            let line: String = screen.contents_between(row, 0, row, cols);
            if let Some(at) = line.find(text) {
                let col = u16::try_from(line[..at].chars().count()).unwrap();
                return screen.cell(row, col).unwrap().clone();
            }
        }
        panic!("{text:?} is not on the screen");
    }

    pub fn send(&self, keys: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(keys.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Types `text` and presses Enter.
    pub fn submit(&self, text: &str) {
        self.send(text);
        self.send(keys::ENTER);
    }

    /// Waits until the screen satisfies `check`; fails with the screen after the timeout.
    pub async fn wait_until(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            if start.elapsed() > SCREEN_TIMEOUT {
                panic!("the screen never showed {what} within {SCREEN_TIMEOUT:?}; it shows:\n{screen}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the start-up screen: the editor is ready.
    pub async fn ready(&self) {
        self.wait_for("Enter send").await;
    }

    /// From the start-up screen, two exchanges: "first question" / "first answer", then
    /// "second question" / "second answer".
    pub async fn two_exchanges(&self) {
        self.ready().await;
        self.submit("first question");
        self.wait_idle_with("first answer").await;
        self.submit("second question");
        self.wait_idle_with("second answer").await;
    }

    /// Waits until `text` is on the screen.
    pub async fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |s| s.contains(text)).await
    }

    /// Waits until no run is in progress (the working line is gone), `text` is shown below
    /// nothing but the redrawn editor and footer, and the screen has settled: the same on two
    /// reads in a row. (History is inserted above a cleared viewport that is drawn again right
    /// after, so a single read can catch the screen between the two.)
    pub async fn wait_idle_with(&self, text: &str) -> String {
        let mut last = String::new();
        loop {
            let screen = self
                .wait_until(&format!("{text:?} with no run in progress and the editor drawn"), |s| {
                    let Some(at) = s.rfind(text) else { return false };
                    let rules = s[at..].lines().filter(|l| l.starts_with('─')).count();
                    rules >= 2 && !s.contains("Esc to abort")
                })
                .await;
            if screen == last {
                return screen;
            }
            last = screen;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the process to exit; its exit code.
    pub async fn exit_code(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.exit_code();
            }
            assert!(start.elapsed() < SCREEN_TIMEOUT, "rho did not exit; the screen:\n{}", self.screen());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
