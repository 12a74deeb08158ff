//! The host URI sub-protocol (omp's): URL schemes the host registers with
//! `set_host_uri_schemes` and serves itself. `read` of `notes://today` becomes a
//! `host_uri_request` (`operation: "read"`) and the host's `host_uri_result` its text; `write`
//! to a scheme registered `writable` sends the text (`operation: "write"`). An abort writes
//! `host_uri_cancel` and fails the request at once; results for unknown or finished ids are
//! ignored; when stdin closes, every pending request fails and the schemes are dropped.
//!
//! Each `set_host_uri_schemes` replaces the whole set (`[]` clears it); the list is checked
//! whole before anything changes, with omp's texts.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use rho_rpc::{HostUriCancel, HostUriOperation, HostUriRequest, HostUriResult};
use rho_tools::{HostTarget, HostUris};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ids::new_id;
use crate::agent_session::AgentSessionEvent;
use crate::modes::out_queue::OutQueue;

/// The failure text when stdin closes with a request pending.
pub const DISCONNECTED: &str = "RPC client disconnected before host URI request completed";

/// Schemes rho reads itself: a host may not take them.
const RESERVED: &[&str] = &["file", "http", "https"];

#[derive(Debug, Clone, Copy)]
struct Scheme {
    writable: bool,
}

enum Outcome {
    Result(HostUriResult),
    Disconnected,
}

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<Outcome>>>>;

/// The registered schemes and the requests waiting for the host.
pub struct HostUriBridge {
    out: Arc<OutQueue>,
    /// In the order they were first listed.
    schemes: Mutex<Vec<(String, Scheme)>>,
    pending: Pending,
}

impl std::fmt::Debug for HostUriBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostUriBridge").field("schemes", &*self.schemes.lock()).finish_non_exhaustive()
    }
}

impl HostUriBridge {
    pub fn new(out: Arc<OutQueue>) -> Arc<Self> {
        Arc::new(Self { out, schemes: Mutex::default(), pending: Pending::default() })
    }

    /// `set_host_uri_schemes`: replaces the set; the names as registered.
    pub fn set_schemes(&self, schemes: &Value) -> Result<Vec<String>, String> {
        let Some(items) = schemes.as_array() else {
            return Err("Host URI schemes must be an array".into());
        };
        let mut set: Vec<(String, Scheme)> = Vec::with_capacity(items.len());
        for item in items {
            let raw = item.get("scheme").and_then(Value::as_str).unwrap_or_default();
            let name = raw.trim().to_ascii_lowercase();
            if name.is_empty() {
                return Err("Host URI scheme must be a non-empty string".into());
            }
            if !is_scheme(&name) {
                return Err(format!("Host URI scheme contains invalid characters: {raw}"));
            }
            if RESERVED.contains(&name.as_str()) {
                return Err(format!("Host URI scheme is reserved by rho: {name}://"));
            }
            let scheme = Scheme { writable: item.get("writable").and_then(Value::as_bool) == Some(true) };
            // A scheme listed twice keeps its first place and its last definition.
            match set.iter_mut().find(|(n, _)| *n == name) {
                Some(entry) => entry.1 = scheme,
                None => set.push((name, scheme)),
            }
        }
        let names = set.iter().map(|(n, _)| n.clone()).collect();
        *self.schemes.lock() = set;
        Ok(names)
    }

    /// `host_uri_result`: completes the request (unknown ids are ignored).
    pub fn complete(&self, result: HostUriResult) {
        if let Some(done) = self.pending.lock().remove(&result.id) {
            let _ = done.send(Outcome::Result(result));
        }
    }

    /// Fails every pending request and drops the schemes (stdin closed).
    pub fn disconnect(&self) {
        for (_, done) in self.pending.lock().drain() {
            let _ = done.send(Outcome::Disconnected);
        }
        self.schemes.lock().clear();
    }

