//! `/share` through Radius (pi 1.6): with Radius authentication (a login or a key), the current
//! branch goes up as a session artifact visible to the Radius organization, with a trailing
//! `pi.share` entry that carries the system prompt and the tools for the viewer; the answer is
//! the artifact's address. `PI_RADIUS_GATEWAY` moves the gateway.

use std::time::Duration;

use serde_json::{Value, json};

use crate::AgentSession;

const UPLOAD_TIMEOUT: Duration = Duration::from_secs(60);

impl AgentSession {
    /// Shares the branch as a Radius artifact: `Ok(None)` without Radius authentication, else
    /// the artifact's address or why the upload failed.
    pub async fn share_to_radius(&self) -> Result<Option<String>, String> {
        let Some(token) = self.registry().api_key("radius") else { return Ok(None) };
        let body = self.share_jsonl();
        let gateway = rho_ai::oauth::radius::gateway(&|name| std::env::var(name).ok());
        let url = format!("{gateway}/v1/artifacts?visibility=organization&title=Pi%20session");
        let failed = |why: String| format!("Failed to upload Radius artifact: {why}");
        let client = rho_ai::http::client(|b| b.timeout(UPLOAD_TIMEOUT)).map_err(failed)?;
        let response = client
            .post(&url)
            .bearer_auth(token)
            .header("Content-Type", "application/x-ndjson")
            .body(body)
            .send()
            .await
            .map_err(|e| failed(rho_ai::redact::reqwest_error(&e)))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        match answer.pointer("/artifact/canonical_url").and_then(Value::as_str) {
            Some(address) if status.is_success() => Ok(Some(address.to_owned())),
            _ => {
                let why = answer.get("error").and_then(Value::as_str).map_or_else(|| status.to_string(), str::to_owned);
                Err(failed(why))
            }
        }
    }

    /// The branch as JSONL with the `pi.share` entry after it.
    fn share_jsonl(&self) -> String {
        let session = self.session();
        let mut body = crate::export_jsonl::branch_jsonl(&session);
        let parent = session.branch_entries().last().map(|e| e.id().to_string());
        drop(session);
        let tools: Vec<Value> = self
            .dump_tools()
            .into_iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
            .collect();
        let entry = json!({
            "type": "custom",
            "customType": "pi.share",
            "id": &uuid::Uuid::new_v4().simple().to_string()[..8],
            "parentId": parent,
            "timestamp": rho_session::now_iso(),
            "data": {"systemPrompt": self.system_prompt(), "tools": tools},
        });
        body.push_str(&entry.to_string());
        body.push('\n');
        body
    }
}
