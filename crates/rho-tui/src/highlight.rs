//! Syntax highlighting of a markdown code block for the terminal: syntect parses it (its syntax
//! definitions, shared with the HTML export, load when the first block with a known language
//! is drawn) and each scope is coloured with one of the theme's `syntax*` tokens.
//!
//! A block that streams in is drawn again on every line that arrives, so the parse of the last
//! block is kept, with syntect's state after its last whole line: a redraw parses only the new
//! lines.

use std::cell::RefCell;
use std::collections::HashMap;

use ratatui::text::Span;
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};

use super::style;
use super::theme::Token;
use rho_coding_agent::export_html::highlight::{find_syntax, syntax_set};

/// Blocks larger than this are shown plain.
const MAX_BYTES: usize = 64 * 1024;

/// Which token colours a scope (the first rule whose scope prefix matches, innermost scope
/// first; scopes no rule names, like `meta.*`, leave it to the scopes around them). A scope
/// none of whose rules match is drawn in the default colour, as pi draws unnamed tokens.
const RULES: &[(&str, Token)] = &[
    ("comment", Token::SyntaxComment),
    ("punctuation.definition.comment", Token::SyntaxComment),
    ("constant.character.escape", Token::SyntaxString),
    ("punctuation.definition.string", Token::SyntaxString),
    ("string", Token::SyntaxString),
    ("constant.numeric", Token::SyntaxNumber),
    ("constant.language", Token::SyntaxNumber),
    ("keyword.operator", Token::SyntaxOperator),
    ("keyword", Token::SyntaxKeyword),
    ("storage", Token::SyntaxKeyword),
    ("variable.language", Token::SyntaxKeyword),
    ("entity.name.tag", Token::SyntaxKeyword),
    ("entity.name.function", Token::SyntaxFunction),
    ("support.function", Token::SyntaxFunction),
    ("variable.function", Token::SyntaxFunction),
    ("entity.name.type", Token::SyntaxType),
    ("entity.name.class", Token::SyntaxType),
    ("entity.name.struct", Token::SyntaxType),
    ("entity.name.enum", Token::SyntaxType),
    ("entity.name.trait", Token::SyntaxType),
    ("entity.name.interface", Token::SyntaxType),
    ("entity.name.union", Token::SyntaxType),
    ("entity.other.inherited-class", Token::SyntaxType),
    ("support.type", Token::SyntaxType),
    ("support.class", Token::SyntaxType),
    ("entity.other.attribute-name", Token::SyntaxVariable),
    ("meta.object-literal.key", Token::SyntaxVariable),
    ("variable", Token::SyntaxVariable),
    ("punctuation", Token::SyntaxPunctuation),
];

/// A piece of a line and the token that colours it (`None`: the default colour).
type Piece = (String, Option<Token>);

/// The parse of the last block highlighted.
struct Parsed {
    lang: String,
    /// The whole lines parsed, line breaks included.
    text: String,
    lines: Vec<Vec<Piece>>,
    state: ParseState,
    stack: ScopeStack,
}

#[derive(Default)]
struct Cache {
    last: Option<Parsed>,
    tokens: HashMap<Scope, Option<Token>>,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

/// `code`'s lines (split at its line breaks, a final one ending the last line) highlighted as
/// `lang`; `None` when it is to be drawn plain: no or an unknown language, no colours, too
/// large, or a parse error.
pub fn highlight(code: &str, lang: &str) -> Option<Vec<Vec<Span<'static>>>> {
    let lang = lang.split([' ', ',', '{']).next().unwrap_or_default();
    if lang.is_empty() || style::no_color() || code.len() > MAX_BYTES {
        return None;
    }
    let set = syntax_set();
    let syntax = find_syntax(set, lang)?;
    if syntax.name == "Plain Text" {
        return None;
    }
    CACHE.with_borrow_mut(|cache| {
        let mut parsed = match cache.last.take() {
            Some(p) if p.lang == lang && code.starts_with(&p.text) => p,
            _ => Parsed {
                lang: lang.to_owned(),
                text: String::new(),
                lines: Vec::new(),
                state: ParseState::new(syntax),
                stack: ScopeStack::new(),
            },
        };
        let rest = &code[parsed.text.len()..];
        let whole = rest.rfind('\n').map_or(0, |i| i + 1);
        for line in rest[..whole].split_inclusive('\n') {
            let pieces = parse_line(line, &mut parsed.state, &mut parsed.stack, set, &mut cache.tokens)?;
            parsed.lines.push(pieces);
            parsed.text.push_str(line);
        }
        let partial = &rest[whole..];
        let last = if partial.is_empty() {
            None
        } else {
            let (mut state, mut stack) = (parsed.state.clone(), parsed.stack.clone());
            Some(parse_line(partial, &mut state, &mut stack, set, &mut cache.tokens)?)
        };
        let lines = parsed.lines.iter().chain(last.as_ref()).map(|pieces| spans(pieces)).collect();
        cache.last = Some(parsed);
        Some(lines)
    })
}

/// The language a file's contents are highlighted as: its extension (`rs`, `py`, `ts`), or its
/// name when it has none (`Makefile`); `None` when the path has neither. Whether syntect knows
/// it is [`highlight`]'s question: an unknown one is drawn plain.
pub fn lang_of_path(path: &str) -> Option<String> {
    let name = std::path::Path::new(path.trim()).file_name()?.to_str()?;
    let lang = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext,
        _ => name,
    };
    (!lang.is_empty()).then(|| lang.to_ascii_lowercase())
}

