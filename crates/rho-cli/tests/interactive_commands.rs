//! Interactive mode's menus and commands: `/settings` (the theme list shows the highlighted
//! theme), `/scoped-models` with Ctrl+P and Shift+Ctrl+P and the order of the models, `/reload`,
//! `/tree` with a branch summary (custom instructions, cancelling) and its views, folders in the `@` list and
//! `/resume`'s scopes. The real `rho` in a pseudo-terminal against rho-mock-llm, as
//! interactive_mode.rs drives it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use common::{Env, chatgpt_token};
use interactive_support::{Terminal, keys};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// Shift+Ctrl+P in the kitty keyboard protocol (`P` = 112, modifiers 1 + Shift 1 + Ctrl 4).
const SHIFT_CTRL_P: &str = "\x1b[112;6u";
const CTRL_P: &str = "\x10";
const CTRL_S: &str = "\x13";
const BACKSPACE: &str = "\x7f";
const ALT_UP: &str = "\x1b[1;3A";
const ALT_DOWN: &str = "\x1b[1;3B";

/// Waits until `check` holds on two reads in a row (a list is redrawn in one frame, but a
/// read can fall between the clear and the draw).
async fn settled(term: &Terminal, what: &str, check: impl Fn(&str) -> bool) -> String {
    let mut last = String::new();
    loop {
        let screen = term.wait_until(what, &check).await;
        if screen == last {
            return screen;
        }
        last = screen;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// [`Terminal::two_exchanges`], then `/tree` with the first answer highlighted.
async fn two_exchanges_then_tree_on_the_first_answer(term: &Terminal) {
    term.two_exchanges().await;
    term.submit("/tree");
    term.wait_for("Session tree").await;
    term.send(keys::UP);
    term.send(keys::UP);
    term.wait_for("→ assistant: first answer").await;
}

/// The row of the open list that starts with `label` (after the `→ ` or two spaces).
fn row<'a>(screen: &'a str, label: &str) -> Option<&'a str> {
    screen
        .lines()
        .find(|l| l.strip_prefix("→ ").or_else(|| l.strip_prefix("  ")).is_some_and(|rest| rest.starts_with(label)))
}

/// Whether the row `label` of the open list ends with `value`.
fn shows(screen: &str, label: &str, value: &str) -> bool {
    row(screen, label).is_some_and(|l| l.trim_end().ends_with(value))
}

fn global_settings(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("settings.json")).unwrap()).unwrap()
}

