//! Small pieces every part of the page uses: the buffer entries are written to, long text
//! collapsed behind a preview, images as `data:` URIs, timestamps, one-line previews, token and
//! cost figures.

use rho_types::types::{ImageContent, UserContent};

use super::escape::push_escaped;
use super::markdown::push_markdown;

/// HTML being written, and whether any of it is highlighted code (the page then carries the
/// theme stylesheet).
#[derive(Debug, Default)]
pub struct Html {
    pub out: String,
    pub highlighted: bool,
}

impl Html {
    pub fn with_capacity(bytes: usize) -> Self {
        Self { out: String::with_capacity(bytes), highlighted: false }
    }

    pub fn push(&mut self, raw: &str) {
        self.out.push_str(raw);
    }

    pub fn text(&mut self, text: &str) {
        push_escaped(&mut self.out, text);
    }

    pub fn markdown(&mut self, text: &str) {
        self.highlighted |= push_markdown(&mut self.out, text);
    }

    /// User-side content: text blocks as markdown, images inline.
    pub fn user_content(&mut self, blocks: &[UserContent]) {
        for block in blocks {
            match block {
                UserContent::Text(t) => self.markdown(&t.text),
                UserContent::Image(image) => push_image(&mut self.out, image),
            }
        }
    }
}

/// Text longer than this many bytes is collapsed even when it has few lines.
const COLLAPSE_BYTES: usize = 4000;
/// A preview shows at most this many bytes (one very long line stays short).
const PREVIEW_BYTES: usize = 1500;

/// `text` cut to at most `max` bytes at a character boundary.
pub fn truncate_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The first non-empty line of `text`, cut to `max` characters (with `…` when cut).
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    let mut out: String = line.chars().take(max).collect();
    if line.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// Appends `text` as preformatted text with the class `class`. Text longer than
/// `preview_lines` lines (or a few KB) is collapsed into a `<details class="collapsible">`
/// whose summary previews the first lines; the page's output toggle opens them all.
pub fn push_long_text(out: &mut String, text: &str, class: &str, preview_lines: usize) {
    let mut line_ends = text.match_indices('\n').map(|(i, _)| i);
    let preview_end = line_ends.nth(preview_lines.saturating_sub(1));
    let fits = preview_end.is_none_or(|_| line_ends.clone().nth(2).is_none()) && text.len() <= COLLAPSE_BYTES;
    if fits || preview_lines == 0 {
        out.push_str("<pre class=\"");
        push_escaped(out, class);
        out.push_str("\">");
        push_escaped(out, text);
        out.push_str("</pre>");
        return;
    }
    let preview = truncate_bytes(&text[..preview_end.unwrap_or(text.len())], PREVIEW_BYTES);
    let rest = &text[preview.len()..];
    let hidden_lines = rest.strip_prefix('\n').unwrap_or(rest).lines().count();
    out.push_str("<details class=\"collapsible ");
    push_escaped(out, class);
    out.push_str("\"><summary><span class=\"preview\">");
    push_escaped(out, preview);
    out.push_str("</span><span class=\"more\">");
    if preview.len() < preview_end.unwrap_or(usize::MAX) && hidden_lines <= 1 {
        out.push_str(&format!("… show all ({})", format_bytes(text.len())));
    } else {
        out.push_str(&format!("… {hidden_lines} more lines"));
    }
    out.push_str("</span></summary><pre class=\"full\">");
    push_escaped(out, text);
    out.push_str("</pre></details>");
}

/// `12.3 KB` style sizes.
pub fn format_bytes(n: usize) -> String {
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{:.1} KB", n as f64 / 1024.0),
        _ => format!("{:.1} MB", n as f64 / 1_048_576.0),
    }
}

