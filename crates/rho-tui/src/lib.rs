//! Interactive mode: `rho` in a terminal. A thin driver of the same [`AgentSession`] the other
//! modes drive: the session's events arrive through its sink on a channel, keys through a
//! reader thread, and one loop turns both into history lines (inserted above an inline
//! viewport, so they stay in the terminal's scrollback) and frames of the viewport.
//!
//! A crate of its own over rho-coding-agent's public API: ratatui and the terminal stay out of
//! the core, and a change here compiles this crate alone.

mod actions;
mod app;
mod backend;
mod blocks;
mod call_order;
mod clipboard;
mod commands;
mod components;
mod dialogs;
mod diff;
mod editor;
mod file_keys;
mod footer;
mod frame_stats;
mod highlight;
mod import;
mod jobs;
mod keybindings;
mod keys;
mod lists;
mod logins;
mod markdown;
mod mention;
mod notices;
mod path_complete;
mod pi16_commands;
mod picker;
mod reload;
mod rendered;
mod replay;
mod resume;
mod rewind;
mod scoped_models;
mod select;
mod settings_menu;
mod share;
mod stream;
mod style;
mod subagents;
mod terminal;
mod theme;
mod title;
mod tmux;
mod todos;
mod tool_blocks;
mod transcript;
mod transform;
mod tree;
mod tree_items;
mod view;
#[cfg(test)]
mod view_tests;
mod widgets;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::{self, UnboundedSender};

use self::app::{App, AppEvent};
use self::frame_stats::FrameStats;
use self::picker::Picked;
use self::terminal::Tui;
use self::view::View;
use rho_coding_agent::agent_session::SessionEventSink;
use rho_coding_agent::cli::Cli;
use rho_coding_agent::modes::file_args::read_file_args;
use rho_coding_agent::ui::Ui;
use rho_coding_agent::{AgentSession, startup};

/// The least time between two frames (a streamed reply redraws at most this often).
const FRAME: Duration = Duration::from_millis(16);
/// The spinner's step.
const TICK: Duration = Duration::from_millis(80);
/// How long the input reader waits at a time while keys come, and once they stopped for
/// [`INPUT_IDLE_AFTER`].
const INPUT_POLL: Duration = Duration::from_millis(20);
const INPUT_IDLE_POLL: Duration = Duration::from_millis(500);
const INPUT_IDLE_AFTER: Duration = Duration::from_secs(2);
/// How long quitting waits for an aborted run to wind down.
const QUIT_GRACE: Duration = Duration::from_secs(3);

