//! Interactive mode's colours: code highlighted with the theme's syntax tokens, the theme picked
//! by the settings (and a bad one refused), themes from `--theme` paths and `--no-themes`, edit
//! diffs coloured. The real `rho` in a
//! pseudo-terminal against rho-mock-llm, the cells' colours read back through vt100.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use common::Env;
use interactive_support::Terminal;
use rho_mock_llm::Turn;
use serde_json::json;

/// A reply with a Rust block, then a paragraph of plain text.
const RUST_ANSWER: &str = "```rust\nfn main() { let answer = 42; }\n```\n\nplain words here\n";

/// The terminal's background is dark (a `COLORFGBG` of the outer terminal would pick light).
const DARK_BACKGROUND: (&str, &str) = ("COLORFGBG", "15;0");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_block_is_highlighted_with_the_theme() {
    let env = Env::new(vec![Turn::text(RUST_ANSWER)]).await;
    let term = Terminal::start_with(&env, &[], &[DARK_BACKGROUND]);
    term.ready().await;
    term.submit("show code");
    term.wait_idle_with("plain words here").await;
    // pi's dark theme: syntaxKeyword #569CD6, syntaxNumber #B5CEA8; plain text keeps the default.
    assert_eq!(term.fg_of("fn main"), vt100::Color::Rgb(0x56, 0x9c, 0xd6));
    assert_eq!(term.fg_of("42;"), vt100::Color::Rgb(0xb5, 0xce, 0xa8));
    assert_eq!(term.fg_of("plain words"), vt100::Color::Default);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_theme_setting_selects_the_light_theme() {
    let env = Env::new(vec![Turn::text(RUST_ANSWER)]).await;
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"theme": "light"}"#).unwrap();
    let term = Terminal::start_with(&env, &[], &[DARK_BACKGROUND]);
    term.ready().await;
    term.submit("show code");
    term.wait_idle_with("plain words here").await;
    // pi's light theme: syntaxKeyword #0000FF.
    assert_eq!(term.fg_of("fn main"), vt100::Color::Rgb(0, 0, 0xff));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_theme_falls_back_to_dark_with_a_warning() {
    let env = Env::new(vec![Turn::text(RUST_ANSWER)]).await;
    std::fs::create_dir_all(env.cwd.join(".rho/themes")).unwrap();
    std::fs::write(env.cwd.join(".rho/themes/broken.json"), "{").unwrap();
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"theme": "nope"}"#).unwrap();
    let term = Terminal::start_with(&env, &[], &[DARK_BACKGROUND]);
    let screen = term.wait_for("using the dark theme").await;
    assert!(
        screen.contains(r#"unknown theme "nope" (there are: broken, dark, light); using the dark theme"#),
        "{screen}"
    );
    term.submit("show code");
    term.wait_idle_with("plain words here").await;
    assert_eq!(term.fg_of("fn main"), vt100::Color::Rgb(0x56, 0x9c, 0xd6));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_diff_is_coloured_and_marks_the_changed_word() {
    let env = Env::new(vec![
        Turn::tool_call(
            "edit",
            json!({"path": "f.rs", "edits": [{"oldText": "let old_name = 1;", "newText": "let new_name = 1;"}]}),
        ),
        Turn::text("edited it"),
    ])
    .await;
    std::fs::write(env.cwd.join("f.rs"), "fn main() {\n    let old_name = 1;\n}\n").unwrap();
    let term = Terminal::start_with(&env, &[], &[DARK_BACKGROUND]);
    term.ready().await;
    term.submit("rename it");
    term.wait_idle_with("edited it").await;
    // pi's dark theme: toolDiffRemoved #CC6666, toolDiffAdded #B5BD68, toolDiffContext #808080.
    assert_eq!(term.fg_of("-2     let"), vt100::Color::Rgb(0xcc, 0x66, 0x66));
    assert_eq!(term.fg_of("+2     let"), vt100::Color::Rgb(0xb5, 0xbd, 0x68));
    assert_eq!(term.fg_of(" 1 fn main"), vt100::Color::Rgb(0x80, 0x80, 0x80));
    assert!(term.is_inverse("old_name") && term.is_inverse("new_name"));
    assert!(!term.is_inverse("let old_name"));
}

/// pi's dark theme renamed `name`, with its keywords in `keyword`.
fn dark_as(name: &str, keyword: &str) -> String {
    let dark = include_str!("../../rho-tui/src/theme/dark.json");
    let mut theme: serde_json::Value = serde_json::from_str(dark).unwrap();
    theme["name"] = json!(name);
    theme["colors"]["syntaxKeyword"] = json!(keyword);
    theme.to_string()
}

/// `--theme` adds a file (or a folder) to those themes are found in; the setting picks it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_theme_file_given_with_theme_can_be_chosen() {
    let env = Env::new(vec![Turn::text(RUST_ANSWER)]).await;
    std::fs::write(env.dir.path().join("mine.json"), dark_as("mine", "#ff00ff")).unwrap();
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"theme": "mine"}"#).unwrap();
    let theme = env.dir.path().join("mine.json");
    let term = Terminal::start_with(&env, &["--theme", theme.to_str().unwrap()], &[DARK_BACKGROUND]);
    term.ready().await;
    term.submit("show code");
    term.wait_idle_with("plain words here").await;
    assert_eq!(term.fg_of("fn main"), vt100::Color::Rgb(0xff, 0, 0xff));
}

/// `--no-themes` leaves the theme folders unread (the setting's theme there is unknown), a
/// `--theme` path still counts, and one that does not exist is warned about.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_themes_reads_only_the_given_paths() {
    let env = Env::new(vec![Turn::text(RUST_ANSWER)]).await;
    std::fs::create_dir_all(env.cwd.join(".rho/themes")).unwrap();
    std::fs::write(env.cwd.join(".rho/themes/folder.json"), dark_as("folder", "#ff00ff")).unwrap();
    std::fs::create_dir_all(env.cwd.join("given")).unwrap();
    std::fs::write(env.cwd.join("given/given.json"), dark_as("given", "#00ff00")).unwrap();
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"theme": "folder"}"#).unwrap();
    let args = ["--no-themes", "--theme", "given", "--theme", "missing.json"];
    let term = Terminal::start_with(&env, &args, &[DARK_BACKGROUND]);
    let screen = term.wait_for("using the dark theme").await;
    let missing = env.cwd.join("missing.json");
    assert!(screen.contains(&format!("Theme path does not exist: {}", missing.display())), "{screen}");
    assert!(
        screen.contains(r#"unknown theme "folder" (there are: dark, given, light); using the dark theme"#),
        "{screen}"
    );
}
