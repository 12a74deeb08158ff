//! `rho auth …`, pi 1.6's `pi auth`: log in to or out of a provider (an account, or an API key
//! saved with `--api-key`), print the API key or the login's bearer token a provider resolves to
//! (refreshed when it has less than `--min-expiry` left, 30 minutes by default), or check that
//! it is ready, without starting a session. A subcommand rho does not know is an error that
//! names it.

use std::io::{BufRead, IsTerminal, Write};

use rho_ai::oauth::{self, Removed};

use super::{Outcome, login, report, usage};
use crate::config::ConfigPaths;

const USAGE: &str = "Usage:
  rho auth login <provider> [--api-key] [--no-browser]
  rho auth logout <provider>
  rho auth print-api-key --provider <provider> | --model <provider/id>
  rho auth print-bearer-token --provider <provider> | --model <provider/id> [--min-expiry <duration>]
  rho auth check --provider <provider> | --model <provider/id>";

/// How long a printed bearer token stays valid at least, unless `--min-expiry` says otherwise.
const DEFAULT_MIN_EXPIRY_MS: i64 = 30 * 60_000;

/// The arguments after `auth` when the command line is `rho auth …`.
pub fn command(raw: &[String]) -> Option<&[String]> {
    match raw.split_first() {
        Some((first, rest)) if first == "auth" => Some(rest),
        _ => None,
    }
}

/// Runs `rho auth <args>`; the exit code.
pub async fn run(args: &[String], paths: &ConfigPaths) -> i32 {
    let auth_file = paths.auth_file();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let positional: Vec<&str> = positional(args);
    if flag("--help") || flag("-h") {
        say(USAGE);
        return 0;
    }
    let result = match positional.first().copied() {
        Some("login") if flag("--api-key") => save_key(positional.get(1).copied(), &auth_file),
        Some("login") => login(positional.get(1).copied(), &auth_file, !flag("--no-browser")).await,
        Some("logout") => logout(positional.get(1).copied(), &auth_file),
        Some("print-bearer-token") => bearer_token(args, &auth_file),
        Some(verb @ ("print-api-key" | "check")) => {
            let Some(provider) = provider_of(args) else {
                return report(Err((2, format!("name the provider: rho auth {verb} --provider <provider>"))));
            };
            let (registry, _) = rho_ai::registry::ModelRegistry::load(&paths.agent_dir);
            let key = registry.api_key(&provider);
            if verb == "check" {
                let ready = key.is_some() || registry.is_keyless(&provider);
                say(if ready { "ready" } else { "not_ready" });
                return if ready { 0 } else { 1 };
            }
            key.ok_or_else(|| (1, format!("no API key for {provider} (environment, auth.json or models.json)")))
        }
        Some(other) => Err((2, format!("unknown auth command \"{other}\"\n\n{USAGE}"))),
        None => Err((2, format!("name an auth command\n\n{USAGE}"))),
    };
    report(result)
}

/// `rho auth print-bearer-token`: the provider's login token, refreshed first when it has less
/// than `--min-expiry` left.
fn bearer_token(args: &[String], auth_file: &std::path::Path) -> Outcome {
    let Some(provider) = provider_of(args) else {
        return Err((2, "name the provider: rho auth print-bearer-token --provider <provider>".to_owned()));
    };
    let min_validity_ms = match args.iter().position(|a| a == "--min-expiry") {
        Some(at) => args
            .get(at + 1)
            .and_then(|value| duration_ms(value))
            .ok_or_else(|| (2, "--min-expiry must use a duration such as 30m or 1h".to_owned()))?,
        None => DEFAULT_MIN_EXPIRY_MS,
    };
    let logins = oauth::Logins::load(auth_file, rho_ai::auth::process_env());
    if !logins.has(&provider) {
        return Err((1, format!("Provider \"{provider}\" is not configured with an OAuth bearer token")));
    }
    let spec = oauth::usable(&provider, auth_file).map_err(|e| (1, e.to_string()))?;
    let env = rho_ai::auth::process_env();
    let creds =
        oauth::refresh_entry_within(auth_file, spec, env.as_ref(), min_validity_ms).map_err(|e| (1, e.to_string()))?;
    Ok(creds.access)
}

/// `30m`, `1h`, `45s`, `500ms` in milliseconds.
fn duration_ms(text: &str) -> Option<i64> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let amount: i64 = text[..digits].parse().ok()?;
    let unit = match text[digits..].to_ascii_lowercase().as_str() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    amount.checked_mul(unit)
}

/// One line on stdout.
fn say(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
}

/// The words that are not options (nor an option's value).
fn positional(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--provider" | "--model" | "--min-expiry" => {
                iter.next();
            }
            a if a.starts_with('-') => {}
            a => out.push(a),
        }
    }
    out
}

/// `--provider <name>`, or the provider of `--model <provider/id>`.
fn provider_of(args: &[String]) -> Option<String> {
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    value("--provider").or_else(|| value("--model").and_then(|m| m.split_once('/').map(|(p, _)| p.to_owned())))
}

/// `rho auth login <provider> --api-key`: the key read from stdin, saved in auth.json.
fn save_key(provider: Option<&str>, auth_file: &std::path::Path) -> Outcome {
    let Some(provider) = provider else {
        return Err((2, "name the provider: rho auth login <provider> --api-key".to_owned()));
    };
    if std::io::stdin().is_terminal() {
        eprint!("API key for {provider}: ");
        let _ = std::io::stderr().flush();
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| (1, format!("cannot read the key: {e}")))?;
    let key = line.trim();
    if key.is_empty() {
        return Err((1, "no API key was given: nothing was saved".to_owned()));
    }
    oauth::save_api_key(auth_file, provider, key).map_err(|e| (1, e.to_string()))?;
    Ok(format!("Saved an API key for {provider} in {}", auth_file.display()))
}

/// `rho auth logout <provider>`: the stored credentials go, a login or an API key (pi 1.6's
/// meaning; environment variables and models.json stay).
fn logout(provider: Option<&str>, auth_file: &std::path::Path) -> Outcome {
    let Some(provider) = provider else {
        return Err((2, usage("logout")));
    };
    match oauth::remove_credentials(auth_file, provider).map_err(|e| (1, e.to_string()))? {
        Removed::Nothing => Err((1, format!("there are no credentials for {provider} in {}", auth_file.display()))),
        _ => Ok(format!("Logged out of {provider}: its credentials are removed from {}", auth_file.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn options_and_their_values_are_not_positional() {
        let args = words(&["print-api-key", "--provider", "openai", "--json"]);
        assert_eq!(positional(&args), ["print-api-key"]);
        assert_eq!(provider_of(&args).as_deref(), Some("openai"));
        assert_eq!(provider_of(&words(&["check", "--model", "anthropic/claude-x"])).as_deref(), Some("anthropic"));
        assert_eq!(provider_of(&words(&["check"])), None);
        assert_eq!(duration_ms("30m"), Some(1_800_000));
        assert_eq!(duration_ms("1H"), Some(3_600_000));
        assert_eq!(duration_ms("500ms"), Some(500));
        assert_eq!((duration_ms("30"), duration_ms("m"), duration_ms("1d")), (None, None, None));
        assert_eq!(command(&words(&["auth", "login", "x"])), Some(&words(&["login", "x"])[..]));
        assert_eq!(command(&words(&["authors"])), None);
    }
}
