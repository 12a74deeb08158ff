//! `/jobs`: the commands the model started in the background (`bash` with
//! `run_in_background`), each with its id, where it stands and for how long, and its command.

use ratatui::text::Line;
use rho_tools::background::{JobInfo, JobStatus};

use super::app::App;
use super::blocks;

/// One job's line.
fn line(job: &JobInfo) -> String {
    let status = match &job.status {
        JobStatus::Running => "running".to_owned(),
        JobStatus::Exited { exit_code: Some(code) } => format!("exited {code}"),
        JobStatus::Exited { exit_code: None } => "ended by a signal".to_owned(),
        JobStatus::Killed => "killed".to_owned(),
        JobStatus::Failed { error } => format!("failed: {error}"),
    };
    let seconds = job.running_for_ms / 1000;
    format!("{}  {status}  {seconds}s  {}", job.id, job.command)
}

impl App {
    /// `/jobs`.
    pub fn jobs_command(&mut self) {
        let jobs = self.session.background_jobs();
        let mut lines: Vec<Line<'static>> = vec![Line::default()];
        if jobs.is_empty() {
            lines.push(blocks::notice("No background commands"));
        } else {
            lines.push(blocks::notice("Background commands:"));
            lines.extend(jobs.iter().map(|job| blocks::notice(&format!("  {}", line(job)))));
        }
        self.push(lines);
    }
}
