//! One subscription login, whoever shows it: the authorize URL built for the provider, a
//! loopback callback listening where the provider sends the browser back, and the code taken
//! from the callback or from what the person pastes (the address the browser ended on, or the
//! code the page shows), whichever comes first; then exchanged at the token endpoint. The CLI
//! (`rho login`) shows it on stderr and reads the paste from stdin; the interactive mode shows
//! it in the history and asks for the paste in a dialog.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use rho_ai::oauth::{
    self, OAuthProvider, anthropic, device_code, github_copilot, kimi_coding, meta, openai_chatgpt, openai_codex,
    openrouter, providers, radius, xai,
};
use tokio::net::TcpListener;

use super::{callback, pkce};

/// How long a login waits for the browser or a paste.
const LOGIN_WAIT: Duration = Duration::from_secs(10 * 60);

/// A pasted line, or `None` when there will be none (stdin ended, the dialog was dismissed).
pub type Paste = Pin<Box<dyn Future<Output = Option<String>> + Send>>;

/// What the person is to do: open `url`; the browser comes back to `callback` (`None`: rho could
/// not listen, only a paste can answer, `problem` says why). A device login (GitHub's) has a
/// `user_code` to enter at `url` instead, and takes no paste.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub provider: &'static str,
    pub url: String,
    pub callback: Option<String>,
    pub problem: Option<String>,
    pub user_code: Option<String>,
}

/// A browser login's provider-specific parts.
struct Spec {
    port: u16,
    path: &'static str,
    /// How the page names the provider once the browser is back.
    short_name: &'static str,
    /// pi's Anthropic flow uses the PKCE verifier as the state too; ChatGPT's has its own.
    verifier_is_state: bool,
    redirect_uri: fn(u16) -> String,
    authorize_url: fn(&str, &str, &str) -> String,
}

fn spec(provider: &OAuthProvider) -> Option<Spec> {
    match provider.id {
        "anthropic" => Some(Spec {
            port: anthropic::CALLBACK_PORT,
            path: anthropic::CALLBACK_PATH,
            short_name: "Anthropic",
            verifier_is_state: true,
            redirect_uri: anthropic::redirect_uri,
            authorize_url: anthropic::authorize_url,
        }),
        "openai-codex" => Some(Spec {
            port: openai_codex::CALLBACK_PORT,
            path: openai_codex::CALLBACK_PATH,
            short_name: "ChatGPT",
            verifier_is_state: false,
            redirect_uri: openai_codex::redirect_uri,
            authorize_url: openai_codex::authorize_url,
        }),
        _ => None,
    }
}

/// Whether rho has a login flow for `provider`.
pub fn has_flow(provider: &OAuthProvider) -> bool {
    provider.unusable.is_none()
        && (spec(provider).is_some()
            || [
                providers::GITHUB_COPILOT.id,
                providers::OPENROUTER.id,
                providers::OPENAI_CHATGPT.id,
                providers::META.id,
            ]
            .contains(&provider.id)
            || device_login_of(provider).is_some())
}

/// Runs `provider`'s login: `show` is told what to open, `paste` may answer instead of the
/// browser; the credentials, or what went wrong.
pub async fn run(
    provider: &'static OAuthProvider,
    show: impl FnOnce(Prompt),
    paste: Paste,
) -> Result<oauth::OAuthCredentials, String> {
    if provider.id == providers::GITHUB_COPILOT.id {
        return device_login(provider, show).await;
    }
    if provider.id == providers::OPENROUTER.id {
        return openrouter_login(provider, show, paste).await;
    }
    if provider.id == providers::OPENAI_CHATGPT.id {
        return chatgpt_login(provider, show, paste).await;
    }
    if provider.id == providers::META.id {
        return meta_login(show).await;
    }
    if let Some(login) = device_login_of(provider) {
        return standard_device_login(login, show).await;
    }
    let spec = spec(provider).ok_or_else(|| format!("rho has no login flow for {}", provider.id))?;
    let pkce = pkce::Pkce::new()?;
    let state = if spec.verifier_is_state { pkce.verifier.clone() } else { pkce::Pkce::new()?.verifier };
    let port =
        std::env::var(anthropic::CALLBACK_PORT_ENV).ok().and_then(|p| p.parse::<u16>().ok()).unwrap_or(spec.port);
    let listener = TcpListener::bind(("127.0.0.1", port)).await;
    let port = listener.as_ref().ok().and_then(|l| l.local_addr().ok()).map_or(port, |a| a.port());
    let redirect = (spec.redirect_uri)(port);
    let url = (spec.authorize_url)(&pkce.challenge, &state, &redirect);
    show(Prompt {
        provider: provider.name,
        url,
        callback: listener.is_ok().then(|| redirect.clone()),
        problem: listener.as_ref().err().map(|e| format!("rho cannot listen on 127.0.0.1:{port}: {e}")),
        user_code: None,
    });
    let code = wait_for_code(listener.ok(), spec.path.to_owned(), Some(&state), spec.short_name, paste).await?.code;
    let env = rho_ai::auth::process_env();
    let exchanged = match provider.id {
        "anthropic" => {
            let flow = anthropic::Flow { verifier: pkce.verifier.clone(), redirect_uri: redirect };
            anthropic::exchange(env.as_ref(), &flow, &code, &state)
        }
        _ => openai_codex::exchange(env.as_ref(), &code, &pkce.verifier, &redirect),
    };
    exchanged.map_err(|e| e.to_string())
}

