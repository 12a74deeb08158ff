//! The tools of background commands ([`crate::background`]): `bash_output` (what a command
//! printed since the last read, the tail when it is long, and whether it still runs) and
//! `kill_bash` (stop it).

use std::sync::Arc;

use futures::future::BoxFuture;
use regex::Regex;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Value, json};

use crate::args::Args;
use crate::background::{BackgroundJobs, JobStatus};
use crate::params::{self, BashOutputParams, KillBashParams, Parameters};
use crate::truncate::{TruncationOptions, truncate_tail};

const OUTPUT_DESCRIPTION: &str = "Read the new output of a command started with bash run_in_background: what it printed since the last read (the last 2000 lines or 50KB when it is more), and whether it is still running or how it ended. filter keeps only the lines that match a regular expression.";

const KILL_DESCRIPTION: &str = "Stop a command started with bash run_in_background, and everything it started.";

/// How a status reads in a result.
fn describe(status: &JobStatus) -> String {
    match status {
        JobStatus::Running => "running".to_owned(),
        JobStatus::Exited { exit_code: Some(code) } => format!("exited with code {code}"),
        JobStatus::Exited { exit_code: None } => "ended by a signal".to_owned(),
        JobStatus::Killed => "killed".to_owned(),
        JobStatus::Failed { error } => format!("failed: {error}"),
    }
}

pub struct BashOutputTool {
    jobs: Arc<BackgroundJobs>,
}

impl BashOutputTool {
    pub fn new(jobs: Arc<BackgroundJobs>) -> Self {
        Self { jobs }
    }
}

impl Tool for BashOutputTool {
    fn name(&self) -> &str {
        "bash_output"
    }

    fn description(&self) -> &str {
        OUTPUT_DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        BashOutputParams::schema()
    }

    fn execute<'a>(&'a self, args: Args, _ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let BashOutputParams { bash_id, filter } = params::parse(&args)?;
            let filter = match filter.filter(|f| !f.is_empty()) {
                Some(pattern) => {
                    Some(Regex::new(&pattern).map_err(|e| ToolError::new(format!("Invalid filter: {e}")))?)
                }
                None => None,
            };
            let new = self.jobs.read(&bash_id).map_err(ToolError::new)?;
            let output = match &filter {
                Some(filter) => new.output.lines().filter(|l| filter.is_match(l)).collect::<Vec<_>>().join("\n"),
                None => new.output,
            };
            let shown = truncate_tail(&output, TruncationOptions::default());
            let mut text = format!("[{bash_id}: {}]", describe(&new.status));
            if new.dropped > 0 {
                text.push_str(&format!("\n[{} bytes of earlier output were not kept]", new.dropped));
            }
            if shown.truncated {
                text.push_str(&format!("\n[Showing the last {} of {} lines]", shown.output_lines, shown.total_lines));
            }
            text.push('\n');
            text.push_str(if shown.content.is_empty() { "(no new output)" } else { &shown.content });
            let details = json!({"bashId": bash_id, "status": new.status});
            Ok(AgentToolResult::text(text).with_details(details))
        })
    }
}

pub struct KillBashTool {
    jobs: Arc<BackgroundJobs>,
}

impl KillBashTool {
    pub fn new(jobs: Arc<BackgroundJobs>) -> Self {
        Self { jobs }
    }
}

impl Tool for KillBashTool {
    fn name(&self) -> &str {
        "kill_bash"
    }

    fn description(&self) -> &str {
        KILL_DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        KillBashParams::schema()
    }

    fn execute<'a>(&'a self, args: Args, _ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let KillBashParams { shell_id } = params::parse(&args)?;
            let before = self.jobs.kill(&shell_id).await.map_err(ToolError::new)?;
            let text = match before {
                JobStatus::Running => format!("Stopped {shell_id}"),
                other => format!("{shell_id} was not running ({})", describe(&other)),
            };
            Ok(AgentToolResult::text(text).with_details(json!({"shellId": shell_id})))
        })
    }
}
