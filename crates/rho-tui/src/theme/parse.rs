//! pi's theme files: a `name`, optional `vars` and the `colors` of every token, each a hex
//! `"#rrggbb"`, a 256-colour index, the name of a var, or `""` (the terminal's default). A
//! file that lacks a token, names an unknown var or holds a bad value is refused whole with
//! an error that says which.

use ratatui::style::Color;
use serde_json::{Map, Value};

use super::palette::{self, ColorMode};

macro_rules! tokens {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// A colour token of pi's theme format.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Token { $($variant),* }

        impl Token {
            /// Every token, in the order of pi's documentation.
            pub const ALL: &'static [Token] = &[$(Token::$variant),*];

            /// The token's name in a theme file.
            pub fn name(self) -> &'static str {
                match self { $(Token::$variant => $name),* }
            }
        }
    };
}

tokens! {
    Accent = "accent",
    Border = "border",
    BorderAccent = "borderAccent",
    BorderMuted = "borderMuted",
    Success = "success",
    Error = "error",
    Warning = "warning",
    Muted = "muted",
    Dim = "dim",
    Text = "text",
    ThinkingText = "thinkingText",
    SelectedBg = "selectedBg",
    UserMessageBg = "userMessageBg",
    UserMessageText = "userMessageText",
    CustomMessageBg = "customMessageBg",
    CustomMessageText = "customMessageText",
    CustomMessageLabel = "customMessageLabel",
    ToolPendingBg = "toolPendingBg",
    ToolSuccessBg = "toolSuccessBg",
    ToolErrorBg = "toolErrorBg",
    ToolTitle = "toolTitle",
    ToolOutput = "toolOutput",
    MdHeading = "mdHeading",
    MdLink = "mdLink",
    MdLinkUrl = "mdLinkUrl",
    MdCode = "mdCode",
    MdCodeBlock = "mdCodeBlock",
    MdCodeBlockBorder = "mdCodeBlockBorder",
    MdQuote = "mdQuote",
    MdQuoteBorder = "mdQuoteBorder",
    MdHr = "mdHr",
    MdListBullet = "mdListBullet",
    ToolDiffAdded = "toolDiffAdded",
    ToolDiffRemoved = "toolDiffRemoved",
    ToolDiffContext = "toolDiffContext",
    SyntaxComment = "syntaxComment",
    SyntaxKeyword = "syntaxKeyword",
    SyntaxFunction = "syntaxFunction",
    SyntaxVariable = "syntaxVariable",
    SyntaxString = "syntaxString",
    SyntaxNumber = "syntaxNumber",
    SyntaxType = "syntaxType",
    SyntaxOperator = "syntaxOperator",
    SyntaxPunctuation = "syntaxPunctuation",
    ThinkingOff = "thinkingOff",
    ThinkingMinimal = "thinkingMinimal",
    ThinkingLow = "thinkingLow",
    ThinkingMedium = "thinkingMedium",
    ThinkingHigh = "thinkingHigh",
    ThinkingXhigh = "thinkingXhigh",
    BashMode = "bashMode",
}

/// A theme with every token resolved to a terminal colour (`None`: the terminal's default).
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    colors: Vec<Option<Color>>,
}

impl Theme {
    /// A theme of default colours only.
    pub fn plain(name: &str) -> Theme {
        Theme { name: name.to_owned(), colors: vec![None; Token::ALL.len()] }
    }

    pub fn color(&self, token: Token) -> Option<Color> {
        self.colors.get(token as usize).copied().flatten()
    }
}

/// Parses the text of a theme file; the error names `label` (a path or a built-in's name) and
/// what is wrong, on one line.
pub fn parse(label: &str, text: &str, mode: ColorMode) -> Result<Theme, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| format!("invalid theme {label}: bad JSON: {e}"))?;
    from_json(&json, mode).map_err(|e| format!("invalid theme {label}: {e}"))
}

fn from_json(json: &Value, mode: ColorMode) -> Result<Theme, String> {
    let object = json.as_object().ok_or("not a JSON object")?;
    let name = match object.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        Some(_) => return Err("`name` is not a non-empty string".to_owned()),
        None => return Err("`name` is missing".to_owned()),
    };
    let empty = Map::new();
    let vars = match object.get("vars") {
        None => &empty,
        Some(Value::Object(vars)) => vars,
        Some(_) => return Err("`vars` is not an object".to_owned()),
    };
    let colors = match object.get("colors") {
        Some(Value::Object(colors)) => colors,
        Some(_) => return Err("`colors` is not an object".to_owned()),
        None => return Err("`colors` is missing".to_owned()),
    };
    let mut missing: Vec<&str> = Token::ALL.iter().map(|t| t.name()).filter(|n| !colors.contains_key(*n)).collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        return Err(format!("missing color tokens: {}", missing.join(", ")));
    }
    let mut resolved = Vec::with_capacity(Token::ALL.len());
    for token in Token::ALL {
        let value = &colors[token.name()];
        let color = resolve(value, vars, mode).map_err(|e| format!("colors.{}: {e}", token.name()))?;
        resolved.push(color);
    }
    Ok(Theme { name, colors: resolved })
}

