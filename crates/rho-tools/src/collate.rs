//! The order `ls` lists names in: the reference sorts with JavaScript's
//! `a.toLowerCase().localeCompare(b.toLowerCase())`, i.e. Unicode collation. This is a small
//! approximation of the root collation that agrees with it on everyday file names: case is
//! ignored, punctuation sorts before digits and digits before letters (in the collation's own
//! punctuation order), accented letters sort with their base letter (unaccented first), and any
//! remaining tie is broken by the raw name so the order is total.

use std::cmp::Ordering;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// ASCII punctuation and symbols in root collation order.
const PUNCTUATION_ORDER: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// The primary weight of one (lowercased, decomposed) character.
fn primary(c: char) -> (u8, u32) {
    if c.is_whitespace() {
        (0, c as u32)
    } else if let Some(i) = PUNCTUATION_ORDER.find(c) {
        (1, i as u32)
    } else if c.is_numeric() {
        (3, c.to_digit(10).unwrap_or(c as u32))
    } else if c.is_alphabetic() {
        (4, c as u32)
    } else {
        (2, c as u32)
    }
}

/// Primary weights of a name: lowercased, decomposed, combining marks dropped.
fn primary_key(name: &str) -> Vec<(u8, u32)> {
    name.to_lowercase().nfd().filter(|&c| canonical_combining_class(c) == 0).map(primary).collect()
}

/// Compares two names for listing.
pub fn compare(a: &str, b: &str) -> Ordering {
    primary_key(a)
        .cmp(&primary_key(b))
        .then_with(|| {
            let la: String = a.to_lowercase().nfd().collect();
            let lb: String = b.to_lowercase().nfd().collect();
            la.cmp(&lb)
        })
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort_by(|a, b| compare(a, b));
        v
    }

    #[test]
    fn ignores_case() {
        assert_eq!(sorted(&["b", "C", "a", "B"]), ["a", "B", "b", "C"]);
    }

    #[test]
    fn punctuation_then_digits_then_letters() {
        assert_eq!(
            sorted(&["src", "README.md", ".env", "_build", "2fa", "Cargo.toml", "-x"]),
            ["_build", "-x", ".env", "2fa", "Cargo.toml", "README.md", "src"]
        );
    }

    #[test]
    fn accents_sort_with_their_base_letter() {
        assert_eq!(sorted(&["f", "\u{e9}t\u{e9}", "ete", "d"]), ["d", "ete", "\u{e9}t\u{e9}", "f"]);
    }
}
