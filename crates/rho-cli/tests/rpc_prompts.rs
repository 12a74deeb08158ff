//! What rho knows before the first prompt, through the real binary: the project's AGENTS.md in
//! the system prompt, a prompt template expanded before it reaches the model, a skill listed and
//! invocable, `--append-system-prompt`, and a broken settings file reported once on stderr while
//! rho starts with the defaults; and a prompt's image fitted to what the model takes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::json;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn agents_md_templates_and_skills_shape_what_the_model_sees() {
    let env = Env::new(vec![Turn::text("Reviewed."), Turn::text("Skilled.")]).await;
    write(&env.cwd.join("AGENTS.md"), "Always run the tests with nextest.");
    write(
        &env.cwd.join(".rho/prompts/review.md"),
        "---\ndescription: Review a file\n---\nReview $1 carefully, focusing on $2.",
    );
    write(
        &env.cwd.join(".rho/skills/changelog/SKILL.md"),
        "---\nname: changelog\ndescription: Write changelog entries\n---\nUse Keep a Changelog.",
    );
    let mut rho = Rho::start(&env, &["--no-session", "--append-system-prompt", "Answer in English."]).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    let system = state["systemPrompt"].as_str().unwrap();
    assert!(system.contains("Always run the tests with nextest."), "{system}");
    assert!(system.contains("Answer in English."), "{system}");
    assert!(system.contains("changelog") && system.contains("Write changelog entries"), "{system}");

    let commands = rho.data(json!({"type": "get_commands"})).await;
    let names: Vec<(&str, &str)> = commands["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["source"].as_str().unwrap()))
        .collect();
    assert_eq!(names, [("review", "prompt"), ("skill:changelog", "skill")]);

    rho.send(json!({"type": "prompt", "message": "/review src/main.rs \"error handling\""})).await;
    rho.until_agent_end().await;
    rho.send(json!({"type": "prompt", "message": "/skill:changelog for 0.2"})).await;
    rho.until_agent_end().await;
    let bodies = env.request_bodies();
    assert_eq!(
        bodies[0]["messages"][0]["content"][0]["text"],
        "Review src/main.rs carefully, focusing on error handling."
    );
    assert!(bodies[0]["system"][0]["text"].as_str().unwrap().contains("Always run the tests with nextest."));
    let skill = bodies[1]["messages"][2]["content"][0]["text"].as_str().unwrap();
    assert!(skill.starts_with("<skill name=\"changelog\""), "{skill}");
    assert!(skill.contains("Use Keep a Changelog.") && skill.ends_with("for 0.2"), "{skill}");
}

/// pi 1.6's additions: a folder's `AGENTS.override.md` stands in for its `AGENTS.md`, and a
/// template's `${1:-…}` and `${@:-…}` fill in what the user left out.
#[tokio::test]
async fn an_agents_override_and_template_defaults_as_pi_1_6_reads_them() {
    let env = Env::new(vec![Turn::text("One."), Turn::text("Two.")]).await;
    write(&env.cwd.join("AGENTS.md"), "The shared instructions.");
    write(&env.cwd.join("AGENTS.override.md"), "My own instructions.");
    write(&env.cwd.join(".rho/prompts/review.md"), "Review ${@:-the staged changes}. Focus on ${1:-correctness}.");
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let system = rho.data(json!({"type": "get_state"})).await["systemPrompt"].as_str().unwrap().to_owned();
    assert!(system.contains("My own instructions.") && !system.contains("The shared instructions."), "{system}");
    rho.send(json!({"type": "prompt", "message": "/review"})).await;
    rho.until_agent_end().await;
    rho.send(json!({"type": "prompt", "message": "/review speed"})).await;
    rho.until_agent_end().await;
    let bodies = env.request_bodies();
    assert_eq!(bodies[0]["messages"][0]["content"][0]["text"], "Review the staged changes. Focus on correctness.");
    assert_eq!(bodies[1]["messages"][2]["content"][0]["text"], "Review speed. Focus on speed.");
}

#[tokio::test]
async fn a_broken_settings_file_is_reported_and_the_defaults_apply() {
    let env = Env::new(vec![]).await;
    write(&env.cwd.join(".rho/settings.json"), "{\"steeringMode\": \"all\",");
    let mut child = env.command(&["--mode", "rpc", "--no-session", "--model", "mock/mock-model"]).spawn().unwrap();
    let mut rho_stdin = child.stdin.take().unwrap();
    use tokio::io::AsyncWriteExt;
    rho_stdin.write_all(b"{\"type\":\"get_state\"}\n").await.unwrap();
    drop(rho_stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let path = env.cwd.join(".rho/settings.json");
    assert_eq!(stderr.lines().filter(|l| l.contains(&*path.to_string_lossy())).count(), 1, "{stderr}");
    assert!(stderr.contains("invalid JSON"), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    // ready, available_commands_update, then the answer.
    let state: serde_json::Value = serde_json::from_str(stdout.lines().nth(2).unwrap()).unwrap();
    assert_eq!(state["data"]["steeringMode"], "one-at-a-time");
}

/// A 3000×20 red PNG.
const WIDE_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAC7gAAAAUCAIAAACSrudBAAAA6UlEQVR42u3aQQ0AAAyEMPyb3nxcmlQBb7oCAAAAAAAAAIB5EgAAAAAAAAAAYJQBAAAAAAAAAACjDAAAAAAAAAAAGGUAAAAAAAAAAMAoAwAAAAAAAAAARhkAAAAAAAAAADDKAAAAAAAAAACAUQYAAAAAAAAAAIwyAAAAAAAAAAAYZQAAAAAAAAAAwCgDAAAAAAAAAABGGQAAAAAAAAAAMMoAAAAAAAAAAIBRBgAAAAAAAAAAjDIAAAAAAAAAAGCUAQAAAAAAAAAAowwAAAAAAAAAABhlAAAAAAAAAAAwygAAAAAAAAAAwLgHJYaDSI0JrwsAAAAASUVORK5CYII=";

/// The width of the PNG the request carried (base64), from its header.
fn png_width(data: &str) -> u32 {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    assert_eq!(&bytes[1..4], b"PNG", "not a PNG");
    u32::from_be_bytes(bytes[16..20].try_into().unwrap())
}

/// A prompt's image wider than the model takes is shrunk to 2000 pixels before it is sent (as pi
/// 1.6 does with `images.autoResize`, on by default); turned off, it goes as it is.
#[tokio::test]
async fn a_prompt_image_is_shrunk_to_what_the_model_takes() {
    for (args, width) in [(vec![], 2000), (vec!["--setting", "images.autoResize=false"], 3000)] {
        let env = Env::new(vec![Turn::text("a red line")]).await;
        let mut all = vec!["--no-session"];
        all.extend(args);
        let mut rho = Rho::start(&env, &all).await;
        let image = json!({"type": "image", "data": WIDE_PNG, "mimeType": "image/png"});
        rho.send(json!({"type": "prompt", "message": "what is this?", "images": [image]})).await;
        rho.until_agent_end().await;
        let body = env.request_bodies().pop().unwrap();
        let sent = &body["messages"][0]["content"][1]["source"];
        assert_eq!(sent["media_type"], "image/png", "{body}");
        assert_eq!(png_width(sent["data"].as_str().unwrap()), width);
    }
}