/// Sign in with ChatGPT (the `openai` provider): pi 1.6's flow, for this installation's device
/// id; the callback names the client the server issued, which the code is exchanged for.
async fn chatgpt_login(
    provider: &'static OAuthProvider,
    show: impl FnOnce(Prompt),
    paste: Paste,
) -> Result<oauth::OAuthCredentials, String> {
    let device_id = device_id()?;
    let pkce = pkce::Pkce::new()?;
    let (state, nonce) = (pkce::Pkce::new()?.verifier, pkce::Pkce::new()?.verifier);
    let port = std::env::var(anthropic::CALLBACK_PORT_ENV)
        .ok()
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or(openai_chatgpt::CALLBACK_PORT);
    let listener = TcpListener::bind(("127.0.0.1", port)).await;
    let port = listener.as_ref().ok().and_then(|l| l.local_addr().ok()).map_or(port, |a| a.port());
    let redirect = openai_chatgpt::redirect_uri(port);
    show(Prompt {
        provider: provider.name,
        url: openai_chatgpt::authorize_url(&pkce.challenge, &state, &nonce, &redirect, &device_id),
        callback: listener.is_ok().then(|| redirect.clone()),
        problem: listener.as_ref().err().map(|e| {
            format!("rho cannot listen on 127.0.0.1:{port} (another login or the Codex CLI may hold it): {e}")
        }),
        user_code: None,
    });
    let path = openai_chatgpt::CALLBACK_PATH.to_owned();
    let answer = wait_for_code(listener.ok(), path, Some(&state), "ChatGPT", paste).await?;
    let client_id = answer
        .client_id
        .ok_or("the callback names no issued client id: paste the whole address the browser ended on")?;
    let env = rho_ai::auth::process_env();
    openai_chatgpt::exchange(env.as_ref(), &answer.code, &pkce.verifier, &client_id, &redirect)
        .map_err(|e| e.to_string())
}

/// This installation's id (a UUID), as pi keeps it: `deviceId` in the global settings, made
/// and saved the first time.
fn device_id() -> Result<String, String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let paths = crate::config::ConfigPaths::from_env(cwd);
    let (mut settings, _) = crate::config::Settings::load(&paths, &crate::config::settings::LoadOptions::default());
    if let Some(id) = settings.get_string("deviceId").filter(|id| uuid::Uuid::parse_str(id).is_ok()) {
        return Ok(id);
    }
    let id = uuid::Uuid::new_v4().to_string();
    settings.set_global("deviceId", serde_json::Value::String(id.clone())).map_err(|e| e.to_string())?;
    Ok(id)
}

/// OpenRouter's sign-in: a callback on a port of the system's choosing under a random path (it
/// sends no state), the code exchanged for a key.
async fn openrouter_login(
    provider: &'static OAuthProvider,
    show: impl FnOnce(Prompt),
    paste: Paste,
) -> Result<oauth::OAuthCredentials, String> {
    let pkce = pkce::Pkce::new()?;
    let path = format!("/oauth/callback/{}", pkce::Pkce::new()?.verifier);
    let listener = TcpListener::bind(("127.0.0.1", 0)).await;
    let port = listener.as_ref().ok().and_then(|l| l.local_addr().ok()).map_or(0, |a| a.port());
    let redirect = format!("http://127.0.0.1:{port}{path}");
    show(Prompt {
        provider: provider.name,
        url: openrouter::authorize_url(&pkce.challenge, &redirect),
        callback: listener.is_ok().then(|| redirect.clone()),
        problem: listener.as_ref().err().map(|e| format!("rho cannot listen on 127.0.0.1: {e}")),
        user_code: None,
    });
    let code = wait_for_code(listener.ok(), path, None, "OpenRouter", paste).await?.code;
    let env = rho_ai::auth::process_env();
    openrouter::exchange(env.as_ref(), &code, &pkce.verifier).map_err(|e| e.to_string())
}

/// The standard device login of `provider` (Kimi Code's, xAI's), if it has one.
fn device_login_of(provider: &OAuthProvider) -> Option<&'static device_code::DeviceLogin> {
    [&kimi_coding::LOGIN, &xai::LOGIN, &radius::LOGIN].into_iter().find(|login| login.provider.id == provider.id)
}

