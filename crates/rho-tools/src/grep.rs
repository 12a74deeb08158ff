//! The `grep` tool: searches file contents in-process with ripgrep's own crates (the ignore-aware
//! parallel walk, `grep-regex`, `grep-searcher`) and prints `path:line: text` for matches and
//! `path-line- text` for context lines, files in path order so the same search always gives the
//! same answer. At most `limit` matches (default 100) are shown: the walk keeps only files that
//! can still be among the first `limit` in path order and skips everything sorting after them.
//! Lines are cut at 500 characters and the output at 50 KiB, each with its notice.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Map, Value, json};

use crate::ToolOptions;
use crate::abort::{aborted, blocking_stoppable};
use crate::args::{self, Args};
use crate::params::{self, GrepParams, Parameters};
use crate::path::resolve_to_cwd;
use crate::truncate::{
    DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, TruncationOptions, format_size, truncate_head, truncate_line,
};
use crate::walk::{display_path, walker};

const DESCRIPTION: &str = "Search file contents for a pattern (a regular expression, or a literal string with literal=true). Returns the matching lines with their file paths and line numbers. Respects .gitignore. Output stops at 100 matches or 50KB, whichever comes first, and lines longer than 500 characters are shortened.";

pub struct GrepTool {
    options: ToolOptions,
}

impl GrepTool {
    pub fn new(options: ToolOptions) -> Self {
        Self { options }
    }
}

impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        GrepParams::schema()
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let params: GrepParams = params::parse(&args)?;
            let request = GrepRequest {
                pattern: params.pattern,
                path: params.path,
                glob: params.glob,
                ignore_case: params.ignore_case == Some(true),
                literal: params.literal == Some(true),
                context: params.context.map_or(0, args::count),
                limit: params.limit.map_or(100, args::count).max(1),
            };
            let cwd = self.options.cwd.clone();
            blocking_stoppable(&ctx.cancel, move |stop| request.run(&cwd, stop)).await
        })
    }
}

/// The search a call asks for.
pub struct GrepRequest {
    pub pattern: String,
    pub path: Option<String>,
    pub glob: Option<String>,
    pub ignore_case: bool,
    pub literal: bool,
    pub context: usize,
    pub limit: usize,
}

/// One matching line.
struct Hit {
    line_number: u64,
    line: Vec<u8>,
}

/// Files with matches, keeping only those that can be among the first `limit` matches in path
/// order.
struct Found {
    files: BTreeMap<PathBuf, Vec<Hit>>,
    count: usize,
    limit: usize,
}

impl Found {
    fn insert(&mut self, path: PathBuf, hits: Vec<Hit>) {
        self.count += hits.len();
        self.files.insert(path, hits);
        while let Some((_, last)) = self.files.last_key_value() {
            if self.count - last.len() >= self.limit {
                self.count -= last.len();
                self.files.pop_last();
            } else {
                break;
            }
        }
    }

    /// Once `limit` matches are held, paths after the last held file cannot appear.
    fn beyond_cutoff(&self, path: &Path) -> bool {
        self.count >= self.limit && self.files.last_key_value().is_some_and(|(last, _)| path > last.as_path())
    }
}

/// Collects up to `max` matching lines of one file.
struct Collect<'a> {
    hits: &'a mut Vec<Hit>,
    max: usize,
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.hits.push(Hit { line_number: mat.line_number().unwrap_or(0), line: mat.bytes().to_vec() });
        Ok(self.hits.len() < self.max)
    }
}

fn searcher() -> Searcher {
    SearcherBuilder::new().line_number(true).binary_detection(BinaryDetection::quit(b'\x00')).build()
}

fn search_file(searcher: &mut Searcher, matcher: &RegexMatcher, path: &Path, max: usize) -> Vec<Hit> {
    let mut hits = Vec::new();
    let _ = searcher.search_path(matcher, path, Collect { hits: &mut hits, max });
    hits
}

fn lock(found: &Mutex<Found>) -> parking_lot::MutexGuard<'_, Found> {
    found.lock()
}

/// A line's text without its terminator.
fn line_text(bytes: &[u8]) -> String {
    let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
    String::from_utf8_lossy(trimmed).into_owned()
}

impl GrepRequest {
    fn matcher(&self) -> Result<RegexMatcher, ToolError> {
        RegexMatcherBuilder::new()
            .case_insensitive(self.ignore_case)
            .fixed_strings(self.literal)
            .line_terminator(Some(b'\n'))
            .build(&self.pattern)
            .map_err(|e| ToolError::new(e.to_string()))
    }

