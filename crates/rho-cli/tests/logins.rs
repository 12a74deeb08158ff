//! Subscription logins in `auth.json`, through the real binary against the mock's token
//! endpoint: an expired Anthropic login is refreshed, written back (other entries kept, mode
//! 0600) and sent as Claude Code sends it; a failed refresh says so and leaves the file alone; a
//! lock held by another process (pi's `auth.json.lock`) is waited for and its holder's refresh is
//! used; `rho login anthropic` exchanges a pasted code or the browser's callback (PKCE) and
//! stores it as pi does; `rho logout` removes only the login. ChatGPT's and Copilot's logins
//! and Vertex AI's credentials are in `logins/providers.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
#[path = "logins/auth_command.rs"]
mod auth_command;
#[path = "logins/providers.rs"]
mod providers;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::Env;
use rho_mock_llm::{IssuedTokens, Turn};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const LIFETIME_S: u64 = 8 * 60 * 60;
const MARGIN_MS: i64 = 5 * 60 * 1000;

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// `env` with Anthropic's built-in models sent to the mock and its token endpoint moved there.
fn anthropic_at_mock(env: &Env) {
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["anthropic"] = json!({"baseUrl": env.server.url()});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
}

fn write_auth(env: &Env, auth: &Value) -> String {
    let text = serde_json::to_string_pretty(auth).unwrap();
    std::fs::write(env.agent_dir.join("auth.json"), &text).unwrap();
    text
}

fn read_auth(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("auth.json")).unwrap()).unwrap()
}

fn rho(env: &Env, args: &[&str]) -> tokio::process::Command {
    let mut command = env.command(args);
    command.env("RHO_OAUTH_TOKEN_URL_ANTHROPIC", format!("{}/v1/oauth/token", env.server.url()));
    command
}

async fn output(mut command: tokio::process::Command) -> Output {
    command.stdin(Stdio::null());
    tokio::time::timeout(Duration::from_secs(30), command.output()).await.unwrap().unwrap()
}

fn expired_login() -> Value {
    json!({
        "openai": {"type": "api_key", "key": "sk-openai"},
        "anthropic": {"type": "oauth", "refresh": "rt-old", "access": "sk-ant-oat01-old", "expires": 1000},
        "zai": {"type": "api_key", "key": "!echo zai"}
    })
}

