//! The interactive screen stays right, read back through a terminal emulator (screen and
//! scrollback) at more than one size: the end of a long reply, a resize while a reply streams,
//! Ctrl+T and Ctrl+O on what is already shown, blank lines in tool output, quitting mid-reply.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use common::Env;
use interactive_support::{Terminal, keys};
use rho_mock_llm::Turn;
use serde_json::json;

/// One paragraph of `words` numbered words, no line break in it.
fn paragraph(words: usize) -> String {
    (0..words).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ")
}

fn streamed(text: &str, delay_ms: u64) -> Turn {
    Turn { chunk_size: Some(40), chunk_delay_ms: Some(delay_ms), ..Turn::text(text) }
}

/// The lines containing `marker` that appear more than once.
fn repeated(text: &str, marker: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    text.lines().filter(|l| l.contains(marker) && !seen.insert(*l)).map(str::to_owned).collect()
}

/// A long reply ends where it streamed: the prompt and the reply's first words stay on screen
/// and the editor follows the reply (nothing scrolls up leaving empty rows under the editor).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_ends_where_it_streamed() {
    for (rows, cols, words) in [(40, 120, 300), (20, 60, 40), (20, 60, 200)] {
        let env = Env::new(vec![streamed(&paragraph(words), 5)]).await;
        let term = Terminal::start_sized(&env, &[], &[], rows, cols);
        term.ready().await;
        term.submit("tell a long story");
        let last = format!("word{}", words - 1);
        let screen = term.wait_idle_with(&last).await;
        let whole = term.scrollback_and_screen();
        if whole == screen {
            assert!(screen.contains("› tell a long story\n\nword0 word1"), "{rows}x{cols}:\n{screen}");
        } else {
            // What went to the scrollback made room: the screen is full but for the row or two
            // the working line and the live area left when the reply ended.
            assert!(screen.lines().count() + 2 >= usize::from(rows), "{rows}x{cols}:\n{screen}");
        }
        assert!(whole.contains("› tell a long story\n\nword0 word1"), "{rows}x{cols}:\n{whole}");
        assert_eq!(repeated(&whole, "word"), Vec::<String>::new(), "{whole}");
    }
}

/// A resize while a reply streams draws the history again at the new width: no frame of the
/// old width is left in the scrollback (no working line, no second editor, no line twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resize_mid_stream_leaves_no_stale_frame() {
    let lines: Vec<String> =
        (0..30).map(|i| format!("line {i} of the answer, long enough to wrap at sixty columns here")).collect();
    let env = Env::new(vec![streamed(&lines.join("\n"), 40)]).await;
    let term = Terminal::start_sized(&env, &[], &[], 24, 100);
    term.ready().await;
    term.submit("stream a while");
    term.wait_for("line 8 of").await;
    term.resize(24, 60);
    term.wait_for("line 12 of").await;
    term.resize(30, 80);
    term.wait_idle_with("line 29 of").await;
    let whole = term.scrollback_and_screen();
    assert!(!whole.contains("Esc to abort"), "{whole}");
    assert_eq!(whole.matches("› stream a while").count(), 1, "{whole}");
    assert_eq!(whole.lines().filter(|l| l.starts_with('─')).count(), 2, "one editor:\n{whole}");
    assert_eq!(repeated(&whole, "of the answer"), Vec::<String>::new(), "{whole}");
    for line in &lines {
        // Wrapped at 80 columns: each answer line's start begins a row.
        assert!(whole.lines().any(|l| l.starts_with(&line[..20])), "{line:?} in:\n{whole}");
    }
    assert!(whole.lines().all(|l| l.chars().count() <= 80), "{whole}");
}