/// Runs the interactive mode until the person quits; returns the exit code.
pub async fn run(mut cli: Cli) -> i32 {
    let mut stats = FrameStats::from_env(Instant::now());
    if let Ok(cwd) = std::env::current_dir() {
        startup::trust::ask_on_terminal(&mut cli, &rho_coding_agent::config::ConfigPaths::from_env(cwd));
    }
    let prepared = match startup::prepare(&cli, false) {
        Ok(p) => p,
        Err(e) => return fail(&e.message, e.exit_code),
    };
    let theme_paths = cli.themes.iter().map(|p| prepared.paths.resolve(&p.to_string_lossy())).collect();
    let mut theme_warnings = theme::command_line(theme_paths, cli.no_themes);
    let mut theme_warning = theme::init(&prepared.paths, &prepared.settings);
    let initial = match initial_prompt(&cli, &prepared.paths.cwd) {
        Ok(p) => p,
        Err(message) => return fail(&message, 2),
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    // The terminal is taken over once the session is built (its warnings go to stderr first),
    // except for -r, whose picker comes before the session.
    let mut tui = None;
    if cli.resume && cli.session.is_none() {
        let dir = startup::session_dir(&cli, &prepared.paths, &prepared.settings);
        let picking = match start_terminal(&tx) {
            Ok(t) => tui.insert(t),
            Err(code) => return code,
        };
        match picker::pick_session(picking, &mut rx, &dir, &prepared.paths.agent_dir).await {
            Ok(Picked::Session(path)) => cli.session = Some(path),
            Ok(Picked::None) => {}
            Ok(Picked::Cancelled) => return 0,
            Err(e) => {
                drop(tui);
                return fail(&format!("Error: {e}"), 1);
            }
        }
        cli.resume = false;
    }
    let continuing = cli.continue_session || cli.session.is_some();

    let sink_tx = tx.clone();
    let sink: Arc<dyn SessionEventSink> = Arc::new(move |event| {
        let _ = sink_tx.send(AppEvent::Session(Box::new(event)));
    });
    let ui: Arc<dyn Ui> = Arc::new(dialogs::TerminalUi::new(tx.clone()));
    let options = match startup::session_options(&cli, prepared, sink, Some(ui)) {
        Ok(o) => o,
        Err(e) => {
            drop(tui);
            return fail(&e.message, e.exit_code);
        }
    };
    let session = AgentSession::new(options);
    // Before the terminal is taken over: installing the host (first use) says so on stderr.
    let extension_problems =
        match rho_coding_agent::modes::extensions::start_quietly(&cli, &session, startup::ExtensionUi::Interactive)
            .await
        {
            Ok(problems) => problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
            Err(e) => {
                drop(tui);
                session.shutdown().await;
                return fail(&e.message, e.exit_code);
            }
        };
    // Themes from packages and extensions, and the setting's theme when it is one of them.
    theme_warning = {
        let settings = session.settings().clone();
        theme::add_sources(session.extension_theme_paths(), &settings, theme_warning)
    };
    let mut tui = match tui {
        Some(t) => t,
        None => match start_terminal(&tx) {
            Ok(t) => t,
            Err(code) => return code,
        },
    };
    let mut app = App::new(session, tx);
    app.apply_screen_settings();
    // A header component an extension set as it started replaces rho's header.
    let mut started = Vec::new();
    while let Ok(event) = rx.try_recv() {
        match event {
            AppEvent::Component(update) => app.components.apply(update, &mut app.widgets),
            other => started.push(other),
        }
    }
    match app.components.header() {
        Some(header) => {
            let header = header.to_vec();
            app.push(header);
        }
        None if !app.quiet_startup() => app.push(footer::header(&app.session, tui.shift_enter.newline_key())),
        None => {}
    }
    if let tmux::ShiftEnter::Lost(notice) = &tui.shift_enter {
        app.push([blocks::warning(notice)]);
    }
    if let Some(warning) = keybindings::load(&app.session.paths().agent_dir) {
        app.push([blocks::warning(&warning)]);
    }
    theme_warnings.extend(theme_warning);
    app.push(theme_warnings.iter().map(|w| blocks::warning(w)));
    app.push(extension_problems.iter().map(|p| blocks::error(p)));
    for event in started {
        handle(&mut app, event);
    }
    if continuing {
        app.replay();
    }
    if let Some((text, follow_ups)) = initial {
        app.prompt(&text, false);
        for message in follow_ups {
            app.session.follow_up(&message, Vec::new());
        }
    }

    let result = main_loop(&mut tui, &mut app, &mut rx, &mut stats).await;
    stats.write();
    if app.is_working() {
        let _ = tokio::time::timeout(QUIT_GRACE, app.session.abort()).await;
    }
    app.session.shutdown().await;
    drop(tui);
    match result {
        Ok(()) => 0,
        Err(e) => fail(&format!("Error: terminal: {e}"), 1),
    }
}

async fn main_loop(
    tui: &mut Tui,
    app: &mut App,
    rx: &mut mpsc::UnboundedReceiver<AppEvent>,
    stats: &mut FrameStats,
) -> std::io::Result<()> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut ticker = tokio::time::interval(TICK);
    // It waits while nothing moves: it then goes on from when it is next needed, without the
    // ticks missed meanwhile.
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut dirty = true;
    let mut last_frame = Instant::now() - FRAME;
    loop {
        if dirty && last_frame.elapsed() >= FRAME {
            let start = Instant::now();
            render(tui, app)?;
            last_frame = Instant::now();
            stats.record(last_frame - start);
            dirty = false;
        }
        if app.quit || app.session.extension_shutdown_requested() && !app.is_working() {
            // What is still streaming stays on screen above the shell's prompt.
            app.end_stream();
            if !app.history.is_empty() || app.redraw {
                render(tui, app)?;
            }
            return Ok(());
        }
        if app.suspend {
            app.suspend = false;
            tui.suspend()?;
            dirty = true;
            continue;
        }
        let frame_due = tokio::time::Instant::from_std(last_frame + FRAME);
        tokio::select! {
            event = rx.recv() => {
                let Some(event) = event else { return Ok(()) };
                handle(app, event);
                // Everything already waiting goes into the same frame.
                while !app.quit && let Ok(event) = rx.try_recv() {
                    handle(app, event);
                }
                dirty = true;
            }
            _ = tokio::time::sleep_until(frame_due), if dirty => {}
            // Idle, nothing moves on screen: no timer wakes the process.
            _ = ticker.tick(), if app.is_working() || app.held.is_holding() => {
                if app.held.is_holding() {
                    app.release_held();
                    dirty = true;
                }
                if app.is_working() {
                    app.tick += 1;
                    dirty = true;
                }
            }
            _ = terminate.recv() => app.quit = true,
            _ = hangup.recv() => app.quit = true,
        }
    }
}

