//! The logins of the other subscriptions, through the real binary against the mock: ChatGPT's
//! (PKCE with its own callback path, the account from the token) and GitHub Copilot's (GitHub's
//! device flow, the Copilot token exchange), each made and then used; and Gemini on Vertex AI
//! with Application Default Credentials.

use std::time::Duration;

use rho_mock_llm::{IssuedTokens, Turn};
use serde_json::{Value, json};

use super::{get, output, param, printed_url, read_auth, rho};
use crate::common::{Env, chatgpt_token};

/// `rho login openai-codex`: the browser comes back to /auth/callback, the code is exchanged as a
/// form, the login stored with its account as pi stores it; then a ChatGPT model answers
/// through the Codex backend with that account.
#[tokio::test]
async fn a_chatgpt_login_is_made_stored_and_used() {
    let env = Env::new(vec![Turn::text("Hello from Codex.")]).await;
    let access = chatgpt_token("acct-7");
    env.server.accept_oauth_code(
        "codex-code",
        IssuedTokens { access_token: access.clone(), refresh_token: Some("rt-codex".into()), expires_in: 864_000 },
    );
    let mut command = rho(&env, &["login", "openai-codex"]);
    command.env("RHO_OAUTH_CALLBACK_PORT", "0");
    command.env("RHO_OAUTH_TOKEN_URL_OPENAI_CODEX", format!("{}/oauth/token", env.server.url()));
    let mut child = command.spawn().unwrap();
    let _stdin = child.stdin.take();
    let (url, _stderr) = printed_url(&mut child, "https://auth.openai.com/oauth/authorize?").await;
    assert_eq!(param(&url, "originator"), "pi");
    let redirect = param(&url, "redirect_uri").replace("%3A", ":").replace("%2F", "/");
    let port: u16 =
        redirect.strip_prefix("http://localhost:").unwrap().strip_suffix("/auth/callback").unwrap().parse().unwrap();
    let state = param(&url, "state").to_owned();
    assert_eq!(get(port, "/callback?code=codex-code").await.0, 404, "Anthropic's path is not this one");
    let (status, page) = get(port, &format!("/auth/callback?code=codex-code&state={state}")).await;
    assert_eq!(status, 200);
    assert!(page.contains("ChatGPT login complete"), "{page}");
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(status.success());

    let exchange = env.server.last_request().unwrap();
    assert_eq!(exchange.path, "/oauth/token");
    assert_eq!(exchange.header("content-type"), Some("application/x-www-form-urlencoded"));
    let form = exchange.body.as_str().unwrap().to_owned();
    assert!(
        form.starts_with(
            "grant_type=authorization_code&client_id=app_EMoamEEZ73f0CkXaXp7hrann&code=codex-code&code_verifier="
        ),
        "{form}"
    );
    assert!(form.ends_with(&format!("&redirect_uri={}", param(&url, "redirect_uri"))), "{form}");
    let login = read_auth(&env)["openai-codex"].clone();
    assert_eq!((login["access"].as_str(), login["refresh"].as_str()), (Some(access.as_str()), Some("rt-codex")));
    assert_eq!(login["accountId"], "acct-7");

    // The login answers for a ChatGPT model, on the Codex backend (moved to the mock).
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["openai-codex"] = json!({"baseUrl": format!("{}/backend-api", env.server.url())});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let out = output(rho(&env, &["-p", "--model", "openai-codex/gpt-5.5", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from Codex.\n");
    let call = env.server.last_request().unwrap();
    assert_eq!(call.path, "/backend-api/codex/responses");
    assert_eq!(call.header("authorization"), Some(format!("Bearer {access}").as_str()));
    assert_eq!(call.header("chatgpt-account-id"), Some("acct-7"));
    assert_eq!(call.body["model"], "gpt-5.5");
    // The system prompt leads the input (pi 1.6), not `instructions`.
    assert_eq!(call.body.get("instructions"), None);
    assert_eq!(call.body["input"][0]["role"], "developer");
}

/// Gemini on Vertex AI with Application Default Credentials (a user's, as `gcloud auth
/// application-default login` writes them): the refresh token turned into an access token at
/// the file's token endpoint, the request sent to the project's location with it.
#[tokio::test]
async fn vertex_answers_with_application_default_credentials() {
    let env = Env::new(vec![Turn::text("Hello from Vertex.")]).await;
    let adc = env.dir.path().join("adc.json");
    std::fs::write(
        &adc,
        json!({"type": "authorized_user", "client_id": "cid", "client_secret": "cs", "refresh_token": "rt-adc",
               "token_uri": format!("{}/oauth/token", env.server.url())})
        .to_string(),
    )
    .unwrap();
    env.server.accept_oauth_refresh(
        "rt-adc",
        IssuedTokens { access_token: "ya29.vertex".into(), refresh_token: None, expires_in: 3600 },
    );
    let out = output(vertex_command(&env, &adc, "us-central1")).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from Vertex.\n");
    let requests = env.server.requests();
    assert_eq!(requests[0].path, "/oauth/token");
    assert_eq!(
        requests[0].body,
        Value::from("grant_type=refresh_token&client_id=cid&client_secret=cs&refresh_token=rt-adc")
    );
    let call = &requests[1];
    assert_eq!(
        call.path,
        "/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent"
    );
    assert_eq!(call.header("authorization"), Some("Bearer ya29.vertex"));
    assert!(call.body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"].is_object());
}

/// Credentials that cannot be read fail the request with what is wrong with them, and rho
/// sends nothing to Vertex.
#[tokio::test]
async fn unreadable_application_default_credentials_are_named() {
    let env = Env::new(vec![Turn::text("never")]).await;
    let adc = env.dir.path().join("adc.json");
    std::fs::write(&adc, "{not json").unwrap();
    let out = output(vertex_command(&env, &adc, "global")).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{} is not JSON", adc.display())), "{stderr}");
    assert!(env.server.requests().is_empty());
}

/// `rho -p` asking a Vertex model (at the mock) with Application Default Credentials `adc`,
/// project `proj-1` and `location`, and no API key.
fn vertex_command(env: &Env, adc: &std::path::Path, location: &str) -> tokio::process::Command {
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["google-vertex"] = json!({"baseUrl": env.server.url()});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let mut command = rho(env, &["-p", "--model", "google-vertex/gemini-2.5-pro", "hi"]);
    command.env("GOOGLE_APPLICATION_CREDENTIALS", adc);
    command.env("GOOGLE_CLOUD_PROJECT", "proj-1");
    command.env("GOOGLE_CLOUD_LOCATION", location);
    command.env_remove("GOOGLE_CLOUD_API_KEY");
    command
}

/// A ChatGPT session reaches the Codex backend over its websocket (pi's default `transport:
/// auto`): the request after a tool runs continues the first response on the same socket with
/// only the tool's output. `"transport": "sse"` in settings.json sends both over the event
/// stream, whole.
#[tokio::test]
async fn a_chatgpt_session_continues_over_its_websocket() {
    let turns = || vec![Turn::tool_call("bash", json!({"command": "ls"})), Turn::text("One file.")];
    let env = Env::new(turns()).await;
    let login = json!({"openai-codex": {
        "type": "oauth", "access": chatgpt_token("acct-5"), "refresh": "rt", "expires": 4_102_444_800_000u64,
        "accountId": "acct-5"
    }});
    std::fs::write(env.agent_dir.join("auth.json"), login.to_string()).unwrap();
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["openai-codex"] = json!({"baseUrl": format!("{}/backend-api", env.server.url())});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    std::fs::write(env.cwd.join("only.txt"), "x").unwrap();

    let out = output(rho(&env, &["-p", "--model", "openai-codex/gpt-5.5", "what is here?"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "One file.\n");
    let requests = env.server.requests();
    let methods: Vec<&str> = requests.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, [rho_mock_llm::WEBSOCKET_METHOD; 2]);
    let (first, second) = (&requests[0].body, &requests[1].body);
    assert_eq!(first.get("previous_response_id"), None);
    assert_eq!(second["previous_response_id"], "resp_mock_1");
    let input = second["input"].as_array().unwrap();
    assert_eq!(input.len(), 1, "only the tool's output: {input:?}");
    assert_eq!(input[0]["type"], "function_call_output");
    assert!(input[0]["output"].as_str().unwrap().contains("only.txt"), "{input:?}");
    assert_eq!(first["prompt_cache_key"], second["prompt_cache_key"]);

    env.server.push_turns(turns());
    std::fs::write(env.agent_dir.join("settings.json"), json!({"transport": "sse"}).to_string()).unwrap();
    let out = output(rho(&env, &["-p", "--model", "openai-codex/gpt-5.5", "what is here?"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = env.server.requests();
    let methods: Vec<&str> = requests[2..].iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["POST", "POST"]);
    assert!(requests[3].body["input"].as_array().unwrap().len() > 1, "the whole conversation");
}

/// `rho login openrouter` (pi 1.6's "Sign in with OpenRouter"): the browser comes back to a
/// random path on a port of the system's choosing, with a code and no state; the code is
/// exchanged for a key, filed as pi files it (a login that never expires); then an OpenRouter
/// model answers with that key.
#[tokio::test]
async fn an_openrouter_sign_in_gets_a_key_and_the_key_is_used() {
    let env = Env::new(vec![Turn::text("Hello from OpenRouter.")]).await;
    env.server.accept_oauth_code(
        "or-code",
        IssuedTokens { access_token: "sk-or-v1-signed-in".into(), refresh_token: None, expires_in: 0 },
    );
    let mut command = rho(&env, &["login", "openrouter"]);
    command.env("RHO_OAUTH_TOKEN_URL_OPENROUTER", format!("{}/api/v1/auth/keys", env.server.url()));
    let mut child = command.spawn().unwrap();
    let _stdin = child.stdin.take();
    let (url, _stderr) = printed_url(&mut child, "https://openrouter.ai/auth?").await;
    assert_eq!(param(&url, "code_challenge_method"), "S256");
    let callback = param(&url, "callback_url").replace("%3A", ":").replace("%2F", "/");
    let rest = callback.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, path) = rest.split_once('/').unwrap();
    let port: u16 = port.parse().unwrap();
    assert!(path.starts_with("oauth/callback/") && path.len() > "oauth/callback/".len() + 20, "{path}");
    assert_eq!(get(port, "/oauth/callback/guess?code=or-code").await.0, 404, "only the random path answers");
    let (status, page) = get(port, &format!("/{path}?code=or-code")).await;
    assert_eq!(status, 200);
    assert!(page.contains("OpenRouter login complete"), "{page}");
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(status.success());

    let exchange = env.server.last_request().unwrap();
    assert_eq!(exchange.path, "/api/v1/auth/keys");
    assert_eq!(exchange.body["code"], "or-code");
    assert_eq!(exchange.body["code_challenge_method"], "S256");
    let verifier = exchange.body["code_verifier"].as_str().unwrap();
    assert_eq!(rho_coding_agent::login::pkce::challenge(verifier), param(&url, "code_challenge"));
    let login = read_auth(&env)["openrouter"].clone();
    assert_eq!(
        login,
        json!({"type": "oauth", "refresh": "", "access": "sk-or-v1-signed-in", "expires": 9_007_199_254_740_991_i64})
    );

    // The key answers for an OpenRouter model (moved to the mock).
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["openrouter"] = json!({"baseUrl": format!("{}/v1", env.server.url())});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let out = output(rho(&env, &["-p", "--model", "openrouter/openrouter/auto", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from OpenRouter.\n");
    let call = env.server.last_request().unwrap();
    assert_eq!(call.header("authorization"), Some("Bearer sk-or-v1-signed-in"));
}

/// `rho login kimi-coding` (pi 1.6's "Sign in with Kimi Code"): the device login at the server
/// pi's `KIMI_CODE_OAUTH_HOST` names (the mock), the tokens filed as pi files them; a Kimi Code
/// model answers with the access token, and once it has expired the refresh token gets a new one
/// at the same server.
#[tokio::test]
async fn a_kimi_code_device_login_is_made_used_and_refreshed() {
    let env = Env::new(vec![Turn::text("Hello from Kimi."), Turn::text("Again from Kimi.")]).await;
    env.server.accept_device_login(IssuedTokens {
        access_token: "kimi-access-1".into(),
        refresh_token: Some("kimi-refresh-1".into()),
        expires_in: 3600,
    });
    let url = env.server.url();
    let kimi = |args: &[&str]| {
        let mut command = rho(&env, args);
        command.env("KIMI_CODE_OAUTH_HOST", &url);
        command
    };
    let out = output(kimi(&["login", "kimi-coding"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("open https://login.example/device?user_code=DEVICE-CODE and enter the code DEVICE-CODE"),
        "{stderr}"
    );
    assert!(stderr.contains("Waiting for Kimi Code (subscription) to confirm the code..."), "{stderr}");
    let login = read_auth(&env)["kimi-coding"].clone();
    assert_eq!((login["access"].as_str(), login["refresh"].as_str()), (Some("kimi-access-1"), Some("kimi-refresh-1")));
    assert_eq!(login["type"], "oauth");
    let requests = env.server.requests();
    let polls = requests.iter().filter(|r| r.path == "/api/oauth/token").count();
    assert_eq!(polls, 2, "pending once, then the tokens");

    // The access token answers for a Kimi Code model (moved to the mock).
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["kimi-coding"] = json!({"baseUrl": format!("{url}/v1")});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let out = output(kimi(&["-p", "--model", "kimi-coding/kimi-for-coding", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from Kimi.\n");
    assert_eq!(env.server.last_request().unwrap().header("authorization"), Some("Bearer kimi-access-1"));

    // Expired: the refresh token gets a new access token, written back.
    let mut auth = read_auth(&env);
    auth["kimi-coding"]["expires"] = json!(1);
    std::fs::write(env.agent_dir.join("auth.json"), auth.to_string()).unwrap();
    env.server.accept_oauth_refresh(
        "kimi-refresh-1",
        IssuedTokens {
            access_token: "kimi-access-2".into(),
            refresh_token: Some("kimi-refresh-2".into()),
            expires_in: 3600,
        },
    );
    let out = output(kimi(&["-p", "--model", "kimi-coding/kimi-for-coding", "again"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(env.server.last_request().unwrap().header("authorization"), Some("Bearer kimi-access-2"));
    let login = read_auth(&env)["kimi-coding"].clone();
    assert_eq!((login["access"].as_str(), login["refresh"].as_str()), (Some("kimi-access-2"), Some("kimi-refresh-2")));
}

/// `rho login xai` (pi 1.6's "Sign in with SuperGrok or X Premium"): the device login at auth.x.ai
/// (moved to the mock) with pi's scope, the tokens filed with pi's five-minute margin; an xAI
/// model answers with the access token.
#[tokio::test]
async fn an_xai_device_login_is_made_and_used() {
    let env = Env::new(vec![Turn::text("Hello from Grok.")]).await;
    env.server.accept_device_login(IssuedTokens {
        access_token: "xai-access-1".into(),
        refresh_token: Some("xai-refresh-1".into()),
        expires_in: 3600,
    });
    let url = env.server.url();
    let xai = |args: &[&str]| {
        let mut command = rho(&env, args);
        command.env("RHO_OAUTH_XAI_URL", &url);
        command
    };
    let before = now_ms();
    let out = output(xai(&["login", "xai"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("enter the code DEVICE-CODE"), "{stderr}");
    let start = env.server.requests().into_iter().find(|r| r.path == "/oauth2/device/code").unwrap();
    let form = start.body.as_str().unwrap().to_owned();
    assert!(form.contains("scope=openid+profile+email+offline_access+grok-cli%3Aaccess+api%3Aaccess"), "{form}");
    assert!(form.contains("referrer=pi"), "{form}");
    let login = read_auth(&env)["xai"].clone();
    assert_eq!((login["access"].as_str(), login["refresh"].as_str()), (Some("xai-access-1"), Some("xai-refresh-1")));
    let expires = login["expires"].as_i64().unwrap();
    let lifetime = 3_600_000 - 5 * 60 * 1000;
    assert!((before + lifetime..=now_ms() + lifetime).contains(&expires), "{expires}");

    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["xai"] = json!({"baseUrl": format!("{url}/v1")});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let out = output(xai(&["-p", "--model", "xai/grok-4.7", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from Grok.\n");
    assert_eq!(env.server.last_request().unwrap().header("authorization"), Some("Bearer xai-access-1"));
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// A code OpenRouter refuses ends the sign-in with OpenRouter's reason and a non-zero exit, and
/// auth.json is left as it was.
#[tokio::test]
async fn a_refused_openrouter_code_fails_and_stores_nothing() {
    let env = Env::new(vec![]).await;
    let mut command = rho(&env, &["login", "openrouter"]);
    command.env("RHO_OAUTH_TOKEN_URL_OPENROUTER", format!("{}/api/v1/auth/keys", env.server.url()));
    let mut child = command.spawn().unwrap();
    let _stdin = child.stdin.take();
    let (url, mut stderr) = printed_url(&mut child, "https://openrouter.ai/auth?").await;
    let callback = param(&url, "callback_url").replace("%3A", ":").replace("%2F", "/");
    let (port, path) = callback.strip_prefix("http://127.0.0.1:").unwrap().split_once('/').unwrap();
    assert_eq!(get(port.parse().unwrap(), &format!("/{path}?code=never-issued")).await.0, 200);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(!status.success());
    let mut rest = String::new();
    while let Ok(Some(line)) = stderr.next_line().await {
        rest.push_str(&line);
        rest.push('\n');
    }
    assert!(rest.contains("OpenRouter sign-in failed") && rest.contains("Invalid code"), "{rest}");
    assert!(!env.agent_dir.join("auth.json").exists(), "nothing stored");
}

/// `rho login openai` (pi 1.6's Sign in with ChatGPT): the authorize URL names this
/// installation (a device id made once, in the global settings), the callback names the client
/// the server issued, which the exchange and the refresh use with the resource; the login is
/// stored as pi stores it and its token is sent to the OpenAI API as the key.
#[tokio::test]
async fn a_sign_in_with_chatgpt_is_made_used_and_refreshed() {
    let env =
        Env::with_api(vec![Turn::text("Hello from OpenAI."), Turn::text("Again.")], "openai-responses", false).await;
    env.server.accept_oauth_code(
        "chatgpt-code",
        IssuedTokens { access_token: "direct-1".into(), refresh_token: Some("rt-direct".into()), expires_in: 3600 },
    );
    let mut command = rho(&env, &["login", "openai"]);
    command.env("RHO_OAUTH_CALLBACK_PORT", "0");
    command.env("RHO_OAUTH_TOKEN_URL_OPENAI", format!("{}/oauth/token", env.server.url()));
    let mut child = command.spawn().unwrap();
    let _stdin = child.stdin.take();
    let (url, _stderr) = printed_url(&mut child, "https://auth.openai.com/api/accounts/authorize?").await;
    assert_eq!(param(&url, "client_id"), "dynamic_agent_client");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("settings.json")).unwrap()).unwrap();
    let device = settings["deviceId"].as_str().unwrap().to_owned();
    assert_eq!(param(&url, "ext_agent_host_id"), format!("urn%3Auuid%3A{device}"));
    let redirect = param(&url, "redirect_uri").replace("%3A", ":").replace("%2F", "/");
    let port: u16 =
        redirect.strip_prefix("http://127.0.0.1:").unwrap().strip_suffix("/auth/callback").unwrap().parse().unwrap();
    let state = param(&url, "state").to_owned();
    let (status, page) =
        get(port, &format!("/auth/callback?code=chatgpt-code&state={state}&client_id=issued-client")).await;
    assert_eq!(status, 200, "{page}");
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(status.success());
    let exchange = env.server.last_request().unwrap().body.as_str().unwrap().to_owned();
    assert!(
        exchange.starts_with("grant_type=authorization_code&client_id=issued-client&code=chatgpt-code&"),
        "{exchange}"
    );
    assert!(exchange.ends_with("&resource=https%3A%2F%2Fapi.openai.com%2Fv1"), "{exchange}");
    let login = read_auth(&env)["openai"].clone();
    assert_eq!(
        (&login["type"], &login["access"], &login["clientId"]),
        (&json!("oauth"), &json!("direct-1"), &json!("issued-client"))
    );
    assert!(login["scopes"].as_array().unwrap().contains(&json!("chatgpt.tokens.use.direct")), "{login}");

    // The token is the OpenAI API's key (the provider moved to the mock).
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["openai"] = json!({"baseUrl": format!("{}/v1", env.server.url())});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let out = output(rho(&env, &["-p", "--model", "openai/gpt-4.1", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from OpenAI.\n");
    assert_eq!(env.server.last_request().unwrap().header("authorization"), Some("Bearer direct-1"));

    // Expired: refreshed for the issued client and the resource, and written back.
    let mut auth = read_auth(&env);
    auth["openai"]["expires"] = json!(0);
    std::fs::write(env.agent_dir.join("auth.json"), auth.to_string()).unwrap();
    env.server.accept_oauth_refresh(
        "rt-direct",
        IssuedTokens { access_token: "direct-2".into(), refresh_token: Some("rt-2".into()), expires_in: 3600 },
    );
    let mut again = rho(&env, &["-p", "--model", "openai/gpt-4.1", "again"]);
    again.env("RHO_OAUTH_TOKEN_URL_OPENAI", format!("{}/oauth/token", env.server.url()));
    let out = output(again).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = env.server.requests();
    let refresh = requests.iter().rfind(|r| r.path == "/oauth/token").unwrap().body.as_str().unwrap().to_owned();
    assert_eq!(
        refresh,
        "grant_type=refresh_token&client_id=issued-client&refresh_token=rt-direct&resource=https%3A%2F%2Fapi.openai.com%2Fv1"
    );
    assert_eq!(requests.last().unwrap().header("authorization"), Some("Bearer direct-2"));
    assert_eq!(read_auth(&env)["openai"]["refresh"], "rt-2");
}

/// `rho login meta` (pi 1.6's "Sign in with Meta"): the device login at auth.meta.com (moved to
/// the mock) gives an identity token, which mints the Model API key; the key answers for a Meta
/// model, and a stale one is minted again with the identity token.
#[tokio::test]
async fn a_meta_sign_in_mints_a_key_that_is_used_and_minted_again() {
    let env =
        Env::with_api(vec![Turn::text("Hello from Muse."), Turn::text("Again.")], "openai-responses", false).await;
    env.server.accept_device_login(IssuedTokens {
        access_token: "identity-1".into(),
        refresh_token: None,
        expires_in: 3600,
    });
    let url = env.server.url();
    let meta = |args: &[&str]| {
        let mut command = rho(&env, args);
        command.env("RHO_OAUTH_META_URL", &url).env("RHO_OAUTH_META_KEY_URL", format!("{url}/muse-code/key"));
        command
    };
    let out = output(meta(&["login", "meta"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("enter the code DEVICE-CODE"), "{stderr}");
    let login = read_auth(&env)["meta"].clone();
    assert_eq!((login["access"].as_str(), login["refresh"].as_str()), (Some("mk-identity-1"), Some("identity-1")));
    let mint = env.server.requests().into_iter().find(|r| r.path == "/muse-code/key").unwrap();
    assert_eq!(mint.header("authorization"), Some("Bearer identity-1"));
    assert_eq!(mint.header("x-api-version"), Some("1.0.0"));

    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["meta"] = json!({"baseUrl": format!("{url}/v1")});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let out = output(meta(&["-p", "--model", "meta/muse-spark-1.2", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from Muse.\n");
    assert_eq!(env.server.last_request().unwrap().header("authorization"), Some("Bearer mk-identity-1"));

    // Stale: minted again with the identity token. A revoked identity says to sign in again.
    let mut auth = read_auth(&env);
    auth["meta"]["expires"] = json!(0);
    auth["meta"]["refresh"] = json!("identity-2");
    std::fs::write(env.agent_dir.join("auth.json"), auth.to_string()).unwrap();
    let out = output(meta(&["-p", "--model", "meta/muse-spark-1.2", "again"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(env.server.last_request().unwrap().header("authorization"), Some("Bearer mk-identity-2"));
    auth["meta"]["refresh"] = json!("revoked");
    std::fs::write(env.agent_dir.join("auth.json"), auth.to_string()).unwrap();
    let out = output(meta(&["-p", "--model", "meta/muse-spark-1.2", "once more"])).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sign in again with `rho login meta`"));
}

/// `rho login radius` (pi 1.6's device sign-in to its gateway; `PI_RADIUS_GATEWAY` moves it to
/// the mock): the device login with pi's client and scope, the tokens filed a minute early; a
/// Radius model answers with the access token over pi's own protocol.
#[tokio::test]
async fn a_radius_device_login_is_made_and_used() {
    let env = Env::with_api(vec![Turn::text("Hello from Radius.")], "pi-messages", false).await;
    env.server.accept_device_login(IssuedTokens {
        access_token: "radius-access-1".into(),
        refresh_token: Some("radius-refresh-1".into()),
        expires_in: 3600,
    });
    let url = env.server.url();
    let radius = |args: &[&str]| {
        let mut command = rho(&env, args);
        command.env("PI_RADIUS_GATEWAY", &url);
        command
    };
    let before = now_ms();
    let out = output(radius(&["login", "radius"])).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("enter the code DEVICE-CODE"), "{stderr}");
    let start = env.server.requests().into_iter().find(|r| r.path == "/v1/oauth/device").unwrap();
    let form = start.body.as_str().unwrap().to_owned();
    assert!(form.contains("client_id=pi-gateway") && form.contains("scope=gateway+offline_access"), "{form}");
    let login = read_auth(&env)["radius"].clone();
    assert_eq!(
        (login["access"].as_str(), login["refresh"].as_str()),
        (Some("radius-access-1"), Some("radius-refresh-1"))
    );
    let expires = login["expires"].as_i64().unwrap();
    assert!((before + 3_540_000..=now_ms() + 3_540_000).contains(&expires), "{expires}");

    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("models.json")).unwrap()).unwrap();
    models["providers"]["radius"] = json!({"baseUrl": url});
    std::fs::write(env.agent_dir.join("models.json"), models.to_string()).unwrap();
    let out = output(radius(&["-p", "--model", "radius/balanced", "hi"])).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Hello from Radius.\n");
    assert_eq!(env.server.last_request().unwrap().header("authorization"), Some("Bearer radius-access-1"));
}

/// A Sign in with ChatGPT callback that names no issued client cannot be exchanged: the login
/// fails with the reason, and nothing is written.
#[tokio::test]
async fn a_chatgpt_callback_without_its_client_fails_and_stores_nothing() {
    let env = Env::new(vec![]).await;
    let mut command = rho(&env, &["login", "openai"]);
    command.env("RHO_OAUTH_CALLBACK_PORT", "0");
    command.env("RHO_OAUTH_TOKEN_URL_OPENAI", format!("{}/oauth/token", env.server.url()));
    let mut child = command.spawn().unwrap();
    let _stdin = child.stdin.take();
    let (url, mut stderr) = printed_url(&mut child, "https://auth.openai.com/api/accounts/authorize?").await;
    let redirect = param(&url, "redirect_uri").replace("%3A", ":").replace("%2F", "/");
    let port: u16 =
        redirect.strip_prefix("http://127.0.0.1:").unwrap().strip_suffix("/auth/callback").unwrap().parse().unwrap();
    let state = param(&url, "state").to_owned();
    get(port, &format!("/auth/callback?code=chatgpt-code&state={state}")).await;
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(!status.success());
    let mut said = String::new();
    while let Ok(Some(line)) = stderr.next_line().await {
        said.push_str(&line);
    }
    assert!(said.contains("the callback names no issued client id"), "{said}");
    assert!(!env.agent_dir.join("auth.json").exists() || read_auth(&env).get("openai").is_none());
    assert!(env.server.requests().iter().all(|r| r.path != "/oauth/token"), "no exchange was tried");
}
