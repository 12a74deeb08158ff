//! The table of requests waiting for their response, and the routing of every response frame:
//! to its request by `id`; an id-less `parse` error to the one outstanding request when exactly
//! one is pending (as xcsh's Python client does); a second response for an answered `prompt` /
//! `abort_and_prompt` to a late-response notification; anything else to an unsolicited one.
//!
//! Pure bookkeeping (no I/O), so the routing rules are unit-tested here.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;
use tokio::sync::oneshot;

use super::error::{ClientError, ExitReport};
use crate::response::RpcResponse;

/// What a request receives: the response and the stdout line number it came on.
pub(crate) type Answer = Result<(u64, RpcResponse), ClientError>;

/// How many answered `prompt` ids are remembered for late errors.
const REMEMBERED_PROMPTS: usize = 64;

/// Commands whose run may fail after the acknowledgement, with a second response.
fn may_answer_late(command: &str) -> bool {
    matches!(command, "prompt" | "abort_and_prompt")
}

struct Waiter {
    command: String,
    tx: oneshot::Sender<Answer>,
}

/// Where a response went.
#[derive(Debug, PartialEq)]
pub(crate) enum Routed {
    /// Delivered to the request waiting for it (or to nobody, when that request was dropped).
    Answered,
    Late(RpcResponse),
    Unsolicited(RpcResponse),
}

#[derive(Default)]
pub(crate) struct Pending {
    waiting: HashMap<String, Waiter>,
    answered_prompts: VecDeque<String>,
    closed: Option<ExitReport>,
}

impl Pending {
    /// Registers a request before its line is written, so the answer cannot overtake it.
    pub(crate) fn register(&mut self, id: &str, command: &str) -> Result<oneshot::Receiver<Answer>, ClientError> {
        if let Some(report) = &self.closed {
            return Err(ClientError::Exited(report.clone()));
        }
        let (tx, rx) = oneshot::channel();
        self.waiting.insert(id.to_owned(), Waiter { command: command.to_owned(), tx });
        Ok(rx)
    }

    /// Drops a request whose caller stopped waiting or whose line could not be written.
    pub(crate) fn forget(&mut self, id: &str) {
        self.waiting.remove(id);
    }

    pub(crate) fn closed(&self) -> Option<&ExitReport> {
        self.closed.as_ref()
    }

    /// The server is gone: every waiting request fails with the report, and so does every
    /// later one.
    pub(crate) fn close(&mut self, report: ExitReport) {
        for (_, waiter) in self.waiting.drain() {
            let _ = waiter.tx.send(Err(ClientError::Exited(report.clone())));
        }
        self.closed = Some(report);
    }

    /// Fails the request with this id, if one waits; `true` when one did.
    pub(crate) fn fail(&mut self, id: &str, error: ClientError) -> bool {
        match self.waiting.remove(id) {
            Some(waiter) => {
                let _ = waiter.tx.send(Err(error));
                true
            }
            None => false,
        }
    }

    pub(crate) fn route(&mut self, seq: u64, response: RpcResponse) -> Routed {
        let key = match &response.id {
            Some(Value::String(id)) => Some(id.clone()),
            Some(_) => return Routed::Unsolicited(response),
            None => self.attribute_idless(&response),
        };
        let Some(key) = key else { return Routed::Unsolicited(response) };
        match self.waiting.remove(&key) {
            Some(waiter) => {
                if may_answer_late(&waiter.command) {
                    if self.answered_prompts.len() == REMEMBERED_PROMPTS {
                        self.answered_prompts.pop_front();
                    }
                    self.answered_prompts.push_back(key);
                }
                let _ = waiter.tx.send(Ok((seq, response)));
                Routed::Answered
            }
            None if response.id.is_some() && self.answered_prompts.contains(&key) => Routed::Late(response),
            None => Routed::Unsolicited(response),
        }
    }