/// A standard device login: the address (with the code in it, where the server gives one) and
/// the code shown, the tokens polled for.
async fn standard_device_login(
    login: &'static device_code::DeviceLogin,
    show: impl FnOnce(Prompt),
) -> Result<oauth::OAuthCredentials, String> {
    let answer = device_answer(login, show).await?;
    device_code::credentials(login, &answer)
}

/// The device code asked for and shown, then the token endpoint's answer once the person
/// confirmed it.
async fn device_answer(
    login: &'static device_code::DeviceLogin,
    show: impl FnOnce(Prompt),
) -> Result<serde_json::Value, String> {
    let env = |name: &str| std::env::var(name).ok();
    let device = device_code::start(login, &env).await?;
    show(Prompt {
        provider: login.provider.name,
        url: device.verification_uri.clone(),
        callback: None,
        problem: None,
        user_code: Some(device.user_code.clone()),
    });
    tokio::time::timeout(LOGIN_WAIT, device_code::wait_for_answer(login, &env, &device))
        .await
        .map_err(|_| format!("the login timed out after {} minutes", LOGIN_WAIT.as_secs() / 60))?
}

/// Meta's sign-in: the device login gives an identity token, which mints the Model API key.
async fn meta_login(show: impl FnOnce(Prompt)) -> Result<oauth::OAuthCredentials, String> {
    let answer = device_answer(&meta::LOGIN, show).await?;
    let identity = answer.get("access_token").and_then(serde_json::Value::as_str).unwrap_or_default();
    meta::mint(&|name| std::env::var(name).ok(), identity)
}

/// GitHub's device flow: the code to enter shown, GitHub polled for the token, the token
/// exchanged for a Copilot token, the catalogue's models enabled for the account.
async fn device_login(
    provider: &'static OAuthProvider,
    show: impl FnOnce(Prompt),
) -> Result<oauth::OAuthCredentials, String> {
    let env = |name: &str| std::env::var(name).ok();
    let device = github_copilot::start(&env).await?;
    show(Prompt {
        provider: provider.name,
        url: device.verification_uri.clone(),
        callback: None,
        problem: None,
        user_code: Some(device.user_code.clone()),
    });
    let github_token = tokio::time::timeout(LOGIN_WAIT, github_copilot::wait_for_token(&env, &device))
        .await
        .map_err(|_| format!("the login timed out after {} minutes", LOGIN_WAIT.as_secs() / 60))??;
    let creds = github_copilot::exchange(&env, &github_token).map_err(|e| e.to_string())?;
    github_copilot::enable_catalogue_models(&creds.access).await;
    Ok(creds)
}

/// What the browser came back with (from the callback or from a pasted line, whichever comes
/// first); a paste with a state that is not ours is refused. Without a listener, only a paste
/// can answer.
async fn wait_for_code(
    listener: Option<TcpListener>,
    path: String,
    state: Option<&str>,
    short_name: &'static str,
    paste: Paste,
) -> Result<Answer, String> {
    let has_listener = listener.is_some();
    let browser = async move {
        match listener {
            Some(listener) => callback::wait_for_code(listener, path, state.map(str::to_owned), short_name).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(browser);
    let mut paste = Some(paste);
    let deadline = tokio::time::sleep(LOGIN_WAIT);
    tokio::pin!(deadline);
    loop {
        let pasted = async {
            match paste.as_mut() {
                Some(p) => p.await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            answer = &mut browser => return Answer::of(answer).ok_or_else(|| "no authorization code".to_owned()),
            line = pasted => match line {
                Some(line) => return code_from_paste(&line, state),
                None if has_listener => paste = None,
                None => return Err("no authorization code was pasted".to_owned()),
            },
            () = &mut deadline => return Err(format!("the login timed out after {} minutes", LOGIN_WAIT.as_secs() / 60)),
        }
    }
}

/// A login's code, and the client id the server issued with it (Sign in with ChatGPT's).
struct Answer {
    code: String,
    client_id: Option<String>,
}

impl Answer {
    fn of(answer: oauth::answer::CodeAndState) -> Option<Self> {
        Some(Self { code: answer.code?, client_id: answer.client_id })
    }
}

fn code_from_paste(line: &str, state: Option<&str>) -> Result<Answer, String> {
    let answer = oauth::answer::parse_answer(line);
    if let Some(state) = state
        && answer.state.as_deref().is_some_and(|s| s != state)
    {
        return Err("the pasted code is from another login (its state does not match): start again".to_owned());
    }
    Answer::of(answer).ok_or_else(|| "no authorization code in what was pasted".to_owned())
}

/// Opens `url` in the desktop's browser, as pi's login does; a failure is no matter (the URL is
/// shown). Without a desktop (no display on Linux: SSH, a container) nothing is started, so no
/// text browser takes the terminal over.
pub fn open_browser(url: &str) {
    let desktop = cfg!(target_os = "macos")
        || ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
    if !desktop {
        return;
    }
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        // Reaped in the background: the opener returns at once, the login goes on.
        std::thread::spawn(move || child.wait());
    }
}
