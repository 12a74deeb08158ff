//! Turning one line (or one already-parsed JSON value) into a [`SessionEntry`].
//!
//! The fast path reads the `type` from the line's first bytes (pi and rho always write it first)
//! and deserializes straight into that entry's struct, so a large session is parsed once, not
//! once into a `Value` and again into the struct. Anything unusual takes the slow path through a
//! `Value`, which is also where lines of unknown types become [`OtherEntry`].

use serde::Deserialize;
use serde_json::Value;

use crate::entry::{
    BranchSummaryEntry, CompactionEntry, CustomEntry, CustomMessageEntry, LabelEntry, MessageEntry, ModelChangeEntry,
    OtherEntry, PI_ENTRY_TYPES, SessionEntry, SessionInfoEntry, ThinkingLevelChangeEntry,
};

/// What a line turned out to be.
#[derive(Debug)]
pub(crate) enum LineOutcome {
    Entry(SessionEntry),
    /// A pi entry type whose fields could not be read; kept as [`OtherEntry`], with the reason.
    Degraded(SessionEntry, String),
    /// Valid JSON that cannot be a tree node (no `type` or no `id`, or a second header).
    NotAnEntry(String),
    InvalidJson(String),
}

/// Deserializes the struct of entry type `kind`, or `None` when rho does not model `kind`.
fn typed<'de, D: serde::Deserializer<'de>>(kind: &str, d: D) -> Option<Result<SessionEntry, D::Error>> {
    Some(match kind {
        "message" => MessageEntry::deserialize(d).map(SessionEntry::Message),
        "model_change" => ModelChangeEntry::deserialize(d).map(SessionEntry::ModelChange),
        "thinking_level_change" => ThinkingLevelChangeEntry::deserialize(d).map(SessionEntry::ThinkingLevelChange),
        "compaction" => CompactionEntry::deserialize(d).map(SessionEntry::Compaction),
        "branch_summary" => BranchSummaryEntry::deserialize(d).map(SessionEntry::BranchSummary),
        "custom" => CustomEntry::deserialize(d).map(SessionEntry::Custom),
        "custom_message" => CustomMessageEntry::deserialize(d).map(SessionEntry::CustomMessage),
        "label" => LabelEntry::deserialize(d).map(SessionEntry::Label),
        "session_info" => SessionInfoEntry::deserialize(d).map(SessionEntry::SessionInfo),
        _ => return None,
    })
}

/// The `type` when the line starts with `{"type":"<plain string>"`.
fn leading_type(line: &[u8]) -> Option<&str> {
    const PREFIX: &[u8] = br#"{"type":""#;
    let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
    let rest = line[start..].strip_prefix(PREFIX)?;
    let end = rest.iter().position(|&b| b == b'"' || b == b'\\')?;
    if rest[end] != b'"' {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()
}

/// Parses one line of a current-version file.
pub(crate) fn entry_from_line(line: &[u8]) -> LineOutcome {
    if let Some(kind) = leading_type(line) {
        let mut de = serde_json::Deserializer::from_slice(line);
        if let Some(Ok(entry)) = typed(kind, &mut de)
            && de.end().is_ok()
        {
            return LineOutcome::Entry(entry);
        }
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(value) => entry_from_value(value),
        Err(e) => LineOutcome::InvalidJson(e.to_string()),
    }
}

/// Interprets one JSON value as an entry.
pub(crate) fn entry_from_value(value: Value) -> LineOutcome {
    let kind = match value.get("type").and_then(Value::as_str) {
        Some(k) => k.to_owned(),
        None => return LineOutcome::NotAnEntry("line has no string \"type\"".to_owned()),
    };
    if kind == "session" {
        return LineOutcome::NotAnEntry("a second session header".to_owned());
    }
    let typed_error = match typed(&kind, &value) {
        Some(Ok(entry)) => return LineOutcome::Entry(entry),
        Some(Err(e)) => Some(e.to_string()),
        None => None,
    };
    match OtherEntry::from_value(value) {
        Ok(other) => {
            let entry = SessionEntry::Other(other);
            match typed_error {
                Some(e) if PI_ENTRY_TYPES.contains(&kind.as_str()) => {
                    LineOutcome::Degraded(entry, format!("{kind} entry kept as-is: {e}"))
                }
                _ => LineOutcome::Entry(entry),
            }
        }
        Err(reason) => LineOutcome::NotAnEntry(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_leading_type() {
        assert_eq!(leading_type(br#"{"type":"message","id":"a"}"#), Some("message"));
        assert_eq!(leading_type(br#"  {"type":"label"}"#), Some("label"));
        assert_eq!(leading_type(br#"{"id":"a","type":"label"}"#), None);
        assert_eq!(leading_type(br#"{"type":"a\"b"}"#), None);
    }

    #[test]
    fn known_types_parse_typed_and_unknown_types_are_kept() {
        let LineOutcome::Entry(SessionEntry::Label(l)) =
            entry_from_line(br#"{"type":"label","id":"b","parentId":"a","timestamp":"t","targetId":"a","label":"x"}"#)
        else {
            panic!("label expected")
        };
        assert_eq!(l.label.as_deref(), Some("x"));

        let line = r#"{"type":"ttsr_injection","id":"c","parentId":"b","timestamp":"t","injectedRules":["r"]}"#;
        let LineOutcome::Entry(SessionEntry::Other(o)) = entry_from_line(line.as_bytes()) else {
            panic!("other expected")
        };
        assert_eq!(o.entry_type(), "ttsr_injection");
        assert_eq!(SessionEntry::Other(o).to_line().unwrap(), format!("{line}\n").into_bytes());
    }

    #[test]
    fn malformed_known_types_are_kept_with_a_reason() {
        let line = br#"{"type":"model_change","id":"d","parentId":null,"timestamp":"t","model":"anthropic/x"}"#;
        let LineOutcome::Degraded(SessionEntry::Other(o), reason) = entry_from_line(line) else {
            panic!("degraded expected")
        };
        assert_eq!(o.raw()["model"], "anthropic/x");
        assert!(reason.contains("model_change"), "{reason}");
    }

    #[test]
    fn lines_that_cannot_be_nodes_are_reported() {
        assert!(matches!(entry_from_line(br#"{"type":"custom"}"#), LineOutcome::NotAnEntry(_)));
        assert!(matches!(entry_from_line(br#"[1,2]"#), LineOutcome::NotAnEntry(_)));
        assert!(matches!(entry_from_line(br#"{"type":"session","id":"x"}"#), LineOutcome::NotAnEntry(_)));
        assert!(matches!(entry_from_line(br#"{"type":"mess"#), LineOutcome::InvalidJson(_)));
    }
}