/// Ctrl+S in `/scoped-models`, then Escape: the `enabledModels` saved to the global settings.
async fn save_scoped_models(term: &Terminal, env: &Env) -> Value {
    term.send(CTRL_S);
    let saved = |s: &str| s.contains("Model selection saved to settings") && !s.contains("(unsaved)");
    term.wait_until("the selection saved and no longer marked unsaved", saved).await;
    term.send(keys::ESCAPE);
    term.wait_until("the list closed", |s| !s.contains("Models for Ctrl+P")).await;
    global_settings(env)["enabledModels"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_change_live_and_are_saved_to_the_global_settings() {
    let env = Env::with_api(
        vec![Turn::text("the visible answer").with_thinking("secret pondering")],
        "anthropic-messages",
        true,
    )
    .await;
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"extensionChangelogVersions": {"kept": [1, 2]}}"#).unwrap();
    let term = Terminal::start(&env, &["--thinking", "low"]);
    term.ready().await;

    term.submit("/settings");
    let menu = settled(&term, "the settings menu", |s| s.contains("Settings") && s.contains("Theme")).await;
    insta::assert_snapshot!("settings_menu", menu);

    // Enter steps Auto-compact (the first row) to false.
    term.send(keys::ENTER);
    settled(&term, "auto-compact off", |s| shows(s, "Auto-compact", "false")).await;
    // Typing searches; Space steps the row found.
    term.send("hide");
    term.wait_until("only Hide thinking listed", |s| row(s, "Auto-compact").is_none()).await;
    term.send(" ");
    settled(&term, "thinking hidden", |s| shows(s, "Hide thinking", "true")).await;
    // The thinking level opens a list of levels; Escape there goes back to the menu.
    for _ in 0..4 {
        term.send(BACKSPACE);
    }
    term.send("level");
    term.wait_until("only the thinking level listed", |s| row(s, "Hide thinking").is_none()).await;
    term.send(keys::ENTER);
    term.wait_for("Enter select · Esc back").await;
    term.send(keys::ESCAPE);
    term.wait_for("Enter/Space change").await;
    term.send(keys::ENTER);
    term.wait_for("Enter select · Esc back").await;
    term.send("high");
    term.send(keys::ENTER);
    settled(&term, "the level high", |s| shows(s, "Thinking level", "high")).await;
    term.send(keys::ESCAPE);
    term.wait_until("the menu closed", |s| !s.contains("Enter/Space change")).await;
    term.wait_for("mock/mock-model • high").await;
    // pi 1.6's default project trust steps through ask, always, never.
    term.submit("/settings");
    settled(&term, "the settings menu", |s| s.contains("Default project trust")).await;
    term.send("trust");
    term.wait_until("only the project trust listed", |s| row(s, "Auto-compact").is_none()).await;
    term.send(keys::ENTER);
    settled(&term, "trust always", |s| shows(s, "Default project trust", "always")).await;
    term.send(keys::ESCAPE);
    term.wait_until("the menu closed", |s| !s.contains("Enter/Space change")).await;

    let saved = global_settings(&env);
    assert_eq!(saved["defaultProjectTrust"], json!("always"), "{saved}");
    assert_eq!(saved["compaction"]["enabled"], json!(false), "{saved}");
    assert_eq!(saved["hideThinkingBlock"], json!(true), "{saved}");
    assert_eq!(saved["defaultThinkingLevel"], json!("high"), "{saved}");
    assert_eq!(saved["extensionChangelogVersions"], json!({"kept": [1, 2]}), "other keys stay: {saved}");

    // Hidden thinking applies to the next answer.
    term.submit("think quietly");
    let screen = term.wait_idle_with("the visible answer").await;
    assert!(screen.contains("Thinking hidden (Ctrl+T shows it)"), "{screen}");
    assert!(!screen.contains("secret pondering"), "{screen}");
}

/// The terminal's background is dark (a `COLORFGBG` of the outer terminal would pick light).
const DARK_BACKGROUND: (&str, &str) = ("COLORFGBG", "15;0");
/// The `accent` of pi's dark and light themes (the list's `→`).
const DARK_ACCENT: vt100::Color = vt100::Color::Rgb(0x8a, 0xbe, 0xb7);
const LIGHT_ACCENT: vt100::Color = vt100::Color::Rgb(0x5a, 0x80, 0x80);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_theme_list_shows_the_highlighted_theme_and_escape_puts_the_old_one_back() {
    let env = Env::new(vec![]).await;
    let term = Terminal::start_with(&env, &[], &[DARK_BACKGROUND]);
    term.ready().await;
    term.submit("/settings");
    term.wait_for("Enter/Space change").await;
    term.send("theme");
    term.wait_until("only the theme listed", |s| row(s, "Auto-compact").is_none()).await;
    term.send(keys::ENTER);
    settled(&term, "the theme list", |s| s.contains("→ dark")).await;
    assert_eq!(term.fg_of("→ dark"), DARK_ACCENT);
    term.send(keys::DOWN);
    settled(&term, "light highlighted", |s| s.contains("→ light")).await;
    assert_eq!(term.fg_of("→ light"), LIGHT_ACCENT, "the highlighted theme is shown");
    term.send(keys::ESCAPE);
    let menu = settled(&term, "back in the menu", |s| s.contains("Enter/Space change")).await;
    assert!(shows(&menu, "Theme", "dark"), "{menu}");
    assert_eq!(term.fg_of("→ Theme"), DARK_ACCENT, "the theme before is back");
    let settings = env.agent_dir.join("settings.json");
    assert!(!settings.exists() || global_settings(&env).get("theme").is_none(), "nothing saved");

    // Enter keeps the theme picked.
    term.send(keys::ENTER);
    settled(&term, "the theme list again", |s| s.contains("→ dark")).await;
    term.send(keys::DOWN);
    settled(&term, "light highlighted again", |s| s.contains("→ light")).await;
    term.send(keys::ENTER);
    settled(&term, "light picked", |s| shows(s, "Theme", "light")).await;
    assert_eq!(term.fg_of("→ Theme"), LIGHT_ACCENT);
    assert_eq!(global_settings(&env)["theme"], json!("light"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_thinking_and_a_quiet_start_are_read_from_the_settings() {
    let env = Env::with_api(
        vec![Turn::text("the visible answer").with_thinking("secret pondering")],
        "anthropic-messages",
        true,
    )
    .await;
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"hideThinkingBlock": true, "quietStartup": true}"#)
        .unwrap();
    let term = Terminal::start(&env, &[]);
    term.wait_for("mock/mock-model •").await;
    term.submit("think quietly");
    let screen = term.wait_idle_with("the visible answer").await;
    assert!(!screen.contains("Enter send"), "no header on a quiet start:\n{screen}");
    assert!(screen.contains("Thinking hidden (Ctrl+T shows it)"), "{screen}");
}

/// The mock provider with a third and a fourth model.
fn four_models(env: &Env) {
    let models = json!({"providers": {"mock": {
        "baseUrl": env.server.url(),
        "api": "anthropic-messages",
        "apiKey": "test-key",
        "models": [
            {"id": "mock-model", "name": "Mock Model", "contextWindow": 200000, "maxTokens": 8192},
            {"id": "mock-small", "name": "Mock Small", "contextWindow": 1000, "maxTokens": 500},
            {"id": "mock-third", "name": "Mock Third", "contextWindow": 1000, "maxTokens": 500},
            {"id": "mock-fourth", "name": "Mock Fourth", "contextWindow": 1000, "maxTokens": 500}
        ]
    }}});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scoped_models_limit_what_ctrl_p_cycles_and_are_saved() {
    let env = Env::new(vec![]).await;
    four_models(&env);
    let term = Terminal::start(&env, &[]);
    term.ready().await;

    term.submit("/scoped-models");
    let list = settled(&term, "the model list", |s| s.contains("Models for Ctrl+P")).await;
    assert!(shows(&list, "mock/mock-third", "mock/mock-third"), "all enabled: no marks\n{list}");
    // The first toggle keeps only that model; the next adds one.
    term.send(keys::ENTER);
    term.wait_until("only mock-model enabled", |s| shows(s, "mock/mock-model", "✓")).await;
    term.send(keys::DOWN);
    term.send(keys::DOWN);
    term.send(" ");
    term.wait_until("mock-third enabled", |s| shows(s, "mock/mock-third", "✓")).await;
    term.send(keys::DOWN);
    term.send(" ");
    let list = settled(&term, "mock-fourth enabled", |s| shows(s, "mock/mock-fourth", "✓")).await;
    assert!(list.contains("  (unsaved) Enter toggle"), "{list}");
    insta::assert_snapshot!("scoped_models", list);
    let saved = save_scoped_models(&term, &env).await;
    assert_eq!(saved, json!(["mock/mock-model", "mock/mock-third", "mock/mock-fourth"]));

    // Ctrl+P skips mock-small; Shift+Ctrl+P goes back.
    term.send(CTRL_P);
    term.wait_for("Model: mock/mock-third").await;
    term.send(CTRL_P);
    term.wait_for("Model: mock/mock-fourth").await;
    term.send(SHIFT_CTRL_P);
    let screen = term.wait_until("back to mock-third", |s| s.matches("Model: mock/mock-third").count() == 2).await;
    assert!(!screen.contains("Model: mock/mock-small") && !screen.contains("Model: mock/mock-model"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_up_and_down_reorder_the_scoped_models_for_ctrl_p_and_the_save() {
    let env = Env::new(vec![]).await;
    four_models(&env);
    let term = Terminal::start(&env, &[]);
    term.ready().await;

    term.submit("/scoped-models");
    term.wait_for("Models for Ctrl+P").await;
    term.send(keys::ENTER);
    term.wait_until("only mock-model enabled", |s| shows(s, "mock/mock-model", "✓")).await;
    term.send(keys::DOWN);
    term.send(keys::DOWN);
    term.send(" ");
    term.wait_until("mock-third enabled", |s| shows(s, "mock/mock-third", "✓")).await;
    // The enabled models come first, in their order: model, third, then small.
    term.send(keys::DOWN);
    term.send(" ");
    term.wait_until("mock-fourth enabled", |s| shows(s, "mock/mock-fourth", "✓")).await;
    term.send(keys::UP);
    term.wait_for("→ mock/mock-fourth").await;
    // Alt+Up twice takes mock-fourth to the top, a third time does nothing; Alt+Down moves
    // mock-model below mock-third.
    term.send(ALT_UP);
    term.send(ALT_UP);
    term.send(ALT_UP);
    term.send(keys::DOWN);
    term.send(ALT_DOWN);
    let list = settled(&term, "the new order", |s| {
        let order: Vec<&str> = s
            .lines()
            .filter_map(|l| l.strip_prefix("→ ").or_else(|| l.strip_prefix("  ")))
            .filter_map(|rest| rest.split_whitespace().next().filter(|w| w.starts_with("mock/")))
            .collect();
        order == ["mock/mock-fourth", "mock/mock-third", "mock/mock-model", "mock/mock-small"]
    })
    .await;
    assert!(list.contains("→ mock/mock-model"), "the moved model stays highlighted:\n{list}");
    let saved = save_scoped_models(&term, &env).await;
    assert_eq!(saved, json!(["mock/mock-fourth", "mock/mock-third", "mock/mock-model"]));

    // Ctrl+P follows the order, from the current model.
    term.send(CTRL_P);
    term.wait_for("Model: mock/mock-fourth").await;
    term.send(CTRL_P);
    term.wait_for("Model: mock/mock-third").await;
    term.send(CTRL_P);
    term.wait_for("Model: mock/mock-model").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_picks_up_new_templates_context_files_and_settings() {
    let env = Env::new(vec![Turn::text("greeted")]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;

    std::fs::create_dir_all(env.cwd.join(".pi/prompts")).unwrap();
    std::fs::write(env.cwd.join(".pi/prompts/greet.md"), "Say hello to $1 politely.\n").unwrap();
    std::fs::write(env.cwd.join("AGENTS.md"), "Always answer in haiku.\n").unwrap();
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"hideThinkingBlock": true}"#).unwrap();
    term.submit("/reload");
    term.wait_for("Reloaded settings, 1 context file, 0 skills, 1 prompt template, keybindings and themes").await;

    term.send("/gre");
    term.wait_for("/greet").await;
    term.send(keys::TAB);
    term.submit("world");
    term.wait_idle_with("greeted").await;
    let body = env.request_bodies().pop().unwrap();
    let sent = body["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(sent, "Say hello to world politely.", "the template is expanded");
    assert!(
        body["system"].to_string().contains("Always answer in haiku."),
        "the new AGENTS.md is in the system prompt"
    );

    term.submit("/settings");
    let menu = settled(&term, "the settings menu", |s| s.contains("Enter/Space change")).await;
    assert!(shows(&menu, "Hide thinking", "true"), "the reloaded setting applies:\n{menu}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_summarizes_the_branch_left_and_shows_the_new_branch() {
    let env = Env::new(vec![
        Turn::text("first answer"),
        Turn::text("second answer"),
        Turn::text("## Goal\nthe summarized detour"),
        Turn::text("branch answer"),
    ])
    .await;
    let term = Terminal::start(&env, &[]);
    term.two_exchanges().await;

    term.submit("/tree");
    term.wait_for("→ assistant: second answer  ← current").await;
    term.send(keys::ENTER);
    term.wait_for("Already at this point").await;

    term.submit("/tree");
    term.wait_for("Session tree").await;
    term.send(keys::UP);
    term.send(keys::UP);
    term.wait_for("→ assistant: first answer").await;
    term.send(keys::ENTER);
    term.wait_for("Summarize the branch you leave?").await;
    // Escape goes back to the tree, on the entry picked.
    term.send(keys::ESCAPE);
    term.wait_for("→ assistant: first answer").await;
    term.send(keys::ENTER);
    term.wait_for("→ No summary").await;
    term.send(keys::DOWN);
    term.wait_for("→ Summarize").await;
    term.send(keys::ENTER);
    let screen = term.wait_idle_with("(branch summary)").await;
    insta::assert_snapshot!("tree_summarized", screen);

    let request = env.request_bodies().pop().unwrap().to_string();
    assert!(request.contains("second question") && request.contains("second answer"), "the branch left: {request}");
    assert!(request.contains("summar"), "a summarization request: {request}");

    term.submit("branch question");
    term.wait_idle_with("branch answer").await;
    let sent = env.request_bodies().pop().unwrap()["messages"].to_string();
    assert!(sent.contains("the summarized detour"), "the summary is in the new branch's context: {sent}");
    assert!(sent.contains("first answer") && !sent.contains("second answer"), "{sent}");
}

/// `/tree`'s views, as pi's: Ctrl+U user messages only, Ctrl+O the next view (labeled entries,
/// none yet), Ctrl+A everything (the model change too), Shift+L a label (then in the labeled
/// view and the session file), and `treeFilterMode` the first view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_views_follow_the_ctrl_keys_and_the_setting() {
    let env = Env::new(vec![Turn::text("first answer"), Turn::text("second answer")]).await;
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"treeFilterMode": "labeled-only"}"#).unwrap();
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    // Nothing said yet: no tree, whatever the view.
    term.submit("/tree");
    term.wait_for("The session tree is empty").await;
    std::fs::remove_file(env.agent_dir.join("settings.json")).unwrap();
    term.submit("/reload");
    term.wait_for("Reloaded settings").await;
    term.two_exchanges().await;
    term.submit("/tree");
    term.wait_for("→ assistant: second answer  ← current").await;
    term.send("\x15");
    let screen = settled(&term, "the user view", |s| s.contains("Session tree [user]")).await;
    assert!(screen.contains("→ user: second question  ← current"), "{screen}");
    assert!(screen.contains("user: first question") && !screen.contains("assistant: first answer"), "{screen}");
    term.send("\x0f");
    settled(&term, "the labeled view", |s| s.contains("Session tree [labeled]")).await;
    term.send("\x01");
    let screen = settled(&term, "everything", |s| s.contains("Session tree [all]")).await;
    assert!(screen.contains("[model: mock-model]"), "{screen}");
    // Shift+L labels the highlighted entry; the labeled view lists it.
    term.send("\x04");
    settled(&term, "the default view", |s| s.contains("Session tree\n")).await;
    term.send("L");
    term.wait_for("Label (empty to remove)").await;
    term.submit("checkpoint");
    let screen = settled(&term, "the label", |s| s.contains("[checkpoint] assistant: second answer")).await;
    assert!(screen.contains("→ [checkpoint] assistant: second answer  ← current"), "{screen}");
    term.send("\x0c");
    let screen = settled(&term, "the labeled view", |s| s.contains("Session tree [labeled]")).await;
    assert!(screen.contains("[checkpoint] assistant: second answer") && !screen.contains("user: first"), "{screen}");
    term.send(keys::ESCAPE);
    term.wait_until("the tree closed", |s| !s.contains("Session tree")).await;
    let written = std::fs::read_to_string(&env.session_files()[0]).unwrap();
    assert!(written.contains(r#""type":"label""#) && written.contains(r#""label":"checkpoint""#), "{written}");

    std::fs::write(env.agent_dir.join("settings.json"), r#"{"treeFilterMode": "user-only"}"#).unwrap();
    term.submit("/reload");
    term.wait_for("Reloaded settings").await;
    term.submit("/tree");
    settled(&term, "the setting's view", |s| s.contains("Session tree [user]")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_cancels_the_branch_summary_and_the_leaf_stays() {
    let slow = Turn {
        chunk_size: Some(2),
        chunk_delay_ms: Some(200),
        ..Turn::text("a summary that takes a long while to arrive")
    };
    let env =
        Env::new(vec![Turn::text("first answer"), Turn::text("second answer"), slow, Turn::text("still here")]).await;
    let term = Terminal::start(&env, &[]);
    two_exchanges_then_tree_on_the_first_answer(&term).await;
    term.send(keys::ENTER);
    term.wait_for("→ No summary").await;
    term.send(keys::DOWN);
    term.wait_for("→ Summarize").await;
    term.send(keys::ENTER);
    term.wait_for("Summarizing the branch… (Esc to cancel)").await;
    // Cancelled once its request is out (the slow reply is the summary's, not the next prompt's).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while env.server.requests().len() < 3 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(env.server.requests().len(), 3, "the summary request was sent");
    term.send(keys::ESCAPE);
    // The tree opens again, on the entry picked.
    let screen = term
        .wait_until("the tree again", |s| s.contains("Session tree") && s.contains("→ assistant: first answer"))
        .await;
    assert!(screen.contains("Branch summarization cancelled"), "{screen}");
    term.send(keys::ESCAPE);
    term.wait_until("the tree closed", |s| !s.contains("Session tree")).await;

    term.submit("go on");
    term.wait_idle_with("still here").await;
    let sent = env.request_bodies().pop().unwrap()["messages"].to_string();
    assert!(sent.contains("second answer"), "the leaf did not move: {sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_summary_with_a_custom_prompt_sends_the_instructions() {
    let env = Env::new(vec![
        Turn::text("first answer"),
        Turn::text("second answer"),
        Turn::text("## Goal\nthe focused summary"),
    ])
    .await;
    let term = Terminal::start(&env, &[]);
    two_exchanges_then_tree_on_the_first_answer(&term).await;
    term.send(keys::ENTER);
    term.wait_for("→ No summary").await;
    term.send(keys::UP);
    term.wait_for("→ Summarize with custom prompt").await;
    term.send(keys::ENTER);
    term.wait_for("Custom summarization instructions (Enter answers, Esc dismisses)").await;
    // Escape goes back to the question.
    term.send(keys::ESCAPE);
    term.wait_for("→ No summary").await;
    term.send(keys::UP);
    term.wait_for("→ Summarize with custom prompt").await;
    term.send(keys::ENTER);
    term.wait_for("Custom summarization instructions").await;
    term.submit("keep every file name");
    term.wait_idle_with("(branch summary)").await;

    let request = env.request_bodies().pop().unwrap().to_string();
    assert!(request.contains("Additional focus: keep every file name"), "the instructions are sent: {request}");
    assert!(request.contains("second answer"), "the branch left is summarized: {request}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_lists_folders_and_a_picked_folder_lists_its_files() {
    let env = Env::new(vec![]).await;
    std::fs::create_dir_all(env.cwd.join("src/parser")).unwrap();
    std::fs::write(env.cwd.join("src/parser/lexer.rs"), "").unwrap();
    std::fs::write(env.cwd.join("notes.md"), "").unwrap();
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.send("look at @pars");
    term.wait_for("→ @src/parser/").await;
    term.send(keys::TAB);
    let screen = term.wait_for("› look at @src/parser/").await;
    assert!(screen.contains("→ @src/parser/lexer.rs"), "the folder's files are listed next:\n{screen}");
    term.send(keys::ENTER);
    term.wait_for("› look at @src/parser/lexer.rs").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_lists_this_directory_and_tab_lists_every_project() {
    let env = Env::new(vec![Turn::text("the answer here")]).await;
    // A session of another project, older than the one made below.
    let elsewhere = env.agent_dir.join("sessions").join("--elsewhere--");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let lines = [
        json!({"type": "session", "version": 3, "id": "other", "timestamp": "2020-01-01T00:00:00.000Z", "cwd": "/elsewhere"}),
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2020-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "question from elsewhere", "timestamp": 1_577_836_801_000_i64}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(elsewhere.join("2020-01-01_other.jsonl"), text).unwrap();

    let mut first = Terminal::start(&env, &["a question here"]);
    first.wait_idle_with("the answer here").await;
    first.send(keys::CTRL_D);
    assert_eq!(first.exit_code().await, 0);

    let picker = Terminal::start(&env, &["-r"]);
    let screen = picker.wait_for("a question here").await;
    assert!(screen.contains("Resume a session (this directory)"), "{screen}");
    assert!(!screen.contains("question from elsewhere"), "{screen}");
    picker.send(keys::TAB);
    let screen = picker.wait_for("question from elsewhere").await;
    assert!(screen.contains("Resume a session (all projects)"), "{screen}");
    assert!(screen.contains("/elsewhere"), "the list of every project shows where: {screen}");
    assert!(screen.contains("a question here"), "{screen}");
    picker.send(keys::TAB);
    picker.wait_until("back to this directory", |s| s.contains("(this directory)") && !s.contains("elsewhere")).await;

    // The same in /resume, where picking the other project's session opens it.
    picker.send(keys::ESCAPE);
    let term = Terminal::start(&env, &[]);
    term.wait_for("Enter send").await;
    term.submit("/resume");
    term.wait_for("Resume a session (this directory)").await;
    term.send(keys::TAB);
    term.wait_for("question from elsewhere").await;
    term.send("elsewhere");
    term.send(keys::ENTER);
    term.wait_until("the other session shown", |s| s.lines().any(|l| l == "› question from elsewhere")).await;
}

/// In a project not trusted that has code of its own, the interactive mode asks once before the
/// screen is taken over, listing what would run: "n" starts none of it, "y" remembers the
/// approval and starts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_project_is_asked_about_once_and_y_remembers() {
    let env = Env::new(Vec::new()).await;
    let marker = env.dir.path().join("mcp-ran");
    let server =
        json!({"mcpServers": {"evil": {"command": "sh", "args": ["-c", format!("touch '{}'", marker.display())]}}});
    std::fs::write(env.cwd.join(".mcp.json"), server.to_string()).unwrap();
    let question = "Trust this project? [y] yes, remember  [o] this time only  [N] no:";

    let term = Terminal::start(&env, &[]);
    let screen = term.wait_for(question).await;
    assert!(
        screen.contains("has code of its own that rho would run:") && screen.contains(".mcp.json (MCP servers: evil)"),
        "{screen}"
    );
    term.send("n\r");
    let screen = term.wait_for("/hotkeys").await;
    assert!(screen.contains("this project's own code was not started, as the project is not trusted"), "{screen}");
    assert!(!marker.exists(), "the server started though the answer was no");
    drop(term);

    let term = Terminal::start(&env, &[]);
    term.wait_for(question).await;
    term.send("y\r");
    term.wait_for("/hotkeys").await;
    assert!(common::eventually(|| marker.exists()).await, "the trusted project's server did not start");
    assert!(std::fs::read_to_string(env.agent_dir.join("trust.json")).unwrap().contains("work"));
}

/// An ask rule opens a dialog in the interactive mode; the first choice runs the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_rule_opens_a_dialog_and_allow_once_runs_the_call() {
    let env =
        Env::new(vec![Turn::tool_call("bash", json!({"command": "touch asked-and-allowed"})), Turn::text("made it")])
            .await;
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"permissions": {"ask": ["Bash(touch:*)"]}}"#).unwrap();
    let term = Terminal::start(&env, &[]);
    term.wait_for("/hotkeys").await;
    term.submit("make the file");
    let screen = term.wait_for("Allow always (this session)").await;
    assert!(screen.contains("Allow this call? (the rule Bash(touch:*) in permissions.ask)"), "{screen}");
    assert!(screen.contains("bash: touch asked-and-allowed"), "{screen}");
    assert!(!env.cwd.join("asked-and-allowed").exists(), "ran before the answer");
    term.send(keys::ENTER);
    term.wait_idle_with("made it").await;
    assert!(env.cwd.join("asked-and-allowed").exists());
}

/// `/login openai-codex` shows the URL, takes the pasted code in a dialog, saves the login and
/// uses it at once; `/logout` removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_and_logout_from_the_editor() {
    let env = Env::new(vec![Turn::text("Hello from Codex.")]).await;
    let access = chatgpt_token("acct-9");
    env.server.accept_oauth_code(
        "pasted-code",
        rho_mock_llm::IssuedTokens { access_token: access, refresh_token: Some("rt".into()), expires_in: 864_000 },
    );
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["openai-codex"] = json!({"baseUrl": format!("{}/backend-api", env.server.url())});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let token_url = format!("{}/oauth/token", env.server.url());
    let vars = [("RHO_OAUTH_CALLBACK_PORT", "0"), ("RHO_OAUTH_TOKEN_URL_OPENAI_CODEX", token_url.as_str())];
    let term = Terminal::start_with(&env, &[], &vars);
    term.ready().await;

    term.submit("/login");
    term.wait_for("Log in to").await;
    term.wait_for("  ChatGPT Plus/Pro (Codex Subscription)").await;
    term.send(keys::ESCAPE);
    term.wait_until("the list closed", |s| !s.contains("Log in to")).await;
    term.submit("/login openai-codex");
    let screen = term.wait_for("? Or paste the address the browser ends on").await;
    assert!(screen.contains("Log in to ChatGPT Plus/Pro (Codex Subscription): open this URL in a browser"), "{screen}");
    assert!(screen.contains("https://auth.openai.com/oauth/authorize?"), "{screen}");
    term.submit("pasted-code");
    term.wait_for("Logged in to ChatGPT Plus/Pro (Codex Subscription)").await;
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("auth.json")).unwrap()).unwrap();
    assert_eq!(auth["openai-codex"]["accountId"], "acct-9");

    // Used at once: a ChatGPT model answers through the Codex backend.
    term.submit("/model openai-codex/gpt-6.2-sol");
    term.wait_for("Model: openai-codex/gpt-6.2-sol").await;
    term.submit("hi");
    term.wait_idle_with("Hello from Codex.").await;
    assert_eq!(env.server.last_request().unwrap().header("chatgpt-account-id"), Some("acct-9"));

    term.submit("/logout openai-codex");
    term.wait_for("Logged out of openai-codex").await;
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("auth.json")).unwrap()).unwrap();
    assert!(auth.get("openai-codex").is_none(), "{auth}");
}
