//! The self-contained HTML export of a session (`/export`, RPC `export_html`, CLI `--export`).
//!
//! One file, nothing fetched: the CSS and the viewer script are inlined, markdown is rendered
//! and code is highlighted here, at export time (pulldown-cmark, syntect), so the page works
//! offline and needs no CDN. Every entry of every branch is rendered once, in file order; the
//! entries of the current branch are placed in the page, the others wait in a hidden store, and
//! the script moves a branch into view when its node in the sidebar tree is clicked. Without
//! the script the page still shows the current branch.
//!
//! Everything that comes from the session is escaped; raw HTML inside markdown is shown as
//! text, and a Content-Security-Policy admits only the page's own script (by hash), inline
//! styles and `data:` images. Nothing beyond the session file and the options is written: no
//! API key or model header reaches the page.
//!
//! Rendering is linear in the size of the session: the tree is built from one parent index,
//! and the syntax definitions are loaded once per process, only when a fenced block names a
//! language.

mod entry;
mod error;
mod escape;
mod fragments;
pub mod highlight;
mod markdown;
mod message;
mod page;
mod stats;
mod tool;
mod tree;

use std::path::{Path, PathBuf};

use rho_session::{Session, SessionError};
use serde::Serialize;

pub use error::ExportError;

/// A tool as the export lists it: what the model was offered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    /// The tool's JSON Schema.
    pub parameters: serde_json::Value,
}

/// What the export shows besides the session file. The CLI export knows neither.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportOptions<'a> {
    pub system_prompt: Option<&'a str>,
    pub tools: &'a [ToolInfo],
}

/// `rho-session-<session file basename without .jsonl>.html`, relative (the current directory).
pub fn default_output_path(session_file: &Path) -> PathBuf {
    let name = session_file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    PathBuf::from(format!("rho-session-{stem}.html"))
}

/// Reads `session_file`, renders it and writes the page to `output` (default:
/// [`default_output_path`]). Returns the path written.
pub fn export_session_file(
    session_file: &Path,
    output: Option<&Path>,
    options: &ExportOptions,
) -> Result<PathBuf, ExportError> {
    let metadata = match std::fs::metadata(session_file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ExportError::FileNotFound { path: session_file.to_path_buf() });
        }
        Err(source) => return Err(ExportError::Io { action: "Cannot read", path: session_file.to_path_buf(), source }),
    };
    if metadata.len() == 0 {
        return Err(ExportError::NothingToExport);
    }
    let session = match Session::open(session_file) {
        Ok((session, warnings)) => {
            for warning in warnings {
                tracing::warn!("{}: {warning}", session_file.display());
            }
            session
        }
        Err(SessionError::NotFound { path }) => return Err(ExportError::FileNotFound { path }),
        Err(e) => return Err(ExportError::Session(e)),
    };
    write_page(&session, session_file, output, options)
}

/// Exports an open session (the RPC `export_html` command): refuses an in-memory session and
/// one whose file is not on disk yet, then renders from memory (which mirrors the file).
pub fn export_session(
    session: &Session,
    output: Option<&Path>,
    options: &ExportOptions,
) -> Result<PathBuf, ExportError> {
    let Some(file) = session.session_file() else {
        return Err(ExportError::InMemorySession);
    };
    if !file.exists() {
        return Err(ExportError::NothingToExport);
    }
    write_page(session, file, output, options)
}

/// Renders an open session: all entries, every branch, the current leaf marked.
pub fn render_html(session: &Session, options: &ExportOptions) -> String {
    page::render_page(session, options)
}

fn write_page(
    session: &Session,
    session_file: &Path,
    output: Option<&Path>,
    options: &ExportOptions,
) -> Result<PathBuf, ExportError> {
    if session.entries().is_empty() {
        return Err(ExportError::NothingToExport);
    }
    let path = output.map_or_else(|| default_output_path(session_file), Path::to_path_buf);
    let html = render_html(session, options);
    // The user's alone, as the session it shows.
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)?
            .write_all(html.as_bytes())
    };
    write().map_err(|source| ExportError::Io { action: "Cannot write", path: path.clone(), source })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_output_path_drops_the_jsonl_extension() {
        let p = default_output_path(Path::new("/s/2026-03-15T10-00-00-000Z_abc.jsonl"));
        assert_eq!(p, PathBuf::from("rho-session-2026-03-15T10-00-00-000Z_abc.html"));
        assert_eq!(default_output_path(Path::new("notes.txt")), PathBuf::from("rho-session-notes.txt.html"));
    }
}
