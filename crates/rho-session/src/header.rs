//! The first line of every session file: `{"type":"session","version":3,"id":…,"timestamp":…,
//! "cwd":…,"parentSession"?:…}`. A file whose first line is not one of these is not a session.

use serde::{Deserialize, Serialize};

/// The session format version rho writes; older files are migrated on load.
pub const CURRENT_VERSION: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum SessionTag {
    #[serde(rename = "session")]
    Session,
}

fn version_one() -> u32 {
    1
}

/// The session header, keys in pi's order. xcsh's `title` / `titleSource` are kept when present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    #[serde(rename = "type")]
    tag: SessionTag,
    /// Absent in version-1 files.
    #[serde(default = "version_one")]
    pub version: u32,
    /// The session UUID (also in the file name).
    pub id: String,
    /// Creation time, ISO-8601.
    #[serde(default)]
    pub timestamp: String,
    /// Working directory at creation; empty for very old files.
    #[serde(default)]
    pub cwd: String,
    /// Absolute path of the session this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_source: Option<String>,
}

impl SessionHeader {
    /// A current-version header.
    pub fn new(
        id: impl Into<String>,
        timestamp: impl Into<String>,
        cwd: impl Into<String>,
        parent_session: Option<String>,
    ) -> Self {
        Self {
            tag: SessionTag::Session,
            version: CURRENT_VERSION,
            id: id.into(),
            timestamp: timestamp.into(),
            cwd: cwd.into(),
            parent_session,
            title: None,
            title_source: None,
        }
    }

    /// Parses a first line, saying why it is not a header when it is not.
    pub fn parse_line(line: &[u8]) -> Result<Self, String> {
        let value: serde_json::Value =
            serde_json::from_slice(line).map_err(|e| format!("first line is not valid JSON: {e}"))?;
        match value.get("type").and_then(|t| t.as_str()) {
            Some("session") => {}
            Some(other) => {
                return Err(format!("first line has type \"{other}\", expected \"session\""));
            }
            None => return Err("first line has no \"type\"".to_owned()),
        }
        if !value.get("id").is_some_and(|id| id.is_string()) {
            return Err("session header has no string \"id\"".to_owned());
        }
        Self::deserialize(&value).map_err(|e| format!("malformed session header: {e}"))
    }

    /// The JSON line for this header, `\n` included.
    pub fn to_line(&self) -> serde_json::Result<Vec<u8>> {
        let mut out = rho_types::json::to_vec(self)?;
        out.push(b'\n');
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_keys_in_pi_order() {
        let h = SessionHeader::new(
            "5b0c8f0e-2f6a-4f7e-9a51-0d3e2c9f8a11",
            "2026-03-15T10:00:00.000Z",
            "/home/me/proj",
            None,
        );
        assert_eq!(
            String::from_utf8(h.to_line().unwrap()).unwrap(),
            "{\"type\":\"session\",\"version\":3,\"id\":\"5b0c8f0e-2f6a-4f7e-9a51-0d3e2c9f8a11\",\"timestamp\":\"2026-03-15T10:00:00.000Z\",\"cwd\":\"/home/me/proj\"}\n"
        );
        let forked = SessionHeader::new("x", "t", "/c", Some("/p.jsonl".into()));
        assert!(
            String::from_utf8(forked.to_line().unwrap())
                .unwrap()
                .ends_with(",\"cwd\":\"/c\",\"parentSession\":\"/p.jsonl\"}\n")
        );
    }

    #[test]
    fn version_one_headers_have_no_version() {
        let h = SessionHeader::parse_line(br#"{"type":"session","id":"abc","timestamp":"t"}"#).unwrap();
        assert_eq!(h.version, 1);
        assert_eq!(h.cwd, "");
    }

    #[test]
    fn non_headers_are_refused_with_a_reason() {
        let not_json = SessionHeader::parse_line(b"hello").unwrap_err();
        assert!(not_json.contains("not valid JSON"), "{not_json}");
        let wrong = SessionHeader::parse_line(br#"{"type":"message","id":"a"}"#).unwrap_err();
        assert!(wrong.contains("\"message\""), "{wrong}");
        let no_id = SessionHeader::parse_line(br#"{"type":"session","id":3}"#).unwrap_err();
        assert!(no_id.contains("\"id\""), "{no_id}");
    }
}
