//! The session file's entries as pi 1.6 hands them to hosts: `get_entries` (append order, from a
//! cursor) and `get_tree` (the whole tree with labels). Both read the file's record, abandoned
//! branches and entries before a compaction included; neither changes anything.

use rho_rpc::EntriesData;
use rho_session::{SessionEntry, TreeNode};
use serde_json::Value;

use super::{AgentSession, SessionCommandError};

impl AgentSession {
    /// `get_entries`: every entry after the header in append order, or only those after the entry
    /// `since` (a durable cursor: ids never change). An unknown `since` is an error.
    pub(crate) fn entries(&self, since: Option<&str>) -> Result<EntriesData, SessionCommandError> {
        let session = self.session();
        let all = session.entries();
        let from = match since {
            None => 0,
            Some(id) => match all.iter().position(|e| e.id().as_str() == id) {
                Some(i) => i + 1,
                None => return Err(SessionCommandError::Invalid(format!("Entry not found: {id}"))),
            },
        };
        Ok(EntriesData {
            entries: all[from..].iter().map(entry_value).collect(),
            leaf_id: session.leaf_id().map(ToString::to_string),
        })
    }

    /// `get_tree`: the roots of the session tree (children oldest first) and the current leaf.
    /// The nodes nest as deep as the session is long: serialize them where the stack allows it.
    pub(crate) fn tree(&self) -> (Vec<TreeNode<Value>>, Option<String>) {
        let session = self.session();
        (session.tree(entry_value), session.leaf_id().map(ToString::to_string))
    }
}

/// An entry as its line in the file reads.
fn entry_value(entry: &SessionEntry) -> Value {
    serde_json::to_value(entry).unwrap_or(Value::Null)
}
