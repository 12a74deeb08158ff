//! `${VAR}` and `${VAR:-default}` in config strings, as Claude Code expands them in `.mcp.json`.
//!
//! The default applies when the variable is unset or empty (the shell's `:-`). A variable that is
//! unset with no default is an error: the server it belongs to is not started, rather than being
//! started with a silently empty token or path. Text that is not a well-formed reference (`$VAR`,
//! `${}`, `${1X}`, an unclosed `${`) is kept as written.

/// An unset variable without a default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingVar(pub String);

/// Expands every reference in `input`, looking variables up with `env`.
pub(crate) fn expand(input: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, MissingVar> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if is_var_name(name) {
            match (env(name).filter(|v| !v.is_empty()), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => match env(name) {
                    // Set but empty, no default: empty is what was asked for.
                    Some(_) => {}
                    None => return Err(MissingVar(name.to_owned())),
                },
            }
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            "TOKEN" => Some("t0k".into()),
            _ => None,
        }
    }

    #[test]
    fn expands_set_variables_and_defaults() {
        assert_eq!(expand("${HOME}/bin", &env), Ok("/home/u/bin".into()));
        assert_eq!(expand("Bearer ${TOKEN}", &env), Ok("Bearer t0k".into()));
        assert_eq!(expand("${NOPE:-fallback}", &env), Ok("fallback".into()));
        assert_eq!(expand("${EMPTY:-fallback}", &env), Ok("fallback".into()));
        assert_eq!(expand("${TOKEN:-fallback}", &env), Ok("t0k".into()));
        assert_eq!(expand("${NOPE:-}", &env), Ok(String::new()));
        assert_eq!(expand("${EMPTY}", &env), Ok(String::new()));
        assert_eq!(expand("a${HOME}b${TOKEN}c", &env), Ok("a/home/ub t0kc".replace(' ', "")));
    }

    #[test]
    fn an_unset_variable_without_default_is_an_error() {
        assert_eq!(expand("x ${NOPE} y", &env), Err(MissingVar("NOPE".into())));
    }

    #[test]
    fn text_that_is_no_reference_is_kept() {
        for s in ["$HOME", "${}", "${1X}", "${HOME", "cost: $5", "${a b}", "}{"] {
            assert_eq!(expand(s, &env), Ok(s.to_owned()), "{s}");
        }
    }
}
