//! The session list of `/resume` and `rho -r`: this directory's sessions or every project's
//! (Tab switches between them, as in pi), newest first, searchable.

use std::path::Path;

use rho_session::{ListOptions, SessionInfo};

use super::select::{Select, SelectItem};

const HERE: &str = "Resume a session (this directory) · Tab: all projects";
const ALL: &str = "Resume a session (all projects) · Tab: this directory";

/// The list opened on this directory's sessions, or on every project's when this directory has
/// none; `None` when there are no sessions at all.
pub fn list(dir: &Path, agent_dir: &Path) -> Option<Select> {
    let here = items(rho_session::list_sessions(dir), false);
    if !here.is_empty() {
        return Some(Select::new(HERE, here, 0).with_tab());
    }
    let all = items(rho_session::list_all_sessions(agent_dir, ListOptions::default()), true);
    (!all.is_empty()).then(|| Select::new(ALL, all, 0).with_tab())
}

/// Tab: shows the other scope (the search stays).
pub fn switch_scope(select: &mut Select, dir: &Path, agent_dir: &Path) {
    if select.title() == HERE {
        select.replace(ALL, items(rho_session::list_all_sessions(agent_dir, ListOptions::default()), true));
    } else {
        select.replace(HERE, items(rho_session::list_sessions(dir), false));
    }
}

/// One row per session: its name (else its first message), when, how long, and for the list
/// of every project the directory it was in.
fn items(sessions: Vec<SessionInfo>, with_cwd: bool) -> Vec<SelectItem> {
    sessions
        .into_iter()
        .map(|info| {
            let first: String = info.first_message.lines().next().unwrap_or_default().chars().take(60).collect();
            let label = info.name.clone().unwrap_or(first);
            let when = time::OffsetDateTime::from_unix_timestamp(info.modified / 1000)
                .ok()
                .and_then(|t| t.format(time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]")).ok())
                .unwrap_or_default();
            let mut detail = format!("{when} · {} messages", info.message_count);
            if with_cwd && !info.cwd.is_empty() {
                detail.push_str(" · ");
                detail.push_str(&info.cwd);
            }
            SelectItem { label, detail, value: info.path.display().to_string() }
        })
        .collect()
}
