//! rho behind a proxy, as pi users run it:
//! - `HTTP_PROXY` is where requests go (the proxy is a relay to rho-mock-llm, which reads the
//!   request's absolute URL as its path);
//! - through a proxy that inspects TLS, a model server whose certificate no webpki root vouches
//!   for is refused, and served once `NODE_EXTRA_CA_CERTS` (as pi users set it) or
//!   `SSL_CERT_FILE` names the certificate. The server is rho-mock-llm behind a TLS relay on
//!   `localhost` with a self-signed certificate made for these tests.

use crate::common;

use std::path::PathBuf;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::Env;
use rho_mock_llm::Turn;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rho-ai/tests/fixtures/tls").join(name)
}

/// Relays TLS on a port of its own to the mock's plain HTTP; its port.
async fn relay(env: &Env) -> u16 {
    let certificate = CertificateDer::from_pem_file(fixture("localhost.crt")).unwrap();
    let key = PrivateKeyDer::from_pem_file(fixture("localhost.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![certificate], key)
        .unwrap();
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = env.server.addr();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let Ok(mut plain) = TcpStream::connect(upstream).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    port
}

/// An env whose provider `mock` is reached at `https://localhost:<relay>`.
async fn behind_tls() -> Env {
    let env = Env::new(vec![Turn::text("Hello over TLS.")]).await;
    let port = relay(&env).await;
    let path = env.agent_dir.join("models.json");
    let mut models: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    models["providers"]["mock"]["baseUrl"] = json!(format!("https://localhost:{port}"));
    std::fs::write(&path, models.to_string()).unwrap();
    env
}

/// rho asked once in print mode, with `variable` naming `file` if given.
async fn ask(env: &Env, variable: Option<(&str, PathBuf)>) -> Output {
    let mut command =
        env.command(&["-p", "--no-session", "--setting", "retry.enabled=false", "--model", "mock/mock-model", "hi"]);
    command.env_remove("NODE_EXTRA_CA_CERTS").env_remove("SSL_CERT_FILE");
    if let Some((variable, file)) = variable {
        command.env(variable, file);
    }
    let child = command.spawn().unwrap();
    tokio::time::timeout(common::FRAME_TIMEOUT, child.wait_with_output()).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_server_no_root_vouches_for_is_refused() {
    let env = behind_tls().await;
    let out = ask(&env, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("invalid peer certificate: UnknownIssuer"), "{stderr}");
    assert!(env.server.requests().is_empty());
}

#[tokio::test]
async fn a_certificate_named_by_either_variable_is_trusted() {
    for variable in ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE"] {
        let env = behind_tls().await;
        let out = ask(&env, Some((variable, fixture("localhost.crt")))).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{variable}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello over TLS.\n", "{variable}");
        assert_eq!(env.server.requests().len(), 1, "{variable}");
    }
}

#[tokio::test]
async fn a_file_that_cannot_be_read_is_warned_about_and_the_request_still_refused() {
    let env = behind_tls().await;
    let out = ask(&env, Some(("NODE_EXTRA_CA_CERTS", PathBuf::from("/nonexistent/ca.pem")))).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("NODE_EXTRA_CA_CERTS: cannot read certificates from /nonexistent/ca.pem"), "{stderr}");
    assert!(stderr.contains("UnknownIssuer"), "{stderr}");
}

/// A plain relay to the mock, standing for an HTTP proxy; its port, and how many connections it
/// took.
async fn proxy(env: &Env) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = env.server.addr();
    let taken = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&taken);
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let Ok(mut server) = TcpStream::connect(upstream).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    (port, taken)
}

#[tokio::test]
async fn requests_go_through_the_proxy_http_proxy_names() {
    let env = Env::new(vec![Turn::text("Hello through the proxy.")]).await;
    let path = env.agent_dir.join("models.json");
    let mut models: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // A host that resolves nowhere: only the proxy can reach it.
    models["providers"]["mock"]["baseUrl"] = json!("http://model-server.invalid");
    std::fs::write(&path, models.to_string()).unwrap();
    let (port, taken) = proxy(&env).await;
    let mut command =
        env.command(&["-p", "--no-session", "--setting", "retry.enabled=false", "--model", "mock/mock-model", "hi"]);
    command.env("HTTP_PROXY", format!("http://127.0.0.1:{port}"));
    let child = command.spawn().unwrap();
    let out = tokio::time::timeout(common::FRAME_TIMEOUT, child.wait_with_output()).await.unwrap().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello through the proxy.\n");
    assert_eq!(taken.load(Ordering::SeqCst), 1);
}