    /// An id-less response belongs to a request only when that cannot be wrong: a `parse`
    /// error (malformed line or handler failure) with exactly one request outstanding, or an
    /// error naming a command that exactly one outstanding request has (reference servers drop
    /// the id of an unknown command).
    fn attribute_idless(&self, response: &RpcResponse) -> Option<String> {
        let command = response.command.as_deref()?;
        if command == "parse" {
            return match self.waiting.len() {
                1 => self.waiting.keys().next().cloned(),
                _ => None,
            };
        }
        let mut same = self.waiting.iter().filter(|(_, w)| w.command == command);
        match (same.next(), same.next()) {
            (Some((id, _)), None) => Some(id.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(id: Option<&str>, command: &str, success: bool) -> RpcResponse {
        let id = id.map(|s| json!(s));
        if success { RpcResponse::ok(id, command) } else { RpcResponse::error(id, command, "boom") }
    }

    #[test]
    fn responses_go_to_their_request_by_id() {
        let mut p = Pending::default();
        let mut a = p.register("req_1", "get_state").unwrap();
        let mut b = p.register("req_2", "get_state").unwrap();
        assert_eq!(p.route(7, response(Some("req_2"), "get_state", true)), Routed::Answered);
        assert_eq!(b.try_recv().unwrap().unwrap().0, 7);
        assert!(a.try_recv().is_err());
        let stray = response(Some("req_9"), "get_state", true);
        assert_eq!(p.route(8, stray.clone()), Routed::Unsolicited(stray));
    }

    #[test]
    fn idless_parse_errors_need_exactly_one_pending_request() {
        let mut p = Pending::default();
        let parse = RpcResponse::parse_error("Nothing to compact".into());
        assert_eq!(p.route(1, parse.clone()), Routed::Unsolicited(parse.clone()));
        let mut a = p.register("req_1", "compact").unwrap();
        assert_eq!(p.route(2, parse.clone()), Routed::Answered);
        assert_eq!(a.try_recv().unwrap().unwrap().1, parse);
        let _b = p.register("req_2", "compact").unwrap();
        let _c = p.register("req_3", "bash").unwrap();
        assert_eq!(p.route(3, parse.clone()), Routed::Unsolicited(parse));
    }

    #[test]
    fn idless_unknown_command_goes_to_the_one_request_of_that_command() {
        let mut p = Pending::default();
        let mut a = p.register("req_1", "clone").unwrap();
        let _b = p.register("req_2", "get_state").unwrap();
        let unknown = RpcResponse::unknown(None, Some("clone".into()));
        assert_eq!(p.route(1, unknown), Routed::Answered);
        assert!(!a.try_recv().unwrap().unwrap().1.success);
        let undefined = RpcResponse::unknown(None, None);
        assert_eq!(p.route(2, undefined.clone()), Routed::Unsolicited(undefined));
    }

    #[test]
    fn a_second_prompt_response_is_late() {
        let mut p = Pending::default();
        let _a = p.register("req_1", "prompt").unwrap();
        assert_eq!(p.route(1, response(Some("req_1"), "prompt", true)), Routed::Answered);
        let late = response(Some("req_1"), "prompt", false);
        assert_eq!(p.route(2, late.clone()), Routed::Late(late));
        let _b = p.register("req_2", "get_state").unwrap();
        p.route(3, response(Some("req_2"), "get_state", true));
        let again = response(Some("req_2"), "get_state", true);
        assert_eq!(p.route(4, again.clone()), Routed::Unsolicited(again));
    }

    #[test]
    fn only_recent_prompts_are_remembered() {
        let mut p = Pending::default();
        for n in 0..=REMEMBERED_PROMPTS {
            let id = format!("req_{n}");
            let _rx = p.register(&id, "prompt").unwrap();
            p.route(1, response(Some(&id), "prompt", true));
        }
        assert!(matches!(p.route(2, response(Some("req_0"), "prompt", false)), Routed::Unsolicited(_)));
        assert!(matches!(p.route(2, response(Some("req_1"), "prompt", false)), Routed::Late(_)));
    }

    #[test]
    fn closing_fails_waiting_and_later_requests() {
        let mut p = Pending::default();
        let mut a = p.register("req_1", "get_state").unwrap();
        p.close(ExitReport { status: None, stderr: "bye".into() });
        assert!(matches!(a.try_recv().unwrap(), Err(ClientError::Exited(r)) if r.stderr == "bye"));
        assert!(matches!(p.register("req_2", "get_state"), Err(ClientError::Exited(_))));
    }
}