/// Ctrl+O expands every tool output already shown, and folds them again; Ctrl+T hides the
/// thinking already shown, scrollback included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_o_and_ctrl_t_redraw_what_is_shown() {
    let ten = |tag: &str| (1..=10).map(|i| format!("{tag}-{i}")).collect::<Vec<_>>().join("\n");
    let env = Env::with_api(
        vec![
            Turn::tool_call("bash", json!({"command": format!("printf '{}\\n'", ten("first").replace('\n', "\\n"))}))
                .with_thinking("secret pondering"),
            Turn::tool_call("bash", json!({"command": format!("printf '{}\\n'", ten("second").replace('\n', "\\n"))})),
            Turn::text("both ran"),
        ],
        "anthropic-messages",
        true,
    )
    .await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("run two");
    term.wait_idle_with("both ran").await;
    let folded = term.scrollback_and_screen();
    // Folded to their last lines, as pi folds shell output.
    assert_eq!(folded.matches("(4 earlier lines, Ctrl+O to expand)").count(), 2, "{folded}");
    let shown = |whole: &str, line: &str| whole.lines().any(|l| l == line);
    assert!(shown(&folded, "  first-10") && !shown(&folded, "  first-4"), "{folded}");
    assert!(folded.contains("secret pondering"), "{folded}");

    term.send(keys::CTRL_O);
    term.wait_for("Tool output expanded").await;
    let expanded = term.wait_idle_with("both ran").await;
    let whole = term.scrollback_and_screen();
    assert!(shown(&whole, "  first-1") && shown(&whole, "  second-10"), "{whole}");
    assert!(!whole.contains("Ctrl+O to expand"), "{whole}");
    assert_eq!(repeated(&whole, "-1"), Vec::<String>::new(), "{whole}");
    assert!(expanded.contains("second-10"), "{expanded}");

    term.send("\x14");
    term.wait_for("Thinking blocks hidden").await;
    term.wait_idle_with("both ran").await;
    let whole = term.scrollback_and_screen();
    assert!(!whole.contains("secret pondering"), "{whole}");
    assert!(whole.contains("Thinking hidden (Ctrl+T shows it)"), "{whole}");

    term.send(keys::CTRL_O);
    term.wait_for("Tool output folded").await;
    term.wait_idle_with("both ran").await;
    let whole = term.scrollback_and_screen();
    assert_eq!(whole.matches("earlier lines, Ctrl+O to expand)").count(), 2, "{whole}");
    assert!(!shown(&whole, "  first-1"), "{whole}");
}

/// Runs of blank lines in a tool's output are shown as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blank_lines_in_tool_output_are_kept() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "printf 'top\\n\\n\\nbottom\\n'"})),
        Turn::text("done"),
    ])
    .await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("print with gaps");
    let screen = term.wait_idle_with("done").await;
    assert!(screen.contains("  top\n\n\n  bottom"), "{screen}");
}

/// Ctrl+C twice while a reply streams quits and leaves what arrived of it on screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_mid_reply_keeps_the_partial_answer() {
    let slow = Turn {
        chunk_size: Some(4),
        chunk_delay_ms: Some(100),
        ..Turn::text("the first part arrives and the rest takes far too long to come")
    };
    let env = Env::new(vec![slow]).await;
    let mut term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("go slowly");
    term.wait_for("the first part").await;
    term.send(keys::CTRL_C);
    term.send(keys::CTRL_C);
    assert_eq!(term.exit_code().await, 0);
    let screen = term.scrollback_and_screen();
    assert!(screen.contains("› go slowly\n\nthe first part"), "{screen}");
    assert!(!screen.contains("Esc to abort"), "{screen}");
}

/// A markdown table is drawn with borders fitted to the terminal, again after a resize; headings
/// lose their marks as pi shows them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_are_drawn_with_borders_fitted_to_the_width() {
    let reply = "## Results\n\n| Crate | What it does |\n|---|---|\n| ratatui | draws the viewport under the history of the conversation |\n| vt100 | reads the screen back |\n\nThat is all.";
    let env = Env::new(vec![streamed(reply, 5)]).await;
    let term = Terminal::start_sized(&env, &[], &[], 30, 100);
    term.ready().await;
    term.submit("which crates?");
    let screen = term.wait_idle_with("That is all.").await;
    assert!(screen.contains("\nResults\n"), "{screen}");
    assert!(!screen.contains("## Results"), "{screen}");
    assert!(screen.contains("│ ratatui │ draws the viewport under the history of the conversation │"), "{screen}");
    assert!(screen.contains("┌─────────┬──"), "{screen}");

    term.resize(30, 40);
    // Each row of the table ends in its border: it was drawn again at the new width.
    let fitted = |s: &str| {
        let table: Vec<&str> = s.lines().filter(|l| l.starts_with(['┌', '│', '├', '└'])).collect();
        table.len() > 8 && table.iter().all(|l| l.chars().count() <= 40 && l.ends_with(['┐', '│', '┤', '┘']))
    };
    let narrow = term.wait_until("the table fitted to 40 columns", fitted).await;
    assert!(narrow.contains("│ ratatui │ draws the viewport"), "{narrow}");
    assert_eq!(term.scrollback_and_screen().matches("That is all.").count(), 1);
}

