//! The `read` tool: a text file's lines as they are (no line numbers), a window of them with
//! `offset`/`limit`, cut at 2000 lines / 50 KiB with a notice saying how to continue; JPEG, PNG,
//! GIF and WebP files (recognized by their magic bytes) come back as image blocks, shrunk to the
//! providers' limits. Files with NUL bytes that are not images are refused as binary instead of
//! being dumped into the context. With a [`crate::FileAccess`], an existing text file is read
//! through it (an editor's unsaved buffer); the window and the cut are the same.

use base64::Engine as _;
use futures::future::BoxFuture;
use rho_agent::{AgentToolResult, Tool, ToolContext, ToolError};
use rho_ai::types::{ImageContent, UserContent};
use serde_json::{Value, json};

use crate::ToolOptions;
use crate::abort::{abortable, blocking};
use crate::args::{self, Args};
use crate::file_access::is_text_file;
use crate::image_resize::{ResizeLimits, resize_image};
use crate::js;
use crate::os_error;
use crate::path::resolve_read_path;
use crate::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, TruncationOptions, count_lines, format_size, truncate_head};

const DESCRIPTION: &str = "Read a file's contents. Handles text files and images (jpg, png, gif, webp); images are returned as attachments. Text output stops at 2000 lines or 50KB, whichever comes first, and says where it stopped. Use offset and limit to read part of a large file; to read all of it, keep calling with a larger offset until you reach the end.";

/// Bytes looked at to recognize an image.
const SNIFF_BYTES: usize = 4100;
/// Bytes looked at for NUL to call a file binary.
const BINARY_SNIFF_BYTES: usize = 8192;

pub struct ReadTool {
    options: ToolOptions,
    schema: Value,
}

impl ReadTool {
    pub fn new(options: ToolOptions) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
                "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
                "limit": {"type": "number", "description": "Maximum number of lines to read"}
            },
            "required": ["path"]
        });
        Self { options, schema }
    }
}

impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let request = ReadRequest {
                path: args::string(&args, "path")?,
                offset: args::opt_number(&args, "offset"),
                limit: args::opt_number(&args, "limit"),
                auto_resize: self.options.auto_resize_images,
                block_images: self.options.block_images,
            };
            let cwd = self.options.cwd.clone();
            if let Some(files) = self.options.file_access.clone() {
                let abs = resolve_read_path(&request.path, &cwd);
                let probe = abs.clone();
                if blocking(&ctx.cancel, move || Ok(is_text_file(&probe))).await? {
                    let text = abortable(&ctx.cancel, async move {
                        files
                            .read_text(abs.clone())
                            .await
                            .map_err(|e| ToolError::new(os_error::describe(&e, "open", &abs)))
                    })
                    .await?;
                    return request.text_result(&text);
                }
            }
            blocking(&ctx.cancel, move || request.run(&cwd)).await
        })
    }
}

struct ReadRequest {
    path: String,
    offset: Option<f64>,
    limit: Option<f64>,
    auto_resize: bool,
    block_images: bool,
}

/// The image type by magic bytes; only the four types models accept.
pub fn image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Byte offset where line `n` (0-based) starts; `n` must be below the line count.
fn line_start(text: &str, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    text.match_indices('\n').nth(n - 1).map_or(text.len(), |(i, _)| i + 1)
}

