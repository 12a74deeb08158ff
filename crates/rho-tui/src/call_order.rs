//! The order tool calls and their results reach the scrollback: each result right under its own
//! call, as pi shows them, however the calls of one reply finish. The first call waiting is shown
//! at once; a call behind it is shown when everything before it has its result (until then the
//! working line names it), and a result that comes early waits for its turn.

use std::collections::VecDeque;

use serde_json::{Map, Value};

use super::app::ToolOutput;

/// What to add to the scrollback, in order.
#[derive(Debug)]
pub enum Step {
    Call { id: String, name: String, args: Map<String, Value> },
    Result { id: String, output: ToolOutput },
}

#[derive(Debug)]
struct Pending {
    id: String,
    name: String,
    args: Map<String, Value>,
    shown: bool,
    output: Option<ToolOutput>,
}

/// The calls started and not yet shown with their results, oldest first.
#[derive(Debug, Default)]
pub struct CallOrder {
    calls: VecDeque<Pending>,
}

impl CallOrder {
    /// A call started.
    pub fn start(&mut self, id: String, name: String, args: Map<String, Value>) -> Vec<Step> {
        self.calls.push_back(Pending { id, name, args, shown: false, output: None });
        self.flush()
    }

    /// A call's result came: `output` gets the call's arguments.
    pub fn finish(&mut self, id: &str, mut output: ToolOutput) -> Vec<Step> {
        match self.calls.iter_mut().find(|call| call.id == id) {
            Some(call) => {
                output.args = Some(call.args.clone());
                call.output = Some(output);
                self.flush()
            }
            // A result for a call never started here (a host's replay): shown as it comes.
            None => vec![Step::Result { id: id.to_owned(), output }],
        }
    }

    /// The run ended: whatever waits is shown, calls without a result too.
    pub fn drain(&mut self) -> Vec<Step> {
        let mut shown = Vec::new();
        while let Some(call) = self.calls.pop_front() {
            if !call.shown {
                shown.push(Step::Call { id: call.id.clone(), name: call.name, args: call.args });
            }
            if let Some(output) = call.output {
                shown.push(Step::Result { id: call.id, output });
            }
        }
        shown
    }

    fn flush(&mut self) -> Vec<Step> {
        let mut shown = Vec::new();
        while let Some(first) = self.calls.front_mut() {
            if !first.shown {
                first.shown = true;
                shown.push(Step::Call { id: first.id.clone(), name: first.name.clone(), args: first.args.clone() });
            }
            let Some(output) = first.output.take() else { break };
            shown.push(Step::Result { id: first.id.clone(), output });
            self.calls.pop_front();
        }
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(name: &str) -> ToolOutput {
        ToolOutput { name: name.to_owned(), args: None, content: Vec::new(), details: None, is_error: false }
    }

    fn names(shown: &[Step]) -> Vec<String> {
        shown
            .iter()
            .map(|s| match s {
                Step::Call { id, .. } => format!("call {id}"),
                Step::Result { id, .. } => format!("result {id}"),
            })
            .collect()
    }

    #[test]
    fn each_result_lands_under_its_call_whichever_finishes_first() {
        let mut order = CallOrder::default();
        assert_eq!(names(&order.start("a".into(), "bash".into(), Map::new())), ["call a"]);
        assert!(order.start("b".into(), "read".into(), Map::new()).is_empty());
        assert!(order.start("c".into(), "read".into(), Map::new()).is_empty());
        // `c` and `b` finish before `a`: they wait.
        assert!(order.finish("c", output("read")).is_empty());
        assert!(order.finish("b", output("read")).is_empty());
        assert_eq!(names(&order.finish("a", output("bash"))), ["result a", "call b", "result b", "call c", "result c"]);
        // One call alone: its call at once, its result when it comes.
        assert_eq!(names(&order.start("d".into(), "ls".into(), Map::new())), ["call d"]);
        assert_eq!(names(&order.finish("d", output("ls"))), ["result d"]);
    }

    #[test]
    fn an_interrupted_run_still_shows_every_call_it_started() {
        let mut order = CallOrder::default();
        order.start("a".into(), "bash".into(), Map::new());
        order.start("b".into(), "read".into(), Map::new());
        assert!(order.finish("b", output("read")).is_empty());
        assert_eq!(names(&order.drain()), ["call b", "result b"]);
    }
}
