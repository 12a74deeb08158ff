//! The interactive editor's keys, driven in a pseudo-terminal against rho-mock-llm: the key
//! table read from `keybindings.json`, undo, Alt+Up taking queued messages back, `!!command`
//! kept out of the model's context, and images attached by pasting their path or with Ctrl+V.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use base64::Engine;
use common::Env;
use interactive_support::{Terminal, keys};
use rho_mock_llm::Turn;

/// Ctrl+- as a terminal without the kitty protocol sends it (the same byte as Ctrl+_).
const CTRL_MINUS: &str = "\x1f";
const ALT_UP: &str = "\x1b[1;3A";
/// The smallest PNG header `rho` takes for an image (the magic bytes and an IHDR chunk start).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";

/// Waits until the editor's first line is exactly `text`.
async fn editor_shows(term: &Terminal, text: &str) -> String {
    let line = format!("› {text}");
    term.wait_until(&format!("the editor holding {text:?}"), |s| s.lines().any(|l| l == line)).await
}

fn slow(text: &str) -> Turn {
    Turn { chunk_size: Some(2), chunk_delay_ms: Some(150), ..Turn::text(text) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_words_are_undone_one_at_a_time_and_a_clear_is_undone() {
    let env = Env::new(vec![]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("hello big world");
    editor_shows(&term, "hello big world").await;
    term.send(CTRL_MINUS);
    editor_shows(&term, "hello big").await;
    term.send(CTRL_MINUS);
    editor_shows(&term, "hello").await;
    term.send(" again");
    editor_shows(&term, "hello again").await;
    term.send(keys::CTRL_C);
    term.wait_until("the editor cleared", |s| !s.contains("hello again")).await;
    term.send(CTRL_MINUS);
    editor_shows(&term, "hello again").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn word_keys_move_delete_and_yank() {
    let env = Env::new(vec![]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("alpha beta gamma");
    editor_shows(&term, "alpha beta gamma").await;
    // Alt+B twice: before "beta"; Alt+D deletes it; Ctrl+E, Ctrl+Y puts it at the end.
    term.send("\x1bb\x1bb\x1bd");
    editor_shows(&term, "alpha  gamma").await;
    term.send("\x05\x19");
    editor_shows(&term, "alpha  gammabeta").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keybindings_json_remaps_an_action() {
    let env = Env::new(vec![]).await;
    let file = r#"{"tui.editor.undo": "alt+u", "tui.editor.deleteToLineStart": ["ctrl+u", "alt+k"],
                   "app.thinking.toggle": "alt+t", "app.session.new": "ctrl+n"}"#;
    std::fs::write(env.agent_dir.join("keybindings.json"), file).unwrap();
    // Tall enough for /hotkeys' whole list.
    let term = Terminal::start_sized(&env, &[], &[], 60, 100);
    term.ready().await;
    term.send("one two");
    editor_shows(&term, "one two").await;
    term.send(CTRL_MINUS);
    term.send("\x1bu");
    editor_shows(&term, "one").await;
    term.send("\x1bk");
    let screen = term.wait_until("the line deleted", |s| !s.contains("› one")).await;
    assert!(!screen.contains("keybindings.json"), "a good file is not warned about:\n{screen}");
    // /hotkeys lists the keys in effect.
    term.submit("/hotkeys");
    let screen = term.wait_for("Quit rho").await;
    assert!(screen.contains("  Alt+T                     Hide or show thinking blocks\n"), "{screen}");
    // An action without default keys is listed once bound.
    assert!(screen.contains("  Ctrl+N                    Start a new session\n"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_keybindings_json_warns_once_and_keeps_the_defaults() {
    let env = Env::new(vec![]).await;
    let file = r#"{"tui.editor.undo": "ctrl+nope", "app.bogus": "ctrl+x"}"#;
    std::fs::write(env.agent_dir.join("keybindings.json"), file).unwrap();
    let term = Terminal::start(&env, &[]);
    let screen = term.wait_for("\"app.bogus\"").await;
    assert!(screen.contains("Warning: ~/agent/keybindings.json: tui.editor.undo: unknown key"), "{screen}");
    assert!(screen.contains("\"ctrl+nope\""), "{screen}");
    assert_eq!(screen.matches("keybindings.json").count(), 1, "one warning:\n{screen}");
    term.ready().await;
    term.send("one two");
    editor_shows(&term, "one two").await;
    term.send(CTRL_MINUS);
    editor_shows(&term, "one").await;

    std::fs::write(env.agent_dir.join("keybindings.json"), "{ not json").unwrap();
    let term = Terminal::start(&env, &[]);
    term.wait_for("is not valid JSON").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_up_takes_the_queued_messages_back_into_the_editor() {
    let env = Env::new(vec![slow("a slow answer that is not cut short"), Turn::text("never asked for")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("go slowly");
    term.wait_for("Esc to abort").await;
    term.submit("queued words");
    term.wait_for("Steering: queued words").await;
    term.send(ALT_UP);
    let screen = term.wait_for("Restored 1 queued message to the editor").await;
    assert!(!screen.contains("Steering:"), "{screen}");
    editor_shows(&term, "queued words").await;
    let screen = term.wait_idle_with("not cut short").await;
    assert!(screen.lines().any(|l| l == "› queued words"), "the editor still holds it:\n{screen}");
    assert_eq!(env.request_bodies().len(), 1, "the taken-back message was never sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_double_bang_command_is_shown_but_not_sent_to_the_model() {
    let env = Env::new(vec![Turn::text("seen nothing")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("!!echo kept-from-the-model");
    let screen = term.wait_for("(not sent to the model)").await;
    assert!(screen.contains("$ echo kept-from-the-model"), "{screen}");
    assert!(screen.contains("  kept-from-the-model"), "{screen}");
    term.submit("what did it say?");
    term.wait_idle_with("seen nothing").await;
    let body = env.request_bodies().pop().unwrap().to_string();
    assert!(body.contains("what did it say?"), "{body}");
    assert!(!body.contains("kept-from-the-model"), "the model does not see it: {body}");
}

/// The first user message's content blocks of the last request.
fn sent_content(env: &Env) -> Vec<serde_json::Value> {
    let body = env.request_bodies().pop().unwrap();
    body["messages"][0]["content"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_image_path_is_attached_and_sent_as_an_image_block() {
    let env = Env::new(vec![Turn::text("a tiny image")]).await;
    let path = env.cwd.join("dragged shot.png");
    std::fs::write(&path, PNG).unwrap();
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("what is");
    // A terminal types a dragged file's path, quoted, as a bracketed paste.
    term.send(&format!("\x1b[200~'{}'\x1b[201~", path.display()));
    editor_shows(&term, "what is [image #1]").await;
    term.send("?");
    term.send(keys::ENTER);
    term.wait_idle_with("a tiny image").await;
    let content = sent_content(&env);
    assert_eq!(content[0]["text"], "what is [image #1]?", "{content:?}");
    assert_eq!(content[1]["type"], "image", "{content:?}");
    assert_eq!(content[1]["source"]["media_type"], "image/png");
    assert_eq!(content[1]["source"]["data"], base64::engine::general_purpose::STANDARD.encode(PNG));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_v_attaches_the_clipboards_image() {
    let env = Env::new(vec![Turn::text("from the clipboard")]).await;
    // Stand-ins for the clipboard tools: they list a PNG and print it.
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let image = env.dir.path().join("clipboard.png");
    std::fs::write(&image, PNG).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *TARGETS*|*--list-types*) echo image/png ;; *) cat '{}' ;; esac\n",
        image.display()
    );
    for tool in ["xclip", "wl-paste"] {
        let path = bin.join(tool);
        std::fs::write(&path, &script).unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&path, permissions).unwrap();
    }
    let path_var = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let term = Terminal::start_with(&env, &[], &[("PATH", &path_var)]);
    term.ready().await;
    term.send("\x16");
    editor_shows(&term, "[image #1]").await;
    term.send(keys::ENTER);
    term.wait_idle_with("from the clipboard").await;
    let content = sent_content(&env);
    assert_eq!(content[1]["source"]["data"], base64::engine::general_purpose::STANDARD.encode(PNG), "{content:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_path_after_a_word_gets_a_space_and_tabs_become_spaces() {
    let env = Env::new(vec![Turn::text("pasted")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("see");
    term.send("\x1b[200~./src/main.rs\x1b[201~");
    editor_shows(&term, "see ./src/main.rs").await;
    term.send("\x1b[200~\tindented\x1b[201~");
    editor_shows(&term, "see ./src/main.rs    indented").await;
    term.send(keys::ENTER);
    term.wait_idle_with("pasted").await;
    assert_eq!(sent_content(&env)[0]["text"], "see ./src/main.rs    indented");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backslash_before_enter_makes_a_new_line() {
    let env = Env::new(vec![Turn::text("two lines")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("line one\\");
    term.send(keys::ENTER);
    term.send("line two");
    term.wait_until("two lines in the editor", |s| s.contains("› line one\n  line two")).await;
    term.send(keys::ENTER);
    term.wait_idle_with("two lines").await;
    assert_eq!(sent_content(&env)[0]["text"], "line one\nline two");
}