#[tokio::test]
async fn an_expired_login_is_refreshed_written_back_and_sent_as_claude_code() {
    let env = Env::new(vec![Turn::tool_call("Read", json!({"path": "notes.txt"})), Turn::text("Read it.")]).await;
    anthropic_at_mock(&env);
    write_auth(&env, &expired_login());
    std::fs::write(env.cwd.join("notes.txt"), "hello from the notes").unwrap();
    env.server.accept_oauth_refresh(
        "rt-old",
        IssuedTokens {
            access_token: "sk-ant-oat01-new".into(),
            refresh_token: Some("rt-new".into()),
            expires_in: LIFETIME_S,
        },
    );

    let before = now_ms();
    let out = output(rho(&env, &["-p", "--model", "anthropic/claude-sonnet-4-5", "read notes.txt"])).await;
    let after = now_ms();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Read it.\n");

    // Written back: the new tokens with pi's expiry, the other entries as they were, in order.
    let auth = read_auth(&env);
    let keys: Vec<&String> = auth.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["openai", "anthropic", "zai"]);
    assert_eq!(auth["openai"], expired_login()["openai"]);
    assert_eq!(auth["zai"], expired_login()["zai"]);
    let login = &auth["anthropic"];
    assert_eq!(
        (login["type"].as_str(), login["access"].as_str(), login["refresh"].as_str()),
        (Some("oauth"), Some("sk-ant-oat01-new"), Some("rt-new"))
    );
    let expires = login["expires"].as_i64().unwrap();
    let lifetime = LIFETIME_S as i64 * 1000 - MARGIN_MS;
    assert!((before + lifetime..=after + lifetime).contains(&expires), "{expires}");
    let mode = std::fs::metadata(env.agent_dir.join("auth.json")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(!env.agent_dir.join("auth.json.lock").exists(), "the lock is released");

    let requests = env.server.requests();
    assert_eq!(requests.len(), 3, "one refresh, two model calls");
    let refresh = &requests[0];
    assert_eq!((refresh.method.as_str(), refresh.path.as_str()), ("POST", "/v1/oauth/token"));
    assert_eq!(refresh.header("content-type"), Some("application/json"));
    assert_eq!(
        refresh.body,
        json!({"grant_type": "refresh_token", "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e", "refresh_token": "rt-old"})
    );

    // The model calls are Claude Code's: Bearer token, its betas and identity, its tool names.
    for call in &requests[1..] {
        assert_eq!(call.path, "/v1/messages");
        assert_eq!(call.header("authorization"), Some("Bearer sk-ant-oat01-new"));
        assert_eq!(call.header("x-api-key"), None);
        // Claude Code's betas first, then the one budget thinking needs (thinking is on).
        assert_eq!(
            call.header("anthropic-beta"),
            Some("claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14")
        );
        assert_eq!(call.header("user-agent"), Some("claude-cli/2.1.75"));
        assert_eq!(call.header("x-app"), Some("cli"));
        assert_eq!(call.header("anthropic-version"), Some("2023-06-01"));
        let system = call.body["system"].as_array().unwrap();
        assert_eq!(
            system[0],
            json!({"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude.", "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(system.len(), 2, "then rho's own system prompt");
        let tools: Vec<&str> =
            call.body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(tools.contains(&"Read") && tools.contains(&"Bash") && !tools.contains(&"read"), "{tools:?}");
    }
    // The model's `Read` ran as rho's `read`, and went back as `Read`.
    let second = &requests[2].body["messages"];
    assert_eq!(second[1]["content"][0]["name"], "Read");
    let result = &second[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert!(result["content"].as_str().unwrap().contains("hello from the notes"), "{result}");
}

#[tokio::test]
async fn a_fresh_login_is_used_without_a_refresh() {
    let env = Env::new(vec![Turn::text("ok")]).await;
    anthropic_at_mock(&env);
    let auth = json!({"anthropic": {"type": "oauth", "refresh": "rt", "access": "sk-ant-oat01-live", "expires": now_ms() + 3_600_000}});
    let text = write_auth(&env, &auth);
    let out = output(rho(&env, &["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-ant-oat01-live"));
    assert_eq!(std::fs::read_to_string(env.agent_dir.join("auth.json")).unwrap(), text, "untouched");
}

#[tokio::test]
async fn a_failed_refresh_is_reported_and_leaves_the_file_alone() {
    let env = Env::new(vec![Turn::text("never sent")]).await;
    anthropic_at_mock(&env);
    let text = write_auth(&env, &expired_login());
    let auth_path = env.agent_dir.join("auth.json");
    let out = output(rho(&env, &["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"])).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let url = format!("{}/v1/oauth/token", env.server.url());
    let expected = format!(
        "The Anthropic (Claude Pro/Max) login in {} has expired and could not be refreshed: Anthropic (Claude \
         Pro/Max) token refresh failed: HTTP 400 from {url}: {{\"error\":\"invalid_grant\",\"error_description\":\"the \
         grant is invalid, expired or already used\"}}\n\nLog in again with `rho login anthropic` (or /login in pi).",
        auth_path.display()
    );
    assert_eq!(stderr.trim_end(), expected);
    assert_eq!(std::fs::read_to_string(&auth_path).unwrap(), text, "the file is unchanged");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1, "the refresh only: no model call without a token");
    assert_eq!(requests[0].path, "/v1/oauth/token");
}

/// The refresh gives a token that lives only the five minutes pi takes off, so the next request
/// refreshes again, and that refresh is refused: the second prompt fails with the reason instead
/// of going out without a token, and the session goes on.
#[tokio::test]
async fn a_login_that_cannot_be_refreshed_mid_session_fails_the_request_not_unauthenticated() {
    let env = Env::new(vec![Turn::text("first"), Turn::text("never sent")]).await;
    anthropic_at_mock(&env);
    write_auth(&env, &expired_login());
    env.server.accept_oauth_refresh(
        "rt-old",
        IssuedTokens {
            access_token: "sk-ant-oat01-brief".into(),
            refresh_token: Some("rt-brief".into()),
            expires_in: 300,
        },
    );
    let command = rho(&env, &["--mode", "rpc", "--model", "anthropic/claude-sonnet-4-5", "--no-session"]);
    let mut rpc = common::Rho::start_command(command).await;
    let last = |frames: &[Value]| frames.last().unwrap()["messages"].as_array().unwrap().last().unwrap().clone();
    rpc.send(json!({"type": "prompt", "message": "one"})).await;
    let first = last(&rpc.until_agent_end().await);
    assert_eq!(first["stopReason"], "stop", "{first}");
    rpc.send(json!({"type": "prompt", "message": "two"})).await;
    let second = last(&rpc.until_agent_end().await);
    assert_eq!(second["stopReason"], "error", "{second}");
    let reason = second["errorMessage"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "The Anthropic (Claude Pro/Max) login in {} has expired and could not be refreshed",
            env.agent_dir.join("auth.json").display()
        )),
        "{reason}"
    );
    let requests = env.server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/v1/oauth/token", "/v1/messages", "/v1/oauth/token"], "no model call without a token");
    assert_eq!(requests[1].header("authorization"), Some("Bearer sk-ant-oat01-brief"));
    assert_eq!(read_auth(&env)["anthropic"]["refresh"], "rt-brief", "the first refresh was kept");
    assert_eq!(rpc.data(json!({"type": "get_state"})).await["isStreaming"], false);
}

#[tokio::test]
async fn a_lock_held_by_another_process_is_waited_for_and_its_refresh_used() {
    let env = Env::new(vec![Turn::text("ok")]).await;
    anthropic_at_mock(&env);
    write_auth(&env, &expired_login());
    // Another process (pi, say) holds the lock, as proper-lockfile makes it.
    let lock = env.agent_dir.join("auth.json.lock");
    std::fs::create_dir(&lock).unwrap();

    let mut command = rho(&env, &["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"]);
    command.env("RHO_LOG", "info").stdin(Stdio::null());
    let mut child = command.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let waiting = format!(
        "waiting for the lock {}",
        std::fs::canonicalize(&env.agent_dir).unwrap().join("auth.json.lock").display()
    );
    let seen = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains(&waiting) {
                return true;
            }
        }
        false
    })
    .await
    .unwrap();
    assert!(seen, "rho waits for the lock");
    assert!(env.server.requests().is_empty(), "nothing is asked while the lock is held");

    // The holder refreshes and lets go, as pi does.
    let mut refreshed = expired_login();
    refreshed["anthropic"] =
        json!({"type": "oauth", "refresh": "rt-pi", "access": "sk-ant-oat01-from-pi", "expires": now_ms() + 3_600_000});
    let text = write_auth(&env, &refreshed);
    std::fs::remove_dir(&lock).unwrap();

    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(status.success());
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1, "no second refresh: the holder's tokens are used");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-ant-oat01-from-pi"));
    assert_eq!(std::fs::read_to_string(env.agent_dir.join("auth.json")).unwrap(), text);
    assert!(!lock.exists());
}

