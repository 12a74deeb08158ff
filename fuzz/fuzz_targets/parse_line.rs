//! Fuzzes the inbound parser: any input, read as one stdin line, must give exactly one
//! well-formed `Inbound` without panicking, echo any id it carried, and survive a round trip
//! when accepted (the checks of the proptest suite, shared through `line_checks.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/rho-rpc/tests/support/line_checks.rs"]
mod line_checks;

fuzz_target!(|data: &[u8]| {
    line_checks::check_line(data);
});