fn spans(pieces: &[Piece]) -> Vec<Span<'static>> {
    pieces
        .iter()
        .map(|(text, token)| match token {
            Some(token) => Span::styled(text.clone(), style::token(*token)),
            None => Span::raw(text.clone()),
        })
        .collect()
}

/// One line's pieces, the parse state carried on.
fn parse_line(
    line: &str,
    state: &mut ParseState,
    stack: &mut ScopeStack,
    set: &SyntaxSet,
    tokens: &mut HashMap<Scope, Option<Token>>,
) -> Option<Vec<Piece>> {
    let ops = state.parse_line(line, set).ok()?;
    let text = line.strip_suffix('\n').unwrap_or(line);
    let mut pieces: Vec<Piece> = Vec::new();
    let mut from = 0;
    let mut push = |pieces: &mut Vec<Piece>, to: usize, stack: &ScopeStack| {
        let to = to.min(text.len());
        if to <= from {
            return;
        }
        let token = stack_token(stack, tokens);
        match pieces.last_mut() {
            Some((t, last)) if *last == token => t.push_str(&text[from..to]),
            _ => pieces.push((text[from..to].to_owned(), token)),
        }
        from = to;
    };
    for (at, op) in ops {
        push(&mut pieces, at, stack);
        stack.apply(&op).ok()?;
    }
    push(&mut pieces, text.len(), stack);
    Some(pieces)
}

fn stack_token(stack: &ScopeStack, tokens: &mut HashMap<Scope, Option<Token>>) -> Option<Token> {
    stack.as_slice().iter().rev().find_map(|scope| *tokens.entry(*scope).or_insert_with(|| scope_token(*scope)))
}

fn scope_token(scope: Scope) -> Option<Token> {
    let name = scope.build_string();
    RULES.iter().find(|(prefix, _)| under(&name, prefix)).map(|(_, token)| *token)
}

/// Whether `scope` is `prefix` or below it (`string.quoted` is under `string`, `strings` not).
fn under(scope: &str, prefix: &str) -> bool {
    scope.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens_of(code: &str, lang: &str) -> Vec<(String, Option<Token>)> {
        let set = syntax_set();
        let syntax = find_syntax(set, lang).unwrap();
        let (mut state, mut stack) = (ParseState::new(syntax), ScopeStack::new());
        let mut tokens = HashMap::new();
        code.split_inclusive('\n')
            .flat_map(|line| parse_line(line, &mut state, &mut stack, set, &mut tokens).unwrap())
            .collect()
    }

    fn token_of(pieces: &[(String, Option<Token>)], text: &str) -> Option<Token> {
        pieces.iter().find(|(t, _)| t.trim() == text).unwrap_or_else(|| panic!("{text:?} in {pieces:?}")).1
    }

    #[test]
    fn scopes_map_to_the_syntax_tokens() {
        let rust = tokens_of("// note\nfn main() { let x: i32 = 42 + f(\"hi\"); }\n", "rust");
        assert_eq!(token_of(&rust, "// note"), Some(Token::SyntaxComment));
        assert_eq!(token_of(&rust, "fn"), Some(Token::SyntaxKeyword));
        assert_eq!(token_of(&rust, "main"), Some(Token::SyntaxFunction));
        assert_eq!(token_of(&rust, "42"), Some(Token::SyntaxNumber));
        assert_eq!(token_of(&rust, "\"hi\""), Some(Token::SyntaxString));
        assert_eq!(token_of(&rust, "+"), Some(Token::SyntaxOperator));
        let python = tokens_of("class C(Base):\n    pass\n", "python");
        assert_eq!(token_of(&python, "C"), Some(Token::SyntaxType));
        assert_eq!(token_of(&python, "pass"), Some(Token::SyntaxKeyword));
    }

    #[test]
    fn unknown_or_missing_languages_are_left_plain() {
        assert!(highlight("x = 1\n", "").is_none());
        assert!(highlight("x = 1\n", "no-such-language").is_none());
        assert!(highlight(&"x\n".repeat(MAX_BYTES), "rust").is_none());
        assert!(highlight("x = 1\n", "python").is_some());
    }

    #[test]
    fn a_path_names_its_language_by_extension() {
        assert_eq!(lang_of_path("src/main.RS").as_deref(), Some("rs"));
        assert_eq!(lang_of_path("web/app.test.ts").as_deref(), Some("ts"));
        assert_eq!(lang_of_path("Makefile").as_deref(), Some("makefile"));
        assert_eq!(lang_of_path(".bashrc").as_deref(), Some(".bashrc"));
        assert!(lang_of_path("").is_none());
        assert!(highlight("fn main() {}\n", &lang_of_path("a.rs").unwrap()).is_some());
        assert!(highlight("plain\n", &lang_of_path("notes.txt").unwrap()).is_none());
        assert!(highlight("x\n", &lang_of_path("data.unknownext").unwrap()).is_none());
    }

    #[test]
    fn a_growing_block_highlights_as_a_whole_one_does() {
        let code = "fn a() {\n    /* open\n  comment */ let s = \"x\";\n}\n";
        let whole = highlight(code, "rust").unwrap();
        let text = |lines: &[Vec<Span<'static>>]| -> Vec<Vec<(String, ratatui::style::Style)>> {
            lines.iter().map(|l| l.iter().map(|s| (s.content.to_string(), s.style)).collect()).collect()
        };
        for cut in 1..code.len() {
            let part = highlight(&code[..cut], "rust").unwrap();
            let finished = code[..cut].matches('\n').count();
            assert_eq!(text(&part[..finished]), text(&whole[..finished]), "cut at {cut}");
        }
        assert_eq!(text(&highlight(code, "rust").unwrap()), text(&whole));
    }
}
