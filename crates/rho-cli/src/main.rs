//! The `rho` binary: parses the command line and runs the chosen mode.

use std::io::IsTerminal;
use std::process::ExitCode;

use rho_coding_agent::cli::{Cli, Mode};
use rho_coding_agent::export_html::{ExportOptions, export_session_file};
use rho_coding_agent::list_models::list_models;
use rho_coding_agent::startup::{self, StartupError};
use rho_coding_agent::{AgentSession, modes};

fn main() -> ExitCode {
    // A command started confined: this process restricts itself and becomes the command, before
    // any thread exists (rho_sandbox::Sandbox::wrap).
    let mut args = std::env::args_os().skip(1);
    match args.next() {
        Some(first) if first == rho_sandbox::HELPER_ARG => {
            eprintln!("rho: {}", rho_sandbox::run_helper(args));
            return ExitCode::from(126);
        }
        // Waits for this rho's end, then ends what it started (rho_tools::guardian).
        Some(first) if first == rho_tools::guardian::HELPER_ARG => {
            return ExitCode::from(u8::try_from(rho_tools::guardian::run(args)).unwrap_or(1));
        }
        _ => {}
    }
    // rho's memory, descriptors and environment (the provider keys, the stdin a host drives it
    // through) are not for its commands to read or write through /proc, in any mode: a
    // non-dumpable process's /proc entries belong to root.
    let _ = nix::sys::prctl::set_dumpable(false);
    rho_tools::guardian::enable(rho_sandbox::own_binary());
    // `rho install …` and the other package commands take their own arguments (pi reads its
    // first argument the same way).
    let raw: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    if let Some(args) = rho_coding_agent::packages::command(&raw) {
        return run_packages(args);
    }
    // `rho auth …` and `rho mcp …` too (pi 1.6's commands), without a session.
    if let Some(args) = rho_coding_agent::login::auth_command::command(&raw) {
        return run_command(|paths| async move { rho_coding_agent::login::auth_command::run(args, &paths).await });
    }
    if let Some(args) = rho_coding_agent::mcp_command::command(&raw) {
        return run_command(|paths| async move { rho_coding_agent::mcp_command::run(args, &paths).await });
    }
    let cli = match rho_coding_agent::cli::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(run(cli));
    // Pending telemetry goes out (bounded) while the runtime its exports run on is still up.
    rho_coding_agent::telemetry::shutdown();
    // Work still winding down (a tool's process group being killed, a stream being torn down)
    // gets a moment; stdin is read on a thread of its own, so an idle process exits at once.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    rho_tools::remove_spill_files();
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Runs a command that needs the agent's paths and a runtime, not a session.
fn run_command<F: std::future::Future<Output = i32>>(
    command: impl FnOnce(rho_coding_agent::config::paths::ConfigPaths) -> F,
) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_default();
    let paths = rho_coding_agent::config::paths::ConfigPaths::from_env(cwd);
    match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => ExitCode::from(u8::try_from(runtime.block_on(command(paths))).unwrap_or(1)),
        Err(e) => {
            eprintln!("Error: cannot start the runtime: {e}");
            ExitCode::from(1)
        }
    }
}

