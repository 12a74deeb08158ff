//! Start-up cost of MCP: the time from `McpManager::start` to all of 3 stdio servers ready
//! (spawned, initialized, tools listed), over several runs.
//!
//! ```sh
//! cargo build --release -p rho-mcp --bins --examples
//! target/release/examples/mcp-startup-bench                 # 3 fixture servers (Rust)
//! target/release/examples/mcp-startup-bench --runs 5 -- node .../server-everything/dist/index.js stdio
//! ```
//!
//! Without a command after `--` it runs `rho-mcp-fixture-server`, found beside the `examples`
//! directory this binary is in.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rho_mcp::{McpConfig, McpManager, McpOptions, ServerConfig, ServerState, StdioServer, Transport};

const SERVERS: usize = 3;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (own, command) = match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args.clone(), Vec::new()),
    };
    let runs: usize =
        own.iter().position(|a| a == "--runs").and_then(|i| own.get(i + 1)).map_or(Ok(10), |n| n.parse())?;
    let command = if command.is_empty() { vec![fixture()?.display().to_string()] } else { command };
    let cwd = std::env::current_dir()?;

    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let servers = (0..SERVERS)
            .map(|i| ServerConfig {
                name: format!("s{i}"),
                transport: Some(Transport::Stdio(StdioServer {
                    command: command[0].clone(),
                    args: command[1..].to_vec(),
                    env: Default::default(),
                    cwd: None,
                })),
                enabled: true,
                timeout: None,
                exposure: None,
                tool_exposure: Default::default(),
                source: cwd.join("bench"),
            })
            .collect();
        let started = Instant::now();
        let manager = McpManager::start(McpConfig::from_servers(servers), McpOptions::new(&cwd));
        let start_returned = started.elapsed();
        manager.settled().await;
        let elapsed = started.elapsed();
        if let Some(bad) = manager.status().into_iter().find(|s| s.state != ServerState::Ready) {
            return Err(format!("server {} is {:?}: {:?}", bad.name, bad.state, manager.take_diagnostics()).into());
        }
        let tools = manager.tools().len();
        manager.shutdown().await;
        println!(
            "run: start() returned in {:.3} ms; {SERVERS} servers ready ({tools} tools) in {:.1} ms",
            ms(start_returned),
            ms(elapsed)
        );
        times.push(elapsed);
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "{SERVERS} servers, {runs} runs: min {:.1} ms, median {:.1} ms, max {:.1} ms ({})",
        ms(times[0]),
        ms(median),
        ms(times[times.len() - 1]),
        command.join(" ")
    );
    Ok(())
}

fn fixture() -> Result<PathBuf, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    let dir = exe.parent().and_then(|examples| examples.parent()).ok_or("no target directory")?;
    let path = dir.join("rho-mcp-fixture-server");
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("{} is not built: cargo build -p rho-mcp --bins", path.display()).into())
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
