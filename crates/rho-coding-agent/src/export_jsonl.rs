//! `/export <file>.jsonl` (pi 1.6): the current branch as a session file of its own, a header
//! (the session's id and cwd, the current format version, the time of the export) and the
//! branch's entries, each chained to the one before it (the first to none), so the file opens as
//! a linear session in pi and rho.

use std::path::{Path, PathBuf};

use rho_session::{CURRENT_VERSION, Session};
use serde_json::{Value, json};

/// The branch of `session` as JSONL.
pub fn branch_jsonl(session: &Session) -> String {
    let header = json!({
        "type": "session",
        "version": CURRENT_VERSION,
        "id": session.session_id(),
        "timestamp": rho_session::now_iso(),
        "cwd": session.cwd(),
    });
    let mut out = format!("{header}\n");
    let mut parent = Value::Null;
    for entry in session.branch_entries() {
        let Ok(mut value) = serde_json::to_value(entry) else { continue };
        let id = value.get("id").cloned().unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.insert("parentId".into(), std::mem::replace(&mut parent, id));
        }
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

/// Writes the branch of `session` to `output` (its folder made when missing); the path written.
pub fn export_branch(session: &Session, output: &Path) -> Result<PathBuf, String> {
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(output, branch_jsonl(session)).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    Ok(output.to_owned())
}
