//! Writing one JSON frame within the frame bound (docs/decisions.md D17), never by cutting bytes.
//!
//! A frame is first written as it is, through a writer that gives up as soon as the bound is
//! passed, so a frame that fits costs one serialization and one that does not costs at most
//! the bound. A frame that does not fit is turned into a `serde_json::Value` and its largest
//! strings are replaced by a notice saying how many bytes were omitted ("omit and mark") until
//! it fits.

use std::io;

use rho_types::json;
use serde::Serialize;
use serde_json::Value;

/// Strings shorter than this are never replaced: not worth a notice.
const SMALLEST_OMITTED: usize = 128;

/// An `io::Write` into a Vec that fails once more than `room` bytes were written.
struct Bounded<'a> {
    out: &'a mut Vec<u8>,
    room: usize,
}

impl io::Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() > self.room {
            return Err(io::Error::other("frame bound"));
        }
        self.room -= buf.len();
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Appends `frame` when its JSON fits in `max` bytes; otherwise leaves `out` as it was and
/// returns false.
pub fn write_within<T: ?Sized + Serialize>(out: &mut Vec<u8>, frame: &T, max: usize) -> bool {
    let start = out.len();
    if json::write(Bounded { out: &mut *out, room: max }, frame).is_ok() {
        return true;
    }
    out.truncate(start);
    false
}

/// Counts what is written.
#[derive(Default)]
struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The size of `value`'s JSON.
fn size(value: &Value) -> usize {
    let mut counter = Counter::default();
    let _ = json::write(&mut counter, value);
    counter.0
}

/// Appends `frame`, with its largest strings replaced by a notice until it fits in `max`
/// bytes. Returns false (and leaves `out` as it was) when even that cannot make it fit.
pub fn write_shrunk<T: ?Sized + Serialize>(out: &mut Vec<u8>, frame: &T, max: usize) -> bool {
    if write_within(out, frame, max) {
        return true;
    }
    let Some(mut value) = to_value_capped(frame, max) else {
        return false;
    };
    if shrink(&mut value, max) { write_within(out, &value, max) } else { false }
}

/// `frame` as a `Value`, every string that alone passes `max` bytes already replaced by its
/// notice (no frame can keep it): a 100 MB reply's text is never copied to be dropped.
fn to_value_capped<T: ?Sized + Serialize>(frame: &T, max: usize) -> Option<Value> {
    let mut bytes = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut bytes, Capping::new(max));
    frame.serialize(&mut ser).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// A compact JSON formatter that writes a string value longer than `max` bytes as its notice.
/// A string is held back (at most `max` bytes of it) until its length is known.
struct Capping {
    max: usize,
    in_key: bool,
    /// The raw length of the string being written, in bytes.
    len: usize,
    held: Vec<u8>,
}

impl Capping {
    fn new(max: usize) -> Self {
        Self { max, in_key: false, len: 0, held: Vec::new() }
    }

    fn over(&self) -> bool {
        self.len > self.max
    }
}

impl serde_json::ser::Formatter for Capping {
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.in_key = true;
        serde_json::ser::CompactFormatter.begin_object_key(writer, first)
    }

    fn end_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.in_key = false;
        serde_json::ser::CompactFormatter.end_object_key(writer)
    }

    fn begin_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.len = 0;
        self.held.clear();
        writer.write_all(b"\"")
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if self.over() {
            writer.write_all(omitted(self.len, self.max).as_bytes())?;
        } else {
            writer.write_all(&self.held)?;
        }
        self.held = Vec::new();
        writer.write_all(b"\"")
    }

    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        if self.in_key {
            return writer.write_all(fragment.as_bytes());
        }
        self.len += fragment.len();
        if self.over() {
            self.held = Vec::new();
        } else {
            self.held.extend_from_slice(fragment.as_bytes());
        }
        Ok(())
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        if self.in_key {
            return serde_json::ser::CompactFormatter.write_char_escape(writer, escape);
        }
        // Every escaped character is one byte of the string.
        self.len += 1;
        if self.over() {
            self.held = Vec::new();
            Ok(())
        } else {
            serde_json::ser::CompactFormatter.write_char_escape(&mut self.held, escape)
        }
    }
}

