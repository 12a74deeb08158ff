//! Changing one key of the global settings file, leaving everything else in it as it was.
//!
//! The file is read afresh, the key is changed in every spelling it already has there (nested
//! `{"compaction":{"enabled":…}}` or dotted `"compaction.enabled"`), or added in pi's nested
//! form when it has none, and the result is written to a temporary file in the same directory
//! and renamed over the old one, so a crash never leaves half a file. A file that is not valid
//! JSON is never overwritten: the user's text would be lost.

use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value};

use super::diagnostic::show_value;
use super::flatten::flatten_into;
use super::{Settings, SettingsError, schema};

impl Settings {
    /// Sets `key` to `value` in the global settings file and in these settings (`null` removes
    /// the key). Project files and `--setting` overrides still take precedence in memory, as
    /// they do when the file is next loaded.
    pub fn set_global(&mut self, key: &str, value: Value) -> Result<(), SettingsError> {
        if let Some(def) = schema::lookup(key).filter(|_| !value.is_null()) {
            def.kind.check(&value).map_err(|expected| SettingsError::InvalidValue {
                key: key.to_owned(),
                expected,
                found: show_value(&value),
            })?;
        }
        if let Some(path) = self.global_file.clone() {
            write_key(&path, key, &value)?;
        }
        self.global.remove(key);
        if !value.is_null() {
            flatten_into(key, value, &mut self.global);
        }
        self.recompute();
        Ok(())
    }
}

/// Read-modify-write of one key in the JSON object file at `path` (created with its directory
/// when missing).
pub(crate) fn write_key(path: &Path, key: &str, value: &Value) -> Result<(), SettingsError> {
    let mut object = read_object(path)?;
    let segments: Vec<&str> = key.split('.').collect();
    let updated = update_spellings(&mut object, &segments, value);
    if updated == 0 && !value.is_null() {
        insert_nested(&mut object, &segments, value.clone());
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(object))
        .map_err(|e| SettingsError::Write { path: path.to_path_buf(), source: std::io::Error::other(e) })?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

fn read_object(path: &Path) -> Result<Map<String, Value>, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(SettingsError::Read { path: path.to_path_buf(), source });
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(SettingsError::NotAnObject { path: path.to_path_buf() }),
        Err(source) => Err(SettingsError::Unparsable { path: path.to_path_buf(), source }),
    }
}

/// Sets (or with `null` removes) every existing spelling of the key `segments` in `object`;
/// returns how many there were.
fn update_spellings(object: &mut Map<String, Value>, segments: &[&str], value: &Value) -> usize {
    let mut count = 0;
    for split in 1..=segments.len() {
        let name = segments[..split].join(".");
        if split == segments.len() {
            if object.contains_key(&name) {
                count += 1;
                if value.is_null() {
                    object.shift_remove(&name);
                } else {
                    object.insert(name, value.clone());
                }
            }
        } else if let Some(Value::Object(child)) = object.get_mut(&name) {
            count += update_spellings(child, &segments[split..], value);
        }
    }
    count
}

/// Adds the key in nested form, descending existing objects; where a non-object value is in
/// the way, the rest of the key is written dotted at that level.
fn insert_nested(object: &mut Map<String, Value>, segments: &[&str], value: Value) {
    let [first, rest @ ..] = segments else {
        return;
    };
    if rest.is_empty() {
        object.insert((*first).to_owned(), value);
        return;
    }
    let child = object.entry((*first).to_owned()).or_insert_with(|| Value::Object(Map::new()));
    match child {
        Value::Object(child) => insert_nested(child, rest, value),
        _ => {
            object.insert(segments.join("."), value);
        }
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SettingsError> {
    let err = |source: std::io::Error| SettingsError::Write { path: path.to_path_buf(), source };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(err)?;
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn updates_every_existing_spelling() {
        let mut o = obj(json!({
            "compaction": {"enabled": true, "reserveTokens": 1},
            "compaction.enabled": true,
            "theme": "dark"
        }));
        let n = update_spellings(&mut o, &["compaction", "enabled"], &json!(false));
        assert_eq!(n, 2);
        assert_eq!(
            Value::Object(o),
            json!({
                "compaction": {"enabled": false, "reserveTokens": 1},
                "compaction.enabled": false,
                "theme": "dark"
            })
        );
    }

    #[test]
    fn inserts_nested_when_absent() {
        let mut o = obj(json!({"task": {"eager": false}}));
        insert_nested(&mut o, &["task", "isolation", "mode"], json!("worktree"));
        assert_eq!(Value::Object(o), json!({"task": {"eager": false, "isolation": {"mode": "worktree"}}}));
    }

    #[test]
    fn inserts_dotted_where_a_leaf_is_in_the_way() {
        let mut o = obj(json!({"todo": {"reminders": true}}));
        insert_nested(&mut o, &["todo", "reminders", "max"], json!(5));
        assert_eq!(Value::Object(o), json!({"todo": {"reminders": true, "reminders.max": 5}}));
    }

    #[test]
    fn null_removes() {
        let mut o = obj(json!({"a": {"b": 1, "c": 2}, "a.b": 3}));
        update_spellings(&mut o, &["a", "b"], &Value::Null);
        assert_eq!(Value::Object(o), json!({"a": {"c": 2}}));
    }
}
