//! The names the model sees: `mcp__<server>__<tool>` for tools and prompts.
//!
//! This is Claude Code's scheme. omp 18.2.3 mints `mcp__<server>_<tool>` (one underscore,
//! lower-cased, the server prefix dropped from the tool name) and then needs a whole resolver
//! for the `mcp__<server>__<tool>` names models emit anyway, because models are primed on Claude
//! Code's form. rho mints that form directly: the double underscore also keeps the boundary
//! between server and tool readable.
//!
//! Model APIs accept `^[a-zA-Z0-9_-]{1,64}$` (OpenAI's and Anthropic's limit), so every other
//! character becomes `_` (case is kept), and a name over 64 characters keeps a readable prefix
//! and ends in `_` plus 8 hex digits of a hash of the full name: distinct long names stay
//! distinct, and the same name comes out the same in every process.

/// The longest tool name model APIs accept.
pub const MAX_NAME_LEN: usize = 64;

const HASH_LEN: usize = 8;

/// The model-facing name of `tool` on `server`.
pub fn tool_name(server: &str, tool: &str) -> String {
    cap(format!("mcp__{}__{}", sanitize(server), sanitize(tool)))
}

/// `name` with every character outside `[a-zA-Z0-9_-]` replaced by `_` (never empty).
pub fn sanitize(name: &str) -> String {
    if name.is_empty() {
        return "_".to_owned();
    }
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// `name` cut to [`MAX_NAME_LEN`] with a hash suffix when longer (it is ASCII: sanitized).
pub(crate) fn cap(name: String) -> String {
    if name.len() <= MAX_NAME_LEN {
        return name;
    }
    let keep = MAX_NAME_LEN - HASH_LEN - 1;
    format!("{}_{:08x}", &name[..keep], fnv1a32(name.as_bytes()))
}

/// `base`, or `base` with a `_2`, `_3`, ... suffix when `taken` already holds it (two servers
/// whose names sanitize alike, or tools that differ only in characters replaced by `_`).
pub(crate) fn unique(base: String, taken: &dyn Fn(&str) -> bool) -> String {
    if !taken(&base) {
        return base;
    }
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            let stem =
                if base.len() + suffix.len() > MAX_NAME_LEN { &base[..MAX_NAME_LEN - suffix.len()] } else { &base };
            format!("{stem}{suffix}")
        })
        .find(|candidate| !taken(candidate))
        .unwrap_or(base)
}

fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, b| (hash ^ u32::from(*b)).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        (1..=MAX_NAME_LEN).contains(&name.len())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn names_follow_claude_codes_scheme() {
        assert_eq!(tool_name("github", "create_issue"), "mcp__github__create_issue");
        assert_eq!(tool_name("my.server", "get-Thing"), "mcp__my_server__get-Thing");
        assert_eq!(tool_name("ünï", "a b/c"), "mcp___n___a_b_c");
        assert_eq!(tool_name("", ""), "mcp______");
    }

    #[test]
    fn long_names_are_capped_with_a_stable_hash() {
        let long_tool = "t".repeat(80);
        let a = tool_name("server", &long_tool);
        let b = tool_name("server", &format!("{long_tool}x"));
        assert_eq!(a.len(), MAX_NAME_LEN);
        assert!(valid(&a) && valid(&b));
        assert_ne!(a, b);
        assert_eq!(a, tool_name("server", &long_tool));
        assert!(a.starts_with("mcp__server__ttt"));
    }

    #[test]
    fn every_name_is_valid_for_model_apis() {
        for (server, tool) in [("a", "b"), ("日本", "ツール"), ("x".repeat(100).as_str(), "y"), ("s", "\u{0}\n\t")]
        {
            assert!(valid(&tool_name(server, tool)), "{server} {tool}");
        }
    }

    #[test]
    fn clashing_names_get_a_suffix() {
        let taken = ["mcp__a__b".to_owned(), "mcp__a__b_2".to_owned()];
        let is_taken = |n: &str| taken.iter().any(|t| t == n);
        assert_eq!(unique("mcp__a__b".to_owned(), &is_taken), "mcp__a__b_3");
        assert_eq!(unique("mcp__a__c".to_owned(), &is_taken), "mcp__a__c");
        let long = "m".repeat(MAX_NAME_LEN);
        let taken_long = |n: &str| n == long;
        let next = unique(long.clone(), &taken_long);
        assert_eq!(next.len(), MAX_NAME_LEN);
        assert!(next.ends_with("_2"));
    }
}