/// The query parameter `name` of `url` (the values rho puts there need no decoding).
fn param<'a>(url: &'a str, name: &str) -> &'a str {
    url.split(['?', '&']).find_map(|pair| pair.strip_prefix(name).and_then(|v| v.strip_prefix('='))).unwrap()
}

/// The authorize URL `rho login anthropic` prints on stderr, and the rest of stderr (kept open:
/// rho goes on writing to it).
async fn authorize_url(
    child: &mut tokio::process::Child,
) -> (String, tokio::io::Lines<BufReader<tokio::process::ChildStderr>>) {
    printed_url(child, "https://claude.ai/oauth/authorize?").await
}

/// The first line starting with `prefix` that a login prints on stderr, and the rest of stderr.
async fn printed_url(
    child: &mut tokio::process::Child,
    prefix: &str,
) -> (String, tokio::io::Lines<BufReader<tokio::process::ChildStderr>>) {
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let line = stderr.next_line().await.unwrap().expect("the authorize URL");
            if line.starts_with(prefix) {
                return line;
            }
        }
    })
    .await
    .unwrap();
    (url, stderr)
}

#[tokio::test]
async fn login_exchanges_a_pasted_code_and_stores_it_as_pi_does() {
    let env = Env::new(vec![]).await;
    let existing = json!({"openai": {"type": "api_key", "key": "sk-openai"}});
    write_auth(&env, &existing);
    env.server.accept_oauth_code(
        "the-code",
        IssuedTokens {
            access_token: "sk-ant-oat01-login".into(),
            refresh_token: Some("rt-login".into()),
            expires_in: LIFETIME_S,
        },
    );
    let mut child = rho(&env, &["login", "anthropic"]).spawn().unwrap();
    let (url, _stderr) = authorize_url(&mut child).await;
    assert_eq!(param(&url, "code_challenge_method"), "S256");
    assert_eq!(param(&url, "redirect_uri"), "http%3A%2F%2Flocalhost%3A53692%2Fcallback");
    let (state, challenge) = (param(&url, "state").to_owned(), param(&url, "code_challenge").to_owned());

    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("the-code#{state}\n").as_bytes()).await.unwrap();
    let before = now_ms();
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await.unwrap().unwrap();
    let after = now_ms();
    assert!(out.status.success());
    let auth_path = env.agent_dir.join("auth.json");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("Logged in to Anthropic (Claude Pro/Max). Credentials saved in {}\n", auth_path.display())
    );

    let exchange = env.server.last_request().unwrap();
    assert_eq!(exchange.path, "/v1/oauth/token");
    let body = &exchange.body;
    assert_eq!(body["grant_type"], "authorization_code");
    assert_eq!(body["client_id"], "9d1c250a-e61b-44d9-88ed-5944d1962f5e");
    assert_eq!(body["code"], "the-code");
    assert_eq!(body["state"], state.as_str());
    assert_eq!(body["redirect_uri"], "http://localhost:53692/callback");
    let verifier = body["code_verifier"].as_str().unwrap();
    assert_eq!(verifier, state, "pi's flow: the verifier is the state");
    assert_eq!(rho_coding_agent::login::pkce::challenge(verifier), challenge, "S256 of the verifier");
    assert_eq!(s256_by_ring(verifier), challenge);

    let auth = read_auth(&env);
    assert_eq!(auth["openai"], existing["openai"], "other entries kept");
    let login = auth["anthropic"].as_object().unwrap();
    let keys: Vec<&String> = login.keys().collect();
    assert_eq!(keys, ["type", "refresh", "access", "expires"], "pi's entry");
    assert_eq!((login["access"].as_str(), login["refresh"].as_str()), (Some("sk-ant-oat01-login"), Some("rt-login")));
    let lifetime = LIFETIME_S as i64 * 1000 - MARGIN_MS;
    assert!((before - 30_000 + lifetime..=after + lifetime).contains(&login["expires"].as_i64().unwrap()));
    assert_eq!(std::fs::metadata(&auth_path).unwrap().permissions().mode() & 0o777, 0o600);
}

