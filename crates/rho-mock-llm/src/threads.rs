//! Anthropic's message threads as the mock keeps them: the reply (`msg_mock_<n>`) to a request
//! with `thread` (`create` or `continue`) heads a thread that one later request may continue; a
//! continuation of a head the mock does not know, or of one already continued, is refused with
//! the API's error codes (`thread_not_found`, `thread_already_continued`). A server told to
//! refuse threads answers any `thread` field as an endpoint that does not know it does.

use std::collections::HashMap;

use serde_json::{Value, json};

#[derive(Debug, Default)]
pub(crate) struct Threads {
    /// Thread heads by reply id: whether a request continued it already.
    heads: HashMap<String, bool>,
    /// The endpoint knows no threads.
    pub refused: bool,
}

impl Threads {
    /// Admits request `seq`'s `thread`, if any: its reply then heads the thread. `Err` is the
    /// status and error body of a refusal.
    pub fn admit(&mut self, body: &Value, seq: u64) -> Result<(), (u16, Value)> {
        let Some(thread) = body.get("thread") else { return Ok(()) };
        if self.refused {
            return Err(refusal("thread: Extra inputs are not permitted", None));
        }
        match thread.get("type").and_then(Value::as_str) {
            Some("create") => {}
            Some("continue") => {
                let id = thread.get("previous_message_id").and_then(Value::as_str).unwrap_or_default();
                match self.heads.get_mut(id) {
                    None => return Err(refusal(&format!("thread {id} not found"), Some("thread_not_found"))),
                    Some(true) => {
                        return Err(refusal(
                            &format!("thread {id} already continued"),
                            Some("thread_already_continued"),
                        ));
                    }
                    Some(continued) => *continued = true,
                }
            }
            _ => return Err(refusal("thread.type must be create or continue", None)),
        }
        self.heads.insert(format!("msg_mock_{seq}"), false);
        Ok(())
    }

    /// Every thread expires.
    pub fn forget(&mut self) {
        self.heads.clear();
    }
}

fn refusal(message: &str, code: Option<&str>) -> (u16, Value) {
    let mut error = json!({"type": "invalid_request_error", "message": message});
    if let Some(code) = code {
        error["details"] = json!({"error_code": code});
    }
    (400, json!({"type": "error", "error": error}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_continued_once_and_an_unknown_one_never() {
        let mut threads = Threads::default();
        assert!(threads.admit(&json!({"messages": []}), 1).is_ok(), "no thread, nothing to admit");
        assert!(threads.admit(&json!({"thread": {"type": "create"}}), 2).is_ok());
        let next = json!({"thread": {"type": "continue", "previous_message_id": "msg_mock_2"}});
        assert!(threads.admit(&next, 3).is_ok());
        let (status, body) = threads.admit(&next, 4).unwrap_err();
        assert_eq!((status, &body["error"]["details"]["error_code"]), (400, &json!("thread_already_continued")));
        threads.forget();
        let after = json!({"thread": {"type": "continue", "previous_message_id": "msg_mock_3"}});
        assert_eq!(threads.admit(&after, 5).unwrap_err().1["error"]["details"]["error_code"], "thread_not_found");
        threads.refused = true;
        let (status, body) = threads.admit(&json!({"thread": {"type": "create"}}), 6).unwrap_err();
        assert_eq!((status, body["error"].get("details")), (400, None));
    }
}