/// A server that is down: each attempt's error in one short line, the wait counted down in the
/// working line, one line when the retries are spent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_down_costs_a_few_short_lines() {
    let env = Env::new(vec![]).await;
    let (_refusing, port) = common::refusing_port();
    let models = std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap();
    let models = models.replace(&env.server.url(), &format!("http://127.0.0.1:{port}"));
    std::fs::write(env.agent_dir.join("models.json"), models).unwrap();
    let args = ["--setting", "retry.maxRetries=2", "--setting", "retry.baseDelayMs=1500"];
    let term = Terminal::start_sized(&env, &args, &[], 30, 120);
    term.ready().await;
    term.submit("hello");
    term.wait_for("Retrying (1/2) in 2s…").await;
    term.wait_for("Retrying (1/2) in 1s…").await;
    let screen = term.wait_idle_with("Gave up after 2 retries").await;
    let start = screen.find("› hello").unwrap();
    let end = start + screen[start..].find("\n─").unwrap();
    let shown: Vec<&str> = screen[start..end].lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(shown.len(), 5, "{screen}");
    let error = format!("Error: Connection error: cannot connect to http://127.0.0.1:{port}/v1/messages: ");
    // The error once; the retries that failed the same way say so briefly.
    assert_eq!(shown.iter().filter(|l| l.starts_with(&error)).count(), 1, "{screen}");
    assert_eq!(shown.iter().filter(|l| **l == "Error: the same as the last attempt").count(), 2, "{screen}");
    assert!(shown.iter().all(|l| l.chars().count() < 120), "{screen}");
}

/// With no model at all, the way to pick one is the interactive mode's own: `/model`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_model_points_at_the_model_command() {
    let env = Env::new(vec![]).await;
    std::fs::remove_file(env.agent_dir.join("models.json")).unwrap();
    let term = Terminal::start_without_model(&env);
    term.wait_for("Enter send").await;
    term.submit("hello");
    let screen = term.wait_for("Then select a model with /model.").await;
    assert!(!screen.contains("set_model"), "{screen}");
}

/// A `tmux` on the PATH answering `show -gv` with `extended` and `format`, and the environment
/// that says rho runs in tmux.
fn fake_tmux(env: &Env, extended: &str, format: &str) -> Vec<(String, String)> {
    use std::os::unix::fs::PermissionsExt;
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$3\" in\n  extended-keys) echo {extended};;\n  extended-keys-format) echo {format};;\nesac\n"
    );
    let tmux = bin.join("tmux");
    std::fs::write(&tmux, script).unwrap();
    std::fs::set_permissions(&tmux, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    vec![("TMUX".to_owned(), "/tmp/tmux-0/default,1,0".to_owned()), ("PATH".to_owned(), path)]
}

/// Under tmux with CSI u extended keys rho asks for modified keys and Shift+Enter makes a new
/// line; with extended keys off it says what to set, and the first screen names Ctrl+J.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_tmux_shift_enter_is_asked_for_or_explained() {
    let env = Env::new(vec![]).await;
    let vars = fake_tmux(&env, "on", "csi-u");
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let term = Terminal::start_with(&env, &[], &vars);
    term.ready().await;
    assert!(term.raw_output().contains("\x1b[>4;2m"), "modifyOtherKeys asked for");
    let screen = term.screen();
    assert!(screen.contains("Enter send · Shift+Enter newline"), "{screen}");
    assert!(!screen.contains("extended-keys"), "{screen}");
    term.send("first");
    term.send("\x1b[13;2u");
    term.send("second");
    term.wait_for("  second").await;
    drop(term);

    let env = Env::new(vec![]).await;
    let vars = fake_tmux(&env, "off", "xterm");
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let term = Terminal::start_with(&env, &["--no-session"], &vars);
    term.ready().await;
    let screen = term.wait_for("tmux extended-keys is off").await;
    assert!(screen.contains("Enter send · Ctrl+J newline"), "{screen}");
    assert!(!term.raw_output().contains("\x1b[>4;2m"), "not asked for when tmux would not pass them");
}