/// One colour value, following var names (a var may name another var).
fn resolve(value: &Value, vars: &Map<String, Value>, mode: ColorMode) -> Result<Option<Color>, String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut value = value;
    loop {
        match value {
            Value::Number(n) => {
                let index =
                    n.as_u64().filter(|i| *i <= 255).ok_or_else(|| format!("{n} is not a colour index 0-255"))?;
                return Ok(Some(Color::Indexed(index as u8)));
            }
            Value::String(s) if s.is_empty() => return Ok(None),
            Value::String(s) if s.starts_with('#') => {
                let (r, g, b) = palette::hex(s).ok_or_else(|| format!("{s:?} is not a #rrggbb colour"))?;
                return Ok(Some(palette::rgb(r, g, b, mode)));
            }
            Value::String(s) if s.to_ascii_lowercase().starts_with("ok") && s.contains('(') => {
                let (r, g, b) = super::oklab::parse(s)
                    .ok_or_else(|| format!("{s:?} is not an okhsl(h s% l%) or oklch(l% c h) colour"))?;
                return Ok(Some(palette::rgb(r, g, b, mode)));
            }
            Value::String(var) => {
                if seen.contains(&var.as_str()) {
                    return Err(format!("var {var:?} refers to itself"));
                }
                seen.push(var);
                value = vars.get(var).ok_or_else(|| format!("unknown var {var:?}"))?;
            }
            other => {
                return Err(format!(
                    "{other} is not a colour (a \"#rrggbb\", okhsl(…), oklch(…), 0-255, a var or \"\")"
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A theme whose every token is `""`, with `overrides` (name → JSON value) on top.
    fn theme_json(vars: Value, overrides: &[(&str, Value)]) -> String {
        let mut colors: Map<String, Value> =
            Token::ALL.iter().map(|t| (t.name().to_owned(), Value::from(""))).collect();
        for (name, value) in overrides {
            colors.insert((*name).to_owned(), value.clone());
        }
        serde_json::json!({"name": "t", "vars": vars, "colors": colors}).to_string()
    }

    fn parse_ok(text: &str) -> Theme {
        parse("t.json", text, ColorMode::TrueColor).unwrap()
    }

    #[test]
    fn pi_1_6s_perceptual_colours_resolve() {
        let vars = serde_json::json!({"text": "okhsl(234 3% 89%)", "red": "oklch(62.8% 0.2577 29.23deg)"});
        let text =
            theme_json(vars, &[("text", "text".into()), ("error", "red".into()), ("dim", "okhsl(20 72% 67%)".into())]);
        let theme = parse_ok(&text);
        assert_eq!(theme.color(Token::Text), Some(Color::Rgb(222, 224, 225)));
        assert_eq!(theme.color(Token::Error), Some(Color::Rgb(255, 0, 0)));
        assert_eq!(theme.color(Token::Dim), Some(Color::Rgb(234, 127, 129)));
        let bad = theme_json(serde_json::json!({}), &[("dim", "okhsl(20 72%)".into())]);
        let error = parse("t.json", &bad, ColorMode::TrueColor).unwrap_err();
        assert!(
            error.contains("colors.dim: \"okhsl(20 72%)\" is not an okhsl(h s% l%) or oklch(l% c h) colour"),
            "{error}"
        );
    }

    #[test]
    fn hex_index_default_and_vars_resolve() {
        let vars = serde_json::json!({"primary": "#00aaff", "alias": "primary", "gray": 242});
        let text = theme_json(
            vars,
            &[("accent", "alias".into()), ("muted", "gray".into()), ("error", "#FF0000".into()), ("dim", 240.into())],
        );
        let theme = parse_ok(&text);
        assert_eq!(theme.name, "t");
        assert_eq!(theme.color(Token::Accent), Some(Color::Rgb(0x00, 0xaa, 0xff)));
        assert_eq!(theme.color(Token::Muted), Some(Color::Indexed(242)));
        assert_eq!(theme.color(Token::Error), Some(Color::Rgb(255, 0, 0)));
        assert_eq!(theme.color(Token::Dim), Some(Color::Indexed(240)));
        assert_eq!(theme.color(Token::Text), None);
    }

    #[test]
    fn hex_becomes_the_nearest_index_without_truecolor() {
        let text = theme_json(serde_json::json!({}), &[("error", "#ff0000".into()), ("dim", "#808080".into())]);
        let theme = parse("t.json", &text, ColorMode::Indexed).unwrap();
        assert_eq!(theme.color(Token::Error), Some(Color::Indexed(196)));
        assert_eq!(theme.color(Token::Dim), Some(Color::Indexed(244)));
    }

    #[test]
    fn a_missing_token_is_named() {
        let text = theme_json(serde_json::json!({}), &[]).replace(r#""syntaxKeyword":"","#, "");
        let err = parse("my.json", &text, ColorMode::TrueColor).unwrap_err();
        assert_eq!(err, "invalid theme my.json: missing color tokens: syntaxKeyword");
    }

    #[test]
    fn bad_values_and_bad_json_say_what_is_wrong() {
        let err = |overrides: &[(&str, Value)]| {
            parse("x", &theme_json(serde_json::json!({"a": "b", "b": "a"}), overrides), ColorMode::TrueColor)
                .unwrap_err()
        };
        assert_eq!(err(&[("accent", "nope".into())]), r#"invalid theme x: colors.accent: unknown var "nope""#);
        assert_eq!(err(&[("accent", "a".into())]), r#"invalid theme x: colors.accent: var "a" refers to itself"#);
        assert_eq!(err(&[("dim", 300.into())]), "invalid theme x: colors.dim: 300 is not a colour index 0-255");
        assert_eq!(
            err(&[("dim", "#12345".into())]),
            r##"invalid theme x: colors.dim: "#12345" is not a #rrggbb colour"##
        );
        let bad = parse("x.json", "{\"name\": ", ColorMode::TrueColor).unwrap_err();
        assert!(bad.starts_with("invalid theme x.json: bad JSON: EOF while parsing"), "{bad}");
        let unnamed = parse("x.json", r#"{"colors": {}}"#, ColorMode::TrueColor).unwrap_err();
        assert_eq!(unnamed, "invalid theme x.json: `name` is missing");
    }
}
