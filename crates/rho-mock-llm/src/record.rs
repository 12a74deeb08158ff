//! The record of every request the server received, kept in memory and optionally appended to
//! a JSON-lines file (one request per line, flushed as it arrives, so a killed server loses
//! nothing that was answered).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use axum::http::HeaderMap;
use serde::Serialize;
use serde_json::Value;

/// One request as received.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// The query string without the `?` (empty when none).
    pub query: String,
    /// Header names lower-cased; repeated headers joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON, or the body text when it is not JSON.
    pub body: Value,
    /// `anthropic-messages`, `openai-completions`, `openai-responses`,
    /// `google-generative-ai`, or `unknown` for a path no provider serves.
    pub api: String,
}

impl RecordedRequest {
    pub fn new(method: &str, uri: &axum::http::Uri, headers: &HeaderMap, body: &[u8], api: &str) -> Self {
        Self {
            method: method.to_owned(),
            path: uri.path().to_owned(),
            query: uri.query().unwrap_or_default().to_owned(),
            headers: header_map(headers),
            body: serde_json::from_slice(body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned())),
            api: api.to_owned(),
        }
    }

    /// A header by its (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
}

fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes());
        map.entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert_with(|| value.into_owned());
    }
    map
}

/// Where requests are kept.
#[derive(Debug, Default)]
pub struct Recorder {
    requests: Mutex<Vec<RecordedRequest>>,
    file: Option<Mutex<File>>,
}

impl Recorder {
    /// A recorder that also appends to `path` (created if missing).
    pub fn with_file(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self { requests: Mutex::default(), file: Some(Mutex::new(file)) })
    }

    pub fn push(&self, request: RecordedRequest) {
        if let Some(file) = &self.file {
            let mut line = serde_json::to_vec(&request).unwrap_or_default();
            line.push(b'\n');
            let mut file = file.lock();
            if let Err(e) = file.write_all(&line).and_then(|()| file.flush()) {
                tracing::warn!("mock-llm: cannot append to the request record: {e}");
            }
        }
        self.requests.lock().push(request);
    }

    pub fn all(&self) -> Vec<RecordedRequest> {
        self.requests.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderValue, Uri};

    #[test]
    fn records_headers_lower_cased_and_body_as_json_or_text() {
        let mut headers = HeaderMap::new();
        headers.insert("X-Api-Key", HeaderValue::from_static("k"));
        headers.append("Accept", HeaderValue::from_static("a"));
        headers.append("Accept", HeaderValue::from_static("b"));
        let uri: Uri = "/v1/messages?beta=true".parse().unwrap();
        let r = RecordedRequest::new("POST", &uri, &headers, br#"{"a":1}"#, "anthropic-messages");
        assert_eq!(r.query, "beta=true");
        assert_eq!(r.header("X-API-KEY"), Some("k"));
        assert_eq!(r.headers["accept"], "a, b");
        assert_eq!(r.body, serde_json::json!({"a": 1}));
        let text = RecordedRequest::new("POST", &uri, &headers, b"not json", "unknown");
        assert_eq!(text.body, Value::String("not json".into()));
    }
}