/// Ctrl+T while thinking streams: the part already shown goes with the rest of the history's
/// thinking, and the block ends as one hidden-thinking note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_t_mid_thinking_leaves_no_partial_block() {
    let thinking: String = (0..40).map(|i| format!("ponder step {i}\n")).collect();
    let slow =
        Turn { chunk_size: Some(12), chunk_delay_ms: Some(20), ..Turn::text("the answer").with_thinking(thinking) };
    let env = Env::with_api(vec![slow], "anthropic-messages", true).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("think it over");
    term.wait_for("ponder step 3").await;
    term.send("\x14");
    term.wait_idle_with("the answer").await;
    let whole = term.scrollback_and_screen();
    assert!(!whole.contains("ponder step"), "{whole}");
    assert_eq!(whole.matches("Thinking hidden (Ctrl+T shows it)").count(), 1, "{whole}");

    // Shown again, the whole block is back, once.
    term.send("\x14");
    term.wait_for("Thinking blocks shown").await;
    let whole = term.wait_until("the thinking shown", |s| s.contains("ponder step 39")).await;
    assert_eq!(term.scrollback_and_screen().matches("ponder step 0\n").count(), 1, "{whole}");
}

/// How many times rho's threads gave up or lost the processor so far.
fn context_switches(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter(|l| l.contains("ctxt_switches"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

/// Idle (no run, no key for a while), nothing wakes the process: no spinner's timer, no input
/// polling at a frame's pace. It woke about 135 times a second before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_screen_does_not_wake() {
    let env = Env::new(vec![]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    // A measurement window, past the input reader's quick polls that follow the last key.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let before = context_switches(term.pid());
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let woke = context_switches(term.pid()) - before;
    assert!(woke <= 30, "{woke} wakeups in 3 s of idle");
}

/// A Mermaid block in a reply is drawn as its diagram once it has streamed in (pi 1.6's
/// `markdown.mermaid`); with the setting `off` it stays code, and one rho cannot draw stays code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mermaid_blocks_are_drawn_as_diagrams() {
    let reply = "The pipeline:\n\n```mermaid\ngraph LR\n    A[Build] --> B[Test] --> C[Deploy]\n```\n\nAnd a sketch:\n\n```mermaid\nnonsense diagram\n```\n\nDone.";
    let env = Env::new(vec![streamed(reply, 5), streamed(reply, 5)]).await;
    let term = Terminal::start_sized(&env, &[], &[], 40, 100);
    term.ready().await;
    term.submit("draw it");
    let screen = term.wait_idle_with("Done.").await;
    let diagram: Vec<&str> = screen.lines().filter(|l| l.contains('│') && l.contains("Build")).collect();
    assert!(diagram.len() == 1 && diagram[0].contains("Test") && diagram[0].contains("Deploy"), "{screen}");
    assert!(!screen.contains("A[Build]"), "the code gave way to the diagram:\n{screen}");
    assert!(screen.contains("```mermaid\n  nonsense diagram\n```"), "what cannot be drawn stays code:\n{screen}");

    std::fs::write(env.agent_dir.join("settings.json"), r#"{"markdown": {"mermaid": "off"}}"#).unwrap();
    let mut term = term;
    term.send("\x04");
    assert_eq!(term.exit_code().await, 0);
    let term = Terminal::start_sized(&env, &[], &[], 40, 100);
    term.ready().await;
    term.submit("draw it again");
    let screen = term.wait_idle_with("Done.").await;
    assert!(screen.contains("A[Build] --> B[Test] --> C[Deploy]"), "off: the code\n{screen}");
}
