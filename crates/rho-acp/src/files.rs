//! The editor's files: `fs/read_text_file` and `fs/write_text_file` behind rho's
//! [`FileAccess`] hook, for a client that offers them. The `read`, `edit` and `write` tools then
//! see the editor's buffers (unsaved changes included) and the editor sees every change the
//! agent makes as it happens. A method the client does not offer stays on the local disk.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{FileSystemCapabilities, ReadTextFileRequest, SessionId, WriteTextFileRequest};
use futures::future::BoxFuture;
use rho_tools::FileAccess;

/// One session's view of the client's files.
pub(super) struct ClientFiles {
    client: ConnectionTo<Client>,
    /// Set once the session exists (its tools are made before it has an id).
    session_id: Arc<OnceLock<SessionId>>,
    read: bool,
    write: bool,
}

impl std::fmt::Debug for ClientFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFiles").field("read", &self.read).field("write", &self.write).finish_non_exhaustive()
    }
}

impl ClientFiles {
    /// The hook for a client with `fs`, or `None` when it offers neither method.
    pub fn offered(
        client: ConnectionTo<Client>,
        session_id: Arc<OnceLock<SessionId>>,
        fs: &FileSystemCapabilities,
    ) -> Option<Arc<dyn FileAccess>> {
        (fs.read_text_file || fs.write_text_file).then(|| {
            Arc::new(Self { client, session_id, read: fs.read_text_file, write: fs.write_text_file })
                as Arc<dyn FileAccess>
        })
    }
}

pub(super) fn client_error(e: agent_client_protocol::Error) -> io::Error {
    io::Error::other(match e.data {
        Some(data) => format!("{} ({data})", e.message),
        None => e.message,
    })
}

impl FileAccess for ClientFiles {
    fn read_text(&self, path: PathBuf) -> BoxFuture<'static, io::Result<String>> {
        let session_id = self.session_id.get().cloned().filter(|_| self.read);
        let client = self.client.clone();
        Box::pin(async move {
            let Some(session_id) = session_id else {
                let bytes = tokio::fs::read(&path).await?;
                return Ok(String::from_utf8_lossy(&bytes).into_owned());
            };
            let request = ReadTextFileRequest::new(session_id, path);
            client.send_request(request).block_task().await.map(|r| r.content).map_err(client_error)
        })
    }

    fn write_text(&self, path: PathBuf, content: String) -> BoxFuture<'static, io::Result<()>> {
        let session_id = self.session_id.get().cloned().filter(|_| self.write);
        let client = self.client.clone();
        Box::pin(async move {
            let Some(session_id) = session_id else {
                return tokio::fs::write(&path, content).await;
            };
            let request = WriteTextFileRequest::new(session_id, path, content);
            client.send_request(request).block_task().await.map(drop).map_err(client_error)
        })
    }
}
