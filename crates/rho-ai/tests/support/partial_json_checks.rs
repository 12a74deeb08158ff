//! The properties of the partial-JSON parser on model output, shared by the proptest suite and
//! the fuzz target: any input gives an object without panicking, and a complete object, cut
//! anywhere, gives at each cut an object whose members are members (or growing prefixes of the
//! members) of the whole, and the whole object at the end.

use serde_json::{Map, Value};

/// Whatever `data` is, the parser answers with an object and does not panic.
pub fn check_any(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = rho_ai::partial_json::parse_object(&text);
}

/// `whole` (a JSON object) streamed in: every prefix parses; the full text parses to `whole`.
pub fn check_prefixes(whole: &Map<String, Value>) {
    let text = Value::Object(whole.clone()).to_string();
    for (cut, _) in text.char_indices() {
        let partial = rho_ai::partial_json::parse_object(&text[..cut]);
        for key in partial.keys() {
            // A key being written may be cut short: it is a prefix of one of the object's keys.
            assert!(whole.keys().any(|k| k.starts_with(key.as_str())), "{key:?} from {:?}", &text[..cut]);
        }
    }
    assert_eq!(&rho_ai::partial_json::parse_object(&text), whole, "the complete text");
}
