//! `/share` (pi 1.6's): with Radius authentication, the branch as a Radius artifact (see the
//! core's `share`); otherwise the session exported as HTML into a private GitHub gist with the
//! GitHub CLI (`gh gist create --public=false`), answered with the viewer link
//! (`PI_SHARE_VIEWER_URL`, by default pi's session viewer, then `#<gist id>`) and the gist's own.
//! `sessionShareDestination` (`auto`, `gist` or `radius`) forces one of them.

use std::process::Stdio;

use ratatui::text::Line;
use tokio::process::Command;

use super::app::App;
use super::blocks;

/// pi's session viewer, which shows a gist's HTML.
const DEFAULT_VIEWER: &str = "https://pi.dev/session/";

impl App {
    /// `/share`.
    pub fn share_command(&mut self) {
        let session = self.session.clone();
        let report = self.reporter();
        self.status = Some("Sharing…".to_owned());
        tokio::spawn(async move {
            let lines = match share(&session).await {
                Ok(lines) => lines,
                Err(message) => vec![blocks::error(&message)],
            };
            let mut out = vec![Line::default()];
            out.extend(lines);
            report(out);
        });
    }
}

/// The lines `/share` answers with, or the error it reports.
async fn share(session: &rho_coding_agent::AgentSession) -> Result<Vec<Line<'static>>, String> {
    let destination = session.settings().get_string("sessionShareDestination").unwrap_or_default();
    if destination != "gist" {
        match session.share_to_radius().await? {
            Some(address) => return Ok(vec![blocks::notice(&format!("Share URL: {address}"))]),
            None if destination == "radius" => {
                return Err("Radius authentication is not configured. Run '/login radius' first.".to_owned());
            }
            None => {}
        }
    }
    gist(session).await
}

/// A private gist of the session's HTML export.
async fn gist(session: &rho_coding_agent::AgentSession) -> Result<Vec<Line<'static>>, String> {
    let dir = tempfile::Builder::new()
        .prefix("rho-share-")
        .tempdir()
        .map_err(|e| format!("Failed to export session: {e}"))?;
    let file = dir.path().join("session.html");
    session.export_html(Some(&file)).map_err(|e| format!("Failed to export session: {e}"))?;
    let logged_in = Command::new("gh")
        .args(["auth", "status"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .status()
        .await
        .map_err(|_| "GitHub CLI (gh) is not installed. Install it from https://cli.github.com/".to_owned())?;
    if !logged_in.success() {
        return Err("GitHub CLI is not logged in. Run 'gh auth login' first.".to_owned());
    }
    let created = Command::new("gh")
        .args(["gist", "create", "--public=false"])
        .arg(&file)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("Failed to create gist: {e}"))?;
    if !created.status.success() {
        let said = String::from_utf8_lossy(&created.stderr).trim().to_owned();
        return Err(format!("Failed to create gist: {}", if said.is_empty() { "Unknown error" } else { &said }));
    }
    let gist_url = String::from_utf8_lossy(&created.stdout).trim().to_owned();
    let gist_id =
        gist_url.rsplit('/').next().filter(|id| !id.is_empty()).ok_or("Failed to parse gist ID from gh output")?;
    let viewer = std::env::var("PI_SHARE_VIEWER_URL").ok().filter(|v| !v.is_empty());
    let preview = format!("{}#{gist_id}", viewer.as_deref().unwrap_or(DEFAULT_VIEWER));
    Ok(vec![blocks::notice(&format!("Share URL: {preview}")), blocks::notice(&format!("Gist: {gist_url}"))])
}
