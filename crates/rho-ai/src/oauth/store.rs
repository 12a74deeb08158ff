//! `auth.json` as pi writes it: one JSON object, an entry per provider, pretty-printed with two
//! spaces; an OAuth entry is `{"type": "oauth", "refresh", "access", "expires": <ms>, ...}`.
//!
//! rho changes one entry at a time and keeps every other entry (and the order of the keys) as it
//! found them. It writes a temporary file with mode 0600 next to the real one and renames it over
//! it, so a reader sees the old file or the new one, never half of one. Callers hold the
//! [`AuthFileLock`](super::lock::AuthFileLock) around read-change-write.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The stored credentials of one login.
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthCredentials {
    pub access: String,
    pub refresh: String,
    /// When `access` stops being used, in ms since the epoch (the margin already taken off).
    pub expires: i64,
    /// The provider's other fields (`accountId`, `enterpriseUrl`), kept as they are.
    pub extra: Map<String, Value>,
}

impl OAuthCredentials {
    /// The credentials in an `oauth` entry; `None` for any other entry.
    pub fn from_entry(entry: &Value) -> Option<Self> {
        let object = entry.as_object()?;
        if object.get("type").and_then(Value::as_str) != Some("oauth") {
            return None;
        }
        let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
        let expires = object.get("expires").and_then(Value::as_f64)? as i64;
        let extra = object
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "type" | "access" | "refresh" | "expires"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Some(Self { access: text("access")?, refresh: text("refresh")?, expires, extra })
    }

    /// The entry pi writes: `type` first, then the credentials.
    pub fn to_entry(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("type".into(), Value::from("oauth"));
        entry.insert("refresh".into(), Value::from(self.refresh.clone()));
        entry.insert("access".into(), Value::from(self.access.clone()));
        entry.insert("expires".into(), Value::from(self.expires));
        entry.extend(self.extra.clone());
        Value::Object(entry)
    }

    /// Whether `access` is still to be used at `now_ms`.
    pub fn is_fresh(&self, now_ms: i64) -> bool {
        now_ms < self.expires
    }
}

/// Why `auth.json` could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a JSON object of provider entries: {problem}", path.display())]
    Parse { path: PathBuf, problem: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The file's entries; empty when it does not exist or is blank (as pi reads it).
pub fn read(path: &Path) -> Result<Map<String, Value>, StoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => return Err(StoreError::Read { path: path.to_owned(), source }),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(entries)) => Ok(entries),
        Ok(_) => Err(StoreError::Parse { path: path.to_owned(), problem: "the top level is not an object".into() }),
        // serde's message names the line and column, never the content.
        Err(e) => Err(StoreError::Parse { path: path.to_owned(), problem: e.to_string() }),
    }
}

/// Replaces the file with `entries`, atomically, mode 0600. A symlinked file is written where
/// the link points, so the link stays.
pub fn write(path: &Path, entries: &Map<String, Value>) -> Result<(), StoreError> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let error = |source| StoreError::Write { path: target.clone(), source };
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    create_private_dir(dir).map_err(error)?;
    let mut text = serde_json::to_string_pretty(entries).map_err(|e| error(std::io::Error::other(e)))?;
    text.push('\n');
    let file_name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "auth.json".into());
    let temp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let written = (|| {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, &target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(error)
}

/// Makes `dir` (mode 0700, as pi makes the agent directory) when it is missing.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn an_entry_round_trips_with_its_extra_fields() {
        let entry = serde_json::json!({"type": "oauth", "refresh": "r", "access": "a", "expires": 1_764_000_000_000_i64, "accountId": "acc"});
        let creds = OAuthCredentials::from_entry(&entry).unwrap();
        assert_eq!(creds.extra.get("accountId"), Some(&Value::from("acc")));
        assert_eq!(creds.to_entry(), entry);
        assert!(OAuthCredentials::from_entry(&serde_json::json!({"type": "api_key", "key": "k"})).is_none());
        assert!(creds.is_fresh(1_763_999_999_999) && !creds.is_fresh(1_764_000_000_000));
    }

    #[test]
    fn writes_replace_the_file_with_mode_0600_and_keep_key_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent").join("auth.json");
        assert!(read(&path).unwrap().is_empty());
        let mut entries = Map::new();
        entries.insert("zeta".into(), serde_json::json!({"type": "api_key", "key": "z"}));
        entries.insert("alpha".into(), serde_json::json!({"type": "api_key", "key": "a"}));
        write(&path, &entries).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.find("zeta").unwrap() < text.find("alpha").unwrap(), "{text}");
        assert!(text.contains("\n  \"zeta\": {\n    \"type\""), "two-space indent as pi: {text}");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(read(&path).unwrap(), entries);
        assert_eq!(std::fs::read_dir(path.parent().unwrap()).unwrap().count(), 1, "no temporary file left");
    }
}
