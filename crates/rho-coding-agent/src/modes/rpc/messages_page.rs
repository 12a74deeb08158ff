//! omp's `get_messages_page`: the conversation a page at a time, so a host reads a session of
//! any size without one response passing the frame bound.
//!
//! A cursor is base64url (no padding) of `{"version":1,"sessionId","leafId","messageCount",
//! "offset"}`: the snapshot it was cut from and where the next page starts. A cursor whose
//! snapshot no longer matches the conversation is stale. A page holds at most `limit` messages
//! (default 100, at most 256) and about 768 KiB of them, and never fewer than one.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rho_rpc::MessagesPageData;
use rho_types::AgentMessage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A page stops before passing this many bytes of messages (the first one always goes in).
const PAGE_BYTES: usize = 768 * 1024;
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 256;

/// Why a page could not be read: the text, and omp's `code` where it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageError {
    pub message: &'static str,
    pub code: Option<&'static str>,
}

impl PageError {
    const BUSY: Self =
        Self { message: "Cannot page messages while the session is changing", code: Some("session_busy") };
    const LIMIT: Self = Self { message: "RPC message page limit must be between 1 and 256", code: None };
    const CURSOR: Self = Self { message: "Invalid RPC message cursor", code: None };
    const STALE: Self = Self { message: "RPC message cursor is stale", code: Some("stale_cursor") };
}

/// What a cursor was cut from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Cursor {
    version: u32,
    session_id: String,
    leaf_id: Option<String>,
    message_count: usize,
    offset: usize,
}

/// The conversation as the page is cut from it.
pub struct Snapshot<'a> {
    pub messages: &'a [AgentMessage],
    pub session_id: &'a str,
    pub leaf_id: Option<&'a str>,
    /// A run or a compaction is changing the conversation.
    pub busy: bool,
}

/// One page, or why not.
pub fn page(
    snapshot: &Snapshot<'_>,
    cursor: Option<&str>,
    limit: Option<&Value>,
) -> Result<MessagesPageData, PageError> {
    if snapshot.busy {
        return Err(PageError::BUSY);
    }
    let limit = match limit {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=MAX_LIMIT as u64).contains(&n) => n as usize,
            _ => return Err(PageError::LIMIT),
        },
    };
    let total = snapshot.messages.len();
    let offset = match cursor {
        None => 0,
        Some(text) => {
            let cursor = decode(text).ok_or(PageError::CURSOR)?;
            if cursor.session_id != snapshot.session_id
                || cursor.leaf_id.as_deref() != snapshot.leaf_id
                || cursor.message_count != total
            {
                return Err(PageError::STALE);
            }
            cursor.offset
        }
    };
    let mut used = 2;
    let mut end = offset;
    for message in &snapshot.messages[offset..] {
        if end - offset == limit {
            break;
        }
        let size = rho_types::json::to_vec(message).map_or(0, |b| b.len()) + usize::from(end > offset);
        if end > offset && used + size > PAGE_BYTES {
            break;
        }
        used += size;
        end += 1;
    }
    let next_cursor = (end < total).then(|| {
        encode(&Cursor {
            version: 1,
            session_id: snapshot.session_id.to_owned(),
            leaf_id: snapshot.leaf_id.map(str::to_owned),
            message_count: total,
            offset: end,
        })
    });
    Ok(MessagesPageData { messages: snapshot.messages[offset..end].to_vec(), next_cursor, total_messages: total })
}

fn encode(cursor: &Cursor) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(cursor).unwrap_or_default())
}

/// A cursor this server wrote, or `None` for anything else.
fn decode(text: &str) -> Option<Cursor> {
    if text.is_empty()
        || text.len() > 2048
        || !text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
    let cursor: Cursor = serde_json::from_slice(&bytes).ok()?;
    let valid = cursor.version == 1
        && (1..=256).contains(&cursor.session_id.len())
        && cursor.leaf_id.as_ref().is_none_or(|l| (1..=256).contains(&l.len()))
        && cursor.offset <= cursor.message_count;
    valid.then_some(cursor)
}

#[cfg(test)]
mod tests {
    use rho_types::types::{UserMessage, UserMessageContent};
    use serde_json::json;

    use super::*;

    fn user(text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: UserMessageContent::Text(text.into()),
            synthetic: None,
            attribution: None,
            timestamp: 0,
        })
    }

    fn snapshot(messages: &[AgentMessage]) -> Snapshot<'_> {
        Snapshot { messages, session_id: "s1", leaf_id: Some("abcd1234"), busy: false }
    }

    #[test]
    fn pages_cover_every_message_once() {
        let messages: Vec<AgentMessage> = (0..7).map(|i| user(&format!("m{i}"))).collect();
        let first = page(&snapshot(&messages), None, Some(&json!(3))).unwrap();
        assert_eq!((first.messages.len(), first.total_messages), (3, 7));
        let second = page(&snapshot(&messages), first.next_cursor.as_deref(), Some(&json!(3))).unwrap();
        let third = page(&snapshot(&messages), second.next_cursor.as_deref(), Some(&json!(3))).unwrap();
        assert_eq!(third.messages, messages[6..]);
        assert!(third.next_cursor.is_none());
    }

    #[test]
    fn a_page_stops_at_its_byte_budget_but_always_holds_one_message() {
        let messages: Vec<AgentMessage> = (0..4).map(|_| user(&"x".repeat(500 * 1024))).collect();
        let first = page(&snapshot(&messages), None, None).unwrap();
        assert_eq!(first.messages.len(), 1);
        let huge = vec![user(&"y".repeat(2 * 1024 * 1024))];
        assert_eq!(page(&snapshot(&huge), None, None).unwrap().messages.len(), 1);
    }

    #[test]
    fn bad_limits_cursors_and_changed_conversations_are_refused() {
        let messages: Vec<AgentMessage> = (0..3).map(|i| user(&format!("m{i}"))).collect();
        for limit in [json!(0), json!(257), json!("3"), json!(1.5)] {
            assert_eq!(page(&snapshot(&messages), None, Some(&limit)).unwrap_err(), PageError::LIMIT);
        }
        for cursor in ["", "not base64!", "e30", &"A".repeat(3000)] {
            assert_eq!(page(&snapshot(&messages), Some(cursor), None).unwrap_err(), PageError::CURSOR);
        }
        let cursor = page(&snapshot(&messages), None, Some(&json!(1))).unwrap().next_cursor.unwrap();
        let longer: Vec<AgentMessage> = messages.iter().cloned().chain([user("new")]).collect();
        assert_eq!(page(&snapshot(&longer), Some(&cursor), None).unwrap_err(), PageError::STALE);
        let busy = Snapshot { busy: true, ..snapshot(&messages) };
        assert_eq!(page(&busy, None, None).unwrap_err(), PageError::BUSY);
    }
}
