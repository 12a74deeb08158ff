//! Helpers shared by the integration tests.

pub mod line_checks;
