//! Where to cut a branch: the first entry that stays verbatim after a compaction.
//!
//! The cut keeps roughly `keepRecentTokens` of the newest conversation. It may only fall on an
//! entry the model can resume from — a user, assistant, bash-execution, custom or summary
//! message, a `custom_message` or a `branch_summary` — and never on a tool result, which must
//! stay behind the tool call it answers. Settings entries (model and thinking changes, labels,
//! extension state) directly before the cut are kept with it. When the cut falls inside a turn
//! (on an assistant message after the user's request), the turn is *split*: its beginning is
//! summarized on its own so the kept rest still makes sense.

use rho_session::SessionEntry;
use rho_types::AgentMessage;

use super::tokens::estimate_tokens;

/// The outcome of [`find_cut_point`], as indices into the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// The first entry kept.
    pub first_kept_index: usize,
    /// For a split turn, the entry that started the turn (before `first_kept_index`).
    pub turn_start_index: Option<usize>,
    pub is_split_turn: bool,
}

/// Whether the kept part of a branch may start at `entry`. Not at a tool result (its call would
/// be cut off) nor at a `system` message (the compaction keeps the declared prompt whole).
pub fn is_valid_cut_point(entry: &SessionEntry) -> bool {
    match entry {
        SessionEntry::Message(m) => !matches!(m.message, AgentMessage::ToolResult(_) | AgentMessage::System(_)),
        SessionEntry::BranchSummary(_) | SessionEntry::CustomMessage(_) => true,
        _ => false,
    }
}

/// Whether `entry` begins a turn: a user message, a bash execution run by the user, or a
/// user-role entry (`branch_summary`, `custom_message`).
fn starts_turn(entry: &SessionEntry) -> bool {
    match entry {
        SessionEntry::Message(m) => matches!(m.message, AgentMessage::User(_) | AgentMessage::BashExecution(_)),
        SessionEntry::BranchSummary(_) | SessionEntry::CustomMessage(_) => true,
        _ => false,
    }
}

/// The nearest entry at or before `index` (and not before `start`) that begins a turn.
pub fn find_turn_start(entries: &[&SessionEntry], index: usize, start: usize) -> Option<usize> {
    if entries.is_empty() {
        return None;
    }
    let index = index.min(entries.len() - 1);
    (start..=index).rev().find(|&i| starts_turn(entries[i]))
}

