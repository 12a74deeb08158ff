//! The `find` tool: files (and directories, shown with a trailing `/`) whose path matches a glob,
//! relative to the search directory, sorted by path. A pattern without `/` is matched against
//! the file name at any depth (`*.rs`); a pattern with `/` against the whole relative path
//! (`src/**/*.rs`), which the reference's fd invocation silently never matched. The walk follows
//! ripgrep's ignore rules ([`crate::walk`]), so `.gitignore` applies inside and outside git
//! repositories. At most `limit` results (default 1000) and 50 KiB are returned.

use parking_lot::Mutex;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Map, Value, json};

use crate::ToolOptions;
use crate::abort::{aborted, blocking_stoppable};
use crate::args::{self, Args};
use crate::params::{self, FindParams, Parameters};
use crate::path::resolve_to_cwd;
use crate::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, format_size, truncate_head};
use crate::walk::{display_path, walker};

const DESCRIPTION: &str = "Find files by glob pattern. Returns the matching paths relative to the search directory. A pattern without a slash matches file names at any depth ('*.ts'); a pattern with a slash matches the path from the search directory ('src/**/*.spec.ts'). Respects .gitignore. Output stops at 1000 results or 50KB, whichever comes first.";

pub struct FindTool {
    options: ToolOptions,
}

impl FindTool {
    pub fn new(options: ToolOptions) -> Self {
        Self { options }
    }
}

impl Tool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        FindParams::schema()
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let params: FindParams = params::parse(&args)?;
            let request = FindRequest {
                pattern: params.pattern,
                path: params.path,
                limit: params.limit.map_or(1000, args::count).max(1),
            };
            let cwd = self.options.cwd.clone();
            blocking_stoppable(&ctx.cancel, move |stop| request.run(&cwd, stop)).await
        })
    }
}

/// The search a call asks for.
pub struct FindRequest {
    pub pattern: String,
    pub path: Option<String>,
    pub limit: usize,
}

/// How a pattern is matched.
struct PathGlob {
    matcher: GlobMatcher,
    /// Match the relative path rather than the file name.
    full_path: bool,
}

impl PathGlob {
    fn new(pattern: &str) -> Result<Self, ToolError> {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        let full_path = pattern.contains('/');
        let pattern = pattern.trim_end_matches('/');
        let glob = GlobBuilder::new(pattern)
            .literal_separator(full_path)
            .backslash_escape(true)
            .build()
            .map_err(|e| ToolError::new(e.to_string()))?;
        Ok(Self { matcher: glob.compile_matcher(), full_path })
    }

    fn is_match(&self, relative: &str) -> bool {
        if self.full_path {
            self.matcher.is_match(relative)
        } else {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            self.matcher.is_match(name)
        }
    }
}

impl FindRequest {
    /// Runs the search; `stop` is raised when the call is aborted.
    pub fn run(self, cwd: &Path, stop: &AtomicBool) -> Result<AgentToolResult, ToolError> {
        let root = resolve_to_cwd(self.path.as_deref().unwrap_or("."), cwd);
        let meta =
            std::fs::metadata(&root).map_err(|_| ToolError::new(format!("Path not found: {}", root.display())))?;
        if !meta.is_dir() {
            return Err(ToolError::new(format!("Not a directory: {}", root.display())));
        }
        let glob = PathGlob::new(&self.pattern)?;
        let found: Mutex<Vec<String>> = Mutex::new(Vec::new());

        walker(&root, ".fdignore").build_parallel().run(|| {
            let (root, glob, found) = (&root, &glob, &found);
            Box::new(move |entry| {
                if stop.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.depth() == 0 {
                    return WalkState::Continue;
                }
                let relative = display_path(root, entry.path());
                if glob.is_match(&relative) {
                    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                    let shown = if is_dir { format!("{relative}/") } else { relative };
                    found.lock().push(shown);
                }
                WalkState::Continue
            })
        });
        if stop.load(Ordering::Relaxed) {
            return Err(aborted());
        }
        let mut found = found.into_inner();
        Ok(self.format(&mut found))
    }

    fn format(&self, found: &mut Vec<String>) -> AgentToolResult {
        if found.is_empty() {
            return AgentToolResult::text("No files found matching pattern");
        }
        found.sort_unstable_by(|a, b| path_order(a, b));
        let limit_reached = found.len() >= self.limit;
        found.truncate(self.limit);
        let truncation = truncate_head(&found.join("\n"), TruncationOptions::bytes_only());
        let mut text = truncation.content.clone();
        let mut notices = Vec::new();
        let mut details = Map::new();
        if limit_reached {
            notices.push(format!(
                "{} results limit reached. Use limit={} for more, or refine pattern",
                self.limit,
                self.limit.saturating_mul(2)
            ));
            details.insert("resultLimitReached".into(), json!(self.limit));
        }
        if truncation.truncated {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert("truncation".into(), truncation.to_json());
        }
        if !notices.is_empty() {
            text.push_str(&format!("\n\n[{}]", notices.join(". ")));
        }
        let result = AgentToolResult::text(text);
        if details.is_empty() { result } else { result.with_details(Value::Object(details)) }
    }
}

/// Orders `/`-separated relative paths component by component (so `a/b` sorts before `a.rs`
/// the way a directory listing does).
fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    let a = a.trim_end_matches('/').split('/');
    let b = b.trim_end_matches('/').split('/');
    a.cmp(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_without_slash_match_names() {
        let g = PathGlob::new("*.rs").unwrap();
        assert!(g.is_match("src/deep/lib.rs"));
        assert!(g.is_match("main.rs"));
        assert!(!g.is_match("src/main.ts"));
    }

    #[test]
    fn globs_with_slash_match_relative_paths() {
        let g = PathGlob::new("src/**/*.rs").unwrap();
        assert!(g.is_match("src/lib.rs"));
        assert!(g.is_match("src/a/b/c.rs"));
        assert!(!g.is_match("other/src/lib.rs"));
        let g = PathGlob::new("src/*.rs").unwrap();
        assert!(!g.is_match("src/a/lib.rs"));
        let g = PathGlob::new("**/*.json").unwrap();
        assert!(g.is_match("a.json"));
        assert!(g.is_match("x/y/a.json"));
    }

    #[test]
    fn path_order_is_by_component() {
        let mut v = vec!["a.rs", "a/b.rs", "B", "a/"];
        v.sort_by(|a, b| path_order(a, b));
        assert_eq!(v, ["B", "a/", "a/b.rs", "a.rs"]);
    }
}
