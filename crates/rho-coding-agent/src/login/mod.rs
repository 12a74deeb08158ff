//! `rho login <provider>` and `rho logout <provider>`: the subscription logins pi's `/login`
//! makes, stored in the agent directory's `auth.json` in pi's shape (so pi and rho share them).
//!
//! Anthropic (Claude Pro/Max) and ChatGPT (Plus/Pro, its Codex models) are logged in with pi's
//! flows: the authorize URL is printed (and opened in the desktop's browser when rho runs at a
//! terminal), the browser comes back to a loopback callback (port 53692 for Anthropic, 1455 for
//! ChatGPT), or the user pastes what the page shows (`code#state`, or the address it ended on);
//! the code is exchanged at the token endpoint (`RHO_OAUTH_TOKEN_URL_ANTHROPIC` and
//! `RHO_OAUTH_TOKEN_URL_OPENAI_CODEX` move them, for tests and proxies). The login rho cannot use
//! yet (GitHub Copilot) is refused with the reason, before any browser is involved.

mod callback;
pub mod pkce;

use std::io::BufRead;
use std::path::Path;
use std::time::Duration;

use rho_ai::oauth::{self, Removed, anthropic, openai_codex, providers};
use tokio::net::TcpListener;

/// How long a login waits for the browser or a paste.
const LOGIN_WAIT: Duration = Duration::from_secs(10 * 60);

/// `rho login` or `rho logout`, with the provider named (if it was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountCommand {
    Login(Option<String>),
    Logout(Option<String>),
}

/// Runs `command` against `auth_file`; the process's exit code.
pub async fn run(command: AccountCommand, auth_file: &Path) -> i32 {
    let result = match command {
        AccountCommand::Login(provider) => login(provider.as_deref(), auth_file).await,
        AccountCommand::Logout(provider) => logout(provider.as_deref(), auth_file),
    };
    match result {
        Ok(message) => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{message}").and_then(|()| stdout.flush());
            0
        }
        Err((code, message)) => {
            eprintln!("Error: {message}");
            code
        }
    }
}

type Outcome = Result<String, (i32, String)>;

fn usage(verb: &str) -> String {
    let mut text = format!("name the provider: rho {verb} <provider>\n\nLogins:");
    for provider in providers::PROVIDERS {
        let note = match provider.unusable {
            None => String::new(),
            Some(_) => " (rho cannot use it yet)".to_owned(),
        };
        text.push_str(&format!("\n  {:<16}{}{note}", provider.id, provider.name));
    }
    text
}

async fn login(provider: Option<&str>, auth_file: &Path) -> Outcome {
    let Some(provider) = provider else {
        return Err((2, usage("login")));
    };
    if provider == "google" || providers::retired(provider).is_some() {
        return Err((
            1,
            format!(
                "rho has no Google login (pi 0.73.1 has none either): set GEMINI_API_KEY, or add a \
                 \"google\" api_key entry to {}",
                auth_file.display()
            ),
        ));
    }
    let spec = match oauth::usable(provider, auth_file) {
        Ok(spec) => spec,
        Err(e @ oauth::LoginError::Unusable { .. }) if providers::find(provider).is_some() => {
            return Err((1, format!("{e} No login was started.")));
        }
        Err(_) => return Err((2, format!("unknown login provider {provider:?}\n\n{}", usage("login")))),
    };
    let creds = match spec.id {
        "anthropic" => login_anthropic().await?,
        "openai-codex" => login_openai_codex().await?,
        other => return Err((1, format!("rho has no login flow for {other}"))),
    };
    oauth::save_login(auth_file, spec.id, &creds).map_err(|e| (1, e.to_string()))?;
    Ok(format!("Logged in to {}. Credentials saved in {}", spec.name, auth_file.display()))
}

async fn login_anthropic() -> Result<oauth::OAuthCredentials, (i32, String)> {
    let pkce = pkce::Pkce::new().map_err(|e| (1, e))?;
    let port = callback_port(anthropic::CALLBACK_PORT);
    let listener = TcpListener::bind(("127.0.0.1", port)).await;
    let port = listener.as_ref().ok().and_then(|l| l.local_addr().ok()).map_or(port, |a| a.port());
    // pi's flow: the verifier is the state too.
    let flow = anthropic::Flow { verifier: pkce.verifier.clone(), redirect_uri: anthropic::redirect_uri(port) };
    let state = flow.verifier.clone();
    let url = anthropic::authorize_url(&pkce.challenge, &state, &flow.redirect_uri);
    eprintln!("Open this URL in a browser to log in to {}:\n\n{url}\n", providers::ANTHROPIC.name);
    open_browser(&url);
    match &listener {
        Ok(_) => eprintln!(
            "Waiting for the browser to come back to {}. If the browser is on another machine, paste the \
             code the page shows (code#state) or the address it ends on here:",
            flow.redirect_uri
        ),
        Err(e) => eprintln!(
            "(rho cannot listen on 127.0.0.1:{port}: {e}.) Paste the code the page shows (code#state) or the \
             address it ends on here:"
        ),
    }
    let code = wait_for_code(listener.ok(), anthropic::CALLBACK_PATH, &state, "Anthropic").await?;
    eprintln!("Exchanging the authorization code for tokens...");
    let env = rho_ai::auth::process_env();
    anthropic::exchange(env.as_ref(), &flow, &code, &state).map_err(|e| (1, e.to_string()))
}