/// Replaces the largest strings of `value` by notices until its JSON fits in `max` bytes.
/// Returns whether it fits.
pub fn shrink(value: &mut Value, max: usize) -> bool {
    loop {
        let size = size(value);
        if size <= max {
            return true;
        }
        let mut strings = strings_over(value, SMALLEST_OMITTED);
        if strings.is_empty() {
            return false;
        }
        // Largest first, until what the replacements save covers the excess. A string costs at
        // least its length (escaping only adds), so the saving is never overestimated.
        strings.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let mut excess = size - max;
        for string in strings {
            if excess == 0 {
                break;
            }
            let notice = omitted(string.len(), max);
            excess = excess.saturating_sub(string.len().saturating_sub(notice.len()));
            *string = notice;
        }
    }
}

/// The notice that stands for `len` omitted bytes.
pub fn omitted(len: usize, max: usize) -> String {
    format!("[{len} bytes omitted: the frame would exceed {max} bytes]")
}

/// Every string in `value` longer than `min` bytes (notices excluded).
fn strings_over(value: &mut Value, min: usize) -> Vec<&mut String> {
    fn walk<'a>(value: &'a mut Value, min: usize, found: &mut Vec<&'a mut String>) {
        match value {
            Value::String(s) if s.len() > min && !s.ends_with(" bytes]") => found.push(s),
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, min, found)),
            Value::Object(map) => map.values_mut().for_each(|v| walk(v, min, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(value, min, &mut found);
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_frame_that_fits_is_written_as_it_is() {
        let mut out = b"x".to_vec();
        assert!(write_within(&mut out, &json!({"a": "b"}), 9));
        assert_eq!(out, br#"x{"a":"b"}"#);
        assert!(!write_within(&mut out, &json!({"a": "bc"}), 9));
        assert_eq!(out, br#"x{"a":"b"}"#);
    }

    #[test]
    fn the_largest_strings_give_way_first() {
        let frame = json!({"type": "t", "small": "s".repeat(200), "big": "b".repeat(50_000), "mid": "m".repeat(5_000)});
        let mut out = Vec::new();
        assert!(write_shrunk(&mut out, &frame, 8_000));
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["big"], omitted(50_000, 8_000));
        assert_eq!(v["mid"], "m".repeat(5_000));
        assert_eq!(v["small"], "s".repeat(200));
        assert!(out.len() <= 8_000);
    }

    #[test]
    fn escaping_is_counted_and_many_strings_are_replaced_in_one_pass() {
        let items: Vec<Value> = (0..300).map(|_| json!("\u{1}".repeat(1_000))).collect();
        let mut out = Vec::new();
        assert!(write_shrunk(&mut out, &json!({"items": items}), 64 * 1024));
        assert!(out.len() <= 64 * 1024);
    }

    #[test]
    fn strings_past_the_bound_are_replaced_while_converting_and_keys_are_kept() {
        let long_key = "k".repeat(300);
        let frame = json!({"type": "t", "text": "a\n".repeat(3_000), "keep": "x\ty", long_key.clone(): 1.5});
        let value = to_value_capped(&frame, 5_000).unwrap();
        assert_eq!(value["text"], omitted(6_000, 5_000));
        assert_eq!(value["keep"], "x\ty");
        assert_eq!(value[long_key.as_str()], 1.5);
        let mut out = Vec::new();
        assert!(write_shrunk(&mut out, &frame, 5_000));
        let written: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(written["text"], omitted(6_000, 5_000), "the same notice the shrinking writes");
    }

    #[test]
    fn a_frame_of_many_small_values_cannot_be_shrunk() {
        let items: Vec<u32> = (0..10_000).collect();
        let mut out = Vec::new();
        assert!(!write_shrunk(&mut out, &json!({"items": items}), 1_000));
        assert!(out.is_empty());
    }
}
