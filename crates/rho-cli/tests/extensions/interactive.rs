//! Extensions in the interactive mode, in a pseudo-terminal: the fixture `ui.ts`'s status in the
//! footer and widget above the editor at start, a command's input, confirm and select dialogs
//! answered with keys, and a registered shortcut; and the command in the `/` completion. The
//! fixture `components.ts`: a `custom()` component with the keys, widget and footer components,
//! and renderers for a custom message, a tool, a custom entry and (a tool renderer) a built-in
//! tool's call. `rho config`, pi's screen for a package's resources.

#[path = "../interactive_support/mod.rs"]
mod interactive_support;

use interactive_support::Terminal;
use rho_mock_llm::Turn;

use crate::common::Env;
use crate::common::extensions::{fixture, pi_host};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_statuses_widgets_commands_and_shortcuts_in_the_terminal() {
    let Some(host) = pi_host("dialogs_statuses_widgets_commands_and_shortcuts_in_the_terminal") else { return };
    let env = Env::new(vec![Turn::text("unused")]).await;
    let host = host.display().to_string();
    let term = Terminal::start_with(&env, &["-e", &fixture("ui.ts")], &[("RHO_EXTENSION_HOST_DIR", &host)]);
    term.ready().await;
    let screen = term.wait_for("Widget line two").await;
    assert!(screen.contains("Widget line one\nWidget line two"), "{screen}");
    let screen = term.wait_for("fixture ready").await;
    insta::assert_snapshot!("ui_fixture_at_start", screen);

    // The command's dialogs: an input typed in the editor, a confirm answered Yes.
    term.submit("/greet");
    term.wait_for("Your name?").await;
    term.submit("Ada");
    term.wait_for("Greet Ada?").await;
    term.send("\r");
    term.wait_for("Hello, Ada!").await;

    // A select answered with Down and Enter.
    term.submit("/pick");
    term.wait_for("Pick one").await;
    term.send("\x1b[B");
    term.send("\r");
    term.wait_for("Picked beta").await;

    // The shortcut the extension registered.
    term.send("\x1bg");
    let screen = term.wait_for("The shortcut ran").await;
    assert!(screen.contains("Warning: The shortcut ran"), "{screen}");

    // The extension's commands complete after `/`.
    term.send("/gr\t");
    term.wait_for("/greet").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn components_renderers_widgets_and_footers_in_the_terminal() {
    let Some(host) = pi_host("components_renderers_widgets_and_footers_in_the_terminal") else {
        return;
    };
    let env = Env::new(vec![
        Turn::text("unused"),
        Turn::tool_call("shout", serde_json::json!({"text": "hey"})),
        Turn::text("Shouted."),
        Turn::text("Heard through the custom editor."),
        Turn::tool_call("read", serde_json::json!({"path": "notes.txt"})),
        Turn::text("Read the notes."),
    ])
    .await;
    let host = host.display().to_string();
    let term = Terminal::start_with(&env, &["-e", &fixture("components.ts")], &[("RHO_EXTENSION_HOST_DIR", &host)]);
    // (The extension's header replaces rho's, keys hint included: no `ready()` here.)
    let screen = term.wait_for("Widget at 100 columns").await;
    assert!(term.is_coloured("Widget at 100 columns"), "the theme's colour is kept:\n{screen}");
    assert!(screen.contains("The components fixture's header"), "{screen}");
    assert!(!screen.contains(" v0."), "the extension's header replaces rho's:\n{screen}");

    // The component replaces the editor and has the keys; Enter ends it with its value.
    term.submit("/counter");
    term.wait_for("Counter: 0").await;
    term.send("\x1b[A");
    term.send("\x1b[A");
    let screen = term.wait_for("Counter: 2").await;
    assert!(!screen.contains("›"), "the editor is not drawn while the component is:\n{screen}");
    term.send("\r");
    let screen = term.wait_for("Counted 2").await;
    assert!(!screen.contains("Counter: 2"), "{screen}");

    // Escape goes to the component too; the editor has the keys again afterwards.
    term.submit("/counter");
    term.wait_for("Counter: 0").await;
    term.send("\x1b");
    term.wait_for("Counting cancelled").await;
    term.send("typed");
    term.wait_for("› typed").await;

    // A resize renders the widget again at the new width.
    term.resize(30, 90);
    term.wait_for("Widget at 90 columns").await;

    // A footer component replaces rho's footer and renders again as the session grows.
    term.send("\x15");
    term.submit("/footer");
    let screen = term.wait_for("Statuses: footer on").await;
    assert!(!screen.contains("↑0"), "rho's footer is replaced:\n{screen}");
    let before: usize = entries_shown(&screen);
    term.submit("hello");
    term.wait_until("the footer counts the new entries", |screen| entries_shown(screen) > before).await;

    // Renderers: a custom message by its type's renderer, one without by rho; a tool's call and
    // result by the tool's, in their place in the history.
    term.submit("/notes");
    // Both messages drawn (the screen is read as it is painted, so wait for the whole of it).
    let screen = term
        .wait_until("both notes drawn", |screen| {
            ["Rendered note: hello", "[plain]", "as it is"].iter().all(|text| screen.contains(text))
        })
        .await;
    let rendered = screen.find("Rendered note: hello").expect("the note's renderer drew it");
    let plain = screen.find("[plain]").expect("rho draws a message without a renderer");
    assert!(rendered < plain, "{screen}");
    term.submit("shout please");
    let screen = term.wait_for("Shouted.").await;
    let call = screen.find("Shout call: hey").expect("the call's renderer drew it");
    let result = screen.find("Shout result: HEY").expect("the result's renderer drew it");
    let reply = screen.find("Shouted.").unwrap();
    assert!(call < result && result < reply, "{screen}");

    // An extension's editor takes rho's place: it gets the keys, hands Ctrl+C back (its text is
    // cleared), and what it submits is a prompt; a command typed in it restores rho's.
    term.submit("/custom-editor");
    term.wait_for("[custom editor]").await;
    term.send("scratch text");
    term.wait_for("scratch text").await;
    term.send("\x03");
    term.wait_until("Ctrl+C clears the extension's editor", |screen| !screen.contains("scratch text")).await;
    term.send("through the custom editor\r");
    term.wait_for("Heard through the custom editor.").await;
    // (Typed as a person types: pi's editor completes the command as it goes.)
    term.send("/default-editor");
    term.wait_for("/default-editor").await;
    term.send("\r");
    let screen = term
        .wait_until("rho's editor is back", |screen| !screen.contains("[custom editor]") && screen.contains("› "))
        .await;
    assert!(screen.contains("› through the custom editor"), "the prompt went in as typed:\n{screen}");

    // A custom entry by its entry renderer; a built-in tool's call by a tool renderer, its
    // result (which the renderer leaves) by rho.
    term.submit("/card");
    term.wait_for("Card Indexed: 3").await;
    std::fs::write(env.cwd.join("notes.txt"), "a note\n").unwrap();
    term.submit("read the notes");
    let screen = term.wait_for("Read the notes.").await;
    let call = screen.find("Resolved read: notes.txt").expect("the tool renderer drew the call");
    let result = screen.find("a note").expect("rho drew the result");
    assert!(call < result, "{screen}");
}

/// The count the fixture's footer shows.
fn entries_shown(screen: &str) -> usize {
    screen
        .lines()
        .find_map(|line| line.trim().strip_prefix("Entries: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_packages_theme_is_the_settings_theme() {
    let Some(host) = pi_host("a_packages_theme_is_the_settings_theme") else { return };
    let env = Env::new(vec![Turn::text("unused")]).await;
    let settings = serde_json::json!({"packages": [fixture("package-demo")], "theme": "package-demo"});
    std::fs::write(env.agent_dir.join("settings.json"), settings.to_string()).unwrap();
    let host = host.display().to_string();
    let term = Terminal::start_with(&env, &[], &[("RHO_EXTENSION_HOST_DIR", &host)]);
    let screen = term.wait_for("mock/mock-model").await;
    term.ready().await;
    assert!(!screen.contains("unknown theme"), "{screen}");
    // The package's accent (#ff00ff), in truecolor or as the 256-colour palette's nearest.
    let accent = term.fg_of("mock/mock-model");
    assert!(matches!(accent, vt100::Color::Rgb(255, 0, 255) | vt100::Color::Idx(201)), "{accent:?}");
}

/// `rho config`: pi's own screen lists an installed package's resources; Space turns the
/// extension off and Esc closes it, and settings.json keeps the package filtered as pi keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_turns_a_package_resource_off() {
    let Some(host) = pi_host("config_turns_a_package_resource_off") else { return };
    let env = Env::new(vec![Turn::text("unused")]).await.with_extension_host(host.clone());
    let package = fixture("package-demo");
    let installed = env.command(&["install", &package]).output().await.unwrap();
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));

    let host = host.display().to_string();
    let mut term = Terminal::start_command(&env, &["config"], &[("RHO_EXTENSION_HOST_DIR", &host)]);
    let screen = term.wait_for("pkg-skill").await;
    assert!(screen.contains("Global Resources"), "{screen}");
    assert!(screen.contains("[x] package-demo/ext.ts"), "{screen}");
    term.send(" ");
    term.wait_for("[ ] package-demo/ext.ts").await;
    term.send("\x1b");
    assert_eq!(term.exit_code().await, 0);

    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings["packages"][0]["extensions"], serde_json::json!(["-ext.ts"]), "{settings}");
    let listed = env.command(&["list"]).output().await.unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("(filtered)"));
}

