//! Syntax highlighting of fenced code blocks, at export time, with syntect's pure-Rust regex
//! engine.
//!
//! The output is classed spans (`<span class="sy-source sy-rust">`), coloured by one
//! stylesheet per page ([`theme_css`]: a dark and a light theme, chosen by the reader's colour
//! scheme), so a block costs its text and a few classes rather than an inline style per token.
//! Loading the syntax definitions and the themes takes milliseconds, so each is loaded once
//! per process and only when a block asks for a language. A block that is too large, names an
//! unknown language or trips the regex engine is left plain.

use std::sync::OnceLock;

use syntect::highlighting::ThemeSet;
use syntect::html::{ClassStyle, ClassedHTMLGenerator, css_for_theme_with_class_style};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

const CLASS_STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "sy-" };

/// The class that carries a theme's foreground and background (syntect's `code` class).
pub const CODE_CLASS: &str = "sy-code";

/// Blocks larger than this are shown plain: highlighting is linear but not cheap, and a page
/// should render in well under a second.
const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;

const DARK_THEME: &str = "base16-ocean.dark";
const LIGHT_THEME: &str = "InspiredGitHub";

/// The default syntax definitions (also the terminal's), loaded on first use.
pub fn syntax_set() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Names the default syntax set does not know, mapped to the nearest one it does.
fn alias(lang: &str) -> &str {
    match lang {
        "ts" | "typescript" | "tsx" | "jsx" | "mjs" | "cjs" | "javascriptreact" | "typescriptreact" => "js",
        "sh" | "shell" | "zsh" | "console" | "shellscript" => "bash",
        "jsonc" | "json5" | "jsonl" => "json",
        "py3" | "python3" => "py",
        "yml" => "yaml",
        "rs" => "rust",
        "golang" => "go",
        "c++" | "hpp" | "cc" => "cpp",
        "md" => "markdown",
        other => other,
    }
}

/// The syntax a fence's language names, by token or extension (with [`alias`]).
pub fn find_syntax<'a>(set: &'a SyntaxSet, lang: &str) -> Option<&'a SyntaxReference> {
    let lang = lang.trim().to_ascii_lowercase();
    set.find_syntax_by_token(alias(&lang))
}

/// `code` as highlighted HTML (escaped, classed spans) in the syntax `lang`, or `None` when it
/// is to be shown plain.
pub fn highlight(code: &str, lang: &str) -> Option<String> {
    if lang.trim().is_empty() || code.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let set = syntax_set();
    let syntax = find_syntax(set, lang)?;
    if syntax.name == "Plain Text" {
        return None;
    }
    let mut generator = ClassedHTMLGenerator::new_with_class_style(syntax, set, CLASS_STYLE);
    for line in LinesWithEndings::from(code) {
        generator.parse_html_for_line_which_includes_newline(line).ok()?;
    }
    Some(generator.finalize())
}

/// The stylesheet for highlighted blocks: the dark theme under `prefers-color-scheme: dark`,
/// the light one otherwise. Empty if the bundled themes cannot be read.
pub fn theme_css() -> &'static str {
    static CSS: OnceLock<String> = OnceLock::new();
    CSS.get_or_init(|| {
        let themes = ThemeSet::load_defaults();
        let css_for = |name: &str| {
            themes.themes.get(name).and_then(|theme| css_for_theme_with_class_style(theme, CLASS_STYLE).ok())
        };
        match (css_for(DARK_THEME), css_for(LIGHT_THEME)) {
            (Some(dark), Some(light)) => format!(
                "@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n@media not all and (prefers-color-scheme: dark) {{\n{light}\n}}\n"
            ),
            _ => String::new(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_classed_spans() {
        let html = highlight("fn main() { let x = \"<b>\"; }\n", "rust").unwrap();
        assert!(html.contains("<span class=\"sy-"), "{html}");
        assert!(html.contains("&lt;b&gt;") && !html.contains("<b>"), "{html}");
        assert!(highlight("const x: number = 1;\n", "ts").is_some());
        assert!(highlight("ls -la\n", "sh").is_some());
    }

    #[test]
    fn unknown_or_missing_languages_stay_plain() {
        assert_eq!(highlight("x\n", ""), None);
        assert_eq!(highlight("x\n", "no-such-language"), None);
        assert_eq!(highlight(&"a".repeat(MAX_HIGHLIGHT_BYTES + 1), "rust"), None);
    }

    #[test]
    fn theme_css_covers_both_schemes() {
        let css = theme_css();
        assert!(css.contains(".sy-code") && css.contains("prefers-color-scheme: dark"), "{css}");
    }
}
