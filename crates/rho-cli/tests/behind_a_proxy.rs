//! rho behind a proxy, as pi users run it:
//! - `HTTP_PROXY` is where requests go, the ChatGPT websocket's through a `CONNECT` tunnel (the
//!   proxy is a relay to rho-mock-llm, which reads a request's absolute URL as its path);
//! - through a proxy that inspects TLS, a model server whose certificate no webpki root vouches
//!   for is refused, and served once `NODE_EXTRA_CA_CERTS` (as pi users set it) or
//!   `SSL_CERT_FILE` names the certificate. The server is rho-mock-llm behind a TLS relay on
//!   `localhost` with a self-signed certificate made for these tests.

use crate::common;

use std::path::PathBuf;
use std::process::Output;
use std::sync::{Arc, Mutex};

use common::Env;
use rho_mock_llm::Turn;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
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
    assert!(
        stderr.contains("Warning: NODE_EXTRA_CA_CERTS: cannot read certificates from /nonexistent/ca.pem"),
        "{stderr}"
    );
    assert!(stderr.contains("UnknownIssuer"), "{stderr}");
}

/// An HTTP proxy in front of the mock: it tunnels a `CONNECT` (or refuses it with 407, if
/// `refuse_tunnels`) and relays a request in absolute form. Its port, and the head of each
/// request it took (its lines, `\r\n` dropped).
async fn proxy(env: &Env, refuse_tunnels: bool) -> (u16, Arc<Mutex<Vec<Vec<String>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let upstream = env.server.addr();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let mut client = BufReader::new(client);
                let mut head = Vec::new();
                loop {
                    let mut line = String::new();
                    if client.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    if line == "\r\n" {
                        break;
                    }
                    head.push(line.trim_end().to_owned());
                }
                seen.lock().unwrap().push(head.clone());
                let mut server = TcpStream::connect(upstream).await.unwrap();
                if head[0].starts_with("CONNECT ") {
                    let answer: &[u8] = if refuse_tunnels {
                        b"HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n"
                    } else {
                        b"HTTP/1.1 200 Connection established\r\n\r\n"
                    };
                    client.write_all(answer).await.unwrap();
                    if refuse_tunnels {
                        return;
                    }
                } else {
                    let again = format!("{}\r\n\r\n", head.join("\r\n"));
                    server.write_all(again.as_bytes()).await.unwrap();
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    (port, heads)
}

/// An env whose provider `mock` and ChatGPT login are reached at `http://model-server.invalid`,
/// a host that resolves nowhere: only a proxy can reach it.
async fn unreachable_but_by_proxy(turns: Vec<Turn>) -> Env {
    let env = Env::new(turns).await;
    let path = env.agent_dir.join("models.json");
    let mut models: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    models["providers"]["mock"]["baseUrl"] = json!("http://model-server.invalid");
    models["providers"]["openai-codex"] = json!({"baseUrl": "http://model-server.invalid/backend-api"});
    std::fs::write(&path, models.to_string()).unwrap();
    let login = json!({"openai-codex": {
        "type": "oauth", "access": common::chatgpt_token("acct-5"), "refresh": "rt",
        "expires": 4_102_444_800_000u64, "accountId": "acct-5"
    }});
    std::fs::write(env.agent_dir.join("auth.json"), login.to_string()).unwrap();
    env
}

/// rho asked once in print mode with `model`, `HTTP_PROXY` naming `proxy`.
async fn ask_through(env: &Env, model: &str, proxy: &str) -> Output {
    let mut command = env.command(&["-p", "--no-session", "--setting", "retry.enabled=false", "--model", model, "hi"]);
    command.env("HTTP_PROXY", proxy);
    let child = command.spawn().unwrap();
    tokio::time::timeout(common::FRAME_TIMEOUT, child.wait_with_output()).await.unwrap().unwrap()
}

#[tokio::test]
async fn requests_go_through_the_proxy_http_proxy_names() {
    let env = unreachable_but_by_proxy(vec![Turn::text("Hello through the proxy.")]).await;
    let (port, heads) = proxy(&env, false).await;
    let out = ask_through(&env, "mock/mock-model", &format!("http://127.0.0.1:{port}")).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello through the proxy.\n");
    let heads = heads.lock().unwrap();
    assert_eq!(heads.len(), 1);
    assert_eq!(heads[0][0], "POST http://model-server.invalid/v1/messages HTTP/1.1");
}

/// The ChatGPT websocket takes the proxy too: a `CONNECT` tunnel, with the proxy URL's
/// credentials.
#[tokio::test]
async fn the_chatgpt_websocket_tunnels_through_the_proxy() {
    let env = unreachable_but_by_proxy(vec![Turn::text("Hello over the tunnel.")]).await;
    let (port, heads) = proxy(&env, false).await;
    let out = ask_through(&env, "openai-codex/gpt-5.5", &format!("http://someone:secret@127.0.0.1:{port}")).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello over the tunnel.\n");
    let heads = heads.lock().unwrap();
    assert_eq!(
        *heads,
        [vec![
            "CONNECT model-server.invalid:80 HTTP/1.1".to_owned(),
            "Host: model-server.invalid:80".to_owned(),
            // someone:secret
            "Proxy-Authorization: Basic c29tZW9uZTpzZWNyZXQ=".to_owned(),
        ]]
    );
    let methods: Vec<String> = env.server.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, [rho_mock_llm::WEBSOCKET_METHOD]);
}

/// A proxy that refuses the tunnel: the request goes over the event stream instead, through the
/// same proxy.
#[tokio::test]
async fn a_refused_tunnel_gives_way_to_the_event_stream() {
    let env = unreachable_but_by_proxy(vec![Turn::text("Hello over the event stream.")]).await;
    let (port, heads) = proxy(&env, true).await;
    let out = ask_through(&env, "openai-codex/gpt-5.5", &format!("http://127.0.0.1:{port}")).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Hello over the event stream.\n");
    let firsts: Vec<String> = heads.lock().unwrap().iter().map(|head| head[0].clone()).collect();
    assert_eq!(
        firsts,
        [
            "CONNECT model-server.invalid:80 HTTP/1.1",
            "POST http://model-server.invalid/backend-api/codex/responses HTTP/1.1"
        ]
    );
    let methods: Vec<String> = env.server.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["POST"]);
}
