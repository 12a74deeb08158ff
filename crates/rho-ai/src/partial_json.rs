//! Best-effort parsing of a JSON object that is still streaming in, for the `arguments` of a
//! tool call shown in partial messages. Incomplete strings are closed, open containers closed,
//! and an incomplete trailing member dropped; anything unparseable yields an empty object.

use serde_json::{Map, Value};

/// Parses the longest sensible prefix of `raw` as a JSON object.
pub fn parse_object(raw: &str) -> Map<String, Value> {
    if raw.trim().is_empty() {
        return Map::new();
    }
    if let Ok(Value::Object(map)) = serde_json::from_str(raw) {
        return map;
    }
    let mut text = raw.trim_end();
    // Each round either parses or strictly shortens `text`.
    for _ in 0..64 {
        if let Some(closed) = close(text)
            && let Ok(Value::Object(map)) = serde_json::from_str(&closed)
        {
            return map;
        }
        match cut_last_member(text) {
            Some(shorter) if shorter.len() < text.len() => text = shorter,
            _ => break,
        }
    }
    Map::new()
}

/// Closes an open string and every open container of `text`.
fn close(text: &str) -> Option<String> {
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut string_start = 0;
    for (i, c) in text.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                string_start = i;
            }
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                stack.pop()?;
            }
            _ => {}
        }
    }
    let mut out = String::with_capacity(text.len() + stack.len() + 2);
    if in_string {
        let body = &text[string_start..];
        out.push_str(&text[..string_start]);
        out.push_str(trim_broken_escape(body));
        out.push('"');
    } else {
        out.push_str(text);
    }
    let trimmed_len = out.trim_end().len();
    out.truncate(trimmed_len);
    if out.ends_with(',') {
        out.pop();
    } else if out.ends_with(':') {
        out.push_str("null");
    }
    while let Some(closer) = stack.pop() {
        out.push(closer);
    }
    Some(out)
}

/// Drops an escape sequence cut off at the end of a string body (`\` or `\u00`).
fn trim_broken_escape(body: &str) -> &str {
    let bytes = body.as_bytes();
    let mut backslashes = 0;
    for &b in bytes.iter().rev() {
        if b == b'\\' {
            backslashes += 1;
        } else {
            break;
        }
    }
    if backslashes % 2 == 1 {
        return &body[..body.len() - 1];
    }
    if let Some(pos) = body.rfind("\\u") {
        let tail = &body[pos + 2..];
        let preceding = body[..pos].bytes().rev().take_while(|&b| b == b'\\').count();
        if preceding % 2 == 0 && tail.len() < 4 && tail.bytes().all(|b| b.is_ascii_hexdigit()) {
            return &body[..pos];
        }
    }
    body
}

/// Cuts `text` back to before its last top-level-in-container member separator, or to just
/// after the last opening bracket.
fn cut_last_member(text: &str) -> Option<&str> {
    let mut in_string = false;
    let mut escaped = false;
    let mut last_comma = None;
    let mut last_open = None;
    for (i, c) in text.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            ',' => last_comma = Some(i),
            '{' | '[' => last_open = Some(i),
            _ => {}
        }
    }
    match (last_comma, last_open) {
        (Some(comma), Some(open)) if comma > open => Some(&text[..comma]),
        (_, Some(open)) if open + 1 < text.len() => Some(&text[..=open]),
        (Some(comma), None) => Some(&text[..comma]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(s: &str) -> Value {
        Value::Object(parse_object(s))
    }

    #[test]
    fn complete_object_parses() {
        assert_eq!(p(r#"{"command":"ls"}"#), json!({"command": "ls"}));
    }

    #[test]
    fn open_string_is_closed() {
        assert_eq!(p(r#"{"command":"ls -l"#), json!({"command": "ls -l"}));
        assert_eq!(p(r#"{"a":"x\"#), json!({"a": "x"}));
        assert_eq!(p(r#"{"a":"x\u00"#), json!({"a": "x"}));
    }

    #[test]
    fn dangling_members_are_dropped_or_nulled() {
        assert_eq!(p(r#"{"a":1,"#), json!({"a": 1}));
        assert_eq!(p(r#"{"a":1,"b""#), json!({"a": 1}));
        assert_eq!(p(r#"{"a":1,"b":"#), json!({"a": 1, "b": null}));
        assert_eq!(p(r#"{"a":1,"b":tru"#), json!({"a": 1}));
        assert_eq!(p(r#"{"a":[1,2"#), json!({"a": [1, 2]}));
        assert_eq!(p(r#"{"a":{"b":[{"c":"d"#), json!({"a": {"b": [{"c": "d"}]}}));
    }

    #[test]
    fn garbage_gives_empty_object() {
        assert_eq!(p(""), json!({}));
        assert_eq!(p("{"), json!({}));
        assert_eq!(p("[1,2]"), json!({}));
        assert_eq!(p("nonsense"), json!({}));
    }
}
