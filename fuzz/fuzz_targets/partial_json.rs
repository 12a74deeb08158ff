//! Fuzzes the partial-JSON parser that reads streaming tool-call arguments: any bytes give an
//! object without panicking, and when the bytes are a JSON object, every prefix parses and the
//! whole parses to itself (the checks of rho-ai's proptest suite, shared through
//! `partial_json_checks.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/rho-ai/tests/support/partial_json_checks.rs"]
mod partial_json_checks;

fuzz_target!(|data: &[u8]| {
    partial_json_checks::check_any(data);
    if let Ok(serde_json::Value::Object(whole)) = serde_json::from_slice::<serde_json::Value>(data) {
        partial_json_checks::check_prefixes(&whole);
    }
});