fn handle(app: &mut App, event: AppEvent) {
    match event {
        AppEvent::Input(event) => app.on_input(event),
        AppEvent::Session(event) => app.on_session(*event),
        AppEvent::Lines(lines) => {
            app.status = None;
            app.shell_running = false;
            app.push(lines);
        }
        AppEvent::Entries(entries) => {
            app.status = None;
            for entry in entries {
                app.push_entry(entry);
            }
        }
        AppEvent::Dialog(method, answer) => app.open_dialog(method, answer),
        AppEvent::UiNotify(method) => app.ui_notify(method),
        AppEvent::Component(update) => app.on_component(update),
        AppEvent::Rendered(id, lines) => app.rendered(id, lines),
        AppEvent::Transformed(id, shown) => {
            app.held.answer(id, shown.map(|s| *s));
            app.release_held();
        }
        AppEvent::StreamTransformed { id, len, markdown } => app.stream_transformed(id, len, markdown),
        AppEvent::ResetExtensions => {
            app.components.clear();
            app.widgets.clear();
        }
        AppEvent::Files(files) => app.files = app::FileList::Listed(files),
        AppEvent::Tree(step) => app.tree_step(step),
    }
    app.drop_stale_dialog();
}

/// The history first (above the viewport), then the viewport at its new height.
fn render(tui: &mut Tui, app: &mut App) -> std::io::Result<()> {
    if let Some(sequence) = app.osc52.take() {
        tui.write_raw(sequence.as_bytes())?;
    }
    if let Some(sequence) = app.title.take_escape() {
        tui.write_raw(sequence.as_bytes())?;
    }
    let whole = std::mem::take(&mut app.redraw);
    if whole {
        app.rebuild_history();
    }
    let history = std::mem::take(&mut app.history);
    let view = View::build(app, tui.width(), tui.screen_height());
    tui.frame(history, whole, view.height(), |frame| view.render(frame))
}

/// The terminal set up for the mode, and its input read from then on; the exit code when the
/// terminal cannot be set up.
fn start_terminal(tx: &UnboundedSender<AppEvent>) -> Result<Tui, i32> {
    match Tui::new(4) {
        Ok(t) => {
            markdown::set_width(t.width());
            spawn_input(tx.clone());
            Ok(t)
        }
        Err(e) => {
            terminal::restore();
            Err(fail(&format!("Error: cannot set up the terminal: {e}"), 1))
        }
    }
}

/// Keys, pastes and resizes, read on a thread of their own. A poll holds the input, and a
/// cursor-position query of the viewport (a resize, a suspend) reads the same input: the reader
/// waits in short polls while input comes (a query follows an event), in long ones once the
/// person has been idle for [`INPUT_IDLE_AFTER`], so an idle screen hardly wakes.
fn spawn_input(tx: UnboundedSender<AppEvent>) {
    std::thread::spawn(move || {
        let mut last_input = Instant::now();
        loop {
            let wait = if last_input.elapsed() < INPUT_IDLE_AFTER { INPUT_POLL } else { INPUT_IDLE_POLL };
            match event::poll(wait) {
                Ok(false) => {
                    if tx.is_closed() {
                        return;
                    }
                }
                Ok(true) => match event::read() {
                    Ok(e) => {
                        last_input = Instant::now();
                        if tx.send(AppEvent::Input(e)).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                },
                Err(_) => return,
            }
        }
    });
}

/// `rho "message"`: the first message (after the `@file` blocks) is sent at start; the others
/// are queued as follow-ups.
fn initial_prompt(cli: &Cli, cwd: &std::path::Path) -> Result<Option<(String, Vec<String>)>, String> {
    let files = read_file_args(&cli.file_args(), cwd)?;
    let mut messages: Vec<String> = cli.messages().into_iter().map(str::to_owned).collect();
    if messages.is_empty() && files.text.is_empty() {
        return Ok(None);
    }
    let first = if messages.is_empty() { String::new() } else { messages.remove(0) };
    let text = match (files.text.is_empty(), first.is_empty()) {
        (true, _) => first,
        (false, true) => files.text,
        (false, false) => format!("{}\n\n{first}", files.text),
    };
    Ok(Some((text, messages)))
}

fn fail(message: &str, code: i32) -> i32 {
    eprintln!("{message}");
    code
}
