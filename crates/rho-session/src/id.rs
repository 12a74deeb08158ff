//! Entry ids and the two kinds of timestamps a session file holds.
//!
//! Entry ids are pi's: the first 8 hex digits of a random v4 UUID, redrawn on collision with an
//! id already in the session, and a full UUID after 100 collisions. Entry timestamps are ISO-8601
//! strings with millisecond precision (`2026-03-15T22:40:18.123Z`, JavaScript's
//! `toISOString`); message timestamps are Unix milliseconds and live in the messages themselves.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

/// The id of a session entry (8 lowercase hex digits for entries rho writes; any string in files
/// written by others).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EntryId(String);

impl EntryId {
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// A fresh id that `taken` does not hold.
    pub fn generate(taken: impl Fn(&str) -> bool) -> Self {
        for _ in 0..100 {
            let uuid = uuid::Uuid::new_v4().simple().to_string();
            let short = &uuid[..8];
            if !taken(short) {
                return Self(short.to_owned());
            }
        }
        Self(uuid::Uuid::new_v4().to_string())
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Borrow<str> for EntryId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for EntryId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for EntryId {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

impl From<String> for EntryId {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl PartialEq<str> for EntryId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for EntryId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// A new random session id (a v4 UUID, as in the file name and header).
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `t` as JavaScript's `Date.prototype.toISOString` writes it.
pub fn iso_timestamp(t: OffsetDateTime) -> String {
    let format = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    t.to_offset(time::UtcOffset::UTC).format(&format).unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned())
}

/// Now, as an entry timestamp.
pub fn now_iso() -> String {
    iso_timestamp(OffsetDateTime::now_utc())
}

/// Unix milliseconds of an ISO-8601 timestamp, or `None` when it does not parse.
pub fn iso_to_ms(iso: &str) -> Option<i64> {
    let t = OffsetDateTime::parse(iso, &Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

/// The ISO timestamp as it appears in a session file name: `:` and `.` become `-`.
pub fn file_name_timestamp(iso: &str) -> String {
    iso.replace([':', '.'], "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_short_hex_and_avoid_taken_ones() {
        let id = EntryId::generate(|_| false);
        assert_eq!(id.as_str().len(), 8);
        assert!(id.as_str().chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
        // Everything short is taken: falls back to a full UUID.
        let long = EntryId::generate(|s| s.len() == 8);
        assert_eq!(long.as_str().len(), 36);
    }

    #[test]
    fn iso_timestamps_match_javascript() {
        let t = OffsetDateTime::from_unix_timestamp_nanos(1_773_568_805_007_000_000).unwrap();
        let iso = iso_timestamp(t);
        assert_eq!(iso, "2026-03-15T10:00:05.007Z");
        assert_eq!(iso_to_ms(&iso), Some(1_773_568_805_007));
        assert_eq!(file_name_timestamp(&iso), "2026-03-15T10-00-05-007Z");
        assert_eq!(iso_to_ms("yesterday"), None);
    }
}
