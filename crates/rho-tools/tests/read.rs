//! The `read` tool against real files: windows, truncation notices, images, errors.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod common;

use common::{call, call_with, text, write};
use pretty_assertions::assert_eq;
use rho_tools::ToolOptions;
use rho_types::types::UserContent;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn returns_text_verbatim_without_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a\nb\n");
    let r = call("read", dir.path(), json!({"path": "a.txt"})).await.unwrap();
    assert_eq!(text(&r), "a\nb\n");
    assert_eq!(r.details, None);

    write(dir.path(), "empty.txt", "");
    let r = call("read", dir.path(), json!({"path": "@empty.txt"})).await.unwrap();
    assert_eq!(text(&r), "");
}

#[tokio::test]
async fn offset_and_limit_select_a_window_with_a_continuation_notice() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", numbered(10));
    let r = call("read", dir.path(), json!({"path": "f.txt", "offset": 3, "limit": 2})).await.unwrap();
    assert_eq!(text(&r), "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]");
    assert_eq!(r.details, None);

    let r = call("read", dir.path(), json!({"path": "f.txt", "offset": 9})).await.unwrap();
    assert_eq!(text(&r), "line 9\nline 10");

    let r = call("read", dir.path(), json!({"path": "f.txt", "offset": 0, "limit": 1})).await.unwrap();
    assert_eq!(text(&r), "line 1\n\n[9 more lines in file. Use offset=2 to continue.]");

    let r = call("read", dir.path(), json!({"path": "f.txt", "limit": 10})).await.unwrap();
    assert_eq!(text(&r), numbered(10));
}

#[tokio::test]
async fn offset_beyond_the_end_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", numbered(3));
    let err = call("read", dir.path(), json!({"path": "f.txt", "offset": 10})).await.unwrap_err();
    assert_eq!(err.0, "Offset 10 is beyond end of file (3 lines total)");
}

#[tokio::test]
async fn long_files_are_cut_at_2000_lines() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.txt", numbered(2500));
    let r = call("read", dir.path(), json!({"path": "big.txt"})).await.unwrap();
    let t = text(&r);
    assert!(t.starts_with("line 1\n"));
    assert!(t.ends_with("line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"));
    let truncation = &r.details.as_ref().unwrap()["truncation"];
    assert_eq!(truncation["truncatedBy"], "lines");
    assert_eq!(truncation["outputLines"], 2000);
    assert_eq!(truncation["totalLines"], 2500);

    let r = call("read", dir.path(), json!({"path": "big.txt", "offset": 2001})).await.unwrap();
    assert_eq!(text(&r), (2001..=2500).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n"));
}

#[tokio::test]
async fn large_files_are_cut_at_50kb() {
    let dir = tempfile::tempdir().unwrap();
    let line = "x".repeat(99);
    let content = vec![line.as_str(); 1000].join("\n");
    write(dir.path(), "wide.txt", &content);
    let r = call("read", dir.path(), json!({"path": "wide.txt", "offset": 11})).await.unwrap();
    let t = text(&r);
    // 512 lines of 100 bytes (99 + newline) fit in 51200 bytes.
    assert!(t.ends_with("\n\n[Showing lines 11-522 of 1000 (50.0KB limit). Use offset=523 to continue.]"));
    let truncation = &r.details.as_ref().unwrap()["truncation"];
    assert_eq!(truncation["truncatedBy"], "bytes");
    assert_eq!(truncation["outputLines"], 512);
}

#[tokio::test]
async fn an_overlong_first_line_points_to_sed() {
    let dir = tempfile::tempdir().unwrap();
    let content = format!("short\n{}\nafter", "y".repeat(60_000));
    write(dir.path(), "long.txt", &content);
    let r = call("read", dir.path(), json!({"path": "long.txt", "offset": 2})).await.unwrap();
    assert_eq!(text(&r), "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' long.txt | head -c 51200]");
    assert_eq!(r.details.as_ref().unwrap()["truncation"]["firstLineExceedsLimit"], true);
}