/// `GET target` on 127.0.0.1:`port`: the status code and the body.
async fn get(port: u16, target: &str) -> (u16, String) {
    use tokio::io::AsyncReadExt;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(format!("GET {target} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n").as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    let status = reply.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, reply.split_once("\r\n\r\n").unwrap().1.to_owned())
}

#[tokio::test]
async fn login_completes_when_the_browser_comes_back_to_the_callback() {
    let env = Env::new(vec![]).await;
    env.server.accept_oauth_code(
        "browser-code",
        IssuedTokens {
            access_token: "sk-ant-oat01-cb".into(),
            refresh_token: Some("rt-cb".into()),
            expires_in: LIFETIME_S,
        },
    );
    let mut command = rho(&env, &["login", "anthropic"]);
    command.env("RHO_OAUTH_CALLBACK_PORT", "0");
    let mut child = command.spawn().unwrap();
    let _stdin = child.stdin.take();
    let (url, _stderr) = authorize_url(&mut child).await;
    let redirect = param(&url, "redirect_uri").replace("%3A", ":").replace("%2F", "/");
    let port: u16 =
        redirect.strip_prefix("http://localhost:").unwrap().strip_suffix("/callback").unwrap().parse().unwrap();
    let state = param(&url, "state").to_owned();

    // Another page, and a callback of another login, are answered and waited past.
    assert_eq!(get(port, "/favicon.ico").await.0, 404);
    let (status, page) = get(port, "/callback?code=browser-code&state=someone-else").await;
    assert_eq!(status, 400);
    assert!(page.contains("state does not match"), "{page}");
    let (status, page) = get(port, &format!("/callback?code=browser-code&state={state}")).await;
    assert_eq!(status, 200);
    assert!(page.contains("Anthropic login complete"), "{page}");

    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(status.success());
    let exchange = env.server.last_request().unwrap();
    assert_eq!(exchange.body["code"], "browser-code");
    assert_eq!(exchange.body["redirect_uri"], redirect.as_str(), "the redirect the browser was sent to");
    assert_eq!(read_auth(&env)["anthropic"]["access"], "sk-ant-oat01-cb");
}

