//! A shell word's value when the parser can tell it without running anything: quotes and
//! backslashes removed (`"rm"`, `'rm'`, `\rm` and `r""m` are all `rm`). A word that expands
//! (a variable, a substitution, a glob, a brace list, `$'…'`) has no such value: `None`.

use tree_sitter::Node;

/// The value of the word `node` in `source`, or `None` when it depends on the shell's state.
pub fn literal(node: Node<'_>, source: &str) -> Option<String> {
    let mut value = String::new();
    let mut unquoted = String::new();
    collect(node, source, &mut value, &mut unquoted)?;
    (!expands(&unquoted)).then_some(value)
}

/// Appends `node`'s value to `value` and its unquoted characters to `unquoted` (quoted ones
/// as a placeholder), for telling globs and brace lists afterwards.
fn collect(node: Node<'_>, source: &str, value: &mut String, unquoted: &mut String) -> Option<()> {
    let text = node.utf8_text(source.as_bytes()).ok()?;
    match node.kind() {
        "word" | "number" => {
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => match chars.next() {
                        Some('\n') | None => {}
                        Some(escaped) => {
                            value.push(escaped);
                            unquoted.push('_');
                        }
                    },
                    '$' | '`' => return None,
                    c => {
                        value.push(c);
                        unquoted.push(c);
                    }
                }
            }
        }
        "raw_string" => {
            let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
            value.push_str(inner);
            unquoted.push('_');
        }
        "string" => {
            let mut cursor = node.walk();
            if node.named_children(&mut cursor).any(|child| child.kind() != "string_content") {
                return None;
            }
            let inner = text.strip_prefix('"')?.strip_suffix('"')?;
            value.push_str(&unescape_double_quoted(inner)?);
            unquoted.push('_');
        }
        "concatenation" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                collect(child, source, value, unquoted)?;
            }
        }
        _ => return None,
    }
    Some(())
}

/// The inside of `"…"`: `\` escapes only `"`, `\`, `$`, `` ` `` and a newline there.
fn unescape_double_quoted(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(e @ ('"' | '\\' | '$' | '`')) => out.push(e),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '$' | '`' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Whether unquoted text expands: a glob (`*`, `?`, `[…]`) or a brace list (`{a,b}`, `{1..3}`).
fn expands(unquoted: &str) -> bool {
    if unquoted.contains(['*', '?']) {
        return true;
    }
    let bracket = unquoted.find('[').is_some_and(|at| unquoted[at + 1..].contains(']'));
    let brace = unquoted.find('{').is_some_and(|at| {
        let rest = &unquoted[at + 1..];
        rest.find('}').is_some_and(|end| rest[..end].contains(',') || rest[..end].contains(".."))
    });
    bracket || brace
}
