//! Images attached to the prompt being written: a pasted path of an image file (what a terminal
//! types when a file is dragged onto it) attaches the image, shown in the editor as
//! `[image #n]`. On sending, the images whose markers are still in the text go with the prompt
//! as image blocks; the markers stay in the text, so the prompt can refer to them.

use std::path::{Path, PathBuf};

use base64::Engine;
use rho_types::types::ImageContent;

use super::Editor;

/// The file name endings a pasted path must have to be read as an image.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// An attached image and its marker in the text.
#[derive(Debug, Clone)]
pub struct Attachment {
    marker: String,
    image: ImageContent,
}

impl Editor {
    /// Attaches `image`: its marker goes in at the cursor (one undo step).
    pub fn attach_image(&mut self, image: ImageContent) {
        let marker = format!("[image #{}]", self.images.len() + 1);
        let before = self.text[..self.cursor].chars().next_back();
        let spaced = if before.is_some_and(|c| !c.is_whitespace()) { format!(" {marker}") } else { marker.clone() };
        self.insert(&spaced);
        self.images.push(Attachment { marker, image });
    }

    /// The images whose markers are in `text` (the prompt being sent); the attachments start
    /// over.
    pub fn take_images(&mut self, text: &str) -> Vec<ImageContent> {
        std::mem::take(&mut self.images).into_iter().filter(|a| text.contains(&a.marker)).map(|a| a.image).collect()
    }
}

/// The image a pasted text names: one path (quoted, with `\ ` escapes or as a `file://` URL, as
/// terminals paste a dragged file) of an existing PNG, JPEG, GIF or WebP file, relative paths
/// from `cwd`. `None` for anything else, which is pasted as text.
pub fn pasted_image(pasted: &str, cwd: &Path, home: Option<&Path>) -> Option<ImageContent> {
    let path = pasted_path(pasted)?;
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    if !IMAGE_EXTENSIONS.contains(&extension.as_str()) {
        return None;
    }
    let path = rho_coding_agent::config::expand_tilde(&path.to_string_lossy(), home);
    let path = if path.is_absolute() { path } else { cwd.join(path) };
    let bytes = std::fs::read(path).ok()?;
    let mime = rho_tools::image_mime(&bytes[..bytes.len().min(16)])?;
    Some(ImageContent {
        data: base64::engine::general_purpose::STANDARD.encode(&bytes).into(),
        mime_type: mime.to_owned(),
    })
}

/// The one path a paste holds, unquoted and unescaped.
fn pasted_path(pasted: &str) -> Option<PathBuf> {
    let text = pasted.trim();
    if text.is_empty() || text.contains('\n') {
        return None;
    }
    let text = text.strip_prefix("file://").unwrap_or(text);
    let quoted = ['\'', '"'].iter().find_map(|q| text.strip_prefix(*q).and_then(|t| t.strip_suffix(*q)));
    let path = match quoted {
        Some(inner) => inner.to_owned(),
        None => {
            let mut path = String::new();
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => path.extend(chars.next()),
                    c if c.is_whitespace() => return None,
                    c => path.push(c),
                }
            }
            path
        }
    };
    Some(PathBuf::from(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn a_pasted_image_path_is_read_quoted_escaped_or_relative() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("my shot.png"), PNG).unwrap();
        std::fs::write(dir.path().join("plain.PNG"), PNG).unwrap();
        std::fs::write(dir.path().join("fake.png"), "not an image").unwrap();
        std::fs::write(dir.path().join("notes.txt"), PNG).unwrap();
        let full = dir.path().join("my shot.png").display().to_string();
        for pasted in [format!("'{full}'"), format!("\"{full}\" "), full.replace(' ', "\\ "), "plain.PNG".into()] {
            let image = pasted_image(&pasted, dir.path(), None);
            assert_eq!(image.map(|i| i.mime_type).as_deref(), Some("image/png"), "{pasted}");
        }
        for pasted in [full.as_str(), "fake.png", "notes.txt", "missing.png", "a.png\nb.png"] {
            assert!(pasted_image(pasted, dir.path(), None).is_none(), "{pasted}");
        }
    }

    #[test]
    fn only_the_images_still_marked_are_sent() {
        let image = |data: &str| ImageContent { data: data.into(), mime_type: "image/png".into() };
        let mut editor = Editor::default();
        editor.insert("look at");
        editor.attach_image(image("one"));
        editor.attach_image(image("two"));
        assert_eq!(editor.text(), "look at [image #1] [image #2]");
        editor.undo();
        let sent = editor.take_images(editor.text().to_owned().as_str());
        assert_eq!(sent, vec![image("one")]);
        assert!(editor.take_images("[image #1]").is_empty());
    }
}