fn tiny_png() -> Vec<u8> {
    let img = image::RgbaImage::from_fn(4, 3, |x, y| image::Rgba([x as u8 * 60, y as u8 * 80, 0, 255]));
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgba8(img).write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[tokio::test]
async fn images_come_back_as_image_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let png = tiny_png();
    // The extension lies: the type comes from the magic bytes.
    write(dir.path(), "picture.dat", &png);
    let r = call("read", dir.path(), json!({"path": "picture.dat"})).await.unwrap();
    assert_eq!(r.content.len(), 2);
    assert_eq!(text(&r), "Read image file [image/png]");
    let UserContent::Image(img) = &r.content[1] else {
        panic!("expected an image block");
    };
    assert_eq!(img.mime_type, "image/png");
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD.decode(img.data.as_bytes()).unwrap();
    assert_eq!(decoded, png);
    assert_eq!(r.details, None);

    let blocked = ToolOptions { block_images: true, ..ToolOptions::new(dir.path()) };
    let r = call_with("read", &blocked, json!({"path": "picture.dat"}), CancellationToken::new()).await.unwrap();
    assert_eq!(r.content.len(), 1);
    assert!(text(&r).starts_with("Read image file [image/png]\n"));
}

#[tokio::test]
async fn large_images_are_resized_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let img = image::RgbImage::from_fn(2400, 100, |x, _| image::Rgb([(x % 256) as u8, 0, 0]));
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut out, image::ImageFormat::Png).unwrap();
    write(dir.path(), "wide.png", out.into_inner());
    let r = call("read", dir.path(), json!({"path": "wide.png"})).await.unwrap();
    assert_eq!(
        text(&r),
        "Read image file [image/png]\n[Image: original 2400x100, displayed at 2000x83. Multiply coordinates by 1.20 to map to original image.]"
    );
}

#[tokio::test]
async fn errors_for_directories_missing_and_binary_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let err = call("read", dir.path(), json!({"path": "sub"})).await.unwrap_err();
    assert_eq!(err.0, "EISDIR: illegal operation on a directory, read");

    let err = call("read", dir.path(), json!({"path": "nope.txt"})).await.unwrap_err();
    assert_eq!(err.0, format!("ENOENT: no such file or directory, access '{}'", dir.path().join("nope.txt").display()));

    let mut bin = vec![0u8; 2048];
    bin[10] = 7;
    write(dir.path(), "blob.bin", &bin);
    let err = call("read", dir.path(), json!({"path": "blob.bin"})).await.unwrap_err();
    assert!(err.0.contains("binary file"), "{}", err.0);
    assert!(err.0.contains("2.0KB"), "{}", err.0);
}

#[tokio::test]
async fn a_cancelled_call_is_aborted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = call_with("read", &ToolOptions::new(dir.path()), json!({"path": "a.txt"}), cancel).await.unwrap_err();
    assert_eq!(err.0, "Operation aborted");
}

#[tokio::test]
async fn devices_and_fifos_are_refused_without_being_opened() {
    let dir = tempfile::tempdir().unwrap();
    // /dev/zero never ends; reading it would grow until the process is killed.
    let err = call("read", dir.path(), json!({"path": "/dev/zero"})).await.unwrap_err();
    assert_eq!(
        err.0,
        "Cannot read /dev/zero: it is a character device, not a regular file. Only text files and images (jpg, png, gif, webp) can be read."
    );
    // A FIFO nobody writes to would block the open forever.
    let fifo = dir.path().join("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let call = call("read", dir.path(), json!({"path": "pipe"}));
    let err = tokio::time::timeout(std::time::Duration::from_secs(10), call).await.expect("no hang").unwrap_err();
    assert!(err.0.starts_with("Cannot read pipe: it is a FIFO, not a regular file."), "{}", err.0);
}

#[tokio::test]
async fn a_window_deep_in_a_large_file_has_the_whole_files_counts() {
    let dir = tempfile::tempdir().unwrap();
    // 200,000 lines (about 2.3 MB): far more than is ever returned.
    write(dir.path(), "huge.txt", numbered(200_000));
    let r = call("read", dir.path(), json!({"path": "huge.txt", "offset": 150_000, "limit": 3})).await.unwrap();
    assert_eq!(
        text(&r),
        "line 150000\nline 150001\nline 150002\n\n[49998 more lines in file. Use offset=150003 to continue.]"
    );
    let r = call("read", dir.path(), json!({"path": "huge.txt", "offset": 199_000})).await.unwrap();
    let t = text(&r);
    assert!(t.starts_with("line 199000\n"), "{}", &t[..40]);
    assert!(t.ends_with("line 200000"), "{}", &t[t.len() - 40..]);
    let r = call("read", dir.path(), json!({"path": "huge.txt", "offset": 100_000})).await.unwrap();
    let truncation = &r.details.as_ref().unwrap()["truncation"];
    assert_eq!(truncation["totalLines"], 100_001);
    assert_eq!(truncation["outputLines"], 2000);
    assert!(text(&r).ends_with("[Showing lines 100000-101999 of 200000. Use offset=102000 to continue.]"));
}
