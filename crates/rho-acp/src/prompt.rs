//! A `session/prompt`'s content blocks as one rho prompt: the text, with each file the user
//! attached inlined as a `<file name="…">` block where it stands (the shape of rho's `@file`
//! arguments), and the images as attachments.
//!
//! - text: as it is;
//! - an image: an attachment;
//! - an embedded text resource (the editor sent the file's text, unsaved changes included):
//!   a file block with that text;
//! - an embedded binary resource: an attachment when it is an image, else a note naming it;
//! - a resource link to a `file://` URI: the file read as `@file` reads it (text inlined, an
//!   image attached); other links are named by their URI;
//! - audio: not accepted (the agent does not advertise it), so a note names it.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use rho_types::types::ImageContent;

use rho_coding_agent::modes::file_args::read_file_args;

/// The prompt rho runs.
#[derive(Debug, Default, PartialEq)]
pub(super) struct PromptInput {
    pub text: String,
    pub images: Vec<ImageContent>,
}

/// Builds the prompt; a linked file that cannot be read is an error naming it.
pub(super) fn build(blocks: Vec<ContentBlock>, cwd: &Path) -> Result<PromptInput, String> {
    let mut input = PromptInput::default();
    for block in blocks {
        match block {
            // The first text is taken as it is: a long prompt is not copied.
            ContentBlock::Text(t) if input.text.is_empty() => input.text = t.text,
            ContentBlock::Text(t) => input.text.push_str(&t.text),
            ContentBlock::Image(image) => {
                input.images.push(ImageContent { data: image.data.into(), mime_type: image.mime_type });
            }
            ContentBlock::Resource(embedded) => match embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    push_block(&mut input.text, &file_block(&display_name(&r.uri), &r.text));
                }
                EmbeddedResourceResource::BlobResourceContents(r) => match r.mime_type {
                    Some(mime) if mime.starts_with("image/") => {
                        input.images.push(ImageContent { data: r.blob.into(), mime_type: mime });
                        push_block(&mut input.text, &file_block(&display_name(&r.uri), ""));
                    }
                    _ => push_block(&mut input.text, &format!("[binary resource not inlined: {}]", r.uri)),
                },
                _ => {}
            },
            ContentBlock::ResourceLink(link) => match file_path(&link.uri) {
                Some(path) => {
                    let raw = path.to_string_lossy().into_owned();
                    let files = read_file_args(&[raw.as_str()], cwd)?;
                    push_block(&mut input.text, &files.text);
                    input.images.extend(files.images);
                }
                None => input.text.push_str(&format!("[{}]({})", link.name, link.uri)),
            },
            ContentBlock::Audio(audio) => {
                push_block(&mut input.text, &format!("[audio not supported: {}]", audio.mime_type));
            }
            _ => {}
        }
    }
    Ok(input)
}

fn file_block(name: &str, text: &str) -> String {
    if text.is_empty() {
        return format!("<file name=\"{name}\"></file>\n");
    }
    format!("<file name=\"{name}\">\n{text}\n</file>\n")
}

/// Appends a block on a line of its own.
fn push_block(text: &mut String, block: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(block);
}

/// The path of a `file://` URI (percent-decoded), or `None` for other schemes.
fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or `localhost`) names a local file.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    path.starts_with('/')
        .then(|| PathBuf::from(percent_encoding::percent_decode_str(path).decode_utf8_lossy().as_ref()))
}

/// A resource's name in its file block: the path of a `file://` URI, else the URI.
fn display_name(uri: &str) -> String {
    file_path(uri).map_or_else(|| uri.to_owned(), |p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        BlobResourceContents, EmbeddedResource, ImageContent as AcpImage, ResourceLink, TextContent,
        TextResourceContents,
    };

    #[test]
    fn text_images_and_embedded_files_make_one_prompt() {
        let blocks = vec![
            ContentBlock::Text(TextContent::new("look at ")),
            ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(
                TextResourceContents::new("fn main() {}", "file:///w/src/main%20x.rs"),
            ))),
            ContentBlock::Text(TextContent::new("and this")),
            ContentBlock::Image(AcpImage::new("aGk=", "image/png")),
        ];
        let input = build(blocks, Path::new("/w")).unwrap();
        assert_eq!(input.text, "look at \n<file name=\"/w/src/main x.rs\">\nfn main() {}\n</file>\nand this");
        assert_eq!(input.images, vec![ImageContent { data: "aGk=".into(), mime_type: "image/png".into() }]);
    }

    #[test]
    fn links_to_local_files_are_read_like_file_arguments() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        let uri = format!("file://{}", dir.path().join("a.txt").display());
        let blocks = vec![
            ContentBlock::ResourceLink(ResourceLink::new("a.txt", uri)),
            ContentBlock::ResourceLink(ResourceLink::new("docs", "https://example.com/d")),
            ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::BlobResourceContents(
                BlobResourceContents::new("AAAA", "file:///w/p.png").mime_type("image/png".to_owned()),
            ))),
        ];
        let input = build(blocks, dir.path()).unwrap();
        let expected = format!(
            "<file name=\"{}\">\nhello\n</file>\n[docs](https://example.com/d)\n<file name=\"/w/p.png\"></file>\n",
            dir.path().join("a.txt").display()
        );
        assert_eq!(input.text, expected);
        assert_eq!(input.images.len(), 1);
        let missing = vec![ContentBlock::ResourceLink(ResourceLink::new("x", "file:///no/such/file"))];
        assert_eq!(build(missing, dir.path()).unwrap_err(), "Error: File not found: /no/such/file");
    }
}