fn s256_by_ring(verifier: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()))
}

#[tokio::test]
async fn a_pasted_code_of_another_login_is_refused() {
    let env = Env::new(vec![]).await;
    let mut child = rho(&env, &["login", "anthropic"]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"some-code#not-our-state\n").await.unwrap();
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.ends_with("Error: the pasted code is from another login (its state does not match): start again\n"),
        "{stderr}"
    );
    assert!(env.server.requests().is_empty(), "nothing exchanged");
    assert!(!env.agent_dir.join("auth.json").exists(), "nothing stored");
}

#[tokio::test]
async fn logins_rho_cannot_use_are_refused_with_the_reason() {
    let env = Env::new(vec![]).await;
    let auth_path = env.agent_dir.join("auth.json");
    for google in ["google", "google-gemini-cli"] {
        let out = output(rho(&env, &["login", google])).await;
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8(out.stderr).unwrap().starts_with("Error: rho has no Google login"));
    }
    let out = output(rho(&env, &["login"])).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("\n  anthropic       Anthropic (Claude Pro/Max)\n"), "{stderr}");
    assert!(stderr.contains("\n  github-copilot  GitHub Copilot\n"), "{stderr}");
    assert!(stderr.contains("\n  openai-codex    ChatGPT Plus/Pro (Codex Subscription)"), "{stderr}");
    assert!(!auth_path.exists());
}

#[tokio::test]
async fn a_login_rho_cannot_use_is_named_where_a_model_is_missing() {
    let env = Env::new(vec![]).await;
    std::fs::remove_file(env.agent_dir.join("models.json")).unwrap();
    write_auth(&env, &json!({"google-gemini-cli": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}}));
    let out = output(rho(&env, &["-p", "hi"])).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("Error: No model selected."), "{stderr}");
    assert!(stderr.contains("login (google-gemini-cli)"), "{stderr}");
    assert!(stderr.contains("Google Cloud Code login"), "{stderr}");
    assert!(env.server.requests().is_empty(), "no request is made with a token rho cannot use");
}

