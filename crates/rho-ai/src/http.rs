//! How rho speaks HTTPS: one TLS set-up for every connection it opens, and the builder every HTTP
//! client of rho starts from: the model APIs, the logins, MCP over HTTP and SSE, and the Codex
//! websocket all verify servers alike.
//!
//! The set-up is rustls with the ring provider. A server is trusted when the webpki roots (the
//! Mozilla list, whatever the machine's own store holds) vouch for it, or a certificate in a PEM
//! file named by `NODE_EXTRA_CA_CERTS` (the variable pi users set for a proxy that inspects TLS)
//! or `SSL_CERT_FILE` does. A file that cannot be read, or holds no certificate, is left out;
//! start-up says so ([`extra_roots_warnings`]), before a terminal is taken over.

use std::sync::{Arc, LazyLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

/// The variables naming PEM files of certificates trusted beside the webpki roots.
const EXTRA_ROOTS: [&str; 2] = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"];

/// The TLS set-up for a connection offering `alpn`'s protocols, or why rustls refused it.
pub fn tls(alpn: &[&[u8]]) -> Result<ClientConfig, rustls::Error> {
    // What is left out was said at start-up (`extra_roots_warnings`); a file whose certificates
    // all fail to parse is left out here, in the log.
    static ROOTS: LazyLock<Arc<RootCertStore>> = LazyLock::new(|| {
        let (roots, warnings) = trusted_roots(|name| std::env::var(name).ok());
        for warning in warnings {
            tracing::debug!("{warning}");
        }
        Arc::new(roots)
    });
    trusting(Arc::clone(&ROOTS), alpn)
}

/// [`tls`] trusting `roots`.
fn trusting(roots: Arc<RootCertStore>, alpn: &[&[u8]]) -> Result<ClientConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    Ok(config)
}

/// Why a file [`EXTRA_ROOTS`] names is left out, one line each, for start-up to say. Only a
/// look: the file is read and searched for a certificate, not parsed (that waits for the first
/// connection), so a start with the system bundle named costs a read, not 0.3 ms of parsing.
/// Nothing is read when neither variable is set.
pub fn extra_roots_warnings() -> Vec<String> {
    look_at_extra_roots(|name| std::env::var(name).ok())
}

fn look_at_extra_roots(env: impl Fn(&str) -> Option<String>) -> Vec<String> {
    const BEGIN: &[u8] = b"-----BEGIN CERTIFICATE-----";
    let mut warnings = Vec::new();
    for (name, path) in named_files(env) {
        match std::fs::read(&path) {
            Ok(bytes) if bytes.windows(BEGIN.len()).any(|w| w == BEGIN) => {}
            Ok(_) => warnings.push(no_certificate(name, &path)),
            Err(e) => warnings.push(unreadable(name, &path, &e)),
        }
    }
    warnings
}

/// The files [`EXTRA_ROOTS`] name (looked up with `env`), each once, with the first variable
/// that names it.
fn named_files(env: impl Fn(&str) -> Option<String>) -> Vec<(&'static str, String)> {
    let mut files: Vec<(&'static str, String)> = Vec::new();
    for name in EXTRA_ROOTS {
        if let Some(path) = env(name).filter(|path| !path.is_empty())
            && !files.iter().any(|(_, seen)| *seen == path)
        {
            files.push((name, path));
        }
    }
    files
}

fn no_certificate(name: &str, path: &str) -> String {
    format!("{name}: no certificate in {path} could be used; it is left out")
}

fn unreadable(name: &str, path: &str, e: &dyn std::fmt::Display) -> String {
    format!("{name}: cannot read certificates from {path}: {e}; it is left out")
}

/// The webpki roots and the certificates of the files [`EXTRA_ROOTS`] name (looked up with
/// `env`), and a warning for each file left out.
fn trusted_roots(env: impl Fn(&str) -> Option<String>) -> (RootCertStore, Vec<String>) {
    let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let mut warnings = Vec::new();
    for (name, path) in named_files(env) {
        let read =
            CertificateDer::pem_file_iter(&path).and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>());
        match read {
            Ok(certificates) => {
                let (added, _) = roots.add_parsable_certificates(certificates);
                if added == 0 {
                    warnings.push(no_certificate(name, &path));
                }
            }
            Err(e) => warnings.push(unreadable(name, &path, &e)),
        }
    }
    (roots, warnings)
}

