//! Finding sessions on disk: the `/resume` list, `--continue`'s most recent file, and
//! `--session <id-prefix>` lookup.
//!
//! Listing reads each file once, line by line, and deserializes only what a listing shows: the
//! entry type, the message role and timestamp, and message text only where it is needed (the
//! first user message, or every user/assistant text when the search text is asked for). Tool
//! arguments, results and images are skipped without being built. Files whose first line is not
//! a session header are left out.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::header::SessionHeader;
use crate::id::iso_to_ms;
use crate::load::read_header;
use crate::parse::replace_lone_surrogates;
use crate::paths::sessions_root;

/// One session as a picker shows it (pi's `SessionInfo`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub path: PathBuf,
    /// The header's session id.
    pub id: String,
    /// The header's cwd (empty for old files).
    pub cwd: String,
    /// The last non-empty `session_info` name, trimmed.
    pub name: Option<String>,
    /// The header's `parentSession`.
    pub parent_session_path: Option<String>,
    /// The header's timestamp (ISO-8601).
    pub created: String,
    /// Unix milliseconds of the last user or assistant message (else the header's time, else
    /// the file's mtime).
    pub modified: i64,
    /// `message` entries of every role on every branch.
    pub message_count: u64,
    /// The text of the first user message, or `(no messages)`.
    pub first_message: String,
    /// Every user and assistant text joined with spaces, when asked for
    /// ([`ListOptions::include_text`]).
    pub all_messages_text: Option<String>,
}

/// What a listing reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListOptions {
    /// Fill [`SessionInfo::all_messages_text`] (for search); costs a full read of every text.
    pub include_text: bool,
}

#[derive(Deserialize)]
struct LeanEntry<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    message: Option<LeanMessage<'a>>,
    #[serde(default)]
    name: Option<Value>,
}

#[derive(Deserialize)]
struct LeanMessage<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(default)]
    timestamp: Option<Value>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum LeanContent {
    Text(String),
    Blocks(Vec<LeanBlock>),
}

#[derive(Deserialize)]
struct LeanBlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

/// The text blocks of a message content joined with a space, as pi's listing does.
fn content_text(raw: &RawValue) -> String {
    let parsed = serde_json::from_str::<LeanContent>(raw.get()).or_else(|e| {
        replace_lone_surrogates(raw.get().as_bytes()).map_or(Err(e), |fixed| serde_json::from_slice(&fixed))
    });
    match parsed {
        Ok(LeanContent::Text(s)) => s,
        Ok(LeanContent::Blocks(blocks)) => {
            blocks.into_iter().filter(|b| b.kind == "text").filter_map(|b| b.text).collect::<Vec<_>>().join(" ")
        }
        Err(_) => String::new(),
    }
}

fn file_mtime_ms(path: &Path) -> Option<i64> {
    let modified = fs::metadata(path).ok()?.modified().ok()?;
    let ms = modified.duration_since(UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

/// Reads the listing data of one file; `None` when it is not a session file.
pub fn read_session_info(path: &Path, options: ListOptions) -> Option<SessionInfo> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path).ok()?);
    let mut line = Vec::with_capacity(4096);
    let header = loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            break SessionHeader::parse_line(&line).ok()?;
        }
    };

    let mut name = None;
    let mut message_count = 0u64;
    let mut first_message = String::new();
    let mut texts: Vec<String> = Vec::new();
    let mut last_activity: Option<i64> = None;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Strings the entry is read through may hold JavaScript's lone surrogate escapes.
        let repaired;
        let entry = match serde_json::from_slice::<LeanEntry>(&line) {
            Ok(entry) => entry,
            Err(_) => {
                repaired = replace_lone_surrogates(&line);
                match repaired.as_deref().map(serde_json::from_slice::<LeanEntry>) {
                    Some(Ok(entry)) => entry,
                    _ => continue,
                }
            }
        };
        if entry.kind == "session_info"
            && let Some(n) = entry.name.as_ref().and_then(Value::as_str).map(str::trim)
            && !n.is_empty()
        {
            name = Some(n.to_owned());
        }
        if entry.kind != "message" {
            continue;
        }
        message_count += 1;
        let Some(message) = entry.message else {
            continue;
        };
        let Some(content) = message.content else {
            continue;
        };
        let is_user = message.role == "user";
        if !is_user && message.role != "assistant" {
            continue;
        }
        let activity = match message.timestamp.as_ref().and_then(Value::as_f64) {
            Some(t) => Some(t as i64),
            None => entry.timestamp.as_deref().and_then(iso_to_ms),
        };
        if let Some(t) = activity {
            last_activity = Some(last_activity.map_or(t, |m| m.max(t)));
        }
        if options.include_text || (is_user && first_message.is_empty()) {
            let text = content_text(content);
            if text.is_empty() {
                continue;
            }
            if is_user && first_message.is_empty() {
                first_message.clone_from(&text);
            }
            if options.include_text {
                texts.push(text);
            }
        }
    }

    let modified = last_activity
        .filter(|&t| t > 0)
        .or_else(|| iso_to_ms(&header.timestamp))
        .or_else(|| file_mtime_ms(path))
        .unwrap_or_default();
    Some(SessionInfo {
        path: path.to_path_buf(),
        id: header.id,
        cwd: header.cwd,
        name,
        parent_session_path: header.parent_session,
        created: header.timestamp,
        modified,
        message_count,
        first_message: if first_message.is_empty() { "(no messages)".to_owned() } else { first_message },
        all_messages_text: options.include_text.then(|| texts.join(" ")),
    })
}

