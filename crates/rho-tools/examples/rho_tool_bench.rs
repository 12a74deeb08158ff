//! Runs one rho-tools call and exits, so benchmarks can compare rho's grep and find with `rg` and
//! `fd` process against process.
//!
//! Usage: `rho-tool-bench <tool> <cwd> '<json arguments>'`, e.g.
//! `rho-tool-bench grep /tmp/tree '{"pattern":"needle","literal":true,"limit":1000000}'`.
//! Prints the number of result lines (before truncation) and the first line to stderr; exits 1
//! on a tool error.

use std::process::ExitCode;

use rho_agent::ToolContext;
use rho_tools::{ToolOptions, create_tool};
use tokio_util::sync::CancellationToken;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let [_, tool, cwd, json] = argv.as_slice() else {
        eprintln!("usage: rho-tool-bench <tool> <cwd> '<json arguments>'");
        return ExitCode::from(2);
    };
    let Some(tool) = create_tool(tool, &ToolOptions::new(cwd)) else {
        eprintln!("unknown tool {tool}");
        return ExitCode::from(2);
    };
    let args = match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => {
            eprintln!("arguments must be a JSON object");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let ctx = ToolContext::new("bench", CancellationToken::new(), None);
    match runtime.block_on(tool.execute(args, ctx)) {
        Ok(result) => {
            let text = result.text_content();
            let total = result
                .details
                .as_ref()
                .and_then(|d| d["truncation"]["totalLines"].as_u64())
                .map_or_else(|| text.lines().count(), |n| n as usize);
            eprintln!(
                "results: {total} lines ({} bytes shown); first: {}",
                text.len(),
                text.lines().next().unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