impl ReadRequest {
    fn run(self, cwd: &std::path::Path) -> Result<AgentToolResult, ToolError> {
        let abs = resolve_read_path(&self.path, cwd);
        let meta = std::fs::metadata(&abs).map_err(|e| ToolError::new(os_error::describe(&e, "access", &abs)))?;
        if meta.is_dir() {
            return Err(ToolError::new(os_error::EISDIR_READ));
        }
        let bytes = std::fs::read(&abs).map_err(|e| ToolError::new(os_error::describe(&e, "open", &abs)))?;
        if let Some(mime) = image_mime(&bytes[..bytes.len().min(SNIFF_BYTES)]) {
            return Ok(self.image_result(&bytes, mime));
        }
        if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
            return Err(ToolError::new(format!(
                "Cannot read {}: it is a binary file ({}). Only text files and images (jpg, png, gif, webp) can be read.",
                self.path,
                format_size(bytes.len())
            )));
        }
        self.text_result(&String::from_utf8_lossy(&bytes))
    }

    fn image_result(&self, bytes: &[u8], mime: &str) -> AgentToolResult {
        let mut text = format!("Read image file [{mime}]");
        if self.block_images {
            text.push_str("\n[Image not attached: sending images to the model is disabled in settings.]");
            return AgentToolResult::text(text);
        }
        let (data, mime_type) = if self.auto_resize {
            let resized = resize_image(bytes, mime, ResizeLimits::default());
            if let Some(note) = resized.dimension_note() {
                text.push('\n');
                text.push_str(&note);
            }
            (resized.data, resized.mime_type)
        } else {
            (bytes.to_vec(), mime.to_owned())
        };
        AgentToolResult {
            content: vec![
                UserContent::text(text),
                UserContent::Image(ImageContent {
                    data: base64::engine::general_purpose::STANDARD.encode(data),
                    mime_type,
                }),
            ],
            details: None,
            terminate: None,
        }
    }

    fn text_result(&self, text: &str) -> Result<AgentToolResult, ToolError> {
        let total_file_lines = count_lines(text);
        let start_line = match self.offset {
            Some(offset) if offset != 0.0 => args::count(offset - 1.0),
            _ => 0,
        };
        if start_line >= total_file_lines {
            return Err(ToolError::new(format!(
                "Offset {} is beyond end of file ({total_file_lines} lines total)",
                js::number(self.offset.unwrap_or(0.0))
            )));
        }
        let start_byte = line_start(text, start_line);
        let (selected, user_limited_lines) = match self.limit {
            Some(limit) => {
                let limit = args::count(limit);
                let end_line = start_line.saturating_add(limit).min(total_file_lines);
                let selected = if end_line == start_line {
                    ""
                } else if end_line == total_file_lines {
                    &text[start_byte..]
                } else {
                    &text[start_byte..line_start(text, end_line) - 1]
                };
                (selected, Some(end_line - start_line))
            }
            None => (&text[start_byte..], None),
        };

        let truncation = truncate_head(selected, TruncationOptions::default());
        let start_display = start_line + 1;
        if truncation.first_line_exceeds_limit {
            let first_line = selected.split('\n').next().unwrap_or_default();
            let message = format!(
                "[Line {start_display} is {}, exceeds {} limit. Use bash: sed -n '{start_display}p' {} | head -c {DEFAULT_MAX_BYTES}]",
                format_size(first_line.len()),
                format_size(DEFAULT_MAX_BYTES),
                self.path
            );
            return Ok(AgentToolResult::text(message).with_details(json!({"truncation": truncation.to_json()})));
        }
        if truncation.truncated {
            let end_display = start_display + truncation.output_lines - 1;
            let limit_note = match truncation.truncated_by {
                Some(TruncatedBy::Bytes) => format!(" ({} limit)", format_size(DEFAULT_MAX_BYTES)),
                _ => String::new(),
            };
            let message = format!(
                "{}\n\n[Showing lines {start_display}-{end_display} of {total_file_lines}{limit_note}. Use offset={} to continue.]",
                truncation.content,
                end_display + 1
            );
            return Ok(AgentToolResult::text(message).with_details(json!({"truncation": truncation.to_json()})));
        }
        if let Some(shown) = user_limited_lines
            && start_line + shown < total_file_lines
        {
            let remaining = total_file_lines - (start_line + shown);
            let message = format!(
                "{}\n\n[{remaining} more lines in file. Use offset={} to continue.]",
                truncation.content,
                start_line + shown + 1
            );
            return Ok(AgentToolResult::text(message));
        }
        Ok(AgentToolResult::text(truncation.content))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_images_by_magic_bytes() {
        assert_eq!(image_mime(b"\xFF\xD8\xFF\xE0rest"), Some("image/jpeg"));
        assert_eq!(image_mime(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(image_mime(b"GIF89a..."), Some("image/gif"));
        assert_eq!(image_mime(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_mime(b"<svg xmlns=...>"), None);
        assert_eq!(image_mime(b"BM...."), None);
        assert_eq!(image_mime(b""), None);
    }

    #[test]
    fn line_start_offsets() {
        let text = "a\nbb\nccc";
        assert_eq!(line_start(text, 0), 0);
        assert_eq!(line_start(text, 1), 2);
        assert_eq!(line_start(text, 2), 5);
    }
}
