//! `set_todos` input: the phases a host sends, checked and normalized.

use rho_rpc::TodoPhase;
use serde_json::Value;

/// The phases of a `set_todos` command, or an error naming what is wrong.
pub fn normalize_phases(phases: &Value) -> Result<Vec<TodoPhase>, String> {
    serde_json::from_value(phases.clone()).map_err(|e| format!("Invalid todo phases: {e}"))
}
