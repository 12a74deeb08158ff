//! The session as a tree, in the shape pi's `getTree()` gives it: a node per entry with its
//! children oldest first, the label set on the entry (and when), and every entry whose parent is
//! missing (or itself) as a root. Built without recursion: a long session is one deep chain.

use std::collections::HashMap;

use serde::Serialize;

use crate::entry::SessionEntry;
use crate::id::iso_to_ms;
use crate::session::Session;

/// One node: the entry (as the caller maps it), its children oldest first, its label.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeNode<T> {
    pub entry: T,
    pub children: Vec<TreeNode<T>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label_timestamp: Option<String>,
}

impl Session {
    /// Every entry as a tree (header excluded), each mapped by `map`. Entries on a parent cycle
    /// that never reaches a root are left out, as pi leaves them out.
    pub fn tree<T>(&self, mut map: impl FnMut(&SessionEntry) -> T) -> Vec<TreeNode<T>> {
        let entries = self.entries();
        let index: HashMap<&str, usize> = entries.iter().enumerate().map(|(i, e)| (e.id().as_str(), i)).collect();
        let mut labels: HashMap<&str, (&str, &str)> = HashMap::new();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
        let mut roots = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            if let SessionEntry::Label(l) = entry {
                match l.label.as_deref().filter(|label| !label.is_empty()) {
                    Some(label) => labels.insert(l.target_id.as_str(), (label, l.timestamp.as_str())),
                    None => labels.remove(l.target_id.as_str()),
                };
            }
            match entry.parent_id().map(|p| p.as_str()).filter(|p| *p != entry.id().as_str()) {
                Some(parent) => match index.get(parent) {
                    Some(&p) => children[p].push(i),
                    None => roots.push(i),
                },
                None => roots.push(i),
            }
        }
        let time = |i: usize| iso_to_ms(entries[i].timestamp()).unwrap_or(i64::MAX);
        for list in &mut children {
            list.sort_by_key(|&i| time(i));
        }

        // Post-order without recursion: a node is built once all its children are.
        let mut built: Vec<Option<TreeNode<T>>> = std::iter::repeat_with(|| None).take(entries.len()).collect();
        let mut stack: Vec<(usize, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((i, expanded)) = stack.pop() {
            if !expanded {
                stack.push((i, true));
                stack.extend(children[i].iter().rev().map(|&c| (c, false)));
                continue;
            }
            let label = labels.get(entries[i].id().as_str());
            built[i] = Some(TreeNode {
                entry: map(&entries[i]),
                children: children[i].iter().filter_map(|&c| built[c].take()).collect(),
                label: label.map(|(l, _)| (*l).to_owned()),
                label_timestamp: label.map(|(_, t)| (*t).to_owned()),
            });
        }
        roots.iter().filter_map(|&r| built[r].take()).collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::session::Session;

    fn session(lines: &[Value]) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut text = json!({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/w"})
        .to_string();
        for line in lines {
            text.push('\n');
            text.push_str(&line.to_string());
        }
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        Session::open(&path).unwrap().0
    }

    fn entry(id: &str, parent: Option<&str>, ts: &str) -> Value {
        json!({"type": "custom", "id": id, "parentId": parent, "timestamp": ts, "customType": "x"})
    }

    #[test]
    fn children_come_oldest_first_with_labels_and_orphans_as_roots() {
        let s = session(&[
            entry("a", None, "2026-01-01T00:00:01.000Z"),
            entry("c", Some("a"), "2026-01-01T00:00:03.000Z"),
            entry("b", Some("a"), "2026-01-01T00:00:02.000Z"),
            entry("o", Some("gone"), "2026-01-01T00:00:04.000Z"),
            json!({"type": "label", "id": "l1", "parentId": "o", "timestamp": "2026-01-01T00:00:05.000Z",
                   "targetId": "b", "label": "first"}),
            json!({"type": "label", "id": "l2", "parentId": "l1", "timestamp": "2026-01-01T00:00:06.000Z",
                   "targetId": "c", "label": "gone soon"}),
            json!({"type": "label", "id": "l3", "parentId": "l2", "timestamp": "2026-01-01T00:00:07.000Z",
                   "targetId": "c"}),
        ]);
        let tree = s.tree(|e| e.id().to_string());
        let shape = serde_json::to_value(&tree).unwrap();
        assert_eq!(
            shape,
            json!([
                {"entry": "a", "children": [
                    {"entry": "b", "children": [], "label": "first", "labelTimestamp": "2026-01-01T00:00:05.000Z"},
                    {"entry": "c", "children": []}
                ]},
                {"entry": "o", "children": [{"entry": "l1", "children": [{"entry": "l2", "children": [
                    {"entry": "l3", "children": []}]}]}]}
            ])
        );
    }

    #[test]
    fn a_long_chain_is_built_without_recursion() {
        let mut lines = vec![entry("e0", None, "2026-01-01T00:00:00.000Z")];
        for i in 1..50_000 {
            lines.push(entry(&format!("e{i}"), Some(&format!("e{}", i - 1)), "2026-01-01T00:00:00.000Z"));
        }
        let s = session(&lines);
        let mut tree = s.tree(|e| e.id().to_string());
        let mut depth = 0;
        let mut node = tree.pop();
        while let Some(mut n) = node {
            depth += 1;
            node = n.children.pop();
        }
        assert_eq!(depth, 50_000);
    }
}
