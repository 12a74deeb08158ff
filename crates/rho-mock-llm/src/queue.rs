//! The running script: which turn answers which request.
//!
//! The rule is the first unconsumed turn that matches the request; a turn with `repeat: n` is
//! served n times before it is consumed. Turns that do not match wait for a request that does,
//! which lets parallel clients each get their own turn regardless of arrival order.

use std::collections::VecDeque;

use crate::script::Turn;

#[derive(Debug)]
struct Slot {
    turn: Turn,
    served: u32,
}

/// The unconsumed turns, in script order.
#[derive(Debug, Default)]
pub struct TurnQueue {
    slots: VecDeque<Slot>,
}

impl TurnQueue {
    pub fn new(turns: Vec<Turn>) -> Self {
        let mut queue = Self::default();
        queue.push(turns);
        queue
    }

    pub fn push(&mut self, turns: Vec<Turn>) {
        self.slots.extend(turns.into_iter().map(|turn| Slot { turn, served: 0 }));
    }

    /// Unconsumed turns (a repeating turn counts once until its last serving).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the next turn refuses a websocket (`refuseWebsocket`).
    pub fn next_refuses_websocket(&self) -> bool {
        self.slots.front().is_some_and(|s| s.turn.refuse_websocket)
    }

    /// The turn that answers a request for `api` with raw body `body`, consuming it when this
    /// was its last serving.
    pub fn take(&mut self, api: &str, body: &str) -> Option<Turn> {
        let pos = self.slots.iter().position(|s| s.turn.matches(api, body))?;
        let slot = self.slots.get_mut(pos)?;
        slot.served += 1;
        if slot.served >= slot.turn.times() { self.slots.remove(pos).map(|s| s.turn) } else { Some(slot.turn.clone()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(t: Option<Turn>) -> Option<String> {
        t.and_then(|t| t.text)
    }

    #[test]
    fn serves_in_order_and_then_runs_out() {
        let mut q = TurnQueue::new(vec![Turn::text("a"), Turn::text("b")]);
        assert_eq!(text_of(q.take("x", "")), Some("a".into()));
        assert_eq!(q.len(), 1);
        assert_eq!(text_of(q.take("x", "")), Some("b".into()));
        assert!(q.take("x", "").is_none());
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn first_matching_turn_wins_and_others_wait() {
        let mut q = TurnQueue::new(vec![
            Turn::text("for-one").when_body_contains("agent-1"),
            Turn::text("for-two").when_body_contains("agent-2"),
            Turn::text("anyone"),
        ]);
        assert_eq!(text_of(q.take("x", "agent-2 asks")), Some("for-two".into()));
        assert_eq!(text_of(q.take("x", "agent-3 asks")), Some("anyone".into()));
        assert!(q.take("x", "agent-3 asks").is_none());
        assert_eq!(text_of(q.take("x", "agent-1 asks")), Some("for-one".into()));
    }

    #[test]
    fn repeat_serves_n_times_then_consumes() {
        let mut q = TurnQueue::new(vec![Turn::error(529, "busy").repeat(3), Turn::text("ok")]);
        for left in [2, 2, 1] {
            let t = q.take("x", "").unwrap();
            assert_eq!(t.error.unwrap().status, 529);
            assert_eq!(q.len(), left);
        }
        assert_eq!(text_of(q.take("x", "")), Some("ok".into()));
    }

    #[test]
    fn pushed_turns_join_the_end() {
        let mut q = TurnQueue::new(vec![]);
        assert!(q.take("x", "").is_none());
        q.push(vec![Turn::text("late")]);
        assert_eq!(text_of(q.take("x", "")), Some("late".into()));
    }
}
