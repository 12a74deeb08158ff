//! What moving the files to another point of the session tree means, from the checkpoint
//! records on the two paths: for each file rho changed since the paths parted, the content it
//! must have at the target and the content it should have now (what rho last wrote on the
//! current path). A file whose content now differs from that was changed outside rho.

use std::collections::BTreeMap;

use rho_tools::checkpoints::Kept;
use serde::{Deserialize, Serialize};

/// The custom entry type a checkpoint is recorded as in the session.
pub const CHECKPOINT_ENTRY: &str = "rho.checkpoint";

/// One recorded change: `path` held `before` and rho made it `after`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointRecord {
    pub path: String,
    pub before: Kept,
    pub after: Kept,
}

/// One file to move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMove {
    pub path: String,
    /// What it must hold at the target.
    pub to: Kept,
    /// What it should hold now.
    pub now: Kept,
}

/// The files to move from the current path's end to the target's. Both paths run from the
/// root; `shared` is how many entries they have in common, and each is given as the
/// checkpoint records of its entries in order (entry index, record).
pub fn plan(
    current: &[(usize, CheckpointRecord)],
    target: &[(usize, CheckpointRecord)],
    shared: usize,
) -> Vec<FileMove> {
    // Per file: what it must hold, what it should hold now, and whether the current path
    // changed it since the fork.
    let mut files: BTreeMap<&str, (FileMove, bool)> = BTreeMap::new();
    for (index, record) in current {
        let forked = *index >= shared;
        let file = files.entry(record.path.as_str()).or_insert_with(|| {
            let file = FileMove { path: record.path.clone(), to: record.before.clone(), now: Kept::Absent };
            (file, false)
        });
        if !forked {
            // Before the fork: the target holds what rho made of it there.
            file.0.to = record.after.clone();
        } else if !file.1 {
            // The first change since: what it held then is what the target holds.
            file.0.to = record.before.clone();
            file.1 = true;
        }
        file.0.now = record.after.clone();
    }
    // The target's side: its last change since the fork is what the file must hold.
    for (_, record) in target.iter().filter(|(index, _)| *index >= shared) {
        let file = files.entry(record.path.as_str()).or_insert_with(|| {
            // Untouched on the current path: it should still hold what the target's side found.
            (FileMove { path: record.path.clone(), to: Kept::Absent, now: record.before.clone() }, false)
        });
        file.0.to = record.after.clone();
    }
    files.into_values().map(|(file, _)| file).filter(|file| file.to != file.now).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(text: &str) -> Kept {
        Kept::Blob(text.to_owned())
    }

    fn record(path: &str, before: Kept, after: Kept) -> CheckpointRecord {
        CheckpointRecord { path: path.to_owned(), before, after }
    }

    #[test]
    fn a_rewind_restores_what_each_file_held_before_its_first_change_since() {
        // a: changed before the target and twice after; b: created after; c: before only.
        let current = [
            (1, record("a", blob("a0"), blob("a1"))),
            (2, record("c", blob("c0"), blob("c1"))),
            (4, record("a", blob("a1"), blob("a2"))),
            (5, record("b", Kept::Absent, blob("b1"))),
            (6, record("a", blob("a2"), blob("a3"))),
        ];
        let moves = plan(&current, &[], 3);
        assert_eq!(
            moves,
            [
                FileMove { path: "a".into(), to: blob("a1"), now: blob("a3") },
                FileMove { path: "b".into(), to: Kept::Absent, now: blob("b1") },
            ]
        );
    }

    #[test]
    fn moving_to_another_branch_brings_its_files() {
        // Shared: a0 -> a1. Current side: a1 -> a2. Target side: a1 -> a9 and d created.
        let current = [(1, record("a", blob("a0"), blob("a1"))), (3, record("a", blob("a1"), blob("a2")))];
        let target = [
            (1, record("a", blob("a0"), blob("a1"))),
            (3, record("a", blob("a1"), blob("a9"))),
            (4, record("d", Kept::Absent, blob("d1"))),
        ];
        let moves = plan(&current, &target, 2);
        assert_eq!(
            moves,
            [
                FileMove { path: "a".into(), to: blob("a9"), now: blob("a2") },
                FileMove { path: "d".into(), to: blob("d1"), now: Kept::Absent },
            ]
        );
    }

    #[test]
    fn records_read_as_rho_writes_them() {
        let entry = serde_json::json!({"path": "/p/a.rs", "before": "absent", "after": {"blob": "ab"}});
        let parsed: CheckpointRecord = serde_json::from_value(entry.clone()).unwrap();
        assert_eq!(parsed, record("/p/a.rs", Kept::Absent, blob("ab")));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), entry);
    }
}
