//! How rho speaks HTTPS: one TLS set-up for every connection it opens (rustls with the ring
//! provider and the webpki roots, whatever the machine's own store holds), and the builder every
//! HTTP client of rho starts from: the model APIs, the logins, MCP over HTTP and SSE, and the
//! Codex websocket all verify servers alike.

use std::sync::{Arc, LazyLock};

use rustls::{ClientConfig, RootCertStore};

/// The TLS set-up for a connection offering `alpn`'s protocols, or why rustls refused it.
pub fn tls(alpn: &[&[u8]]) -> Result<ClientConfig, rustls::Error> {
    let roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    Ok(config)
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

    /// A server with a certificate no root vouches for (a self-signed one for `localhost`, made
    /// for this test): rho's client refuses it rather than send anything.
    #[tokio::test]
    async fn a_server_no_root_vouches_for_is_refused() {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};

        let certificate =
            CertificateDer::from_pem_slice(include_bytes!("../tests/fixtures/tls/localhost.crt")).unwrap();
        let key = PrivateKeyDer::from_pem_slice(include_bytes!("../tests/fixtures/tls/localhost.key")).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![certificate], key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let handshake = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            acceptor.accept(tcp).await.map(|_| ())
        });
        let error =
            client(|builder| builder).unwrap().get(format!("https://localhost:{port}/")).send().await.unwrap_err();
        let text = crate::redact::reqwest_error(&error);
        assert!(text.contains("UnknownIssuer"), "{text}");
        assert!(handshake.await.unwrap().is_err(), "the handshake completed");
    }
}
