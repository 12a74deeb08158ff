//! The `ls` tool: a directory's entries sorted case-insensitively (see [`crate::collate`]),
//! dotfiles included, directories marked with a trailing `/` (symlinks followed; broken ones
//! left out). No ignore rules apply. At most `limit` entries (default 500) and 50 KiB.

use std::path::Path;

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Map, Value, json};

use crate::ToolOptions;
use crate::abort::blocking;
use crate::args::{self, Args};
use crate::collate;
use crate::os_error;
use crate::params::{self, LsParams, Parameters};
use crate::path::resolve_to_cwd;
use crate::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, format_size, truncate_head};

const DESCRIPTION: &str = "List a directory's contents, sorted alphabetically, with a '/' after directory names. Dotfiles are included. Output stops at 500 entries or 50KB, whichever comes first.";

pub struct LsTool {
    options: ToolOptions,
}

impl LsTool {
    pub fn new(options: ToolOptions) -> Self {
        Self { options }
    }
}

impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        LsParams::schema()
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let LsParams { path, limit } = params::parse(&args)?;
            let limit = limit.map_or(500, args::count).max(1);
            let dir = resolve_to_cwd(path.as_deref().unwrap_or("."), &self.options.cwd);
            blocking(&ctx.cancel, move || list(&dir, limit)).await
        })
    }
}

fn list(dir: &Path, limit: usize) -> Result<AgentToolResult, ToolError> {
    let meta = std::fs::metadata(dir).map_err(|_| ToolError::new(format!("Path not found: {}", dir.display())))?;
    if !meta.is_dir() {
        return Err(ToolError::new(format!("Not a directory: {}", dir.display())));
    }
    let read = std::fs::read_dir(dir)
        .map_err(|e| ToolError::new(format!("Cannot read directory: {}", os_error::describe(&e, "scandir", dir))))?;
    let mut names: Vec<String> =
        read.filter_map(Result::ok).map(|entry| entry.file_name().to_string_lossy().into_owned()).collect();
    names.sort_by(|a, b| collate::compare(a, b));

    let mut results: Vec<String> = Vec::new();
    let mut limit_reached = false;
    for name in &names {
        if results.len() >= limit {
            limit_reached = true;
            break;
        }
        let Ok(meta) = std::fs::metadata(dir.join(name)) else {
            continue;
        };
        results.push(if meta.is_dir() { format!("{name}/") } else { name.clone() });
    }
    if results.is_empty() {
        return Ok(AgentToolResult::text("(empty directory)"));
    }

    let truncation = truncate_head(&results.join("\n"), TruncationOptions::bytes_only());
    let mut text = truncation.content.clone();
    let mut notices = Vec::new();
    let mut details = Map::new();
    if limit_reached {
        notices.push(format!("{limit} entries limit reached. Use limit={} for more", limit.saturating_mul(2)));
        details.insert("entryLimitReached".into(), json!(limit));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert("truncation".into(), truncation.to_json());
    }
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let result = AgentToolResult::text(text);
    Ok(if details.is_empty() { result } else { result.with_details(Value::Object(details)) })
}
