//! AWS credentials for Bedrock, found as AWS's SDKs find them: aws-config's default chain
//! (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, the shared config and
//! credentials files with `AWS_PROFILE` and its SSO, `credential_process` and role settings, web
//! identity, the container endpoint, instance metadata). The chain is built once per process,
//! and what it gives is kept until five minutes before it expires. The few HTTP calls the chain
//! makes (STS, SSO, the container endpoint) go through rho's own HTTP client.
//!
//! `AWS_BEDROCK_SKIP_AUTH=1` signs with placeholder keys, for a proxy that does not check them.

use parking_lot::Mutex;
use std::time::{Duration, SystemTime};

use aws_config::BehaviorVersion;
use aws_config::Region;
use aws_credential_types::Credentials;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector, http_client_fn,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::error::display::DisplayErrorContext;

/// Credentials this close to their expiry are fetched again.
const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// The region the profile named by `AWS_PROFILE` (or the default one) sets, if any.
pub(crate) async fn profile_region() -> Option<String> {
    use aws_config::meta::region::ProvideRegion;
    aws_config::profile::ProfileFileRegionProvider::new().region().await.map(|r| r.to_string())
}

/// Credentials to sign a request in `region` with.
pub(crate) async fn credentials(region: &str) -> Result<Credentials, String> {
    if std::env::var("AWS_BEDROCK_SKIP_AUTH").as_deref() == Ok("1") {
        return Ok(Credentials::new("dummy-access-key", "dummy-secret-key", None, None, "rho"));
    }
    static CACHED: Mutex<Option<Credentials>> = Mutex::new(None);
    let fresh = |c: &Credentials| c.expiry().is_none_or(|at| at > SystemTime::now() + REFRESH_MARGIN);
    if let Some(cached) = CACHED.lock().clone().filter(fresh) {
        return Ok(cached);
    }
    let provider = chain(region).await;
    let found = provider
        .provide_credentials()
        .await
        .map_err(|e| format!("Could not load AWS credentials: {}", DisplayErrorContext(&e)))?;
    *CACHED.lock() = Some(found.clone());
    Ok(found)
}

/// The default credential chain, built on first use.
async fn chain(region: &str) -> SharedCredentialsProvider {
    static CHAIN: tokio::sync::OnceCell<Option<SharedCredentialsProvider>> = tokio::sync::OnceCell::const_new();
    let region = region.to_owned();
    let loaded = CHAIN
        .get_or_init(|| async move {
            aws_config::defaults(BehaviorVersion::latest())
                .region(Region::new(region))
                .http_client(http_client_fn(|settings, _| SharedHttpConnector::new(Connector::new(settings))))
                .load()
                .await
                .credentials_provider()
        })
        .await;
    loaded.clone().unwrap_or_else(|| SharedCredentialsProvider::new(NoChain))
}

/// What stands for the chain when aws-config built none.
#[derive(Debug)]
struct NoChain;

impl ProvideCredentials for NoChain {
    fn provide_credentials<'a>(&'a self) -> aws_credential_types::provider::future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        aws_credential_types::provider::future::ProvideCredentials::ready(Err(
            aws_credential_types::provider::error::CredentialsError::not_loaded("no credential source configured"),
        ))
    }
}

/// aws-config's HTTP calls over rho's client, with the timeouts aws-config asks for.
#[derive(Debug)]
struct Connector {
    timeout: Option<Duration>,
}

impl Connector {
    fn new(settings: &HttpConnectorSettings) -> Self {
        let timeout = match (settings.connect_timeout(), settings.read_timeout()) {
            (Some(connect), Some(read)) => Some(connect + read),
            (one, other) => one.or(other),
        };
        Self { timeout }
    }
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let timeout = self.timeout;
        HttpConnectorFuture::new(async move {
            let method = reqwest::Method::from_bytes(request.method().as_bytes())
                .map_err(|e| ConnectorError::other(Box::new(e), None))?;
            let mut builder = crate::sse::client()
                .map_err(|e| ConnectorError::other(Box::new(e), None))?
                .request(method, request.uri());
            for (name, value) in request.headers().iter() {
                builder = builder.header(name, value);
            }
            if let Some(bytes) = request.body().bytes() {
                builder = builder.body(bytes.to_vec());
            }
            if let Some(timeout) = timeout {
                builder = builder.timeout(timeout);
            }
            let response = builder.send().await.map_err(|e| {
                if e.is_timeout() { ConnectorError::timeout(Box::new(e)) } else { ConnectorError::io(Box::new(e)) }
            })?;
            let status = StatusCode::try_from(response.status().as_u16())
                .map_err(|e| ConnectorError::other(Box::new(e), None))?;
            let headers: Vec<(String, String)> = response
                .headers()
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect();
            let body = response.bytes().await.map_err(|e| ConnectorError::io(Box::new(e)))?;
            let mut out = HttpResponse::new(status, SdkBody::from(body));
            for (name, value) in headers {
                out.headers_mut().append(name, value);
            }
            Ok(out)
        })
    }
}
