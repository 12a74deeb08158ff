//! `read`, `edit` and `write` through a [`FileAccess`] (an editor's buffers in ACP mode): an
//! existing text file is read from it, edits and writes land in it and not on disk, and what
//! the hook does not serve (missing files, images) is handled locally as before.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use common::{call_with, text, write};
use futures::future::BoxFuture;
use pretty_assertions::assert_eq;
use rho_tools::{FileAccess, ToolOptions};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Buffers that differ from the disk, and a log of what went through them.
#[derive(Debug, Default)]
struct Buffers {
    files: Mutex<HashMap<PathBuf, String>>,
    log: Mutex<Vec<String>>,
}

impl FileAccess for Buffers {
    fn read_text(&self, path: PathBuf) -> BoxFuture<'static, std::io::Result<String>> {
        self.log.lock().unwrap().push(format!("read {}", path.display()));
        let found = self.files.lock().unwrap().get(&path).cloned();
        Box::pin(async move { found.ok_or_else(|| std::io::Error::other("no buffer")) })
    }

    fn write_text(&self, path: PathBuf, content: String) -> BoxFuture<'static, std::io::Result<()>> {
        self.log.lock().unwrap().push(format!("write {}", path.display()));
        self.files.lock().unwrap().insert(path, content);
        Box::pin(async { Ok(()) })
    }
}

fn options(dir: &std::path::Path, buffers: &Arc<Buffers>) -> ToolOptions {
    let files: Arc<dyn FileAccess> = buffers.clone();
    ToolOptions { file_access: Some(files), ..ToolOptions::new(dir) }
}

#[tokio::test]
async fn reads_edits_and_writes_go_through_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "on disk\n");
    let a = dir.path().join("a.txt");
    let buffers = Arc::new(Buffers::default());
    buffers.files.lock().unwrap().insert(a.clone(), "unsaved one\ntwo\n".into());
    let options = options(dir.path(), &buffers);
    let cancel = CancellationToken::new;

    let r = call_with("read", &options, json!({"path": "a.txt", "offset": 2}), cancel()).await.unwrap();
    assert_eq!(text(&r), "two\n");

    let edit = json!({"path": "a.txt", "edits": [{"oldText": "unsaved one", "newText": "edited"}]});
    call_with("edit", &options, edit, cancel()).await.unwrap();
    assert_eq!(buffers.files.lock().unwrap()[&a], "edited\ntwo\n");

    call_with("write", &options, json!({"path": "sub/new.txt", "content": "hi"}), cancel()).await.unwrap();
    assert_eq!(buffers.files.lock().unwrap()[&dir.path().join("sub/new.txt")], "hi");
    assert!(dir.path().join("sub").is_dir(), "the parent directory is made locally");

    assert_eq!(std::fs::read_to_string(&a).unwrap(), "on disk\n", "the disk is the editor's to save");
    let log = buffers.log.lock().unwrap().clone();
    assert_eq!(log.len(), 4, "{log:?}");
}

#[tokio::test]
async fn missing_files_and_images_stay_local() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "p.png", b"\x89PNG\r\n\x1a\n0000");
    let buffers = Arc::new(Buffers::default());
    let options = options(dir.path(), &buffers);

    let err = call_with("read", &options, json!({"path": "nope.txt"}), CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("ENOENT"), "{err}");
    let edit = json!({"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]});
    assert!(call_with("edit", &options, edit, CancellationToken::new()).await.is_err());
    let r = call_with("read", &options, json!({"path": "p.png"}), CancellationToken::new()).await.unwrap();
    assert!(text(&r).starts_with("Read image file [image/png]"));
    assert!(buffers.log.lock().unwrap().is_empty());
}
