//! Property tests of the partial-JSON parser that reads streaming tool-call arguments (the fuzz
//! target `fuzz/fuzz_targets/partial_json.rs` runs the same checks on arbitrary bytes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/partial_json_checks.rs"]
mod partial_json_checks;

use proptest::prelude::*;
use serde_json::{Map, Value};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z \"\\\\{}\\[\\]:,é😀\n]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_input_gives_an_object(data in prop::collection::vec(any::<u8>(), 0..200)) {
        partial_json_checks::check_any(&data);
    }

    #[test]
    fn an_object_cut_anywhere_parses_and_whole_parses_to_itself(
        members in prop::collection::vec(("[a-z_]{1,6}", json_value()), 0..5)
    ) {
        let whole: Map<String, Value> = members.into_iter().collect();
        partial_json_checks::check_prefixes(&whole);
    }
}
