//! The page around the entries: head with the inlined stylesheet and security policy, the
//! header figures, the system prompt and tools, the message view, the hidden store of the other
//! branches, the embedded data and the viewer script.
//!
//! The policy (`default-src 'none'`) lets the page load nothing from anywhere: the only script
//! that may run is the viewer, admitted by its SHA-256 hash, and images must be `data:` URIs.
//! It is a second line behind escaping, not a replacement for it.

use std::collections::HashSet;
use std::sync::OnceLock;

use base64::Engine;
use rho_session::Session;
use serde_json::Value;

use super::ExportOptions;
use super::entry::push_entry;
use super::escape::script_json;
use super::fragments::{Html, one_line, push_long_text};
use super::highlight::theme_css;
use super::stats::{SessionFigures, push_header};
use super::tree::{ViewerData, build_tree};

const STYLE: &str = include_str!("assets/viewer.css");
const SCRIPT: &str = include_str!("assets/viewer.js");

/// Lines of the system prompt shown before it is collapsed.
const SYSTEM_PROMPT_PREVIEW_LINES: usize = 10;

/// `'sha256-…'`, the CSP source that admits [`SCRIPT`] and nothing else.
fn script_hash_source() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        let digest = ring::digest::digest(&ring::digest::SHA256, SCRIPT.as_bytes());
        format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest.as_ref()))
    })
}

/// The whole page for `session`.
pub fn render_page(session: &Session, options: &ExportOptions) -> String {
    let entries = session.entries();
    let leaf = session.leaf_id().map(|l| l.as_str());
    let path = session.path_to(leaf);
    let on_path: HashSet<&str> = path.iter().map(|e| e.id().as_str()).collect();

    let mut view = Html::with_capacity(64 * 1024);
    for entry in &path {
        push_entry(&mut view, entry, session.label(entry.id().as_str()));
    }
    let mut store = Html::with_capacity(16 * 1024);
    for entry in entries.iter().filter(|e| !on_path.contains(e.id().as_str())) {
        push_entry(&mut store, entry, session.label(entry.id().as_str()));
    }

    let data = ViewerData {
        header: session.header(),
        leaf_id: leaf,
        file_name: session
            .session_file()
            .and_then(|p| p.file_name())
            .map_or_else(|| "session.jsonl".to_owned(), |n| n.to_string_lossy().into_owned()),
        tree: build_tree(session),
        entries,
    };
    let data_json = script_json(&data).unwrap_or_else(|e| {
        tracing::warn!("session data for the HTML export could not be serialized: {e}");
        "{}".to_owned()
    });

    let mut page = Html::with_capacity(view.out.len() + store.out.len() + data_json.len() + STYLE.len() + 32 * 1024);
    let title = session_title(session);
    push_head(&mut page, &title, view.highlighted || store.highlighted);
    page.push("<body>\n<div class=\"layout\">\n<aside id=\"sidebar\"><div class=\"sidebar-controls\">");
    page.push("<input id=\"search\" type=\"search\" placeholder=\"Search entries\" autocomplete=\"off\">");
    page.push("<label><input id=\"show-all\" type=\"checkbox\"> all entries</label></div>");
    page.push("<div id=\"tree\" role=\"tree\"></div></aside>\n<main id=\"content\">\n");
    page.push("<div class=\"toolbar\">");
    page.push("<button type=\"button\" id=\"toggle-thinking\" title=\"Ctrl+T\">Hide thinking</button>");
    page.push("<button type=\"button\" id=\"toggle-output\" title=\"Ctrl+O\">Expand tool output</button>");
    page.push("<button type=\"button\" id=\"download\">Download JSONL</button></div>\n");
    push_header(&mut page.out, session, &title, &SessionFigures::collect(entries));
    push_system_prompt(&mut page, options.system_prompt);
    push_tools(&mut page, options);
    page.push("<section id=\"messages\">\n");
    page.push(&view.out);
    page.push("</section>\n</main>\n</div>\n<div id=\"entry-store\" hidden>\n");
    page.push(&store.out);
    page.push("</div>\n<script type=\"application/json\" id=\"session-data\">");
    page.push(&data_json);
    page.push("</script>\n<script>");
    page.push(SCRIPT);
    page.push("</script>\n</body>\n</html>\n");
    page.out
}

