//! `rho install | remove | uninstall | update | list | config`: pi's packages, managed by pi's
//! own package manager (run through the extension host's `packages.mjs`) for rho's agent dir. So
//! a package installs where pi installs it (npm's global folder, `<agent dir>/git/…`, or the
//! project's `.pi/` with `-l`) and `settings.json` lists it as pi lists it: packages a pi user
//! installed are rho's, and the other way round. `config` is pi's screen for turning a package's
//! extensions, skills, prompt templates and themes on and off; it needs a terminal.

use std::path::Path;

/// The first words that are package commands (as pi reads its first argument).
pub const COMMANDS: &[&str] = &["install", "remove", "uninstall", "update", "list", "config"];

/// `args` when they are a package command (its name first), else `None`.
pub fn command(args: &[String]) -> Option<&[String]> {
    args.first().filter(|a| COMMANDS.contains(&a.as_str())).map(|_| args)
}

/// Runs a package command; returns the exit code.
pub async fn run(args: &[String], agent_dir: &Path) -> i32 {
    use std::io::IsTerminal;
    let asks_help = args.iter().any(|a| a == "-h" || a == "--help");
    if args.first().is_some_and(|a| a == "config")
        && !asks_help
        && !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal())
    {
        eprintln!("Error: rho config is a screen: run it in a terminal");
        return 1;
    }
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
