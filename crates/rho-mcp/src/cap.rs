//! MCP results capped as the built-in tools cap theirs: at most 2000 lines / 50 KiB of text
//! reach the model (and the session file); the whole text goes to a private temporary file the
//! model can `read` on. A structured result too large to keep is left out of `details` (its
//! JSON is in the file when it was the text). A 10 MB result no longer rides along in every
//! later request.

use std::io::Write;
use std::path::PathBuf;

use rho_tools::format_size;
use rho_tools::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationOptions, count_lines, truncate_head,
};
use rho_types::types::UserContent;
use serde_json::{Map, Value, json};

/// Caps `content` in place, noting what was done in `details`.
pub(crate) fn cap(content: &mut Vec<UserContent>, details: &mut Map<String, Value>) {
    if let Some(structured) = details.get("structuredContent") {
        let size = serde_json::to_vec(structured).map_or(0, |v| v.len());
        if size > DEFAULT_MAX_BYTES {
            details.remove("structuredContent");
            details.insert("structuredContentOmitted".to_owned(), json!({"bytes": size}));
        }
    }
    let texts: Vec<&str> = content.iter().filter_map(UserContent::as_text).collect();
    let bytes: usize = texts.iter().map(|t| t.len() + 1).sum();
    let lines: usize = texts.iter().map(|t| count_lines(t)).sum();
    if bytes <= DEFAULT_MAX_BYTES && lines <= DEFAULT_MAX_LINES {
        return;
    }
    let full = texts.join("\n");
    let truncation = truncate_head(&full, TruncationOptions::default());
    let saved = save(&full);
    let shown = truncation.output_lines;
    let limit = match truncation.truncated_by {
        Some(TruncatedBy::Bytes) => format!(" ({} limit)", format_size(DEFAULT_MAX_BYTES)),
        _ => String::new(),
    };
    let notice = match &saved {
        Ok(path) => format!(
            "[Showing lines 1-{shown} of {}{limit}. Full output: {}; read it with offset={} to continue.]",
            truncation.total_lines,
            path.display(),
            shown + 1
        ),
        Err(e) => format!(
            "[Showing lines 1-{shown} of {}{limit}. The full output could not be saved: {e}]",
            truncation.total_lines
        ),
    };
    let kept = if truncation.first_line_exceeds_limit {
        format!(
            "[The first line is {}, over the {} limit.]",
            format_size(full.find('\n').unwrap_or(full.len())),
            format_size(DEFAULT_MAX_BYTES)
        )
    } else {
        truncation.content.clone()
    };
    let images: Vec<UserContent> = content.drain(..).filter(|c| c.as_text().is_none()).collect();
    content.push(UserContent::text(format!("{kept}\n\n{notice}")));
    content.extend(images);
    details.insert("truncation".to_owned(), truncation.to_json());
    if let Ok(path) = saved {
        details.insert("fullOutputPath".to_owned(), json!(path.display().to_string()));
    }
}

/// Writes `text` to a new private file (0600) in the temporary folder; its path.
fn save(text: &str) -> std::io::Result<PathBuf> {
    let mut file = tempfile::Builder::new().prefix("rho-mcp-").suffix(".txt").tempfile()?;
    file.write_all(text.as_bytes())?;
    let (_, path) = file.keep().map_err(|e| e.error)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_results_are_left_as_they_are() {
        let mut content = vec![UserContent::text("short")];
        let mut details = Map::new();
        cap(&mut content, &mut details);
        assert_eq!(content, vec![UserContent::text("short")]);
        assert!(details.is_empty());
    }

    #[test]
    fn a_large_result_keeps_its_head_and_saves_the_rest() {
        let big: String = (1..=100_000).map(|i| format!("row {i}\n")).collect();
        let mut content = vec![UserContent::text(big.clone())];
        let mut details = Map::new();
        details.insert("structuredContent".to_owned(), json!({"rows": big}));
        cap(&mut content, &mut details);
        let text = content[0].as_text().unwrap();
        assert!(text.starts_with("row 1\nrow 2\n"));
        assert!(text.len() < DEFAULT_MAX_BYTES + 300, "{} bytes kept", text.len());
        let path = details["fullOutputPath"].as_str().unwrap();
        assert!(
            text.ends_with(&format!(
                "[Showing lines 1-2000 of 100000. Full output: {path}; read it with offset=2001 to continue.]"
            )),
            "{}",
            &text[text.len() - 200..]
        );
        assert_eq!(std::fs::read_to_string(path).unwrap(), big);
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(path).unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600);
        assert!(details.get("structuredContent").is_none());
        assert_eq!(
            details["structuredContentOmitted"]["bytes"],
            json!(serde_json::to_vec(&json!({"rows": big})).unwrap().len())
        );
        std::fs::remove_file(path).unwrap();
    }
}
