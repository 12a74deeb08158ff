//! A project's own extensions run only in a trusted project: not while the host starts for the
//! user's `-e` extension (pi's package manager then sees no project), and once `rho trust`
//! approved the folder, they load.

use serde_json::json;

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho};

async fn command_names(rho: &mut Rho) -> Vec<String> {
    let commands = rho.data(json!({"type": "get_commands"})).await;
    commands["commands"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_project_s_extensions_load_only_once_it_is_trusted() {
    let Some(host) = pi_host("a_project_s_extensions_load_only_once_it_is_trusted") else { return };
    let env = Env::new(Vec::new()).await.with_extension_host(host);
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
