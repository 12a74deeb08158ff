//! A request that continues the connection's previous one sends only what is new, with the
//! previous response's id (`previous_response_id`): the server still holds the rest. It may
//! when everything but the input is the same as before and the input starts with the previous
//! request's input followed by the previous reply's items; otherwise the whole body goes.
//!
//! What is compared is kept as fingerprints (a hash of each input item and one of the rest), so
//! a long conversation is not held a second time between requests.

use std::hash::{DefaultHasher, Hasher};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// What the connection's last response leaves to continue from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Continuation {
    rest: u64,
    /// The previous request's input and the previous reply's items.
    baseline: Vec<u64>,
    response_id: String,
}

/// A request body's fingerprints.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fingerprint {
    rest: u64,
    input: Vec<u64>,
}

pub(crate) fn fingerprint(body: &Map<String, Value>) -> Fingerprint {
    let mut rest = DefaultHasher::new();
    for (key, value) in body.iter().filter(|(key, _)| !matches!(key.as_str(), "input" | "previous_response_id")) {
        rest.write(key.as_bytes());
        hash_into(&mut rest, value);
    }
    let input = body.get("input").and_then(Value::as_array).map(|items| items.iter().map(hash).collect());
    Fingerprint { rest: rest.finish(), input: input.unwrap_or_default() }
}

/// What the next request on the same connection can continue from, after a reply with
/// `response_id` whose items are `reply`.
pub(crate) fn after(request: Fingerprint, reply: &[Value], response_id: String) -> Continuation {
    let mut baseline = request.input;
    baseline.extend(reply.iter().map(hash));
    Continuation { rest: request.rest, baseline, response_id }
}

/// How many leading input items the server already holds, and the response to continue, when
/// `request` continues `previous`.
pub(crate) fn delta<'a>(request: &Fingerprint, previous: &'a Continuation) -> Option<(usize, &'a str)> {
    let held = previous.baseline.len();
    let continues = request.rest == previous.rest
        && request.input.len() >= held
        && request.input[..held] == previous.baseline[..]
        && !previous.response_id.is_empty();
    continues.then_some((held, previous.response_id.as_str()))
}

/// The websocket message for a request: `{"type": "response.create", …body}`, with only the
/// input after the first `skip` items and `previous_response_id` when it continues a response.
/// Written straight from the body, without a copy of it.
pub(crate) fn create_message(
    body: &Map<String, Value>,
    continues: Option<(usize, &str)>,
) -> serde_json::Result<String> {
    serde_json::to_string(&Create { body, continues })
}

struct Create<'a> {
    body: &'a Map<String, Value>,
    continues: Option<(usize, &'a str)>,
}

impl Serialize for Create<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "response.create")?;
        for (key, value) in self.body {
            match (key.as_str(), self.continues, value) {
                ("type" | "previous_response_id", _, _) => {}
                ("input", Some((skip, _)), Value::Array(items)) => {
                    map.serialize_entry(key, &items[skip.min(items.len())..])?;
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        if let Some((_, response_id)) = self.continues {
            map.serialize_entry("previous_response_id", response_id)?;
        }
        map.end()
    }
}

fn hash(value: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    hash_into(&mut hasher, value);
    hasher.finish()
}

/// Feeds `value`'s JSON text to `hasher` without building the text.
fn hash_into(hasher: &mut DefaultHasher, value: &Value) {
    struct Feed<'a>(&'a mut DefaultHasher);
    impl std::io::Write for Feed<'_> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Writing into a hasher cannot fail.
    let _ = serde_json::to_writer(Feed(hasher), value);
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn body(input: Value) -> Map<String, Value> {
        let Value::Object(map) = json!({"model": "gpt-5.2-codex", "store": false, "input": input, "tools": []}) else {
            unreachable!()
        };
        map
    }

    #[test]
    fn a_request_that_extends_the_last_sends_only_what_is_new() {
        let first = body(json!([{"role": "user", "content": "hi"}]));
        let reply = [json!({"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"})];
        let previous = after(fingerprint(&first), &reply, "resp_1".into());

        let second = body(json!([
            {"role": "user", "content": "hi"},
            reply[0],
            {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
        ]));
        let continues = delta(&fingerprint(&second), &previous);
        assert_eq!(continues, Some((2, "resp_1")));
        let message: Value = serde_json::from_str(&create_message(&second, continues).unwrap()).unwrap();
        assert_eq!(
            message,
            json!({
                "type": "response.create",
                "model": "gpt-5.2-codex",
                "store": false,
                "input": [{"type": "function_call_output", "call_id": "c1", "output": "a.txt"}],
                "tools": [],
                "previous_response_id": "resp_1",
            })
        );
        let keys: Vec<&str> = message.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["type", "model", "store", "input", "tools", "previous_response_id"]);
    }

    #[test]
    fn a_changed_history_or_option_sends_the_whole_body() {
        let first = body(json!([{"role": "user", "content": "hi"}]));
        let previous = after(fingerprint(&first), &[json!({"role": "assistant", "content": "yo"})], "resp_1".into());

        let edited = body(json!([{"role": "user", "content": "hello"}, {"role": "assistant", "content": "yo"}]));
        assert_eq!(delta(&fingerprint(&edited), &previous), None);

        let mut other_model = body(json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]));
        other_model.insert("model".into(), json!("gpt-5.1"));
        assert_eq!(delta(&fingerprint(&other_model), &previous), None);

        let shorter = body(json!([{"role": "user", "content": "hi"}]));
        assert_eq!(delta(&fingerprint(&shorter), &previous), None);

        let whole: Value = serde_json::from_str(&create_message(&first, None).unwrap()).unwrap();
        assert_eq!(whole["input"], json!([{"role": "user", "content": "hi"}]));
        assert_eq!(whole.get("previous_response_id"), None);
    }
}
