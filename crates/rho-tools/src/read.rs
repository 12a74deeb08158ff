//! The `read` tool: a text file's lines as they are (no line numbers), a window of them with
//! `offset`/`limit`, cut at 2000 lines / 50 KiB with a notice saying how to continue; JPEG, PNG,
//! GIF and WebP files (recognized by their magic bytes) come back as image blocks, shrunk to the
//! current model's resize profile (or left out when they cannot be). Files with NUL bytes that are not images are refused as binary instead of
//! being dumped into the context, and devices, FIFOs and sockets without being opened. A text
//! file is read in one pass that keeps only what can be returned ([`crate::read_window`]). With
//! a [`crate::FileAccess`], an existing text file is read through it (an editor's unsaved
//! buffer); the window and the cut are the same.

use base64::Engine as _;
use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use rho_types::types::{ImageContent, UserContent};
use serde_json::{Value, json};

use crate::ToolOptions;
use crate::abort::{abortable, blocking};
use crate::args::{self, Args};
use crate::file_access::is_text_file;
use crate::image_resize::{IMAGE_TOO_LARGE, ResizeLimits, resize_image};
use crate::js;
use crate::os_error;
use crate::params::{self, Parameters, ReadParams};
use crate::path::resolve_read_path;
use crate::read_window::{self, Window};
use crate::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, TruncationOptions, format_size, truncate_head};

const DESCRIPTION: &str = "Read a file's contents. Handles text files and images (jpg, png, gif, webp); images are returned as attachments. Text output stops at 2000 lines or 50KB, whichever comes first, and says where it stopped. Use offset and limit to read part of a large file; to read all of it, keep calling with a larger offset until you reach the end.";

/// Bytes looked at to recognize an image.
const SNIFF_BYTES: usize = 4100;
/// Bytes looked at for NUL to call a file binary.
const BINARY_SNIFF_BYTES: usize = 8192;
/// The largest image read (it is read whole, to be shrunk).
const MAX_IMAGE_BYTES: u64 = 64 * 1024 * 1024;

pub struct ReadTool {
    options: ToolOptions,
}

impl ReadTool {
    pub fn new(options: ToolOptions) -> Self {
        Self { options }
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
        ReadParams::schema()
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move { self.read(args, ctx).await.map(with_read_output) })
    }
}

/// pi 1.6's `structuredContent` of a read: the text, or the image with the text as its note.
fn with_read_output(result: AgentToolResult) -> AgentToolResult {
    let text = result.content.iter().find_map(UserContent::as_text).unwrap_or_default().to_owned();
    let structured = match result.content.iter().find_map(|c| match c {
        UserContent::Image(image) => Some(image),
        _ => None,
    }) {
        Some(image) => json!({"type": "image", "data": image.data, "mimeType": image.mime_type, "note": text}),
        None => Value::String(text),
    };
    result.with_structured_content(structured)
}

impl ReadTool {
    async fn read(&self, args: Args, ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        let ReadParams { path, offset, limit } = params::parse(&args)?;
        let request = ReadRequest {
            path,
            offset,
            limit,
            auto_resize: self.options.auto_resize_images,
            resize: ResizeLimits::for_profile(ctx.image_resize),
            block_images: self.options.block_images,
        };
        if let Some(target) = self.options.host_uris.as_ref().and_then(|h| h.target(&request.path))
            && let Some(host) = self.options.host_uris.clone()
        {
            let text = host.read(target.url, ctx.cancel.clone()).await.map_err(ToolError::new)?;
            let window = request.window(text.as_bytes()).map_err(|e| ToolError::new(e.to_string()))?;
            return request.text_result(&window);
        }
        let cwd = self.options.cwd.clone();
        if let Some(files) = self.options.file_access.clone() {
            let abs = resolve_read_path(&request.path, &cwd);
            let probe = abs.clone();
            if blocking(&ctx.cancel, move || Ok(is_text_file(&probe))).await? {
                let text = abortable(&ctx.cancel, async move {
                    files.read_text(abs.clone()).await.map_err(|e| ToolError::new(os_error::describe(&e, "open", &abs)))
                })
                .await?;
                let window = request.window(text.as_bytes()).map_err(|e| ToolError::new(e.to_string()))?;
                return request.text_result(&window);
            }
        }
        blocking(&ctx.cancel, move || request.run(&cwd)).await
    }
}

