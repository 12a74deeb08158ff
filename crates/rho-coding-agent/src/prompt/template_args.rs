//! Arguments of a `/template args…` prompt: split bash-style, then substituted into the
//! template's placeholders.
//!
//! Placeholders: `$1`…`$n` (a missing argument is empty), `${@:N}` (arguments from the N-th
//! on) and `${@:N:L}` (L arguments from the N-th), `$ARGUMENTS` and `$@` (all, joined by
//! spaces), and with a default for a missing or empty value `${N:-text}`, `${@:-text}` and
//! `${ARGUMENTS:-text}`. The template is scanned once, left to right, so text that came from an
//! argument is never substituted again.

/// Splits on spaces and tabs outside quotes; `'…'` and `"…"` group words and are removed.
pub fn parse_command_args(input: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in input.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c == ' ' || c == '\t' => {
                if in_word {
                    args.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            None => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        args.push(current);
    }
    args
}

/// Substitutes the placeholders of `template` with `args`.
pub fn substitute_args(template: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(template.len() + all.len());
    let mut rest = template;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        match placeholder(after, args, &all) {
            Some((text, consumed)) => {
                out.push_str(&text);
                rest = &after[consumed..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The replacement for the placeholder at the start of `s` (just after a `$`), and how many
/// bytes of `s` it used.
fn placeholder(s: &str, args: &[String], all: &str) -> Option<(String, usize)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let index: usize = s[..digits].parse().unwrap_or(usize::MAX);
        let value = index.checked_sub(1).and_then(|i| args.get(i)).cloned().unwrap_or_default();
        return Some((value, digits));
    }
    if let Some(found) = with_default(s, args, all) {
        return Some(found);
    }
    if s.starts_with("ARGUMENTS") {
        return Some((all.to_owned(), "ARGUMENTS".len()));
    }
    if s.starts_with('@') {
        return Some((all.to_owned(), 1));
    }
    let inner = s.strip_prefix("{@:")?;
    let close = inner.find('}')?;
    let spec = &inner[..close];
    let (start, len) = match spec.split_once(':') {
        Some((start, len)) => (start, Some(len)),
        None => (spec, None),
    };
    let start: usize = parse_count(start)?;
    let len: Option<usize> = match len {
        Some(l) => Some(parse_count(l)?),
        None => None,
    };
    let from = start.saturating_sub(1).min(args.len());
    let to = match len {
        Some(l) => from.saturating_add(l).min(args.len()),
        None => args.len(),
    };
    let value = args[from..to].join(" ");
    Some((value, "{@:".len() + close + 1))
}

/// `{N:-text}`, `{@:-text}`, `{ARGUMENTS:-text}`: the value, or `text` when it is missing or
/// empty (the text ends at the first `}`).
fn with_default(s: &str, args: &[String], all: &str) -> Option<(String, usize)> {
    let inner = s.strip_prefix('{')?;
    let (target, rest) = inner.split_once(":-")?;
    let close = rest.find('}')?;
    let value = match target {
        "@" | "ARGUMENTS" => Some(all),
        digits if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| args.get(i)).map(String::as_str)
        }
        _ => return None,
    };
    let text = value.filter(|v| !v.is_empty()).unwrap_or(&rest[..close]);
    Some((text.to_owned(), 1 + target.len() + 2 + close + 1))
}

fn parse_count(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse().unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn splits_on_blanks_with_quotes() {
        assert_eq!(parse_command_args("a b\tc"), ["a", "b", "c"]);
        assert_eq!(parse_command_args("  a   b  "), ["a", "b"]);
        assert_eq!(
            parse_command_args(r#"one "two words" 'three "x"' f"o"o"#),
            ["one", "two words", "three \"x\"", "foo"]
        );
        assert_eq!(parse_command_args(r#"a "" b"#), ["a", "", "b"]);
        assert_eq!(parse_command_args(r#""unclosed quote"#), ["unclosed quote"]);
        assert_eq!(parse_command_args("line1\nline2"), ["line1\nline2"]);
        assert!(parse_command_args("").is_empty());
    }

    #[test]
    fn defaults_stand_in_for_missing_or_empty_values() {
        let focus = "Focus on ${1:-correctness, security}. Files: ${@:-all}. Ask: ${ARGUMENTS:-none}; ${2:-} end";
        assert_eq!(substitute_args(focus, &[]), "Focus on correctness, security. Files: all. Ask: none;  end");
        assert_eq!(
            substitute_args(focus, &args(&["speed", "b"])),
            "Focus on speed. Files: speed b. Ask: speed b; b end"
        );
        assert_eq!(substitute_args("${1:-x}", &args(&[""])), "x");
        assert_eq!(substitute_args("${0:-zero} ${x:-y} ${1:-unclosed", &args(&["a"])), "zero ${x:-y} ${1:-unclosed");
    }

    #[test]
    fn positional() {
        let a = args(&["x", "y"]);
        assert_eq!(substitute_args("$1-$2-$3.", &a), "x-y-.");
        assert_eq!(substitute_args("$0", &a), "");
        let many: Vec<String> = (1..=11).map(|i| format!("a{i}")).collect();
        assert_eq!(substitute_args("$10 $11", &many), "a10 a11");
    }

    #[test]
    fn all_arguments() {
        let a = args(&["x", "y z"]);
        assert_eq!(substitute_args("[$@] [$ARGUMENTS]", &a), "[x y z] [x y z]");
        assert_eq!(substitute_args("[$@]", &[]), "[]");
    }

    #[test]
    fn slices() {
        let a = args(&["a", "b", "c", "d"]);
        assert_eq!(substitute_args("${@:2}", &a), "b c d");
        assert_eq!(substitute_args("${@:2:2}", &a), "b c");
        assert_eq!(substitute_args("${@:1:1}|${@:4:9}|${@:9}", &a), "a|d|");
        assert_eq!(substitute_args("${@:0}", &a), "a b c d");
        assert_eq!(substitute_args("${@:3:0}", &a), "");
    }

    #[test]
    fn non_placeholders_stay() {
        let a = args(&["x"]);
        assert_eq!(substitute_args("cost $ 5, ${HOME}, ${@:x}, $", &a), "cost $ 5, ${HOME}, ${@:x}, $");
        assert_eq!(substitute_args("${@:1", &a), "${@:1");
    }

    #[test]
    fn argument_text_is_not_substituted_again() {
        let a = args(&["$2", "$@", "${@:1}"]);
        assert_eq!(substitute_args("$1 $2 $3", &a), "$2 $@ ${@:1}");
        assert_eq!(substitute_args("$ARGUMENTS", &a), "$2 $@ ${@:1}");
    }
}
