//! Reading a tool's (already schema-validated) arguments without trusting them: a missing or
//! mistyped field is an error result, and numbers are clamped into the range a tool can use,
//! never a panic.

use rho_agent::ToolError;
use serde_json::{Map, Value};

pub type Args = Map<String, Value>;

/// A required string argument.
pub fn string(args: &Args, key: &str) -> Result<String, ToolError> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(ToolError::new(format!("{key} must be a string"))),
        None => Err(ToolError::new(format!("must have required property '{key}'"))),
    }
}

/// An optional string argument (`null` counts as absent).
pub fn opt_string(args: &Args, key: &str) -> Option<String> {
    match args.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    }
}

/// A count from a number argument: fractions dropped, negatives clamped to 0, huge values capped.
pub fn count(n: f64) -> usize {
    if n.is_nan() || n <= 0.0 {
        0
    } else if n >= usize::MAX as f64 {
        usize::MAX
    } else {
        n.trunc() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_never_panic() {
        assert_eq!(count(-3.0), 0);
        assert_eq!(count(2.9), 2);
        assert_eq!(count(1e300), usize::MAX);
        assert_eq!(count(f64::NAN), 0);
    }

    #[test]
    fn reads_arguments() {
        let args = json!({"path": "a", "n": 3, "b": true, "z": null}).as_object().cloned().unwrap();
        assert_eq!(string(&args, "path").unwrap(), "a");
        assert!(string(&args, "missing").is_err());
        assert_eq!(opt_string(&args, "path").as_deref(), Some("a"));
        assert_eq!(opt_string(&args, "n"), None);
    }
}
