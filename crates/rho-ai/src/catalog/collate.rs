//! The order pi sorts model ids and provider names in: JavaScript's `a.localeCompare(b)`, which
//! is ICU's root collation, for the characters model tables use.
//!
//! Unlike byte order, punctuation sorts before digits and digits before letters (`~anthropic/…`
//! comes before `claude-…`, `-` before `.`, `_` before both), and letters compare without case
//! first, a lowercase letter before its capital only when nothing else differs (`minimax-cn` <
//! `MiniMax-M2`, `ab` < `aB` < `Ab`). Characters outside ASCII sort after the letters by code point,
//! where ICU would interleave them; no model table has any.

use std::cmp::Ordering;

/// The printable ASCII characters that are not letters, in ICU's root order.
const NON_LETTERS: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789";

/// The primary weight of `c`: what it sorts as when case is ignored.
fn primary(c: char) -> u32 {
    if c.is_ascii_alphabetic() {
        return 0x100 + u32::from(c.to_ascii_lowercase());
    }
    match NON_LETTERS.find(c) {
        Some(index) => index as u32,
        None => 0x200 + u32::from(c),
    }
}

/// `a.localeCompare(b)` as pi's sorts call it.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    a.chars()
        .map(primary)
        .cmp(b.chars().map(primary))
        .then_with(|| a.chars().map(|c| c.is_ascii_uppercase()).cmp(b.chars().map(|c| c.is_ascii_uppercase())))
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each list in the order `list.sort((a, b) => a.localeCompare(b))` gives in Node 20.
    #[test]
    fn sorts_as_javascripts_locale_compare() {
        let orders: [&[&str]; 5] = [
            &["a b", "a_b", "a-b", "a:b", "a.b", "a/b", "a1", "Aa", "ab", "aB", "Ab", "ab1"],
            &["~anthropic/claude-sonnet-latest", "anthropic/claude-sonnet-4.6", "claude-sonnet-4-6"],
            &["gpt-5", "gpt-5-mini", "gpt-5.1", "gpt-5.1-codex", "gpt-5.5", "gpt-5.5-pro"],
            &["minimax", "minimax-cn", "MiniMax-M2.7", "MiniMax-M2.7-highspeed", "mistral", "moonshotai"],
            &[
                "glm-4.7",
                "glm-5-turbo",
                "glm-5.1",
                "glm-5v-turbo",
                "grok-4",
                "grok-4.20",
                "groq/compound",
                "qwen/qwen3-32b",
            ],
        ];
        for order in orders {
            let mut sorted = order.to_vec();
            sorted.reverse();
            sorted.sort_by(|a, b| locale_compare(a, b));
            assert_eq!(sorted, order);
        }
        assert_eq!(locale_compare("same", "same"), Ordering::Equal);
        assert_eq!(locale_compare("a", "ab"), Ordering::Less, "a prefix first");
    }
}