struct ReadRequest {
    path: String,
    offset: Option<f64>,
    limit: Option<f64>,
    auto_resize: bool,
    /// The current model's resize profile (`inputLimits.images.resize`), defaults filled in.
    resize: ResizeLimits,
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

/// What a file that is not a regular file is, for the refusal.
fn special_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

impl ReadRequest {
    fn run(self, cwd: &std::path::Path) -> Result<AgentToolResult, ToolError> {
        use std::io::{Read, Seek};
        let abs = resolve_read_path(&self.path, cwd);
        let meta = std::fs::metadata(&abs).map_err(|e| ToolError::new(os_error::describe(&e, "access", &abs)))?;
        if meta.is_dir() {
            return Err(ToolError::new(os_error::EISDIR_READ));
        }
        // A device, FIFO or socket is never opened: it may never end (/dev/zero) or never
        // answer (a FIFO nobody writes to).
        if !meta.is_file() {
            return Err(ToolError::new(format!(
                "Cannot read {}: it is {}, not a regular file. Only text files and images (jpg, png, gif, webp) can be read.",
                self.path,
                special_kind(&meta)
            )));
        }
        let open_error = |e: std::io::Error| ToolError::new(os_error::describe(&e, "open", &abs));
        let mut file = std::fs::File::open(&abs).map_err(open_error)?;
        let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
        (&mut file).take(BINARY_SNIFF_BYTES as u64).read_to_end(&mut head).map_err(open_error)?;
        if let Some(mime) = image_mime(&head[..head.len().min(SNIFF_BYTES)]) {
            if meta.len() > MAX_IMAGE_BYTES {
                return Err(ToolError::new(format!(
                    "Cannot read {}: the image is {}, more than the {} an image may have.",
                    self.path,
                    format_size(usize::try_from(meta.len()).unwrap_or(usize::MAX)),
                    format_size(MAX_IMAGE_BYTES as usize)
                )));
            }
            let mut bytes = head;
            file.read_to_end(&mut bytes).map_err(open_error)?;
            return Ok(self.image_result(&bytes, mime));
        }
        if head.contains(&0) {
            return Err(ToolError::new(format!(
                "Cannot read {}: it is a binary file ({}). Only text files and images (jpg, png, gif, webp) can be read.",
                self.path,
                format_size(usize::try_from(meta.len()).unwrap_or(usize::MAX))
            )));
        }
        file.rewind().map_err(open_error)?;
        let window = self.window(file).map_err(open_error)?;
        self.text_result(&window)
    }

    /// The lines asked for, found in one pass (only what can be returned is kept).
    fn window(&self, reader: impl std::io::Read) -> std::io::Result<Window> {
        let start = match self.offset {
            Some(offset) if offset != 0.0 => args::count(offset - 1.0),
            _ => 0,
        };
        // One byte past the cut tells the cut where it falls.
        read_window::scan(reader, start, self.limit.map(args::count), DEFAULT_MAX_BYTES + 1)
    }

    fn image_result(&self, bytes: &[u8], mime: &str) -> AgentToolResult {
        let mut text = format!("Read image file [{mime}]");
        if self.block_images {
            text.push_str("\n[Image not attached: sending images to the model is disabled in settings.]");
            return AgentToolResult::text(text);
        }
        let (data, mime_type) = if self.auto_resize {
            let Some(resized) = resize_image(bytes, mime, self.resize) else {
                text.push('\n');
                text.push_str(IMAGE_TOO_LARGE);
                return AgentToolResult::text(text);
            };
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
                    data: base64::engine::general_purpose::STANDARD.encode(data).into(),
                    mime_type,
                }),
            ],
            ..AgentToolResult::default()
        }
    }

    fn text_result(&self, window: &Window) -> Result<AgentToolResult, ToolError> {
        let total_file_lines = window.total_lines;
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
        let user_limited_lines = self.limit.map(|_| window.lines);
        let selected = String::from_utf8_lossy(&window.kept);
        let mut truncation = truncate_head(&selected, TruncationOptions::default());
        // The cut saw the window's first bytes; the totals are the whole window's.
        truncation.total_lines = window.lines;
        truncation.total_bytes = window.bytes;
        let start_display = start_line + 1;
        if truncation.first_line_exceeds_limit {
            let message = format!(
                "[Line {start_display} is {}, exceeds {} limit. Use bash: sed -n '{start_display}p' {} | head -c {DEFAULT_MAX_BYTES}]",
                format_size(window.first_line_bytes),
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
}