/// Finds the cut in `entries[start..end]` that keeps about `keep_recent_tokens`.
///
/// Walking back from the newest entry, the estimates of `message` entries are summed; at the
/// first entry where the sum reaches the budget, the cut is the first valid cut point at or
/// after it. If the budget is never reached, everything is kept (the cut is the first valid cut
/// point). The cut then moves back over directly preceding non-`message` entries, stopping at a
/// message, a compaction or `start`.
///
/// The turn is split when the kept part does not begin with the start of its turn: the nearest
/// turn start at or before the chosen message lies before the cut. (The reference decides this
/// from the entry the cut moved back to, so a model change or label just before a user message
/// made it treat the previous turn as a split one; rho looks at the message the budget chose.)
pub fn find_cut_point(entries: &[&SessionEntry], start: usize, end: usize, keep_recent_tokens: u64) -> CutPoint {
    let end = end.min(entries.len());
    let no_split = |first_kept_index| CutPoint { first_kept_index, turn_start_index: None, is_split_turn: false };
    let valid: Vec<usize> = (start..end).filter(|&i| is_valid_cut_point(entries[i])).collect();
    let Some(&first_valid) = valid.first() else {
        return no_split(start);
    };

    let mut chosen = first_valid;
    let mut accumulated = 0u64;
    for i in (start..end).rev() {
        let Some(message) = entries[i].as_message() else {
            continue;
        };
        accumulated += estimate_tokens(message);
        if accumulated >= keep_recent_tokens {
            if let Some(&c) = valid.iter().find(|&&c| c >= i) {
                chosen = c;
            }
            break;
        }
    }

    let mut cut = chosen;
    while cut > start {
        let previous = entries[cut - 1];
        if matches!(previous, SessionEntry::Message(_) | SessionEntry::Compaction(_)) {
            break;
        }
        cut -= 1;
    }

    match find_turn_start(entries, chosen, start) {
        Some(turn_start) if turn_start < cut => {
            CutPoint { first_kept_index: cut, turn_start_index: Some(turn_start), is_split_turn: true }
        }
        _ => no_split(cut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::test_support::*;
    use serde_json::json;

    /// A user message, an assistant tool call and its result: each 100 tokens.
    fn turn(prefix: &str) -> Vec<SessionEntry> {
        vec![
            message(&format!("{prefix}u"), user(&filler(400))),
            message(&format!("{prefix}a"), assistant_calls(vec![tool_call("read", json!({"path": filler(385)}))])),
            message(&format!("{prefix}r"), tool_result(&filler(400))),
        ]
    }

    #[test]
    fn budget_never_reached_keeps_everything() {
        let entries = [turn("1"), turn("2")].concat();
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 10_000);
        assert_eq!(cut, CutPoint { first_kept_index: 0, turn_start_index: None, is_split_turn: false });
    }

    #[test]
    fn cut_on_a_user_message_is_not_a_split_turn() {
        let entries = [turn("1"), turn("2"), turn("3")].concat();
        // 300 tokens = exactly the last turn: the sum reaches the budget on its user message.
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 300);
        assert_eq!(cut.first_kept_index, 6);
        assert!(!cut.is_split_turn);
        assert_eq!(cut.turn_start_index, None);
    }

    #[test]
    fn cut_mid_turn_splits_it_at_the_assistant_message() {
        let entries = [turn("1"), turn("2"), turn("3")].concat();
        // 200 tokens: the budget is reached on 3a, a valid cut point inside turn 3.
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 200);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "3a");
        assert!(cut.is_split_turn);
        assert_eq!(cut.turn_start_index, Some(6));
    }

    #[test]
    fn never_cuts_on_a_tool_result() {
        let entries = [turn("1"), turn("2"), turn("3")].concat();
        // 100 tokens: the budget is reached on the tool result 3r; no valid cut point at or
        // after it, so the cut falls back to the first valid cut point (everything kept).
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 100);
        assert_eq!(cut.first_kept_index, 0);
        // 150 tokens: 3r (100) + 3a (100) reaches it on 3a.
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 150);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "3a");
        for keep in [1, 50, 99, 100, 101, 250, 301, 450, 600, 899, 900] {
            let cut = find_cut_point(&refs(&entries), 0, entries.len(), keep);
            assert!(
                is_valid_cut_point(&entries[cut.first_kept_index]),
                "keep {keep} cut at {}",
                entries[cut.first_kept_index].id()
            );
        }
    }

    #[test]
    fn the_first_valid_cut_point_at_or_after_the_budget_entry() {
        // Two tool results in a row: the budget lands on the first result, the cut on the
        // next assistant message.
        let entries = vec![
            message("u", user(&filler(400))),
            message("a1", assistant_calls(vec![tool_call("read", json!({"path": "x"}))])),
            message("r1", tool_result(&filler(4000))),
            message("r2", tool_result(&filler(40))),
            message("a2", assistant_text(&filler(40))),
        ];
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 500);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "a2");
        assert!(cut.is_split_turn);
        assert_eq!(cut.turn_start_index, Some(0));
    }

    #[test]
    fn extends_over_preceding_settings_entries() {
        let mut entries = [turn("1"), turn("2")].concat();
        entries.insert(3, model_change("mc"));
        entries.insert(4, label("lb", "1u"));
        // [1u 1a 1r mc lb 2u 2a 2r]: keep 300 → budget reached on 2u, moved back over lb, mc.
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 300);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "mc");
        // The kept part still begins its turn: no split.
        assert!(!cut.is_split_turn);
        assert_eq!(cut.turn_start_index, None);
    }

    #[test]
    fn extension_stops_at_the_boundary_and_at_a_compaction() {
        let entries = vec![
            message("old", user("old")),
            compaction("c1", "summary", "old", None),
            model_change("mc"),
            message("u", user(&filler(400))),
        ];
        let cut = find_cut_point(&refs(&entries), 2, entries.len(), 100);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "mc");
        let cut = find_cut_point(&refs(&entries), 3, entries.len(), 100);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "u");
        // A compaction directly before the cut stops the extension even below the boundary.
        let cut = find_cut_point(&refs(&entries[1..]), 0, 3, 100);
        assert_eq!(cut.first_kept_index, 1);
    }

    #[test]
    fn boundary_after_a_previous_compaction() {
        let entries = [turn("0"), vec![compaction("c1", "summary", "0u", None)], turn("1"), turn("2")].concat();
        // Everything after the compaction fits: keep from the first entry after it.
        let cut = find_cut_point(&refs(&entries), 4, entries.len(), 10_000);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "1u");
        // The walk never looks before the boundary: a huge turn 0 does not count.
        let cut = find_cut_point(&refs(&entries), 4, entries.len(), 300);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "2u");
        // The turn start search stops at the boundary: an assistant message that opens the
        // range is not a split turn.
        let cut = find_cut_point(&refs(&entries), 5, entries.len(), 10_000);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "1a");
        assert!(!cut.is_split_turn);
    }

    #[test]
    fn user_role_entries_and_bash_start_turns() {
        let entries = vec![
            message("u", user(&filler(400))),
            custom_message("cm", &filler(40)),
            message("a1", assistant_text(&filler(400))),
            message("a2", assistant_text(&filler(400))),
        ];
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 100);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "a2");
        assert_eq!(cut.turn_start_index, Some(1));
        // A custom_message directly before the chosen message is kept with it (the cut moves
        // over non-`message` entries), and then the kept part begins its turn.
        let cut = find_cut_point(&refs(&entries[..3]), 0, 3, 100);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "cm");
        assert!(!cut.is_split_turn);

        let entries = vec![
            message("u", user(&filler(400))),
            message("b", bash("ls", &filler(400))),
            message("a", assistant_text(&filler(40))),
        ];
        // Budget reached on b: a turn start, so no split.
        let cut = find_cut_point(&refs(&entries), 0, entries.len(), 100);
        assert_eq!(entries[cut.first_kept_index].id().as_str(), "b");
        assert!(!cut.is_split_turn);
    }

    #[test]
    fn only_non_message_entries() {
        let entries = vec![model_change("mc"), label("lb", "mc")];
        let cut = find_cut_point(&refs(&entries), 0, 2, 100);
        assert_eq!(cut, CutPoint { first_kept_index: 0, turn_start_index: None, is_split_turn: false });
        assert_eq!(find_turn_start(&refs(&entries), 1, 0), None);
    }
}