async fn run(mut cli: Cli) -> i32 {
    survive_file_size_limit();
    if let Some((trusting, dir)) = cli.trust_command() {
        return startup::trust::run_command(trusting, dir);
    }
    if let Some(command) = cli.account_command() {
        let cwd = std::env::current_dir().unwrap_or_default();
        let paths = rho_coding_agent::config::paths::ConfigPaths::from_env(cwd);
        return rho_coding_agent::login::run(command, &paths.auth_file()).await;
    }
    // Options rho does not know are for the flags extensions register; without any extension
    // they are errors, before anything else happens.
    if let Some((name, _)) = cli.extension_flags.first()
        && !startup::extensions_configured(&cli)
    {
        eprintln!("Error: Unknown option: --{name}");
        return 2;
    }
    if let Some(args) = &cli.export {
        return export(args);
    }
    if let Some(search) = &cli.list_models {
        let prepared = match startup::prepare(&cli, false) {
            Ok(prepared) => prepared,
            Err(e) => return fail(e),
        };
        // With extensions, the providers they register are listed too.
        if !startup::extensions_configured(&cli) {
            print_out(&list_models(&prepared.registry, search));
            return 0;
        }
        return match modes::registry_with_extensions(&cli, prepared).await {
            Ok(registry) => {
                print_out(&list_models(&registry, search));
                0
            }
            Err(e) => fail(e),
        };
    }
    let stdin_piped = !std::io::stdin().is_terminal();
    // A person at a terminal with neither -p nor --mode: the interactive mode (with the
    // message arguments as its first prompt, as pi does).
    let interactive = cli.mode.is_none() && !cli.print && !stdin_piped && std::io::stdout().is_terminal();
    let ui = match cli.mode(stdin_piped) {
        _ if interactive => startup::ExtensionUi::Interactive,
        Some(Mode::Rpc) => startup::ExtensionUi::Rpc,
        _ => startup::ExtensionUi::None,
    };
    startup::trust::ask_extensions(&mut cli, ui).await;
    if interactive {
        return rho_tui::run(cli).await;
    }
    match cli.mode(stdin_piped) {
        Some(Mode::Rpc) => run_rpc(cli).await,
        Some(Mode::Acp) => rho_acp::run(cli).await,
        Some(mode @ (Mode::Text | Mode::Json)) => modes::print::run(cli, mode, stdin_piped).await,
        None => {
            eprintln!(
                "rho's interactive mode needs a terminal on stdout: give a message with -p, or use --mode json, --mode rpc or --mode acp"
            );
            2
        }
    }
}

async fn run_rpc(cli: Cli) -> i32 {
    if !cli.file_args().is_empty() {
        eprintln!("Error: @file arguments are not supported in RPC mode");
        return 1;
    }
    let prepared = match startup::prepare(&cli, true) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let result = modes::rpc::run(
        |sink, ui, host_uris| {
            let mut options = startup::session_options(&cli, prepared, sink, Some(ui))?;
            options.host_uris = Some(host_uris);
            Ok(AgentSession::new(options))
        },
        &cli,
    )
    .await;
    match result {
        Ok(code) => code,
        Err(e) => match e.downcast::<StartupError>() {
            Ok(e) => fail(e),
            Err(e) => {
                eprintln!("Error: {e}");
                1
            }
        },
    }
}

fn run_packages(args: &[String]) -> ExitCode {
    init_logging();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let paths = rho_coding_agent::config::paths::ConfigPaths::from_env(cwd);
    let code = runtime.block_on(rho_coding_agent::packages::run(args, &paths.agent_dir));
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// A write past the file size limit (`ulimit -f`) must fail with an error rho reports, not kill
/// the process: tokio's handler replaces SIGXFSZ's default action for good.
fn survive_file_size_limit() {
    use tokio::signal::unix::{SignalKind, signal};
    let _ = signal(SignalKind::from_raw(nix::sys::signal::Signal::SIGXFSZ as i32));
}

/// `--export <session.jsonl> [out.html]`.
fn export(args: &[std::path::PathBuf]) -> i32 {
    let Some(session_file) = args.first() else {
        eprintln!("Error: --export needs a session file");
        return 2;
    };
    match export_session_file(session_file, args.get(1).map(|p| p.as_path()), &ExportOptions::default()) {
        Ok(path) => {
            print_out(&format!("Exported to: {}\n", path.display()));
            0
        }
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

fn print_out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
}

fn fail(e: StartupError) -> i32 {
    eprintln!("{}", e.message);
    e.exit_code
}

/// Diagnostics go to stderr (stdout is the protocol channel); `RHO_LOG` sets the filter.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RHO_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Colour only for a person at a terminal: hosts capture stderr into their logs.
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(ansi)
        .try_init();
}
