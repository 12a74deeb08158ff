//! The live viewport drawn into ratatui's `TestBackend` and snapshotted whole, for what needs no
//! terminal: the idle editor and footer, the command completions, the settings menu, a
//! narrow width. The pty tests (`tests/interactive*.rs`) cover what a real terminal shows.

use clap::Parser;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use super::app::App;
use super::view::View;
use rho_coding_agent::agent_session::{AgentSession, discard};
use rho_coding_agent::cli::Cli;
use rho_coding_agent::config::paths::ConfigPaths;
use rho_coding_agent::config::settings::{LoadOptions, Settings};
use rho_coding_agent::startup::{Prepared, session_options};

/// A session on a model of its own in a fresh agent dir and project (no file written), and the
/// app around it.
struct Fixture {
    _dir: tempfile::TempDir,
    app: App,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let (agent_dir, cwd) = (dir.path().join("agent"), dir.path().join("project"));
    std::fs::create_dir_all(&agent_dir).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": "http://127.0.0.1:9", "api": "anthropic-messages", "apiKey": "k",
        "models": [{"id": "mock-model", "contextWindow": 200000}]
    }}});
    std::fs::write(agent_dir.join("models.json"), models.to_string()).unwrap();
    let paths = ConfigPaths::new(None, agent_dir.clone(), cwd);
    let (settings, _) = Settings::load(&paths, &LoadOptions::default());
    let (registry, _) = rho_ai::ModelRegistry::load(&agent_dir);
    let cli = Cli::parse_from(["rho", "--no-session", "--model", "mock/mock-model"]);
    let options = session_options(&cli, Prepared { paths, settings, registry }, discard(), None).unwrap();
    let session = AgentSession::new(options);
    let (tx, _rx) = mpsc::unbounded_channel();
    Fixture { _dir: dir, app: App::new(session, tx) }
}

/// The viewport at `width` columns, as a terminal of `height` rows shows it (text only).
fn screen(app: &mut App, width: u16, height: u16) -> String {
    let view = View::build(app, width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, view.height().min(height))).unwrap();
    terminal.draw(|frame| view.render(frame)).unwrap();
    let buffer = terminal.backend().buffer();
    let rows: Vec<String> = (0..buffer.area.height)
        .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect::<String>().trim_end().to_owned())
        .collect();
    rows.join("\n")
}

/// The footer's first line names the temporary folder: it is the same for every test.
fn tidy(screen: &str, app: &App) -> String {
    screen.replace(&app.session.cwd().display().to_string(), "<cwd>")
}

#[tokio::test]
async fn an_idle_editor_with_its_footer() {
    let mut f = fixture();
    let shown = screen(&mut f.app, 60, 20);
    insta::assert_snapshot!(tidy(&shown, &f.app));
}

#[tokio::test]
async fn typed_text_and_the_command_completions() {
    let mut f = fixture();
    f.app.editor.insert("/se");
    let shown = screen(&mut f.app, 60, 20);
    insta::assert_snapshot!(tidy(&shown, &f.app));
}

#[tokio::test]
async fn the_settings_menu_in_place_of_the_editor() {
    let mut f = fixture();
    f.app.open_settings();
    let shown = screen(&mut f.app, 70, 30);
    insta::assert_snapshot!(tidy(&shown, &f.app));
}

#[tokio::test]
async fn a_long_line_wraps_in_a_narrow_terminal() {
    let mut f = fixture();
    f.app.editor.insert("a request long enough to wrap onto a second row of the editor");
    let shown = screen(&mut f.app, 30, 20);
    insta::assert_snapshot!(tidy(&shown, &f.app));
}