fn push_head(page: &mut Html, title: &str, highlighted: bool) {
    page.push("<!DOCTYPE html>\n<html lang=\"en\" class=\"no-js\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    page.push("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src ");
    page.push(script_hash_source());
    page.push("; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n");
    page.push("<meta name=\"generator\" content=\"rho\">\n<title>");
    page.text(title);
    page.text(" - rho session");
    page.push("</title>\n<style>\n");
    page.push(STYLE);
    if highlighted {
        page.push(theme_css());
    }
    page.push("</style>\n</head>\n");
}

/// The session's name, else the first line of its first prompt, else its id.
fn session_title(session: &Session) -> String {
    if let Some(name) = session.name().or(session.header().title.as_deref()) {
        return name.to_owned();
    }
    let first_prompt =
        session.user_message_entries().into_iter().map(|u| one_line(&u.text, 80)).find(|t| !t.is_empty());
    first_prompt.unwrap_or_else(|| session.session_id().to_owned())
}

fn push_system_prompt(page: &mut Html, system_prompt: Option<&str>) {
    let Some(prompt) = system_prompt.filter(|p| !p.trim().is_empty()) else {
        return;
    };
    page.push("<section class=\"system-prompt\"><h2>System prompt</h2>");
    push_long_text(&mut page.out, prompt, "prompt", SYSTEM_PROMPT_PREVIEW_LINES);
    page.push("</section>\n");
}

fn push_tools(page: &mut Html, options: &ExportOptions) {
    if options.tools.is_empty() {
        return;
    }
    page.push(&format!("<section class=\"tools\"><h2>Tools ({})</h2><ul class=\"tool-list\">", options.tools.len()));
    for tool in options.tools {
        page.push("<li><details><summary><span class=\"tool-name\">");
        page.text(&tool.name);
        page.push("</span> <span class=\"tool-desc\">");
        page.text(&one_line(&tool.description, 120));
        page.push("</span></summary><div class=\"tool-description\">");
        page.text(&tool.description);
        page.push("</div>");
        push_parameters(page, &tool.parameters);
        page.push("</details></li>");
    }
    page.push("</ul></section>\n");
}

/// A schema's properties as a list (name, type, required, description, allowed values); a
/// schema without `properties` as its JSON.
fn push_parameters(page: &mut Html, schema: &Value) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        if !schema.is_null() {
            let pretty = serde_json::to_string_pretty(schema).unwrap_or_default();
            push_long_text(&mut page.out, &pretty, "schema", 20);
        }
        return;
    };
    let required: HashSet<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    page.push("<dl class=\"params\">");
    for (name, property) in properties {
        page.push("<dt><code>");
        page.text(name);
        page.push("</code>");
        if let Some(kind) = property.get("type") {
            page.push(" <span class=\"param-type\">");
            page.text(&kind.as_str().map_or_else(|| kind.to_string(), str::to_owned));
            page.push("</span>");
        }
        if required.contains(name.as_str()) {
            page.push(" <span class=\"badge\">required</span>");
        }
        page.push("</dt><dd>");
        page.text(property.get("description").and_then(Value::as_str).unwrap_or_default());
        if let Some(choices) = property.get("enum").and_then(Value::as_array) {
            let choices: Vec<String> =
                choices.iter().map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned)).collect();
            page.push(" <span class=\"param-type\">");
            page.text(&format!("one of: {}", choices.join(", ")));
            page.push("</span>");
        }
        page.push("</dd>");
    }
    page.push("</dl>");
}