/// `rho login github-copilot`: GitHub's device flow (the code to enter shown, GitHub polled), the
/// GitHub token exchanged for a Copilot token, the catalogue's models enabled, the login stored
/// as pi stores it; then a Copilot model answers with Copilot's headers.
#[tokio::test]
async fn a_copilot_login_is_made_with_githubs_device_flow_and_used() {
    let env = Env::new(vec![Turn::text("Hello from Copilot.")]).await;
    let copilot_token = "tid=1;exp=9;sku=free;proxy-ep=proxy.individual.githubcopilot.com";
    env.server.accept_github_device("gho_device");
    env.server.accept_oauth_refresh(
        "gho_device",
        IssuedTokens { access_token: copilot_token.into(), refresh_token: None, expires_in: 1800 },
    );
    let url = env.server.url();
    let copilot = |args: &[&str]| {
        let mut command = rho(&env, args);
        command.env("RHO_OAUTH_GITHUB_URL", &url);
        command.env("RHO_OAUTH_TOKEN_URL_GITHUB_COPILOT", format!("{url}/copilot_internal/v2/token"));
        command.env("RHO_COPILOT_BASE_URL", &url);
        command
    };
    let out = output(copilot(&["login", "github-copilot"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("open https://github.com/login/device and enter the code WDJB-MJHT"), "{stderr}");
    let login = read_auth(&env)["github-copilot"].clone();
    assert_eq!((login["access"].as_str(), login["refresh"].as_str()), (Some(copilot_token), Some("gho_device")));

    let requests = env.server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths[..4],
        ["/login/device/code", "/login/oauth/access_token", "/login/oauth/access_token", "/copilot_internal/v2/token"]
    );
    assert_eq!(requests[0].body, Value::from("client_id=Iv1.b507a08c87ecfe98&scope=read%3Auser"));
    assert_eq!(requests[3].header("authorization"), Some("Bearer gho_device"));
    let policies = requests.iter().filter(|r| r.path.ends_with("/policy")).count();
    assert!(policies > 20, "the catalogue's models enabled: {paths:?}");

    let out = output(copilot(&["-p", "--model", "github-copilot/kimi-k3", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from Copilot.\n");
    let call = env.server.last_request().unwrap();
    assert_eq!(call.path, "/chat/completions");
    assert_eq!(call.header("authorization"), Some(format!("Bearer {copilot_token}").as_str()));
    assert_eq!(call.header("x-initiator"), Some("user"));
    assert_eq!(call.header("openai-intent"), Some("conversation-edits"));
    assert_eq!(call.header("editor-version"), Some("vscode/1.107.0"));
    assert_eq!(call.header("copilot-integration-id"), Some("vscode-chat"));
}

#[tokio::test]
async fn logout_removes_the_login_and_nothing_else() {
    let env = Env::new(vec![]).await;
    write_auth(&env, &expired_login());
    let auth_path = env.agent_dir.join("auth.json");
    let out = output(rho(&env, &["logout", "anthropic"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("Logged out of anthropic: its login is removed from {}\n", auth_path.display())
    );
    let mut expected = expired_login();
    expected.as_object_mut().unwrap().shift_remove("anthropic");
    assert_eq!(read_auth(&env), expected);

    let out = output(rho(&env, &["logout", "openai"])).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("holds an API key for openai, not a login: nothing was removed")
    );
    let out = output(rho(&env, &["logout", "anthropic"])).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(read_auth(&env), expected);
    assert!(Path::new(&auth_path).exists());
}

/// A refresh that waits (another process holds `auth.json.lock` for as long as it likes) waits
/// in the request, not in the command loop: `get_state` is answered meanwhile, `abort` ends the
/// run as aborted with nothing sent, and rho still exits at once on EOF.
#[tokio::test]
async fn a_refresh_waiting_for_the_lock_blocks_neither_commands_nor_abort() {
    let env = Env::new(vec![Turn::text("never sent")]).await;
    anthropic_at_mock(&env);
    write_auth(&env, &expired_login());
    let lock = env.agent_dir.join("auth.json.lock");
    std::fs::create_dir(&lock).unwrap();

    let command = rho(&env, &["--mode", "rpc", "--model", "anthropic/claude-sonnet-4-5", "--no-session"]);
    let mut rpc = common::Rho::start_command(command).await;
    let response = rpc.request(json!({"type": "prompt", "message": "hi"})).await;
    assert_eq!(response["success"], true, "{response}");
    let state = rpc.data(json!({"type": "get_state"})).await;
    assert_eq!(state["isStreaming"], true, "the run waits for its key: {state}");
    // `abort` is answered once the run it stopped is over.
    rpc.send(json!({"type": "abort", "id": "stop"})).await;
    let frames = rpc.until(|f| f["type"] == "response" && f["id"] == "stop").await;
    assert_eq!(frames.last().unwrap()["success"], true, "{frames:?}");
    let end = frames.iter().find(|f| f["type"] == "agent_end").expect("the run ended");
    assert_eq!(end["messages"].as_array().unwrap().last().unwrap()["stopReason"], "aborted", "{end}");
    assert!(env.server.requests().is_empty(), "nothing is asked while the lock is held");

    rpc.close_stdin();
    assert!(rpc.wait().await.success(), "the waiting refresh does not hold up the exit");
    assert!(lock.exists(), "another process's lock is left alone");
}