/// Without a terminal `rho config` says it needs one, rather than drawing into a pipe.
#[tokio::test]
async fn config_without_a_terminal_is_refused() {
    let env = Env::new(vec![Turn::text("unused")]).await;
    let out = env.command(&["config"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "Error: rho config is a screen: run it in a terminal\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markdown_transformers_change_what_the_screen_draws_and_nothing_else() {
    let Some(host) = pi_host("markdown_transformers_change_what_the_screen_draws_and_nothing_else") else { return };
    let env = Env::new(vec![
        Turn::text("answer --> done, streamed slowly")
            .with_thinking("think --> deep")
            .with_chunk_size(12)
            .with_chunk_delay_ms(200),
        Turn::text("boom --> kept"),
    ])
    .await;
    let host = host.display().to_string();
    let vars = [("RHO_EXTENSION_HOST_DIR", host.as_str())];
    let mut first = Terminal::start_with(&env, &["-e", &fixture("markdown.ts")], &vars);
    first.ready().await;
    first.submit("ask --> now");
    // While it streams, the transformer is asked with `isStreaming`.
    first.wait_for("answer ~>").await;
    let screen = first.wait_idle_with("answer → done").await;
    assert!(screen.contains("› ask → now"), "the user's message:\n{screen}");
    assert!(screen.contains("think ⇒ deep"), "the thinking block:\n{screen}");
    // A transformer that throws leaves the markdown as it was.
    first.submit("boom");
    let screen = first.wait_idle_with("boom --> kept").await;
    first.submit("/note");
    let screen_after = first.wait_for("note → kept").await;
    assert!(screen_after.contains("[note]"), "{screen}\n{screen_after}");
    assert!(!first.scrollback_and_screen().contains("answer --> done"), "{}", first.scrollback_and_screen());
    first.send("\x04");
    assert_eq!(first.exit_code().await, 0);

    // Display only: the session keeps the original, and a continued session is drawn transformed.
    let saved: String = env.session_files().iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(saved.contains("ask --> now") && saved.contains("answer --> done"), "{saved}");
    let second = Terminal::start_with(&env, &["-c", "-e", &fixture("markdown.ts")], &vars);
    let screen = second.wait_for("answer → done").await;
    for shown in ["› ask → now", "think ⇒ deep", "boom --> kept", "note → kept"] {
        assert!(screen.contains(shown), "{shown} on resume:\n{screen}");
    }
}
