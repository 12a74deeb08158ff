//! YAML front matter at the top of a markdown file (skills, prompt templates), split from the
//! body.
//!
//! A block opens with a first line `---` and closes with the next line that is `---`; without
//! both, the whole text is body. The YAML between is parsed with `serde_yaml_ng` (a maintained
//! fork of `serde_yaml`), so quoted values, `|`/`>` block scalars, lists and nested maps all
//! work as YAML users expect; it must be a mapping. CRLF line ends are read as LF.

use serde_json::{Map, Value};

/// A parsed markdown file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrontMatter {
    /// The front matter's keys (empty without front matter).
    pub fields: Map<String, Value>,
    /// Everything after the closing `---` line (or the whole text).
    pub body: String,
}

impl FrontMatter {
    /// A string field, trimmed; `None` when absent, not a string, or blank.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
    }
}

/// Front matter that is not a YAML mapping.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid front matter: {0}")]
pub struct FrontMatterError(pub String);

/// Splits `text` into front matter and body.
pub fn parse_front_matter(text: &str) -> Result<FrontMatter, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let normalized;
    let text = if text.contains('\r') {
        normalized = text.replace("\r\n", "\n");
        normalized.as_str()
    } else {
        text
    };
    let Some((yaml, body)) = split(text) else {
        return Ok(FrontMatter { fields: Map::new(), body: text.to_owned() });
    };
    let fields = if yaml.trim().is_empty() {
        Map::new()
    } else {
        match serde_yaml_ng::from_str::<Value>(yaml) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null) => Map::new(),
            Ok(_) => return Err(FrontMatterError("expected `key: value` lines".into())),
            Err(e) => return Err(FrontMatterError(e.to_string())),
        }
    };
    Ok(FrontMatter { fields, body: body.to_owned() })
}

/// The body of `text` without its front matter block, whether or not the YAML in it parses.
pub fn strip_front_matter(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n");
    match split(&text) {
        Some((_, body)) => body.to_owned(),
        None => text,
    }
}

/// `(yaml, body)` when `text` opens with a `---` line that a later `---` line closes.
fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---")?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix('\n')?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Some((yaml, body));
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_text_has_no_front_matter() {
        let fm = parse_front_matter("# Title\nbody\n").unwrap();
        assert!(fm.fields.is_empty());
        assert_eq!(fm.body, "# Title\nbody\n");
    }

    #[test]
    fn simple_keys_and_body() {
        let fm = parse_front_matter("---\nname: my-skill\ndescription: Does things\n---\nBody\n").unwrap();
        assert_eq!(fm.str_field("name"), Some("my-skill"));
        assert_eq!(fm.str_field("description"), Some("Does things"));
        assert_eq!(fm.body, "Body\n");
    }

    #[test]
    fn quoted_values_and_block_scalars() {
        let text = "---\nname: \"quoted: yes\"\nother: 'single'\ndescription: |\n  Line one\n  Line two\nfolded: >\n  a\n  b\n---\nx";
        let fm = parse_front_matter(text).unwrap();
        assert_eq!(fm.str_field("name"), Some("quoted: yes"));
        assert_eq!(fm.str_field("other"), Some("single"));
        assert_eq!(fm.fields["description"], json!("Line one\nLine two\n"));
        assert_eq!(fm.fields["folded"], json!("a b\n"));
    }

    #[test]
    fn booleans_lists_and_maps() {
        let text = "---\ndisable-model-invocation: true\nallowed-tools: [read, bash]\nmetadata:\n  a: 1\n---\n";
        let fm = parse_front_matter(text).unwrap();
        assert_eq!(fm.fields["disable-model-invocation"], json!(true));
        assert_eq!(fm.fields["allowed-tools"], json!(["read", "bash"]));
        assert_eq!(fm.fields["metadata"], json!({"a": 1}));
        assert_eq!(fm.body, "");
    }

    #[test]
    fn crlf_and_bom() {
        let fm = parse_front_matter("\u{feff}---\r\ndescription: d\r\n---\r\nbody\r\n").unwrap();
        assert_eq!(fm.str_field("description"), Some("d"));
        assert_eq!(fm.body, "body\n");
    }

    #[test]
    fn unclosed_block_is_body() {
        let fm = parse_front_matter("---\nname: x\nno end").unwrap();
        assert!(fm.fields.is_empty());
        assert_eq!(fm.body, "---\nname: x\nno end");
    }

    #[test]
    fn empty_block() {
        let fm = parse_front_matter("---\n---\nbody").unwrap();
        assert!(fm.fields.is_empty());
        assert_eq!(fm.body, "body");
    }

    #[test]
    fn invalid_yaml_and_non_mapping_are_errors() {
        assert!(parse_front_matter("---\ndescription: a: b\n---\n").is_err());
        assert!(parse_front_matter("---\n- a\n- b\n---\n").is_err());
        assert!(parse_front_matter("---\nkey: [unclosed\n---\n").is_err());
    }

    #[test]
    fn strip_ignores_yaml_errors() {
        assert_eq!(strip_front_matter("---\na: b: c\n---\nbody"), "body");
        assert_eq!(strip_front_matter("no block"), "no block");
    }

    #[test]
    fn a_horizontal_rule_later_is_not_front_matter() {
        let fm = parse_front_matter("text\n---\nmore").unwrap();
        assert!(fm.fields.is_empty());
        assert_eq!(fm.body, "text\n---\nmore");
    }
}
