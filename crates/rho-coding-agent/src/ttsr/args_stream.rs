//! Decoding a tool call's argument JSON as it streams in, fragment by fragment, in O(fragment).
//!
//! TTSR conditions are written against what the model writes (`console.log(`, a newline), not
//! against its JSON encoding (`console.log(\"`, `\n`), so the matcher's tool buffer holds the
//! decoded text of the argument values: each string value's characters with escapes resolved,
//! values separated by a newline; keys, numbers and punctuation are left out. On the way, the
//! path arguments are collected (a top-level key `path` or ending in `path`, or the strings of
//! an array under a key ending in `paths`), each once its string has closed, so scope globs can
//! be tested against them. The decoder never fails: malformed JSON just decodes to less text.

/// The streaming decoder of one tool call.
#[derive(Debug, Default)]
pub(crate) struct ArgsDecoder {
    /// Open containers, `true` for objects.
    stack: Vec<bool>,
    expect_key: bool,
    string: Option<StringState>,
    /// The latest key read at the top level.
    top_key: String,
    wrote_value: bool,
    paths: Vec<String>,
}

#[derive(Debug, Default)]
struct StringState {
    is_key: bool,
    key: String,
    /// Collected when the value is a path argument.
    capture: Option<String>,
    escape: Escape,
    high_surrogate: Option<u32>,
}

#[derive(Debug, Default, Clone, Copy)]
enum Escape {
    #[default]
    None,
    Backslash,
    Unicode {
        digits: u8,
        value: u32,
    },
}

fn is_path_key(key: &str) -> bool {
    key.to_ascii_lowercase().ends_with("path")
}

fn is_paths_key(key: &str) -> bool {
    key.to_ascii_lowercase().ends_with("paths")
}

impl ArgsDecoder {
    /// The path arguments seen so far.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Decodes `fragment`, appending value text to `out`. Returns whether a new path argument
    /// completed.
    pub fn feed(&mut self, fragment: &str, out: &mut String) -> bool {
        let mut new_path = false;
        for c in fragment.chars() {
            if self.string.is_some() {
                new_path |= self.string_char(c, out);
            } else {
                self.structural(c, out);
            }
        }
        new_path
    }

    fn structural(&mut self, c: char, out: &mut String) {
        match c {
            '{' => {
                self.stack.push(true);
                self.expect_key = true;
            }
            '[' => {
                self.stack.push(false);
                self.expect_key = false;
            }
            '}' | ']' => {
                self.stack.pop();
                self.expect_key = false;
            }
            ',' => self.expect_key = self.stack.last() == Some(&true),
            ':' => self.expect_key = false,
            '"' => {
                let is_key = self.expect_key && self.stack.last() == Some(&true);
                let capture = if is_key {
                    None
                } else {
                    let top_value = self.stack.len() == 1 && is_path_key(&self.top_key);
                    let in_top_array = self.stack.len() == 2 && !self.stack[1] && is_paths_key(&self.top_key);
                    (top_value || in_top_array).then(String::new)
                };
                if !is_key {
                    if self.wrote_value {
                        out.push('\n');
                    }
                    self.wrote_value = true;
                }
                self.string = Some(StringState { is_key, capture, ..StringState::default() });
            }
            _ => {}
        }
    }

    /// One character inside a string; returns whether a path argument completed.
    fn string_char(&mut self, c: char, out: &mut String) -> bool {
        let Some(state) = self.string.as_mut() else {
            return false;
        };
        match state.escape {
            Escape::Backslash => {
                state.escape = Escape::None;
                let decoded = match c {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'u' => {
                        state.escape = Escape::Unicode { digits: 0, value: 0 };
                        return false;
                    }
                    other => other,
                };
                emit(state, decoded, out);
            }
            Escape::Unicode { digits, value } => match c.to_digit(16) {
                Some(d) => {
                    let value = value * 16 + d;
                    if digits == 3 {
                        state.escape = Escape::None;
                        emit_code_unit(state, value, out);
                    } else {
                        state.escape = Escape::Unicode { digits: digits + 1, value };
                    }
                }
                None => {
                    state.escape = Escape::None;
                    emit(state, char::REPLACEMENT_CHARACTER, out);
                    return self.string_char(c, out);
                }
            },
            Escape::None => match c {
                '\\' => state.escape = Escape::Backslash,
                '"' => return self.close_string(out),
                other => emit(state, other, out),
            },
        }
        false
    }

