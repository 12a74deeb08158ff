//! Turning one line (or one already-parsed JSON value) into a [`SessionEntry`].
//!
//! The fast path reads the `type` from the line's first bytes (pi and rho always write it first)
//! and deserializes straight into that entry's struct, so a large session is parsed once, not
//! once into a `Value` and again into the struct. Anything unusual takes the slow path through a
//! `Value`, which is also where lines of unknown types become [`OtherEntry`], and where a line
//! holding a lone surrogate escape (valid for JavaScript, refused by `serde_json`) is read with
//! U+FFFD in its place rather than dropped.

use serde::Deserialize;
use serde_json::Value;

use crate::entry::{
    BranchSummaryEntry, CompactionEntry, ContextEditEntry, CustomEntry, CustomMessageEntry, LabelEntry, MessageEntry,
    ModelChangeEntry, OtherEntry, PI_ENTRY_TYPES, SessionEntry, SessionInfoEntry, ThinkingLevelChangeEntry, UsageEntry,
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
        "context_edit" => ContextEditEntry::deserialize(d).map(SessionEntry::ContextEdit),
        "usage" => UsageEntry::deserialize(d).map(SessionEntry::Usage),
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

/// A `model_change` in the forks' form (`"model":"provider/id"`).
fn is_fork_model_change(entry: &SessionEntry) -> bool {
    matches!(entry, SessionEntry::Other(o) if o.raw().get("model").and_then(Value::as_str).is_some_and(|m| m.contains('/')))
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
    match value_from_line(line) {
        Ok(value) => entry_from_value(value),
        Err(e) => LineOutcome::InvalidJson(e),
    }
}

/// Parses a line into a JSON value, accepting the lone surrogate escapes JavaScript writes (see
/// [`replace_lone_surrogates`]).
pub(crate) fn value_from_line(line: &[u8]) -> Result<Value, String> {
    match serde_json::from_slice::<Value>(line) {
        Ok(value) => Ok(value),
        Err(e) => replace_lone_surrogates(line)
            .and_then(|fixed| serde_json::from_slice::<Value>(&fixed).ok())
            .ok_or_else(|| e.to_string()),
    }
}

/// The four hex digits at the start of `bytes` as a UTF-16 code unit.
fn hex_unit(bytes: Option<&[u8]>) -> Option<u16> {
    let digits = bytes?;
    if digits.len() != 4 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
}

/// pi's strings are JavaScript strings and may hold half of a surrogate pair (a string cut by
/// UTF-16 units in the middle of an emoji); `JSON.stringify` writes such a half as a `\uD83D`
/// escape, which JavaScript reads back but `serde_json` refuses. Returns `line` with every
/// unpaired surrogate escape replaced by `\ufffd` (what any UTF-8 reader shows for it), or
/// `None` when there is none, so a pi line is never lost over half a character.
pub(crate) fn replace_lone_surrogates(line: &[u8]) -> Option<Vec<u8>> {
    let is_high = |u: u16| (0xD800..=0xDBFF).contains(&u);
    let is_low = |u: u16| (0xDC00..=0xDFFF).contains(&u);
    let mut out = Vec::with_capacity(line.len());
    let mut changed = false;
    let mut i = 0;
    while i < line.len() {
        if line[i] != b'\\' {
            out.push(line[i]);
            i += 1;
            continue;
        }
        // An escape: `\\`, `\"`, `\n`, … are copied whole so an escaped backslash is never
        // mistaken for the start of a `\u` escape.
        let unit = if line.get(i + 1) == Some(&b'u') { hex_unit(line.get(i + 2..i + 6)) } else { None };
        let Some(unit) = unit else {
            out.extend_from_slice(line.get(i..i + 2).unwrap_or(&line[i..]));
            i += 2;
            continue;
        };
        let pair_low = (line.get(i + 6..i + 8) == Some(b"\\u".as_slice()))
            .then(|| hex_unit(line.get(i + 8..i + 12)))
            .flatten()
            .filter(|&u| is_low(u));
        if is_high(unit) && pair_low.is_some() {
            out.extend_from_slice(&line[i..i + 12]);
            i += 12;
        } else if is_high(unit) || is_low(unit) {
            out.extend_from_slice(b"\\ufffd");
            changed = true;
            i += 6;
        } else {
            out.extend_from_slice(&line[i..i + 6]);
            i += 6;
        }
    }
    changed.then_some(out)
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
                // xcsh writes `model_change` as `"model":"provider/id"`: understood, not damaged.
                Some(_) if kind == "model_change" && is_fork_model_change(&entry) => LineOutcome::Entry(entry),
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
    fn a_forks_model_change_is_kept_without_a_warning() {
        let line = br#"{"type":"model_change","id":"d","parentId":null,"timestamp":"t","model":"anthropic/x"}"#;
        let LineOutcome::Entry(SessionEntry::Other(o)) = entry_from_line(line) else { panic!("an entry expected") };
        assert_eq!(o.raw()["model"], "anthropic/x");
    }

    #[test]
    fn malformed_known_types_are_kept_with_a_reason() {
        let line = br#"{"type":"model_change","id":"d","parentId":null,"timestamp":"t","model":5}"#;
        let LineOutcome::Degraded(SessionEntry::Other(o), reason) = entry_from_line(line) else {
            panic!("degraded expected")
        };
        assert_eq!(o.raw()["model"], 5);
        assert!(reason.contains("model_change"), "{reason}");
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        let fix = |s: &str| replace_lone_surrogates(s.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(fix(r#"{"t":"a\ud83d"}"#).as_deref(), Some(r#"{"t":"a\ufffd"}"#));
        assert_eq!(fix(r#"{"t":"\udd25x\uD83D\u0041"}"#).as_deref(), Some(r#"{"t":"\ufffdx\ufffd\u0041"}"#));
        // Two high halves in a row: both are lone.
        assert_eq!(fix(r#""\ud83d\ud83d""#).as_deref(), Some(r#""\ufffd\ufffd""#));
        // Whole pairs, other escapes and an escaped backslash before `ud83d` are left alone.
        assert_eq!(fix(r#"{"t":"\ud83d\udd25 \\ud83d \n \"\u00e9"}"#), None);
        // Cut short anywhere: no panic, and nothing to repair.
        for cut in [r#""\"#, r#""\u"#, r#""\ud8"#, r#""\ud83d\"#, r#""\ud83d\ud"#] {
            let _ = fix(cut);
        }
        assert_eq!(fix(r#""\ud83d\ud"#).as_deref(), Some(r#""\ufffd\ud"#));
    }

    #[test]
    fn a_line_with_a_lone_surrogate_still_parses() {
        let line = br#"{"type":"label","id":"b","parentId":"a","timestamp":"t","targetId":"a","label":"\ud83d"}"#;
        let LineOutcome::Entry(SessionEntry::Label(l)) = entry_from_line(line) else { panic!("label expected") };
        assert_eq!(l.label.as_deref(), Some("\u{fffd}"));
        assert!(value_from_line(br#"{"t":"\ud83d"#).is_err(), "still torn after the repair");
    }

    #[test]
    fn lines_that_cannot_be_nodes_are_reported() {
        assert!(matches!(entry_from_line(br#"{"type":"custom"}"#), LineOutcome::NotAnEntry(_)));
        assert!(matches!(entry_from_line(br#"[1,2]"#), LineOutcome::NotAnEntry(_)));
        assert!(matches!(entry_from_line(br#"{"type":"session","id":"x"}"#), LineOutcome::NotAnEntry(_)));
        assert!(matches!(entry_from_line(br#"{"type":"mess"#), LineOutcome::InvalidJson(_)));
    }
}
