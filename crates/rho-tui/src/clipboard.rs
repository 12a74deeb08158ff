//! Ctrl+V: an image on the system clipboard is attached to the prompt, as a pasted image path
//! is. The clipboard is read with the platform's command-line tools (`wl-paste` under Wayland,
//! `xclip` under X11, `pngpaste` on macOS), as pi falls back to them, so rho links no clipboard
//! library; without them (or without an image) a hint says so and nothing is pasted.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use base64::Engine;
use rho_types::types::ImageContent;

use super::app::App;

/// How long a clipboard tool may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(3);

/// The image types models take, preferred first.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/webp", "image/gif"];

impl App {
    pub fn paste_clipboard_image(&mut self) {
        match read_clipboard_image() {
            Ok(image) => {
                self.editor.attach_image(image);
                self.edited();
            }
            Err(hint) => self.hint = Some(hint),
        }
    }
}

/// What a clipboard tool gave.
enum Output {
    /// The tool is not installed.
    Missing,
    /// It failed, timed out or printed nothing.
    Nothing,
    Bytes(Vec<u8>),
}

/// The clipboard's image, or the hint to show.
fn read_clipboard_image() -> Result<ImageContent, String> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some();
    let tools: [(bool, fn() -> Output); 3] = [(wayland, wl_paste), (true, xclip), (true, pngpaste)];
    let mut found = false;
    for read in tools.into_iter().filter(|(usable, _)| *usable).map(|(_, read)| read) {
        let bytes = match read() {
            Output::Missing => continue,
            Output::Nothing => {
                found = true;
                continue;
            }
            Output::Bytes(bytes) => bytes,
        };
        found = true;
        if let Some(mime) = rho_tools::image_mime(&bytes[..bytes.len().min(16)]) {
            let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
            return Ok(ImageContent { data: data.into(), mime_type: mime.to_owned() });
        }
    }
    Err(if found { "No image in the clipboard" } else { "Pasting an image needs wl-paste, xclip or pngpaste" }
        .to_owned())
}

fn wl_paste() -> Output {
    read_typed("wl-paste", &["--list-types"], |t| vec!["--type", t, "--no-newline"])
}

fn xclip() -> Output {
    read_typed("xclip", &["-selection", "clipboard", "-t", "TARGETS", "-o"], |t| {
        vec!["-selection", "clipboard", "-t", t, "-o"]
    })
}

fn pngpaste() -> Output {
    run("pngpaste", &["-"])
}

/// Lists the clipboard's types with `list`, then reads the preferred image type.
fn read_typed(program: &str, list: &[&str], read: fn(&'static str) -> Vec<&'static str>) -> Output {
    let types = match run(program, list) {
        Output::Bytes(types) => types,
        other => return other,
    };
    let listed = String::from_utf8_lossy(&types).to_ascii_lowercase();
    let listed: Vec<&str> = listed.lines().map(|l| l.split(';').next().unwrap_or_default().trim()).collect();
    match IMAGE_TYPES.iter().find(|t| listed.contains(t)) {
        Some(image_type) => run(program, &read(image_type)),
        None => Output::Nothing,
    }
}

/// Runs a tool and takes what it prints.
fn run(program: &str, args: &[&str]) -> Output {
    let spawned =
        Command::new(program).args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn();
    let Ok(mut child) = spawned else { return Output::Missing };
    let Some(mut stdout) = child.stdout.take() else { return Output::Nothing };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    let bytes = rx.recv_timeout(TOOL_TIMEOUT).ok();
    if bytes.is_none() {
        let _ = child.kill();
    }
    match (bytes, child.wait().is_ok_and(|s| s.success())) {
        (Some(bytes), true) if !bytes.is_empty() => Output::Bytes(bytes),
        _ => Output::Nothing,
    }
}