    fn close_string(&mut self, out: &mut String) -> bool {
        let Some(mut state) = self.string.take() else {
            return false;
        };
        if state.high_surrogate.take().is_some() {
            push(&mut state, char::REPLACEMENT_CHARACTER, out);
        }
        if state.is_key {
            if self.stack.len() == 1 {
                self.top_key = state.key;
            }
            return false;
        }
        match state.capture.map(|p| p.trim().to_owned()) {
            Some(path) if !path.is_empty() && !self.paths.contains(&path) => {
                self.paths.push(path);
                true
            }
            _ => false,
        }
    }
}

/// A decoded character of the current string.
fn emit(state: &mut StringState, c: char, out: &mut String) {
    if state.high_surrogate.take().is_some() {
        push(state, char::REPLACEMENT_CHARACTER, out);
    }
    push(state, c, out);
}

fn push(state: &mut StringState, c: char, out: &mut String) {
    if state.is_key {
        state.key.push(c);
    } else {
        out.push(c);
        if let Some(capture) = state.capture.as_mut() {
            capture.push(c);
        }
    }
}

/// A `\uXXXX` code unit: surrogate pairs are joined, lone surrogates become U+FFFD.
fn emit_code_unit(state: &mut StringState, unit: u32, out: &mut String) {
    match unit {
        0xD800..=0xDBFF => {
            if state.high_surrogate.replace(unit).is_some() {
                push(state, char::REPLACEMENT_CHARACTER, out);
            }
        }
        0xDC00..=0xDFFF => match state.high_surrogate.take() {
            Some(high) => {
                let c = char::from_u32(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00));
                push(state, c.unwrap_or(char::REPLACEMENT_CHARACTER), out);
            }
            None => push(state, char::REPLACEMENT_CHARACTER, out),
        },
        _ => emit(state, char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER), out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in(chunks: &[&str]) -> (String, Vec<String>) {
        let mut d = ArgsDecoder::default();
        let mut out = String::new();
        for chunk in chunks {
            d.feed(chunk, &mut out);
        }
        (out, d.paths().to_vec())
    }

    #[test]
    fn values_are_decoded_and_keys_left_out() {
        let (text, paths) =
            decode_in(&[r#"{"path":"src/a.rs","newText":"fn main() {\n    println!(\"hi\");\n}","n":3,"ok":true}"#]);
        assert_eq!(text, "src/a.rs\nfn main() {\n    println!(\"hi\");\n}");
        assert_eq!(paths, vec!["src/a.rs"]);
    }

    #[test]
    fn any_split_gives_the_same_result() {
        let raw = r#"{"file_path": "dir/x.ts", "edits": [{"oldText": "a\\b", "newText": "\u00e9\ud83d\ude00\t"}], "paths": ["p1", "p2"]}"#;
        let whole = decode_in(&[raw]);
        assert_eq!(whole.0, "dir/x.ts\na\\b\né😀\t\np1\np2");
        assert_eq!(whole.1, vec!["dir/x.ts", "p1", "p2"]);
        for split in 1..raw.len() {
            if raw.is_char_boundary(split) {
                assert_eq!(decode_in(&[&raw[..split], &raw[split..]]), whole, "split at {split}");
            }
        }
        let chars: Vec<String> = raw.chars().map(String::from).collect();
        assert_eq!(decode_in(&chars.iter().map(String::as_str).collect::<Vec<_>>()), whole);
    }

    #[test]
    fn nested_path_keys_are_not_paths_and_a_path_counts_once_complete() {
        let mut d = ArgsDecoder::default();
        let mut out = String::new();
        assert!(!d.feed(r#"{"opts":{"path":"nested"},"path":"src/ma"#, &mut out));
        assert!(d.paths().is_empty());
        assert!(d.feed(r#"in.rs""#, &mut out));
        assert_eq!(d.paths(), ["src/main.rs"]);
        assert!(!d.feed(r#","target_path":"src/main.rs"}"#, &mut out), "already known");
    }

    #[test]
    fn broken_escapes_do_not_panic() {
        let (text, _) = decode_in(&[r#"{"a":"\uZZ\ud800x\udc00","b":"\"#]);
        assert_eq!(text, "\u{fffd}ZZ\u{fffd}x\u{fffd}\n");
    }
}
