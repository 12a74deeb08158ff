//! JSON exactly as the pi family writes it with `JSON.stringify`, plus line safety.
//!
//! Two differences from `serde_json`'s compact output: floats use ECMAScript number formatting
//! (`0`, `0.000015`, `1e-7`, never `0.0` or `1.5e-5`; non-finite values become `null`), and
//! U+2028 / U+2029 inside strings are escaped so hosts that split lines with JavaScript's
//! readline never tear a record. Everything rho writes to stdout or a session file goes through
//! here.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

/// `serde_json`'s compact formatter with ECMAScript numbers and escaped line separators.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        if value.is_finite() {
            let mut buf = ryu_js::Buffer::new();
            writer.write_all(buf.format_finite(value).as_bytes())
        } else {
            writer.write_all(b"null")
        }
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }

    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        let bytes = fragment.as_bytes();
        let mut start = 0;
        let mut i = 0;
        // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
        while i + 2 < bytes.len() {
            if bytes[i] == 0xE2 && bytes[i + 1] == 0x80 && (bytes[i + 2] & 0xFE) == 0xA8 {
                writer.write_all(&bytes[start..i])?;
                writer.write_all(if bytes[i + 2] == 0xA8 { b"\\u2028" } else { b"\\u2029" })?;
                i += 3;
                start = i;
            } else {
                i += 1;
            }
        }
        writer.write_all(&bytes[start..])
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        char_escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        CompactFormatter.write_char_escape(writer, char_escape)
    }
}

/// Appends the JSON of `value` to `out`.
pub fn write_to<T: ?Sized + Serialize>(out: &mut Vec<u8>, value: &T) -> serde_json::Result<()> {
    write(out, value)
}

/// Writes the JSON of `value` to `writer`.
pub fn write<W: io::Write, T: ?Sized + Serialize>(writer: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(writer, JsFormatter);
    value.serialize(&mut ser)
}

/// The JSON of `value`.
pub fn to_vec<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    write_to(&mut out, value)?;
    Ok(out)
}

/// The JSON of `value` as a string.
pub fn to_string<T: ?Sized + Serialize>(value: &T) -> serde_json::Result<String> {
    let bytes = to_vec(value)?;
    // The serializer only ever writes valid UTF-8.
    String::from_utf8(bytes).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_ecmascript() {
        let v = json!({"a": 0.0, "b": 3.0, "c": 0.000015, "d": 1e-7, "e": 0.1 + 0.2, "f": 15, "g": 1e21});
        assert_eq!(
            to_string(&v).unwrap(),
            r#"{"a":0,"b":3,"c":0.000015,"d":1e-7,"e":0.30000000000000004,"f":15,"g":1e+21}"#
        );
    }

    #[test]
    fn non_finite_becomes_null() {
        assert_eq!(to_string(&[f64::NAN, f64::INFINITY]).unwrap(), "[null,null]");
    }

    #[test]
    fn line_separators_are_escaped_and_controls_lowercase() {
        let s = "a\u{2028}b\u{2029}c\u{1f}d\u{e9}/\n";
        assert_eq!(to_string(&s).unwrap(), "\"a\\u2028b\\u2029c\\u001fd\u{e9}/\\n\"");
    }

    #[test]
    fn separators_at_fragment_edges() {
        assert_eq!(to_string(&"\u{2028}").unwrap(), "\"\\u2028\"");
        assert_eq!(to_string(&"x\u{2029}").unwrap(), "\"x\\u2029\"");
        assert_eq!(to_string(&"\u{2027}\u{202a}").unwrap(), "\"\u{2027}\u{202a}\"");
    }
}
