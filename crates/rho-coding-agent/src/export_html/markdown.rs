//! Markdown of user and assistant text to HTML (CommonMark plus tables, strikethrough and task
//! lists), rendered once at export time.
//!
//! The session's markdown is the model's or the user's, so it is not trusted: raw HTML (blocks
//! and inline) is shown as text, link targets with a scheme other than http, https or mailto
//! become `#`, and images become links, so opening the page never fetches anything. Fenced code
//! blocks go through [`crate::export_html::highlight`].

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use super::escape::{is_safe_url, push_escaped};
use super::highlight::{CODE_CLASS, highlight};

/// Appends `text` rendered as markdown, in a `<div class="markdown">`. Returns whether a code
/// block was highlighted (the page then needs the theme stylesheet).
pub fn push_markdown(out: &mut String, text: &str) -> bool {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut events: Vec<Event> = Vec::new();
    let mut highlighted = false;
    let mut code: Option<(String, String)> = None;
    for event in Parser::new_ext(text, options) {
        if let Some((lang, body)) = &mut code {
            match event {
                Event::Text(t) => body.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let mut html = String::with_capacity(body.len() + 64);
                    highlighted |= push_code_block(&mut html, body, lang);
                    events.push(Event::Html(html.into()));
                    code = None;
                }
                _ => {}
            }
            continue;
        }
        let event = match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.split([' ', ',', '{']).next().unwrap_or_default().to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
                continue;
            }
            Event::Start(Tag::HtmlBlock) => Event::Html("<pre class=\"raw-html\">".into()),
            Event::End(TagEnd::HtmlBlock) => Event::Html("</pre>\n".into()),
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                Event::Start(Tag::Link { link_type, dest_url: safe_url(dest_url), title, id })
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                Event::Start(Tag::Link { link_type, dest_url: safe_url(dest_url), title, id })
            }
            Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
            other => other,
        };
        events.push(event);
    }
    out.push_str("<div class=\"markdown\">");
    pulldown_cmark::html::push_html(out, events.into_iter());
    out.push_str("</div>");
    highlighted
}

fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    if is_safe_url(&url) { url } else { CowStr::Borrowed("#") }
}

/// Appends a `<pre>` code block, highlighted when `lang` is known; returns whether it was.
pub fn push_code_block(out: &mut String, code: &str, lang: &str) -> bool {
    let highlighted = highlight(code, lang);
    out.push_str("<pre class=\"code");
    if highlighted.is_some() {
        out.push(' ');
        out.push_str(CODE_CLASS);
    }
    out.push('"');
    if !lang.is_empty() {
        out.push_str(" data-lang=\"");
        push_escaped(out, lang);
        out.push('"');
    }
    out.push_str("><code>");
    match &highlighted {
        Some(html) => out.push_str(html),
        None => push_escaped(out, code),
    }
    out.push_str("</code></pre>\n");
    highlighted.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> (String, bool) {
        let mut out = String::new();
        let highlighted = push_markdown(&mut out, text);
        (out, highlighted)
    }

    #[test]
    fn headings_lists_and_emphasis_become_html() {
        let (html, highlighted) = render("# Title\n\n- one\n- **two**\n");
        insta::assert_snapshot!(html, @r#"
        <div class="markdown"><h1>Title</h1>
        <ul>
        <li>one</li>
        <li><strong>two</strong></li>
        </ul>
        </div>
        "#);
        assert!(!highlighted);
    }

    #[test]
    fn fenced_code_is_highlighted() {
        let (html, highlighted) = render("```rust\nfn main() {}\n```\n");
        assert!(highlighted);
        assert!(html.contains("<pre class=\"code sy-code\" data-lang=\"rust\"><code><span class=\"sy-"), "{html}");
        let (plain, highlighted) = render("```\n<b>x</b>\n```\n");
        assert!(!highlighted);
        assert!(plain.contains("<pre class=\"code\"><code>&lt;b&gt;x&lt;/b&gt;\n</code></pre>"), "{plain}");
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        let (html, _) = render("<script>alert(1)</script>\n\nhi <img src=x onerror=alert(1)> there");
        assert!(!html.contains("<script") && !html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "{html}");
    }

    #[test]
    fn unsafe_links_are_neutralized_and_images_are_not_fetched() {
        let (html, _) = render("[a](javascript:alert(1)) [b](https://ok.dev) ![c](https://track.er/p.png)");
        assert!(html.contains("<a href=\"#\">a</a>"), "{html}");
        assert!(html.contains("<a href=\"https://ok.dev\">b</a>"), "{html}");
        assert!(html.contains("<a href=\"https://track.er/p.png\">c</a>") && !html.contains("<img"), "{html}");
    }
}
