//! `rho install | remove | uninstall | update | list`: pi's packages, managed by pi's own
//! package manager (run through the extension host's `packages.mjs`) for rho's agent dir. So a
//! package installs where pi installs it (npm's global folder, `<agent dir>/git/…`, or the
//! project's `.pi/` with `-l`) and `settings.json` lists it as pi lists it: packages a pi user
//! installed are rho's, and the other way round.

use std::path::Path;

/// The first words that are package commands (as pi reads its first argument).
pub const COMMANDS: &[&str] = &["install", "remove", "uninstall", "update", "list"];

/// `args` when they are a package command (its name first), else `None`.
pub fn command(args: &[String]) -> Option<&[String]> {
    args.first().filter(|a| COMMANDS.contains(&a.as_str())).map(|_| args)
}

/// Runs a package command; returns the exit code.
pub async fn run(args: &[String], agent_dir: &Path) -> i32 {
    let runtime = match rho_extensions::install::prepare(agent_dir, &mut |line: &str| eprintln!("{line}")).await {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let status = tokio::process::Command::new(&runtime.node)
        .arg(runtime.packages_script())
        .args(args)
        .env("PI_CODING_AGENT_DIR", agent_dir)
        .status()
        .await;
    match status {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("Error: cannot run {}: {e}", runtime.node.display());
            1
        }
    }
}
