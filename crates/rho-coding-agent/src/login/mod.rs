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

pub mod auth_command;
mod callback;
pub mod flow;
pub mod pkce;

use rho_ai::oauth::{self, Removed, providers};
use std::io::BufRead;
use std::path::Path;

/// `rho login` or `rho logout`, with the provider named (if it was).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountCommand {
    Login(Option<String>),
    Logout(Option<String>),
}

/// Runs `command` against `auth_file`; the process's exit code.
pub async fn run(command: AccountCommand, auth_file: &Path) -> i32 {
    let result = match command {
        AccountCommand::Login(provider) => login(provider.as_deref(), auth_file, true).await,
        AccountCommand::Logout(provider) => logout(provider.as_deref(), auth_file),
    };
    report(result)
}

/// Prints what a command did (stdout) or why it failed (stderr); the exit code.
fn report(result: Outcome) -> i32 {
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

async fn login(provider: Option<&str>, auth_file: &Path, browser: bool) -> Outcome {
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
    let creds = login_at_terminal(spec, browser).await?;
    oauth::save_login(auth_file, spec.id, &creds).map_err(|e| (1, e.to_string()))?;
    Ok(format!("Logged in to {}. Credentials saved in {}", spec.name, auth_file.display()))
}

/// The CLI's login: what to open on stderr (the browser opened when a person is at the
/// terminal), a paste read from stdin.
async fn login_at_terminal(
    provider: &'static oauth::OAuthProvider,
    browser: bool,
) -> Result<oauth::OAuthCredentials, (i32, String)> {
    let show = |prompt: flow::Prompt| {
        if let Some(code) = &prompt.user_code {
            eprintln!("To log in to {}, open {} and enter the code {code}", prompt.provider, prompt.url);
            eprintln!("Waiting for {} to confirm the code...", prompt.provider);
            return;
        }
        eprintln!("Open this URL in a browser to log in to {}:\n\n{}\n", prompt.provider, prompt.url);
        if browser && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            flow::open_browser(&prompt.url);
        }
        match (&prompt.callback, &prompt.problem) {
            (Some(callback), _) => eprintln!(
                "Waiting for the browser to come back to {callback}. If the browser is on another machine, paste \
                 the code the page shows (code#state) or the address it ends on here:"
            ),
            (None, problem) => eprintln!(
                "({}.) Paste the code the page shows (code#state) or the address it ends on here:",
                problem.as_deref().unwrap_or("rho cannot listen for the browser")
            ),
        }
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<Option<String>>();
    std::thread::Builder::new()
        .name("rho-login-stdin".into())
        .spawn(move || {
            let mut line = String::new();
            let read = std::io::stdin().lock().read_line(&mut line);
            let _ = tx.send(read.ok().filter(|n| *n > 0).map(|_| line));
        })
        .map_err(|e| (1, format!("cannot read stdin: {e}")))?;
    let paste: flow::Paste = Box::pin(async move { rx.await.ok().flatten() });
    flow::run(provider, show, paste).await.map_err(|e| (1, e))
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