/// ChatGPT's login: its own state (not the verifier), the callback at `/auth/callback` on 1455.
async fn login_openai_codex() -> Result<oauth::OAuthCredentials, (i32, String)> {
    let pkce = pkce::Pkce::new().map_err(|e| (1, e))?;
    let state = pkce::Pkce::new().map_err(|e| (1, e))?.verifier;
    let port = callback_port(openai_codex::CALLBACK_PORT);
    let listener = TcpListener::bind(("127.0.0.1", port)).await;
    let port = listener.as_ref().ok().and_then(|l| l.local_addr().ok()).map_or(port, |a| a.port());
    let redirect = openai_codex::redirect_uri(port);
    let url = openai_codex::authorize_url(&pkce.challenge, &state, &redirect);
    eprintln!("Open this URL in a browser to log in to {}:\n\n{url}\n", providers::OPENAI_CODEX.name);
    open_browser(&url);
    announce_wait(listener.as_ref().err(), port, &redirect);
    let code = wait_for_code(listener.ok(), openai_codex::CALLBACK_PATH, &state, "ChatGPT").await?;
    eprintln!("Exchanging the authorization code for tokens...");
    let env = rho_ai::auth::process_env();
    openai_codex::exchange(env.as_ref(), &code, &pkce.verifier, &redirect).map_err(|e| (1, e.to_string()))
}

/// The callback's port: `RHO_OAUTH_CALLBACK_PORT` when set (tests; `0` is any free port), else
/// the provider's registered one.
fn callback_port(registered: u16) -> u16 {
    std::env::var(anthropic::CALLBACK_PORT_ENV).ok().and_then(|p| p.parse::<u16>().ok()).unwrap_or(registered)
}

/// Says where the browser comes back to, or that only a paste can answer.
fn announce_wait(listen_error: Option<&std::io::Error>, port: u16, redirect: &str) {
    match listen_error {
        None => eprintln!(
            "Waiting for the browser to come back to {redirect}. If the browser is on another machine, paste the \
             address it ends on (or the code the page shows) here:"
        ),
        Some(e) => eprintln!(
            "(rho cannot listen on 127.0.0.1:{port}: {e}.) Paste the address the browser ends on (or the code the \
             page shows) here:"
        ),
    }
}

/// Opens `url` in the desktop's browser, as pi's login does, when a person is at the terminal;
/// a failure is no matter (the URL is printed).
fn open_browser(url: &str) {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
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

/// The code from the callback or from a pasted line, whichever comes first; a paste with a
/// state that is not ours is refused. Without a listener, only a paste can answer.
async fn wait_for_code(
    listener: Option<TcpListener>,
    path: &'static str,
    state: &str,
    provider: &'static str,
) -> Result<String, (i32, String)> {
    let (tx, mut pasted) = tokio::sync::mpsc::channel::<Option<String>>(1);
    std::thread::Builder::new()
        .name("rho-login-stdin".into())
        .spawn(move || {
            let mut line = String::new();
            let read = std::io::stdin().lock().read_line(&mut line);
            let _ = tx.blocking_send(read.ok().filter(|n| *n > 0).map(|_| line));
        })
        .map_err(|e| (1, format!("cannot read stdin: {e}")))?;
    let has_listener = listener.is_some();
    let browser = async move {
        match listener {
            Some(listener) => Some(callback::wait_for_code(listener, path, state.to_owned(), provider).await),
            None => std::future::pending().await,
        }
    };
    tokio::pin!(browser);
    let deadline = tokio::time::sleep(LOGIN_WAIT);
    tokio::pin!(deadline);
    let mut stdin_open = true;
    loop {
        tokio::select! {
            Some(code) = &mut browser => return Ok(code),
            line = pasted.recv(), if stdin_open => match line.flatten() {
                Some(line) => return code_from_paste(&line, state),
                None if has_listener => stdin_open = false,
                None => return Err((1, "no authorization code was pasted (stdin ended)".to_owned())),
            },
            () = &mut deadline => return Err((1, format!("the login timed out after {} minutes", LOGIN_WAIT.as_secs() / 60))),
        }
    }
}

fn code_from_paste(line: &str, state: &str) -> Result<String, (i32, String)> {
    let answer = anthropic::parse_answer(line);
    if answer.state.as_deref().is_some_and(|s| s != state) {
        return Err((1, "the pasted code is from another login (its state does not match): start again".to_owned()));
    }
    answer.code.ok_or_else(|| (1, "no authorization code in what was pasted".to_owned()))
}

fn logout(provider: Option<&str>, auth_file: &Path) -> Outcome {
    let Some(provider) = provider else {
        return Err((2, usage("logout")));
    };
    match oauth::remove_login(auth_file, provider).map_err(|e| (1, e.to_string()))? {
        Removed::Login => Ok(format!("Logged out of {provider}: its login is removed from {}", auth_file.display())),
        Removed::Nothing => Err((1, format!("there is no login for {provider} in {}", auth_file.display()))),
        Removed::ApiKey => Err((
            1,
            format!(
                "{} holds an API key for {provider}, not a login: nothing was removed (edit the file to remove a key)",
                auth_file.display()
            ),
        )),
    }
}
