//! Bringing version-1 and version-2 files up to version 3, in memory.
//!
//! * v1 → v2: v1 files are a linear list without ids. Every entry gets a fresh id and the
//!   previous entry as parent; a compaction's `firstKeptEntryIndex` (an index into the parsed
//!   lines, header = 0) becomes `firstKeptEntryId`.
//! * v2 → v3: the `hookMessage` message role is renamed `custom`.
//!
//! The file itself is not touched here; [`crate::Session`] persists the result (atomically, with
//! a backup) only when something is appended.

use std::collections::HashSet;

use serde_json::Value;

use crate::header::CURRENT_VERSION;
use crate::id::EntryId;

/// Migrates `lines` (the header's version is `from`; `lines` are the parsed lines after the
/// header, in file order, so `lines[i]` has file-entry index `i + 1`).
pub(crate) fn migrate(from: u32, lines: &mut [Value]) {
    if from >= CURRENT_VERSION {
        return;
    }
    if from < 2 {
        v1_to_v2(lines);
    }
    v2_to_v3(lines);
}

fn v1_to_v2(lines: &mut [Value]) {
    let mut taken: HashSet<String> = HashSet::new();
    let mut ids: Vec<Option<String>> = Vec::with_capacity(lines.len());
    let mut previous: Option<String> = None;
    for line in lines.iter_mut() {
        let Some(obj) = line.as_object_mut() else {
            ids.push(None);
            continue;
        };
        if obj.get("type").and_then(Value::as_str) == Some("session") {
            ids.push(None);
            continue;
        }
        let id = EntryId::generate(|s| taken.contains(s)).into_string();
        taken.insert(id.clone());
        obj.insert("id".to_owned(), Value::String(id.clone()));
        obj.insert("parentId".to_owned(), previous.clone().map_or(Value::Null, Value::String));
        previous = Some(id.clone());
        ids.push(Some(id));
    }
    for line in lines.iter_mut() {
        let Some(obj) = line.as_object_mut() else {
            continue;
        };
        if obj.get("type").and_then(Value::as_str) != Some("compaction") {
            continue;
        }
        let Some(index) = obj.get("firstKeptEntryIndex").and_then(Value::as_u64) else {
            continue;
        };
        obj.remove("firstKeptEntryIndex");
        // File-entry index 0 is the header; entry i sits at lines[i - 1].
        let target =
            usize::try_from(index).ok().and_then(|i| i.checked_sub(1)).and_then(|i| ids.get(i).cloned().flatten());
        if let Some(target) = target {
            obj.insert("firstKeptEntryId".to_owned(), Value::String(target));
        }
    }
}

fn v2_to_v3(lines: &mut [Value]) {
    for line in lines.iter_mut() {
        if line.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        if let Some(message) = line.get_mut("message").and_then(Value::as_object_mut)
            && message.get("role").and_then(Value::as_str) == Some("hookMessage")
        {
            message.insert("role".to_owned(), Value::String("custom".to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn v1_entries_get_a_linear_chain_and_compaction_ids() {
        let mut lines = vec![
            json!({"type":"message","timestamp":"t1","message":{"role":"user","content":"a","timestamp":1}}),
            json!({"type":"message","timestamp":"t2","message":{"role":"user","content":"b","timestamp":2}}),
            json!({"type":"compaction","timestamp":"t3","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}),
        ];
        migrate(1, &mut lines);
        let id = |i: usize| lines[i]["id"].as_str().unwrap().to_owned();
        assert_eq!(lines[0]["parentId"], Value::Null);
        assert_eq!(lines[1]["parentId"], id(0));
        assert_eq!(lines[2]["parentId"], id(1));
        assert_eq!(lines[2]["firstKeptEntryId"], id(1));
        assert!(lines[2].get("firstKeptEntryIndex").is_none());
        assert_ne!(id(0), id(1));
    }

    #[test]
    fn an_index_pointing_at_the_header_is_dropped() {
        let mut lines = vec![json!({"type":"compaction","summary":"s","firstKeptEntryIndex":0})];
        migrate(1, &mut lines);
        assert!(lines[0].get("firstKeptEntryId").is_none());
        assert!(lines[0].get("firstKeptEntryIndex").is_none());
    }

    #[test]
    fn v2_hook_messages_become_custom() {
        let mut lines = vec![json!({"type":"message","id":"a","parentId":null,
            "message":{"role":"hookMessage","customType":"x","content":"c","display":true,"timestamp":1}})];
        migrate(2, &mut lines);
        assert_eq!(lines[0]["message"]["role"], "custom");
        assert_eq!(lines[0]["id"], "a");
    }
}
