//! The editor's undo stack in memory linear in what changed: the state before the last edit is
//! kept whole, every earlier one as the difference to the state after it (where they differ,
//! and what was there). Typing 100,000 characters word by word keeps about the text once, not
//! a copy of it per word.

/// One saved state.
#[derive(Debug)]
enum Step {
    /// The whole text (the newest step only).
    Full(String),
    /// The text as the state after it, with `removed` where `inserted` bytes are there now.
    Diff { start: usize, removed: String, inserted: usize },
}

/// The states before each edit, the latest last, each with its cursor.
#[derive(Debug, Default)]
pub(super) struct UndoStack {
    steps: Vec<(Step, usize)>,
}

impl UndoStack {
    /// Saves `text` (and `cursor`) as the state before an edit.
    pub fn save(&mut self, text: &str, cursor: usize) {
        if let Some((top, _)) = self.steps.last_mut()
            && let Step::Full(before) = top
        {
            *top = diff(before, text);
        }
        self.steps.push((Step::Full(text.to_owned()), cursor));
    }

    /// The state before the last edit, taken off the stack.
    pub fn pop(&mut self) -> Option<(String, usize)> {
        let (Step::Full(text), cursor) = self.steps.pop()? else {
            return None;
        };
        if let Some((top, _)) = self.steps.last_mut()
            && let Step::Diff { start, removed, inserted } = top
        {
            let mut before = String::with_capacity(text.len() + removed.len());
            before.push_str(&text[..*start]);
            before.push_str(removed);
            before.push_str(&text[*start + *inserted..]);
            *top = Step::Full(before);
        }
        Some((text, cursor))
    }

    pub fn clear(&mut self) {
        self.steps.clear();
    }

    /// Bytes of text the stack holds.
    #[cfg(test)]
    pub fn held_bytes(&self) -> usize {
        self.steps
            .iter()
            .map(|(step, _)| match step {
                Step::Full(text) => text.len(),
                Step::Diff { removed, .. } => removed.len(),
            })
            .sum()
    }
}

/// `before` as the difference to `after`: what lies between their common beginning and end.
fn diff(before: &str, after: &str) -> Step {
    let mut prefix = before.bytes().zip(after.bytes()).take_while(|(a, b)| a == b).count();
    while !before.is_char_boundary(prefix) || !after.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = before.len().min(after.len()) - prefix;
    let mut suffix = before.bytes().rev().zip(after.bytes().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    while !before.is_char_boundary(before.len() - suffix) || !after.is_char_boundary(after.len() - suffix) {
        suffix -= 1;
    }
    Step::Diff {
        start: prefix,
        removed: before[prefix..before.len() - suffix].to_owned(),
        inserted: after.len() - suffix - prefix,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_come_back_in_reverse_order() {
        let mut stack = UndoStack::default();
        let states = ["", "héllo", "héllo wörld", "hé wörld", "X hé wörld Y", "ü"];
        for pair in states.windows(2) {
            stack.save(pair[0], pair[0].len());
            // (the edit happens: the live text is now pair[1])
            let _ = pair[1];
        }
        for state in states[..states.len() - 1].iter().rev() {
            assert_eq!(stack.pop(), Some(((*state).to_owned(), state.len())));
        }
        assert_eq!(stack.pop(), None);
    }

    #[test]
    fn memory_follows_what_changed_not_how_often() {
        let mut stack = UndoStack::default();
        let mut text = String::new();
        for i in 0..3_000 {
            stack.save(&text, text.len());
            text.push_str(&format!("word{i} "));
        }
        assert!(
            stack.held_bytes() < 3 * text.len(),
            "{} bytes held for a {}-byte text",
            stack.held_bytes(),
            text.len()
        );
        // And every state is still there.
        for _ in 0..2_999 {
            stack.pop().unwrap();
        }
        assert_eq!(stack.pop().map(|(t, _)| t), Some(String::new()));
    }
}
