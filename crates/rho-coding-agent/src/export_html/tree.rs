//! The data the viewer script works from, embedded in the page as JSON: the header, the leaf,
//! every entry as the file has it (for "Download JSONL"), and the session tree flattened for
//! the sidebar.
//!
//! The tree is flattened here, not in the script: nodes come in depth-first order (children in
//! file order), each with the indentation it is drawn at. Indentation grows only where the
//! conversation branches, as in pi's tree view, so a long linear session stays flat. Roots are
//! entries without a parent, with themselves as parent, or with a parent that is not in the
//! file; entries caught in a parent cycle (a damaged file) are shown as roots too. Each node's
//! `parentId` is its parent in this tree, so walking it always ends. rho's leaf markers are
//! nodes too (something may have been appended under one) but do not count as branches.

use std::collections::HashMap;

use rho_session::{Session, SessionEntry, SessionHeader};
use serde::Serialize;

use super::entry::{entry_kind, entry_preview};

/// One row of the sidebar tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeNode<'a> {
    pub id: &'a str,
    pub parent_id: Option<&'a str>,
    /// Indentation level: how many branch points lie above.
    pub depth: u32,
    pub kind: &'static str,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<&'a str>,
}

/// Everything the viewer script reads.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewerData<'a> {
    pub header: &'a SessionHeader,
    /// The current leaf; its branch is the one shown first.
    pub leaf_id: Option<&'a str>,
    /// The session file's name, for the downloaded copy.
    pub file_name: String,
    pub tree: Vec<TreeNode<'a>>,
    pub entries: &'a [SessionEntry],
}

/// The session's entries as a depth-first list of tree nodes.
pub fn build_tree(session: &Session) -> Vec<TreeNode<'_>> {
    let entries = session.entries();
    let position: HashMap<&str, usize> = entries.iter().enumerate().map(|(i, e)| (e.id().as_str(), i)).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut roots = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        match entry.parent_id().and_then(|p| position.get(p.as_str())) {
            Some(&parent) if parent != i => children[parent].push(i),
            _ => roots.push(i),
        }
    }
    let mut visited = vec![false; entries.len()];
    let mut nodes = Vec::with_capacity(entries.len());
    let mut stack: Vec<(usize, Option<usize>, u32)> = Vec::new();
    // Roots first; then whatever a parent cycle kept out of reach.
    for start in roots.into_iter().chain(0..entries.len()) {
        stack.push((start, None, 0));
        while let Some((i, parent, depth)) = stack.pop() {
            if visited[i] {
                continue;
            }
            visited[i] = true;
            let entry = &entries[i];
            nodes.push(TreeNode {
                id: entry.id().as_str(),
                parent_id: parent.map(|p| entries[p].id().as_str()),
                depth,
                kind: entry_kind(entry),
                text: entry_preview(entry),
                label: session.label(entry.id().as_str()),
            });
            let kids = &children[i];
            let branches = kids.iter().filter(|&&k| !entries[k].is_leaf_marker()).count();
            let child_depth = if branches > 1 { depth + 1 } else { depth };
            stack.extend(kids.iter().rev().map(|&k| (k, Some(i), child_depth)));
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use rho_types::AgentMessage;
    use rho_types::types::UserMessage;

    use super::*;

    fn user(text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage::prompt(text, Vec::new()))
    }

    #[test]
    fn branches_are_indented_and_linear_runs_are_flat() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::create_at(&dir.path().join("s.jsonl"), dir.path(), None).unwrap();
        let a = s.append_message(&user("a")).unwrap();
        let b = s.append_message(&user("b")).unwrap();
        s.branch(a.as_str()).unwrap();
        let c = s.append_message(&user("c")).unwrap();
        let d = s.append_message(&user("d")).unwrap();
        let nodes = build_tree(&s);
        let rows: Vec<(&str, Option<&str>, u32)> =
            nodes.iter().filter(|n| n.kind != "leaf-marker").map(|n| (n.id, n.parent_id, n.depth)).collect();
        assert_eq!(
            rows,
            vec![
                (a.as_str(), None, 0),
                (b.as_str(), Some(a.as_str()), 1),
                (c.as_str(), Some(a.as_str()), 1),
                (d.as_str(), Some(c.as_str()), 1),
            ]
        );
    }
}
