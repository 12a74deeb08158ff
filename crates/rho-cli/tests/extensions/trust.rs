//! A project's own extensions run only in a trusted project: not while the host starts for the
//! user's `-e` extension (pi's package manager then sees no project), and once `rho trust`
//! approved the folder, they load. pi 1.6's `project_trust`: the user's extensions decide for a
//! project nothing decided yet, for one run or (remembered) from then on.

use serde_json::json;

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho};

async fn command_names(rho: &mut Rho) -> Vec<String> {
    let commands = rho.data(json!({"type": "get_commands"})).await;
    commands["commands"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect()
}

/// A project whose extension registers `/from-project` and leaves a marker when it runs.
fn project_with_an_extension(env: &Env) -> std::path::PathBuf {
    let marker = env.dir.path().join("project-code-ran");
    std::fs::create_dir_all(env.cwd.join(".pi/extensions")).unwrap();
    std::fs::write(
        env.cwd.join(".pi/extensions/from-project.ts"),
        format!(
            "import fs from \"node:fs\";\nfs.writeFileSync({:?}, \"ran\");\nexport default function (pi) {{\n  \
             pi.registerCommand(\"from-project\", {{ description: \"the project's\", handler: async () => {{}} }});\n}}\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    marker
}

#[tokio::test]
async fn a_project_s_extensions_load_only_once_it_is_trusted() {
    let Some(host) = pi_host("a_project_s_extensions_load_only_once_it_is_trusted") else { return };
    let env = Env::new(Vec::new()).await.with_extension_host(host);
    let marker = project_with_an_extension(&env);

    // The host starts for the user's own extension; the project's is not loaded.
    let mut rho = Rho::start(&env, &["--no-session", "-e", &fixture("session.ts")]).await;
    let names = command_names(&mut rho).await;
    assert!(!names.iter().any(|n| n == "from-project"), "{names:?}");
    rho.close_stdin();
    rho.wait().await;
    assert!(!marker.exists(), "the project's code ran");

    env.trust_project();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let names = command_names(&mut rho).await;
    assert!(names.iter().any(|n| n == "from-project"), "{names:?}");
    assert!(marker.exists());
}

/// The project's commands in a run where `project_trust` answers `trusted`.
async fn commands_when_extensions_say(env: &Env, trusted: &str, remember: bool) -> Vec<String> {
    let args = ["--mode", "rpc", "--no-session", "--model", "mock/mock-model", "-e", &fixture("project-trust.ts")];
    let mut command = env.command(&args);
    command.env("RHO_TEST_TRUST", trusted).env("RHO_TEST_REMEMBER", if remember { "1" } else { "0" });
    let mut rho = Rho::start_command(command).await;
    let names = command_names(&mut rho).await;
    rho.close_stdin();
    rho.wait().await;
    names
}

fn trust_file(env: &Env) -> serde_json::Value {
    std::fs::read_to_string(env.agent_dir.join("trust.json"))
        .map_or(serde_json::Value::Null, |text| serde_json::from_str(&text).unwrap())
}

#[tokio::test]
async fn project_trust_handlers_decide_for_a_project_nothing_decided() {
    let Some(host) = pi_host("project_trust_handlers_decide_for_a_project_nothing_decided") else { return };
    let env = Env::new(Vec::new()).await.with_extension_host(host);
    let marker = project_with_an_extension(&env);
    let from_project = |names: &[String]| names.iter().any(|n| n == "from-project");

    // Undecided: the project's code does not run (nobody to ask in RPC mode).
    assert!(!from_project(&commands_when_extensions_say(&env, "undecided", false).await));
    assert!(!marker.exists());
    // Yes for this run: it runs, and nothing is saved.
    assert!(from_project(&commands_when_extensions_say(&env, "yes", false).await));
    assert_eq!(trust_file(&env), serde_json::Value::Null);
    std::fs::remove_file(&marker).unwrap();
    // No, remembered: it does not run, and the decision is saved; a saved decision is not asked
    // about again (the handler's yes is not heard).
    assert!(!from_project(&commands_when_extensions_say(&env, "no", true).await));
    let cwd = env.cwd.canonicalize().unwrap().display().to_string();
    assert_eq!(trust_file(&env)[&cwd], false, "{}", trust_file(&env));
    assert!(!from_project(&commands_when_extensions_say(&env, "yes", false).await));
    assert!(!marker.exists());
}
