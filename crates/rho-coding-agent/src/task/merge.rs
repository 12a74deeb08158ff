//! Handing isolated tasks' changes back to the user's working tree (`task.isolation.merge`).
//!
//! `patch` (the default, as xcsh): when every task of the batch succeeded, their patches are
//! combined and applied to the working tree (checked first, so a patch that does not apply
//! changes nothing); otherwise nothing is applied and the patch files are listed for the model
//! to handle. `branch`: each successful task's patch is committed onto HEAD as
//! `rho/task/<id>`, cherry-picked onto the current branch in task order, and the branch is
//! deleted; the first conflict stops the merging. Either way no branch is left behind, and the
//! patch files stay in the artifacts directory.

use std::fmt::Write;

use super::result::SingleResult;
use super::runner::Isolation;
use crate::config::settings::IsolationMerge;

/// Merges and returns the text for the result's `<merge-summary>`.
pub async fn merge(isolation: &Isolation, results: &mut [SingleResult], aborted: bool) -> String {
    if aborted {
        return manual("Aborted: no changes were applied.", results);
    }
    match isolation.merge {
        IsolationMerge::Patch => apply_patches(isolation, results).await,
        IsolationMerge::Branch => merge_branches(isolation, results).await,
    }
}

fn non_empty(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

async fn apply_patches(isolation: &Isolation, results: &[SingleResult]) -> String {
    if !results.iter().all(|r| r.succeeded() && r.patch_path.is_some()) {
        return manual("Patches were not applied: not every task succeeded.", results);
    }
    let mut combined = Vec::new();
    for path in results.iter().filter_map(|r| r.patch_path.as_deref()).filter(|p| non_empty(p)) {
        match std::fs::read(path) {
            Ok(mut bytes) => {
                if !bytes.ends_with(b"\n") {
                    bytes.push(b'\n');
                }
                combined.extend(bytes);
            }
            Err(e) => {
                return manual(&format!("Patches were not applied: cannot read {}: {e}.", path.display()), results);
            }
        }
    }
    if combined.is_empty() {
        return "No changes to apply.".into();
    }
    let combined_path = isolation.scratch.path().join("combined.patch");
    if let Err(e) = std::fs::write(&combined_path, &combined) {
        return manual(&format!("Patches were not applied: {e}."), results);
    }
    match isolation.repo.apply_patch(&combined_path).await {
        Ok(()) => "Applied patches: yes".into(),
        Err(e) => manual(&format!("Patches could not be applied to the working tree: {e}"), results),
    }
}

async fn merge_branches(isolation: &Isolation, results: &mut [SingleResult]) -> String {
    let repo = &isolation.repo;
    let mut merged = Vec::new();
    let mut failure = None;
    for r in results.iter_mut() {
        let Some(patch) = r.patch_path.clone() else {
            continue;
        };
        if !r.succeeded() || !non_empty(&patch) {
            continue;
        }
        let stem = patch.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| r.id.clone());
        let branch = format!("rho/task/{stem}");
        if failure.is_some() {
            r.error = Some("Merge skipped: an earlier task's changes did not merge".into());
            continue;
        }
        let message = match r.description.as_deref() {
            Some(d) => format!("task({}): {d}", r.id),
            None => format!("task({})", r.id),
        };
        let index = isolation.scratch.path().join(format!("{stem}.branch.index"));
        let outcome = match repo.commit_branch(&branch, &patch, &message, &index).await {
            Ok(()) => repo.cherry_pick(&branch).await,
            Err(e) => Err(e),
        };
        repo.delete_branch(&branch).await;
        r.branch_name = Some(branch.clone());
        match outcome {
            Ok(()) => merged.push(branch),
            Err(e) => {
                r.error = Some(format!("Merge failed: {e}"));
                failure = Some(format!("{branch}: {e}"));
            }
        }
    }
    let mut text = String::new();
    if !merged.is_empty() {
        let _ = write!(text, "Merged {} branch{}: {}", merged.len(), plural_es(merged.len()), merged.join(", "));
    }
    if let Some(failure) = failure {
        if !text.is_empty() {
            text.push('\n');
        }
        let _ = write!(text, "Branch merge failed: {failure}\nThe remaining changes are in the patch files.");
    }
    if text.is_empty() { "No changes to merge.".into() } else { text }
}

fn plural_es(n: usize) -> &'static str {
    if n == 1 { "" } else { "es" }
}

/// A notice that the changes must be handled by hand, with the patch files.
fn manual(reason: &str, results: &[SingleResult]) -> String {
    let patches: Vec<String> = results
        .iter()
        .filter_map(|r| r.patch_path.as_deref())
        .filter(|p| non_empty(p))
        .map(|p| format!("- {}", p.display()))
        .collect();
    if patches.is_empty() {
        return reason.to_owned();
    }
    format!("{reason} The patches are:\n{}", patches.join("\n"))
}
