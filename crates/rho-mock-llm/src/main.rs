//! `rho-mock-llm`: the scripted model server as a process, for benchmarks and tests that spawn
//! it. Prints its base URL as the first line of stdout, logs to stderr, and serves until
//! SIGINT or SIGTERM.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use clap::Parser;
use rho_mock_llm::{MockOptions, MockServer, Script};

/// A scripted model server speaking the Anthropic, OpenAI, Gemini and Bedrock streaming wire formats.
#[derive(Debug, Parser)]
#[command(name = "rho-mock-llm", version)]
struct Cli {
    /// The script (JSON, `{"turns": [...]}`); `-` reads it from stdin.
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    /// The port to listen on (127.0.0.1); any free port when absent.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append every request received as a JSON line to this file.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error("cannot read the script {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("the script {path} is not valid: {source}")]
    Parse { path: String, source: serde_json::Error },
    #[error("cannot start the server: {0}")]
    Start(std::io::Error),
    #[error("cannot write to stdout: {0}")]
    Stdout(std::io::Error),
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rho-mock-llm: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rho-mock-llm: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), CliError> {
    let script = read_script(&cli.script)?;
    let turns = script.turns.len();
    let options = MockOptions { addr: Some(SocketAddr::from((Ipv4Addr::LOCALHOST, cli.port))), record: cli.record };
    let server = MockServer::start_with(script, options).await.map_err(CliError::Start)?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", server.url()).and_then(|()| stdout.flush()).map_err(CliError::Stdout)?;
    drop(stdout);
    tracing::info!("serving {turns} turns on {}", server.url());
    wait_for_signal().await;
    tracing::info!("stopping; {} requests served, {} turns left", server.requests().len(), server.remaining_turns());
    Ok(())
}

fn read_script(path: &std::path::Path) -> Result<Script, CliError> {
    let shown = path.display().to_string();
    let text = if shown == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    } else {
        std::fs::read_to_string(path)
    }
    .map_err(|source| CliError::Read { path: shown.clone(), source })?;
    Script::from_json(&text).map_err(|source| CliError::Parse { path: shown, source })
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
