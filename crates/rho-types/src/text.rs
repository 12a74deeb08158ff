//! [`Text`]: a message's text (a text or thinking block, an image's data), shared instead of
//! copied between the places that hold the same message: the agent's conversation, the session
//! file's entries, the events a mode writes, the context of a request. Cloning one is a count
//! update, so a 50 MB prompt is in memory once however many of them hold it.
//!
//! It reads as a `&str` (`Deref`), compares with strings, and serializes as a JSON string. A
//! stream's deltas are appended in place ([`Text::push_str`]) while no one else holds the text;
//! once shared, the first append copies it (copy on write).

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Shared, copy-on-write text.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(Arc<String>);

impl Text {
    pub fn new(text: impl Into<String>) -> Self {
        Self(Arc::new(text.into()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Appends `more`: in place while this is the only holder, else on a copy of its own.
    pub fn push_str(&mut self, more: &str) {
        Arc::make_mut(&mut self.0).push_str(more);
    }

    /// Appends `more`, sharing it when this is empty (a reply that arrives in one delta is then
    /// held once by every copy of the message that applies it).
    pub fn append(&mut self, more: &Text) {
        if self.is_empty() {
            *self = more.clone();
        } else {
            self.push_str(more);
        }
    }

    /// The text as an owned `String`: moved out when this is the only holder, else copied.
    pub fn into_string(self) -> String {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| String::clone(&shared))
    }

    /// Whether `self` and `other` are the same text in memory (not only equal).
    pub fn shares_with(&self, other: &Text) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Self::new(text.as_str())
    }
}

impl From<&Text> for Text {
    fn from(text: &Text) -> Self {
        text.clone()
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        text.into_string()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn clones_share_and_an_append_copies_only_when_shared() {
        let mut a = Text::new("hello");
        a.push_str(", world");
        let b = a.clone();
        assert!(a.shares_with(&b));
        a.push_str("!");
        assert!(!a.shares_with(&b));
        assert_eq!((a.as_str(), b.as_str()), ("hello, world!", "hello, world"));
    }

    #[test]
    fn appending_to_empty_text_shares_the_delta() {
        let delta = Text::new("the whole reply");
        let mut text = Text::default();
        text.append(&delta);
        assert!(text.shares_with(&delta));
        text.append(&Text::new(", and more"));
        assert_eq!((text.as_str(), delta.as_str()), ("the whole reply, and more", "the whole reply"));
    }

    #[test]
    fn it_is_a_json_string_and_compares_with_strings() {
        let text: Text = serde_json::from_str("\"a \\\"quoted\\\" word\"").unwrap();
        assert_eq!(text, "a \"quoted\" word");
        assert_eq!(serde_json::to_string(&text).unwrap(), "\"a \\\"quoted\\\" word\"");
        assert_eq!(text.clone().into_string(), String::from("a \"quoted\" word"));
        assert!(text.starts_with("a "), "reads as a str");
    }
}