/// The `*.jsonl` files directly in `dir` (none if it cannot be read).
fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = fs::read_dir(dir) else {
        return Vec::new();
    };
    read.filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect()
}

/// The project directories under `<agentDir>/sessions`.
fn project_dirs(agent_dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = fs::read_dir(sessions_root(agent_dir)) else {
        return Vec::new();
    };
    read.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect()
}

fn sorted_newest_first(mut sessions: Vec<SessionInfo>) -> Vec<SessionInfo> {
    sessions.sort_by_key(|s| std::cmp::Reverse(s.modified));
    sessions
}

/// The sessions in `dir`, newest (by [`SessionInfo::modified`]) first, without search text.
pub fn list_sessions(dir: &Path) -> Vec<SessionInfo> {
    list_sessions_with(dir, ListOptions::default())
}

/// The sessions in `dir`, newest first.
pub fn list_sessions_with(dir: &Path, options: ListOptions) -> Vec<SessionInfo> {
    let sessions = jsonl_files(dir).iter().filter_map(|p| read_session_info(p, options)).collect();
    sorted_newest_first(sessions)
}

/// The sessions of every project under `agent_dir`, newest first.
pub fn list_all_sessions(agent_dir: &Path, options: ListOptions) -> Vec<SessionInfo> {
    let sessions = project_dirs(agent_dir)
        .iter()
        .flat_map(|d| jsonl_files(d))
        .filter_map(|p| read_session_info(&p, options))
        .collect();
    sorted_newest_first(sessions)
}

/// The session file in `dir` modified last (by file mtime), for `--continue`. Files without a
/// session header are ignored.
pub fn most_recent_session(dir: &Path) -> Option<PathBuf> {
    jsonl_files(dir)
        .into_iter()
        .filter(|p| read_header(p).is_some())
        .filter_map(|p| {
            let mtime = fs::metadata(&p).ok()?.modified().ok()?;
            Some((mtime, p))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, p)| p)
}

/// A session found by id prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundSession {
    pub info: SessionInfo,
    /// Found under another project's directory than the one searched first.
    pub in_other_project: bool,
}

/// The newest session among `files` whose id starts with `prefix`.
fn newest_match(files: impl IntoIterator<Item = PathBuf>, prefix: &str) -> Option<SessionInfo> {
    files
        .into_iter()
        .filter(|p| read_header(p).is_some_and(|h| h.id.starts_with(prefix)))
        .filter_map(|p| read_session_info(&p, ListOptions::default()))
        .max_by(|a, b| a.modified.cmp(&b.modified))
}

/// `--session <prefix>`: the newest session in `dir` whose id starts with `prefix`, else the
/// newest such session of any project under `agent_dir`.
pub fn find_session_by_id_prefix(agent_dir: &Path, dir: &Path, prefix: &str) -> Option<FoundSession> {
    if let Some(info) = newest_match(jsonl_files(dir), prefix) {
        return Some(FoundSession { info, in_other_project: false });
    }
    let elsewhere = project_dirs(agent_dir).into_iter().filter(|d| !same_dir(d, dir)).flat_map(|d| jsonl_files(&d));
    newest_match(elsewhere, prefix).map(|info| FoundSession { info, in_other_project: true })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
