//! Escaping for the three places session text lands: HTML text and quoted attributes, link
//! targets, and JSON inside a `<script>` block.
//!
//! One escape serves text and attributes (attributes are always double-quoted), so no caller
//! has to choose. JSON for the page's data block has every `<`, `>` and `&` written as a
//! `\u` escape: the block can then never contain `</script` or `<!--`, and `JSON.parse`
//! reads the same string back.

use serde::Serialize;

/// Appends `text` to `out` with `& < > " '` escaped.
pub fn push_escaped(out: &mut String, text: &str) {
    let mut last = 0;
    for (i, byte) in text.bytes().enumerate() {
        let replacement = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&text[last..i]);
        out.push_str(replacement);
        last = i + 1;
    }
    out.push_str(&text[last..]);
}

/// Whether a markdown link target may become an `href`: relative links, fragments and the
/// `http`, `https` and `mailto` schemes. Browsers ignore tabs, newlines and leading
/// control characters in a scheme, so those are dropped before looking (`java\tscript:`).
pub fn is_safe_url(url: &str) -> bool {
    let cleaned: String = url.chars().filter(|c| !c.is_ascii_control() && *c != ' ').collect();
    let Some(colon) = cleaned.find(':') else {
        return true;
    };
    if cleaned[..colon].contains(['/', '?', '#']) {
        return true; // the colon is in a path, query or fragment: a relative link
    }
    let scheme = cleaned[..colon].to_ascii_lowercase();
    matches!(scheme.as_str(), "http" | "https" | "mailto")
}

/// `value` as JSON that is safe to place between `<script type="application/json">` tags.
pub fn script_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let json = serde_json::to_string(value)?;
    let mut out = String::with_capacity(json.len() + 64);
    let mut last = 0;
    for (i, byte) in json.bytes().enumerate() {
        let replacement = match byte {
            b'<' => "\\u003c",
            b'>' => "\\u003e",
            b'&' => "\\u0026",
            _ => continue,
        };
        out.push_str(&json[last..i]);
        out.push_str(replacement);
        last = i + 1;
    }
    out.push_str(&json[last..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escape(text: &str) -> String {
        let mut out = String::new();
        push_escaped(&mut out, text);
        out
    }

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>alert("x" & 'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
        assert_eq!(escape("plain ünïcode"), "plain ünïcode");
    }

    #[test]
    fn only_harmless_schemes_are_links() {
        for ok in ["https://x.dev/a", "http://x", "mailto:a@b.c", "#top", "docs/a.md", "a/b:c", "?q=a:b"] {
            assert!(is_safe_url(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JavaScript:x",
            "java\tscript:x",
            " \u{1}javascript:x",
            "data:text/html,x",
            "vbscript:x",
            "file:///etc/passwd",
        ] {
            assert!(!is_safe_url(bad), "{bad:?}");
        }
    }

    #[test]
    fn script_json_cannot_close_the_script() {
        let json = script_json(&serde_json::json!({"t": "</script><!-- & >"})).unwrap_or_default();
        assert!(!json.contains('<') && !json.contains('>') && !json.contains('&'), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back["t"], "</script><!-- & >");
    }
}
