//! Resources the host serves under URL schemes of its own (omp's host URIs, registered over RPC
//! with `set_host_uri_schemes`): `read` and `write` reach a path such as `notes://today` through
//! the host instead of the file system when the session has a [`HostUris`] that knows its
//! scheme. `read` takes the whole text and applies `offset` / `limit` itself; `write` sends the
//! whole text, and only to a scheme the host made writable. Every other tool treats such a path
//! as a path.

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// A path that names a host resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTarget {
    /// The URL as sent to the host (normalized).
    pub url: String,
    /// The scheme, lower-cased, without `://`.
    pub scheme: String,
    pub writable: bool,
}

/// The host's URL schemes and the requests that reach them.
pub trait HostUris: Send + Sync + std::fmt::Debug {
    /// The host resource `path` names: a `scheme://…` URL whose scheme is registered.
    fn target(&self, path: &str) -> Option<HostTarget>;

    /// The resource's text; the error is the host's text. Cancelling withdraws the request.
    fn read(&self, url: String, cancel: CancellationToken) -> BoxFuture<'static, Result<String, String>>;

    /// Replaces the resource's text; the error is the host's text.
    fn write(&self, url: String, content: String, cancel: CancellationToken) -> BoxFuture<'static, Result<(), String>>;
}

/// The refusal of a write to a scheme the host serves read-only.
pub(crate) fn read_only(scheme: &str) -> String {
    format!("{scheme}:// URLs are read-only for write; use the protocol-specific tool for mutations.")
}