/// `950`, `1.2k`, `45k`, `1.3M`: token counts as pi's export shows them.
pub fn format_tokens(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..10_000 => format!("{:.1}k", n as f64 / 1000.0),
        10_000..1_000_000 => format!("{}k", (n as f64 / 1000.0).round()),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// `$0.123`.
pub fn format_cost(usd: f64) -> String {
    format!("${usd:.3}")
}

/// Appends an ISO timestamp as `<time>`, shown as `YYYY-MM-DD HH:MM:SS` (UTC as written).
pub fn push_time(out: &mut String, iso: &str) {
    if iso.is_empty() {
        return;
    }
    let shown = iso.split('.').next().unwrap_or(iso).trim_end_matches('Z').replacen('T', " ", 1);
    out.push_str("<time datetime=\"");
    push_escaped(out, iso);
    out.push_str("\" title=\"");
    push_escaped(out, iso);
    out.push_str("\">");
    push_escaped(out, &shown);
    out.push_str("</time>");
}

fn is_image_mime(mime: &str) -> bool {
    mime.strip_prefix("image/").is_some_and(|sub| {
        !sub.is_empty() && sub.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
    })
}

fn is_base64(data: &str) -> bool {
    data.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\n' | b'\r'))
}

/// Appends an image block as an `<img>` with a `data:` URI, or a note when its type or data
/// is not an image's.
pub fn push_image(out: &mut String, image: &ImageContent) {
    if !is_image_mime(&image.mime_type) || !is_base64(&image.data) {
        out.push_str("<div class=\"note\">[image omitted: not valid image data]</div>");
        return;
    }
    out.push_str("<img class=\"image\" alt=\"image (");
    push_escaped(out, &image.mime_type);
    out.push_str(")\" src=\"data:");
    out.push_str(&image.mime_type);
    out.push_str(";base64,");
    out.push_str(&image.data);
    out.push_str("\">");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(text: &str, lines: usize) -> String {
        let mut out = String::new();
        push_long_text(&mut out, text, "output", lines);
        out
    }

    #[test]
    fn short_text_is_plain_pre() {
        assert_eq!(long("a\n<b>\n", 10), "<pre class=\"output\">a\n&lt;b&gt;\n</pre>");
    }

    #[test]
    fn long_text_is_collapsed_with_a_preview() {
        let text: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let html = long(&text, 5);
        assert!(html.starts_with("<details class=\"collapsible output\"><summary><span class=\"preview\">line 1\n"));
        assert!(html.contains("line 5</span><span class=\"more\">… 35 more lines</span>"), "{html}");
        assert!(html.contains("<pre class=\"full\">line 1\n") && html.contains("line 40\n</pre></details>"));
    }

    #[test]
    fn one_huge_line_is_collapsed_by_size() {
        let html = long(&"x".repeat(10_000), 5);
        assert!(html.contains("… show all (9.8 KB)"), "{html}");
    }

    #[test]
    fn figures() {
        assert_eq!(format_tokens(950), "950");
        assert_eq!(format_tokens(1234), "1.2k");
        assert_eq!(format_tokens(45_400), "45k");
        assert_eq!(format_tokens(1_300_000), "1.3M");
        assert_eq!(format_cost(0.12345), "$0.123");
        assert_eq!(one_line("\n  first line here\nsecond", 5), "first…");
    }

    #[test]
    fn images_need_an_image_type_and_base64() {
        let mut out = String::new();
        push_image(&mut out, &ImageContent { data: "iVBORw0KGgo=".into(), mime_type: "image/png".into() });
        assert_eq!(out, "<img class=\"image\" alt=\"image (image/png)\" src=\"data:image/png;base64,iVBORw0KGgo=\">");
        for (data, mime) in [("x\"onerror=\"y", "image/png"), ("AAAA", "text/html"), ("AAAA", "image/png\" x=\"")] {
            let mut out = String::new();
            push_image(&mut out, &ImageContent { data: data.into(), mime_type: mime.into() });
            assert!(out.contains("omitted"), "{out}");
        }
    }
}