    /// Runs the search; `stop` is raised when the call is aborted.
    pub fn run(self, cwd: &Path, stop: &AtomicBool) -> Result<AgentToolResult, ToolError> {
        let root = resolve_to_cwd(self.path.as_deref().unwrap_or("."), cwd);
        let meta =
            std::fs::metadata(&root).map_err(|_| ToolError::new(format!("Path not found: {}", root.display())))?;
        let matcher = self.matcher()?;
        let found = Mutex::new(Found { files: BTreeMap::new(), count: 0, limit: self.limit });

        if meta.is_dir() {
            self.walk(&root, &matcher, &found, stop)?;
        } else {
            let hits = search_file(&mut searcher(), &matcher, &root, self.limit);
            if !hits.is_empty() {
                found.lock().insert(root.clone(), hits);
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Err(aborted());
        }
        let found = found.into_inner();
        Ok(self.format(&root, meta.is_dir(), found))
    }

    fn walk(
        &self,
        root: &Path,
        matcher: &RegexMatcher,
        found: &Mutex<Found>,
        stop: &AtomicBool,
    ) -> Result<(), ToolError> {
        let mut builder = walker(root, ".rgignore");
        if let Some(glob) = &self.glob {
            let mut overrides = OverrideBuilder::new(root);
            overrides.add(glob).map_err(|e| ToolError::new(e.to_string()))?;
            builder.overrides(overrides.build().map_err(|e| ToolError::new(e.to_string()))?);
        }
        let limit = self.limit;
        builder.build_parallel().run(|| {
            let mut searcher = searcher();
            Box::new(move |entry| {
                if stop.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let path = entry.path();
                if lock(found).beyond_cutoff(path) {
                    return WalkState::Skip;
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let hits = search_file(&mut searcher, matcher, path, limit);
                if !hits.is_empty() {
                    lock(found).insert(path.to_path_buf(), hits);
                }
                WalkState::Continue
            })
        });
        Ok(())
    }

    fn format(&self, root: &Path, root_is_dir: bool, found: Found) -> AgentToolResult {
        if found.count == 0 {
            return AgentToolResult::text("No matches found");
        }
        let mut out: Vec<String> = Vec::new();
        let mut lines_truncated = false;
        let mut shown = 0usize;
        let mut push = |out: &mut Vec<String>, display: &str, sep: char, n: u64, text: &str| {
            let (text, cut) = truncate_line(text, GREP_MAX_LINE_LENGTH);
            lines_truncated |= cut;
            out.push(format!("{display}{sep}{n}{sep} {text}"));
        };
        'files: for (path, hits) in &found.files {
            let display = if root_is_dir {
                display_path(root, path)
            } else {
                path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
            };
            let file_lines: Option<Vec<String>> = (self.context > 0).then(|| {
                std::fs::read(path)
                    .map(|bytes| {
                        String::from_utf8_lossy(&bytes)
                            .replace("\r\n", "\n")
                            .replace('\r', "\n")
                            .split('\n')
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default()
            });
            for hit in hits {
                if shown >= self.limit {
                    break 'files;
                }
                shown += 1;
                let n = hit.line_number;
                match &file_lines {
                    None => push(&mut out, &display, ':', n, &line_text(&hit.line)),
                    Some(lines) if lines.is_empty() => {
                        out.push(format!("{display}:{n}: (unable to read file)"));
                    }
                    Some(lines) => {
                        let total = lines.len() as u64;
                        let context = self.context as u64;
                        let start = n.saturating_sub(context).max(1);
                        let end = n.saturating_add(context).min(total);
                        for current in start..=end {
                            let text = lines
                                .get(usize::try_from(current - 1).unwrap_or(usize::MAX))
                                .map_or("", String::as_str);
                            let sep = if current == n { ':' } else { '-' };
                            push(&mut out, &display, sep, current, text);
                        }
                    }
                }
            }
        }

        let truncation = truncate_head(&out.join("\n"), TruncationOptions::bytes_only());
        let mut text = truncation.content.clone();
        let mut notices = Vec::new();
        let mut details = Map::new();
        if found.count >= self.limit {
            notices.push(format!(
                "{} matches limit reached. Use limit={} for more, or refine pattern",
                self.limit,
                self.limit.saturating_mul(2)
            ));
            details.insert("matchLimitReached".into(), json!(self.limit));
        }
        if truncation.truncated {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert("truncation".into(), truncation.to_json());
        }
        if lines_truncated {
            notices
                .push(format!("Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"));
            details.insert("linesTruncated".into(), json!(true));
        }
        if !notices.is_empty() {
            text.push_str(&format!("\n\n[{}]", notices.join(". ")));
        }
        let result = AgentToolResult::text(text);
        if details.is_empty() { result } else { result.with_details(Value::Object(details)) }
    }
}