/// A client with rho's TLS, offering HTTP/2 and HTTP/1.1, and what `configure` sets (timeouts,
/// default headers), or why it could not be built. The TLS set-up is made once.
pub fn client(
    configure: impl FnOnce(reqwest::ClientBuilder) -> reqwest::ClientBuilder,
) -> Result<reqwest::Client, String> {
    static TLS: LazyLock<Result<ClientConfig, String>> =
        LazyLock::new(|| tls(&[b"h2", b"http/1.1"]).map_err(|e| e.to_string()));
    let config = TLS.as_ref().map_err(|e| format!("cannot set up TLS: {e}"))?;
    configure(reqwest::Client::builder().tls_backend_preconfigured(config.clone()))
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_up_offers_the_protocols_asked_for_over_the_webpki_roots() {
        let config = tls(&[b"h2", b"http/1.1"]).unwrap();
        assert_eq!(config.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
        let websocket = tls(&[b"http/1.1"]).unwrap();
        assert_eq!(websocket.alpn_protocols, [b"http/1.1".to_vec()]);
    }

    #[test]
    fn a_client_is_built_without_a_process_wide_crypto_provider() {
        // reqwest panics when it must pick a provider itself and none is installed; rho's
        // client hands it one, so nothing has to be installed first.
        assert!(rustls::crypto::CryptoProvider::get_default().is_none());
        client(|builder| builder).unwrap();
    }

    const CERTIFICATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls/localhost.crt");
    const KEY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tls/localhost.key");

    /// A server for `https://localhost:<port>/` with a certificate no webpki root vouches for (a
    /// self-signed one, made for these tests), answering one request with `ok`; its port, and
    /// whether its handshake completed.
    async fn serve() -> (u16, tokio::task::JoinHandle<bool>) {
        use rustls::pki_types::PrivateKeyDer;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let certificate = CertificateDer::from_pem_file(CERTIFICATE).unwrap();
        let key = PrivateKeyDer::from_pem_file(KEY).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key)
            .unwrap();
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let served = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let Ok(mut stream) = acceptor.accept(tcp).await else { return false };
            let mut request = vec![0; 4096];
            let _ = stream.read(&mut request).await;
            let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
            let _ = stream.write_all(answer).await;
            let _ = stream.shutdown().await;
            true
        });
        (port, served)
    }

    #[tokio::test]
    async fn a_server_no_root_vouches_for_is_refused() {
        let (port, served) = serve().await;
        let error =
            client(|builder| builder).unwrap().get(format!("https://127.0.0.1:{port}/")).send().await.unwrap_err();
        let text = crate::redact::reqwest_error(&error);
        assert!(text.contains("UnknownIssuer"), "{text}");
        assert!(!served.await.unwrap(), "the handshake completed");
    }

    #[tokio::test]
    async fn a_server_an_extra_root_vouches_for_is_trusted() {
        let (roots, warnings) = trusted_roots(|name| (name == "NODE_EXTRA_CA_CERTS").then(|| CERTIFICATE.to_owned()));
        assert!(warnings.is_empty(), "{warnings:?}");
        let config = trusting(Arc::new(roots), &[b"h2", b"http/1.1"]).unwrap();
        let client = reqwest::Client::builder().tls_backend_preconfigured(config).build().unwrap();
        let (port, served) = serve().await;
        let response = client.get(format!("https://127.0.0.1:{port}/")).send().await.unwrap();
        assert_eq!(response.text().await.unwrap(), "ok");
        assert!(served.await.unwrap());
    }

    #[test]
    fn the_extra_roots_come_from_either_variable_beside_the_webpki_ones() {
        let webpki = webpki_roots::TLS_SERVER_ROOTS.len();
        for variable in EXTRA_ROOTS {
            let (roots, warnings) = trusted_roots(|name| (name == variable).then(|| CERTIFICATE.to_owned()));
            assert_eq!((roots.len(), warnings.len()), (webpki + 1, 0), "{variable}");
        }
        // Both naming one file (as a machine that points every tool at its bundle does): read once.
        let (roots, warnings) = trusted_roots(|_| Some(CERTIFICATE.to_owned()));
        assert_eq!((roots.len(), warnings.len()), (webpki + 1, 0));
        let (roots, warnings) = trusted_roots(|_| Some(String::new()));
        assert_eq!((roots.len(), warnings.len()), (webpki, 0), "an empty variable names no file");
    }

    #[test]
    fn a_file_that_cannot_be_used_is_warned_about_and_left_out() {
        let webpki = webpki_roots::TLS_SERVER_ROOTS.len();
        let (roots, warnings) =
            trusted_roots(|name| (name == "SSL_CERT_FILE").then(|| "/nonexistent/ca.pem".to_owned()));
        assert_eq!(roots.len(), webpki);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("SSL_CERT_FILE: cannot read certificates from /nonexistent/ca.pem: "),
            "{warnings:?}"
        );
        // A key, not a certificate.
        let (roots, warnings) = trusted_roots(|name| (name == "NODE_EXTRA_CA_CERTS").then(|| KEY.to_owned()));
        assert_eq!(roots.len(), webpki);
        assert_eq!(warnings, [format!("NODE_EXTRA_CA_CERTS: no certificate in {KEY} could be used; it is left out")]);
    }

    #[test]
    fn the_start_up_look_finds_what_the_parse_would_leave_out() {
        let only = |variable: &'static str, path: String| move |name: &str| (name == variable).then(|| path.clone());
        assert!(look_at_extra_roots(only("SSL_CERT_FILE", CERTIFICATE.to_owned())).is_empty());
        assert_eq!(
            look_at_extra_roots(only("NODE_EXTRA_CA_CERTS", KEY.to_owned())),
            [format!("NODE_EXTRA_CA_CERTS: no certificate in {KEY} could be used; it is left out")]
        );
        let missing = look_at_extra_roots(only("SSL_CERT_FILE", "/nonexistent/ca.pem".to_owned()));
        assert_eq!(missing.len(), 1);
        assert!(missing[0].starts_with("SSL_CERT_FILE: cannot read certificates from /nonexistent/ca.pem: "));
        assert!(look_at_extra_roots(|_| None).is_empty());
    }
}
