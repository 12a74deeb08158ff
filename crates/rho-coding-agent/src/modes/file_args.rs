//! `@file` arguments of a non-interactive run (docs/agent-behavior.md, "Non-interactive inputs"):
//! text files become `<file name="…">` blocks placed before the first message, images become
//! attachments of the first prompt; empty files are skipped; a missing or unreadable file is an
//! error.

use std::path::Path;

use base64::Engine;
use rho_types::types::ImageContent;

/// The text blocks and images the `@file` arguments give.
#[derive(Debug, Default)]
pub struct FileInputs {
    pub text: String,
    pub images: Vec<ImageContent>,
}

/// Reads every `@file` argument (paths relative to `cwd`, `~` expanded).
pub fn read_file_args(files: &[&str], cwd: &Path) -> Result<FileInputs, String> {
    let mut inputs = FileInputs::default();
    for raw in files {
        let path = crate::config::expand_tilde(raw, dirs::home_dir().as_deref());
        let path = if path.is_absolute() { path } else { cwd.join(path) };
        let shown = path.display();
        if !path.exists() {
            return Err(format!("Error: File not found: {shown}"));
        }
        let bytes = std::fs::read(&path).map_err(|e| format!("Error: Cannot read {shown}: {e}"))?;
        if bytes.is_empty() {
            continue;
        }
        if let Some(mime) = rho_tools::image_mime(&bytes[..bytes.len().min(16)]) {
            inputs.images.push(ImageContent {
                data: base64::engine::general_purpose::STANDARD.encode(&bytes).into(),
                mime_type: mime.to_owned(),
            });
            inputs.text.push_str(&format!("<file name=\"{shown}\"></file>\n"));
            continue;
        }
        let text = String::from_utf8(bytes).map_err(|_| format!("Error: Cannot read {shown}: not a text file"))?;
        inputs.text.push_str(&format!("<file name=\"{shown}\">\n{text}\n</file>\n"));
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_files_become_blocks_and_empty_ones_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let inputs = read_file_args(&["a.txt", "empty.txt"], dir.path()).unwrap();
        let expected = format!("<file name=\"{}\">\nhello\n</file>\n", dir.path().join("a.txt").display());
        assert_eq!(inputs.text, expected);
        assert!(inputs.images.is_empty());
    }

    #[test]
    fn images_are_attached_and_missing_files_fail() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.png"), b"\x89PNG\r\n\x1a\n0000").unwrap();
        let inputs = read_file_args(&["p.png"], dir.path()).unwrap();
        assert_eq!(inputs.images.len(), 1);
        assert_eq!(inputs.images[0].mime_type, "image/png");
        let err = read_file_args(&["nope.txt"], dir.path()).unwrap_err();
        assert_eq!(err, format!("Error: File not found: {}", dir.path().join("nope.txt").display()));
    }
}
