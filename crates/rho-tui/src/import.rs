//! `/import <path.jsonl>` (pi 1.6): a session file from elsewhere, once the user confirms,
//! copied into the current session's folder (its name kept, `-1`, `-2`… when taken) and opened
//! there as `/resume` opens one; the original is left as it is.

use std::path::{Path, PathBuf};

use ratatui::text::Line;
use rho_rpc::UiMethod;
use tokio::sync::oneshot;

use super::app::{App, AppEvent};
use super::blocks;
use super::transcript::Entry;
use rho_coding_agent::ui::UiAnswer;

impl App {
    /// `/import <path>`.
    pub fn import_session(&mut self, args: &str) {
        if args.is_empty() {
            self.push([blocks::error("Usage: /import <path.jsonl>")]);
            return;
        }
        let home = dirs::home_dir();
        let source = self.session.cwd().join(rho_coding_agent::config::expand_tilde(args, home.as_deref()));
        let (answer_tx, answer_rx) = oneshot::channel::<UiAnswer>();
        let message = format!("Replace current session with {args}?");
        let confirm = UiMethod::Confirm { title: "Import session".to_owned(), message, timeout: None };
        let _ = self.tx.send(AppEvent::Dialog(confirm, answer_tx));
        let (tx, session, shown) = (self.tx.clone(), self.session.clone(), args.to_owned());
        tokio::spawn(async move {
            if !answer_rx.await.is_ok_and(|answer| answer.confirmed()) {
                let _ = tx.send(AppEvent::Lines(vec![blocks::notice("Import cancelled")]));
                return;
            }
            let folder = session.session_file().and_then(|file| file.parent().map(Path::to_path_buf));
            let copied = match folder {
                Some(folder) => copy_into(&source, &folder),
                None => Err("this session is not saved to a file (--no-session)".to_owned()),
            };
            let entries = match copied {
                Ok(path) => match session.switch_session(&path).await {
                    Ok(()) => {
                        let imported = blocks::notice(&format!("── Session imported from: {shown} ──"));
                        let mut entries = vec![Entry::Lines(vec![Line::default(), imported])];
                        entries.extend(super::replay::tail(&session.messages()));
                        entries
                    }
                    Err(e) => vec![Entry::Lines(vec![blocks::error(&format!("Failed to import session: {e}"))])],
                },
                Err(e) => vec![Entry::Lines(vec![blocks::error(&format!("Failed to import session: {e}"))])],
            };
            let _ = tx.send(AppEvent::Entries(entries));
        });
    }
}

/// `source` copied into `folder` under its own name, or that name with `-1`, `-2`… when taken;
/// a file already in the folder is used where it is.
fn copy_into(source: &Path, folder: &Path) -> Result<PathBuf, String> {
    if !source.is_file() {
        return Err(format!("Session file not found: {}", source.display()));
    }
    let name = source.file_name().ok_or_else(|| format!("{} names no file", source.display()))?;
    let mut target = folder.join(name);
    let same = |a: &Path, b: &Path| a.canonicalize().ok().zip(b.canonicalize().ok()).is_some_and(|(a, b)| a == b);
    if same(&target, source) {
        return Ok(target);
    }
    let stem = Path::new(name).file_stem().unwrap_or_default().to_string_lossy().into_owned();
    let extension = Path::new(name).extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    let mut suffix = 1;
    loop {
        let created = std::fs::OpenOptions::new().write(true).create_new(true).open(&target);
        match created {
            Ok(mut file) => {
                let mut from = std::fs::File::open(source).map_err(|e| format!("{}: {e}", source.display()))?;
                std::io::copy(&mut from, &mut file).map_err(|e| format!("{}: {e}", target.display()))?;
                return Ok(target);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                target = folder.join(format!("{stem}-{suffix}{extension}"));
                suffix += 1;
            }
            Err(e) => return Err(format!("{}: {e}", target.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_takes_a_free_name_and_a_file_already_there_stays() {
        let dir = tempfile::tempdir().unwrap();
        let (elsewhere, folder) = (dir.path().join("elsewhere"), dir.path().join("sessions"));
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::create_dir_all(&folder).unwrap();
        let source = elsewhere.join("s.jsonl");
        std::fs::write(&source, "{}\n").unwrap();
        assert_eq!(copy_into(&source, &folder).unwrap(), folder.join("s.jsonl"));
        assert_eq!(copy_into(&source, &folder).unwrap(), folder.join("s-1.jsonl"));
        assert_eq!(copy_into(&folder.join("s.jsonl"), &folder).unwrap(), folder.join("s.jsonl"));
        assert!(
            copy_into(&elsewhere.join("missing.jsonl"), &folder).unwrap_err().starts_with("Session file not found")
        );
    }
}