    fn request(
        &self,
        operation: HostUriOperation,
        url: String,
        content: Option<String>,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<HostUriResult, String>> {
        let (out, pending) = (self.out.clone(), self.pending.clone());
        let verb = match operation {
            HostUriOperation::Read => "read",
            HostUriOperation::Write => "write",
        };
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(format!("Host URI {verb} for {url} was aborted"));
            }
            let id = new_id();
            let (done, outcome) = oneshot::channel();
            pending.lock().insert(id.clone(), done);
            let request = HostUriRequest { id: id.clone(), operation, url: url.clone(), content };
            out.push_event(AgentSessionEvent::HostUriRequest(request));
            tokio::select! {
                outcome = outcome => match outcome {
                    Ok(Outcome::Result(result)) if result.is_error == Some(true) => Err(result
                        .error
                        .filter(|e| !e.is_empty())
                        .or(result.content.filter(|c| !c.is_empty()))
                        .unwrap_or_else(|| format!("Host URI {verb} failed for {url}"))),
                    Ok(Outcome::Result(result)) => Ok(result),
                    Ok(Outcome::Disconnected) | Err(_) => Err(DISCONNECTED.to_owned()),
                },
                () = cancel.cancelled() => {
                    pending.lock().remove(&id);
                    out.push_event(AgentSessionEvent::HostUriCancel(HostUriCancel { id: new_id(), target_id: id }));
                    Err(format!("Host URI {verb} for {url} was aborted"))
                }
            }
        })
    }
}

impl HostUris for HostUriBridge {
    fn target(&self, path: &str) -> Option<HostTarget> {
        let (scheme, _) = path.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if !is_scheme(&scheme) {
            return None;
        }
        let writable = self.schemes.lock().iter().find(|(n, _)| *n == scheme).map(|(_, s)| s.writable)?;
        // As a WHATWG URL's `href` (dot segments resolved, spaces escaped); as given when it
        // does not parse.
        let url = url::Url::parse(path).map_or_else(|_| path.to_owned(), String::from);
        Some(HostTarget { url, scheme, writable })
    }

    fn read(&self, url: String, cancel: CancellationToken) -> BoxFuture<'static, Result<String, String>> {
        let request = self.request(HostUriOperation::Read, url, None, cancel);
        Box::pin(async move { request.await.map(|result| result.content.unwrap_or_default()) })
    }

    fn write(&self, url: String, content: String, cancel: CancellationToken) -> BoxFuture<'static, Result<(), String>> {
        let request = self.request(HostUriOperation::Write, url, Some(content), cancel);
        Box::pin(async move { request.await.map(|_| ()) })
    }
}

/// `[a-z][a-z0-9+.-]*`: a URL scheme.
fn is_scheme(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '.' | '-'))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::modes::encoder::FrameLimits;

    fn bridge() -> Arc<HostUriBridge> {
        HostUriBridge::new(OutQueue::new(FrameLimits::new(1 << 20)))
    }

    #[test]
    fn schemes_are_checked_whole_with_omps_texts() {
        let b = bridge();
        assert_eq!(
            b.set_schemes(&json!([{"scheme": " Notes "}, {"scheme": "kb", "writable": true}])),
            Ok(vec!["notes".to_owned(), "kb".to_owned()])
        );
        let refused = [
            (json!({}), "Host URI schemes must be an array"),
            (json!(["foo"]), "Host URI scheme must be a non-empty string"),
            (json!([{"scheme": "  "}]), "Host URI scheme must be a non-empty string"),
            (json!([{"scheme": "1foo"}]), "Host URI scheme contains invalid characters: 1foo"),
            (json!([{"scheme": "foo://"}]), "Host URI scheme contains invalid characters: foo://"),
            (json!([{"scheme": "ok"}, {"scheme": "HTTPS"}]), "Host URI scheme is reserved by rho: https://"),
        ];
        for (schemes, error) in refused {
            assert_eq!(b.set_schemes(&schemes), Err(error.to_owned()), "{schemes}");
        }
        // A refused list changed nothing.
        assert!(b.target("notes://a").is_some() && b.target("ok://a").is_none());
        assert_eq!(b.set_schemes(&json!([])), Ok(vec![]));
        assert_eq!(b.target("notes://a"), None);
    }

    #[test]
    fn a_registered_scheme_is_a_target_with_its_url_normalized() {
        let b = bridge();
        b.set_schemes(
            &json!([{"scheme": "foo"}, {"scheme": "kb", "writable": false}, {"scheme": "kb", "writable": true}]),
        )
        .unwrap();
        assert_eq!(
            b.target("FOO://Bar/a/../b c?x=1#h"),
            Some(HostTarget { url: "foo://Bar/b%20c?x=1#h".into(), scheme: "foo".into(), writable: false })
        );
        assert_eq!(b.target("kb://x").map(|t| t.writable), Some(true), "the last definition counts");
        assert_eq!(b.target("other://x"), None);
        assert_eq!(b.target("src/foo.rs"), None);
        assert_eq!(b.target("foo:bar"), None);
    }
}
