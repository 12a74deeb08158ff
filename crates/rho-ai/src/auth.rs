//! API keys: where a provider's key comes from, and the config value syntax shared by
//! `auth.json`, `models.json` `apiKey` and header values (docs/agent-behavior.md, "API keys").
//!
//! A provider's key is looked up, first hit wins: the runtime override (`--api-key`), the
//! provider's `api_key` entry in `auth.json`, its `oauth` entry there (a subscription login's
//! access token, refreshed when stale: see [`crate::oauth`]), the provider's environment
//! variable(s), then the `apiKey` its `models.json` entry gives. A source that yields nothing (an
//! unset variable, a failing command) falls through to the next, except a login that cannot
//! give a token: as in pi, its provider then has no key, and [`ApiKeys::login_problem`] says why.
//!
//! Config values: `!command` runs through `sh -c` with stdin closed, and its trimmed stdout is
//! the value (at most once per process and command, 10 s timeout, failure means no value);
//! `$NAME` / `${NAME}` is that environment variable; a bare word that names a set environment
//! variable is its value; anything else is the literal.
//!
//! The environment is read through an [`EnvLookup`] so tests can inject one instead of changing
//! the process environment.

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config_error::{ConfigError, parse_json, read_optional};
use crate::oauth::{LoginError, Logins};

/// Reads an environment variable; `None` when unset.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The process environment.
pub fn process_env() -> EnvLookup {
    Arc::new(|name| std::env::var(name).ok())
}

/// An environment from fixed pairs (tests, embedding hosts).
pub fn env_from<I, K, V>(pairs: I) -> EnvLookup
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: Into<String>,
{
    let map: HashMap<String, String> = pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
    Arc::new(move |name| map.get(name).cloned())
}

/// The variables each provider's key is read from, in lookup order.
const ENV_VARS: &[(&str, &[&str])] = &[
    // A subscription token first, as pi: its requests get Claude Code's OAuth headers.
    ("anthropic", &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]),
    ("openai", &["OPENAI_API_KEY"]),
    // pi 0.73 called it `azure-openai-responses` (RENAMED_PROVIDERS).
    ("azure", &["AZURE_OPENAI_API_KEY"]),
    ("google-vertex", &["GOOGLE_CLOUD_API_KEY"]),
    ("google", &["GEMINI_API_KEY"]),
    // A Bedrock API key; AWS's own credentials (which the aws CLI also reads) are found by the
    // provider itself.
    ("amazon-bedrock", &["AWS_BEARER_TOKEN_BEDROCK"]),
    ("openrouter", &["OPENROUTER_API_KEY"]),
    ("vercel-ai-gateway", &["AI_GATEWAY_API_KEY"]),
    ("xai", &["XAI_API_KEY"]),
    ("groq", &["GROQ_API_KEY"]),
    ("cerebras", &["CEREBRAS_API_KEY"]),
    ("zai", &["ZAI_API_KEY"]),
    ("mistral", &["MISTRAL_API_KEY"]),
    ("minimax", &["MINIMAX_API_KEY"]),
    ("minimax-cn", &["MINIMAX_CN_API_KEY"]),
    ("huggingface", &["HF_TOKEN"]),
    ("deepseek", &["DEEPSEEK_API_KEY"]),
    ("opencode", &["OPENCODE_API_KEY"]),
    ("opencode-go", &["OPENCODE_API_KEY"]),
    ("kimi-coding", &["KIMI_API_KEY"]),
    ("moonshotai", &["MOONSHOT_API_KEY"]),
    ("moonshotai-cn", &["MOONSHOT_API_KEY"]),
    ("fireworks", &["FIREWORKS_API_KEY"]),
    ("xiaomi", &["XIAOMI_API_KEY"]),
    ("xiaomi-token-plan-cn", &["XIAOMI_TOKEN_PLAN_CN_API_KEY"]),
    ("xiaomi-token-plan-ams", &["XIAOMI_TOKEN_PLAN_AMS_API_KEY"]),
    ("xiaomi-token-plan-sgp", &["XIAOMI_TOKEN_PLAN_SGP_API_KEY"]),
    ("cloudflare-workers-ai", &["CLOUDFLARE_API_KEY"]),
    ("cloudflare-ai-gateway", &["CLOUDFLARE_API_KEY"]),
    // The providers pi 1.6 added.
    ("ant-ling", &["ANT_LING_API_KEY"]),
    ("qwen-token-plan", &["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"]),
    ("qwen-token-plan-cn", &["QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"]),
    ("qwen-token-plan-individual", &["QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"]),
    ("qwen-token-plan-individual-cn", &["QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"]),
    ("nvidia", &["NVIDIA_API_KEY"]),
    ("typesafe", &["TYPESAFE_API_KEY"]),
    ("radius", &["RADIUS_API_KEY"]),
    ("zai-coding-cn", &["ZAI_CODING_CN_API_KEY"]),
    ("together", &["TOGETHER_API_KEY"]),
    ("baseten", &["BASETEN_API_KEY"]),
    ("meta", &["META_API_KEY"]),
    // A Copilot token (the Copilot CLI's variable), sent as it is; a login is the other way in.
    ("github-copilot", &["COPILOT_GITHUB_TOKEN"]),
];

/// Providers pi renamed: (the former name, today's). A former name still finds the provider in
/// model selectors, settings, models.json, auth.json and sessions written before the rename.
pub const RENAMED_PROVIDERS: &[(&str, &str)] = &[("azure-openai-responses", "azure")];

/// Today's name of `provider` (itself unless pi renamed it).
pub fn current_provider_name(provider: &str) -> &str {
    RENAMED_PROVIDERS.iter().find(|(old, _)| old.eq_ignore_ascii_case(provider)).map_or(provider, |(_, new)| new)
}

/// The name `provider` had before pi renamed it, if it was renamed.
pub fn former_provider_name(provider: &str) -> Option<&'static str> {
    RENAMED_PROVIDERS.iter().find(|(_, new)| *new == provider).map(|(old, _)| *old)
}

/// The environment variables `provider`'s key is read from, in lookup order (empty for a
/// provider rho has no variable for, such as a custom one).
pub fn env_vars_for(provider: &str) -> &'static [&'static str] {
    ENV_VARS.iter().find(|(name, _)| *name == provider).map(|(_, vars)| *vars).unwrap_or(&[])
}

/// The variables rho reads provider keys from that commands run for the model do not inherit
/// (settings `bash.inheritProviderKeys` lets them through). GitHub's tokens are not among them:
/// Copilot's models take only a Copilot login, and git and gh read those variables.
pub fn provider_key_variables() -> impl Iterator<Item = &'static str> {
    let mut seen = std::collections::BTreeSet::new();
    ENV_VARS.iter().flat_map(|(_, vars)| vars.iter().copied()).filter(move |var| seen.insert(*var))
}

/// The providers a key can be stored for (`/login`'s "API key" entries), in the table's order.
pub fn key_providers() -> impl Iterator<Item = &'static str> {
    ENV_VARS.iter().map(|(provider, _)| *provider)
}

/// The variable to name when `provider` has no key ("set ANTHROPIC_API_KEY"): its usual API key
/// variable.
pub fn env_var_for(provider: &str) -> Option<&'static str> {
    let vars = env_vars_for(provider);
    match provider {
        "anthropic" => Some("ANTHROPIC_API_KEY"),
        _ => vars.first().copied(),
    }
}

/// How long a `!command` may run.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves a config value (`!command`, `$NAME`, `NAME`, or a literal). `None` for an empty
/// result, an unset `$NAME`, or a command that fails or times out.
pub fn resolve_config_value(raw: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let non_empty = |s: String| (!s.is_empty()).then_some(s);
    if let Some(command) = raw.strip_prefix('!') {
        return run_command(command.trim());
    }
    if let Some(name) = env_reference(raw) {
        return env(name).and_then(non_empty);
    }
    if let Some(value) = is_env_name(raw).then(|| env(raw)).flatten().filter(|v| !v.is_empty()) {
        return Some(value);
    }
    non_empty(raw.to_owned())
}

/// `NAME` of `$NAME` or `${NAME}`.
fn env_reference(raw: &str) -> Option<&str> {
    let rest = raw.strip_prefix('$')?;
    let name = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')).unwrap_or(rest);
    is_env_name(name).then_some(name)
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// One slot per command: what it gave, once it ran.
type CommandSlot = Arc<OnceLock<Option<String>>>;

/// Commands run (or running) in this process.
fn command_cache() -> &'static Mutex<HashMap<String, CommandSlot>> {
    static CACHE: OnceLock<Mutex<HashMap<String, CommandSlot>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Runs `command` once per process; later calls get the first answer, and a call made while it
/// runs waits for it (a key command, a password manager say, never runs twice at once). Other
/// commands are not held up: the cache is only locked to find the command's slot. On the
/// runtime's worker threads the wait is announced to tokio, so other tasks move on meanwhile.
fn run_command(command: &str) -> Option<String> {
    if command.is_empty() {
        return None;
    }
    let slot = command_cache().lock().entry(command.to_owned()).or_default().clone();
    if let Some(done) = slot.get() {
        return done.clone();
    }
    let run = || {
        slot.get_or_init(|| {
            let value = execute(command, COMMAND_TIMEOUT);
            if value.is_none() {
                tracing::warn!("config value command failed or produced no output");
            }
            value
        })
        .clone()
    };
    let on_worker = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if on_worker { tokio::task::block_in_place(run) } else { run() }
}

/// Starts the `!command` values among `raw_values` on a thread of their own, so their answers
/// are ready (or on their way) when the first request needs a key: start-up does not wait.
pub fn prefetch_commands<I: IntoIterator<Item = String>>(raw_values: I) {
    let commands: Vec<String> = raw_values
        .into_iter()
        .filter_map(|raw| raw.strip_prefix('!').map(|c| c.trim().to_owned()))
        .filter(|c| !c.is_empty())
        .collect();
    if commands.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new().name("rho-key-commands".into()).spawn(move || {
        for command in commands {
            run_command(&command);
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the key commands early: {e}");
    }
}

/// Runs `command` in its own process group; the whole group is killed on timeout.
fn execute(command: &str, timeout: Duration) -> Option<String> {
    use std::os::unix::process::CommandExt;

    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let kill_group = |child: &mut std::process::Child| {
        if let Ok(pid) = i32::try_from(child.id()) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        let _ = child.wait();
    };
    let Some(mut stdout) = child.stdout.take() else {
        kill_group(&mut child);
        return None;
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = tx.send(stdout.read_to_end(&mut out).map(|_| out));
    });
    let deadline = Instant::now() + timeout;
    // stdout closes when the command (and anything it left running with it) is done.
    let output = match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(out)) => out,
        _ => {
            kill_group(&mut child);
            return None;
        }
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                kill_group(&mut child);
                return None;
            }
        }
    };
    if !status.success() {
        return None;
    }
    let text = String::from_utf8(output).ok()?;
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// Whether a config value gives something, without running it if it is a command.
fn is_set(raw: &str, env: &dyn Fn(&str) -> Option<String>) -> bool {
    match raw.strip_prefix('!') {
        Some(command) => !command.trim().is_empty(),
        None => resolve_config_value(raw, env).is_some(),
    }
}

/// The `api_key` entries of `auth.json`, as raw config values by provider.
pub fn load_auth_file(path: &Path) -> Result<BTreeMap<String, String>, ConfigError> {
    let Some(text) = read_optional(path)? else {
        return Ok(BTreeMap::new());
    };
    if text.trim().is_empty() {
        return Ok(BTreeMap::new());
    }
    let entries: BTreeMap<String, Value> = parse_json(path, &text)?;
    let mut keys = BTreeMap::new();
    for (provider, entry) in entries {
        let kind = entry.get("type").and_then(Value::as_str);
        match (kind, entry.get("key")) {
            (Some("api_key"), Some(Value::String(key))) => {
                keys.insert(provider, key.clone());
            }
            (Some("api_key"), _) => {
                return Err(ConfigError::Invalid {
                    path: path.to_owned(),
                    problem: format!("{provider}: an \"api_key\" entry needs a string \"key\""),
                });
            }
            // OAuth logins are read by `Logins`; entry kinds rho does not know are skipped.
            _ => {}
        }
    }
    Ok(keys)
}

/// Where each provider's key comes from. Keys are resolved when asked for, so `!command` values
/// run only when a key is needed.
#[derive(Clone)]
pub struct ApiKeys {
    env: EnvLookup,
    runtime: HashMap<String, String>,
    auth_file: BTreeMap<String, String>,
    logins: Option<Arc<Logins>>,
    configured: HashMap<String, String>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names only: the values are secrets.
        f.debug_struct("ApiKeys")
            .field("runtime", &self.runtime.keys().collect::<Vec<_>>())
            .field("auth_file", &self.auth_file.keys().collect::<Vec<_>>())
            .field("logins", &self.logins)
            .field("configured", &self.configured.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ApiKeys {
    pub fn new(env: EnvLookup) -> Self {
        Self { env, runtime: HashMap::new(), auth_file: BTreeMap::new(), logins: None, configured: HashMap::new() }
    }

    /// The environment keys are read from.
    pub fn env(&self) -> &EnvLookup {
        &self.env
    }

    /// The `--api-key` value for `provider`: used as is, ahead of every other source.
    pub fn set_runtime_key(&mut self, provider: &str, key: impl Into<String>) {
        self.runtime.insert(provider.to_owned(), key.into());
    }

    /// The `api_key` entries of `auth.json` (raw config values).
    pub fn set_auth_file(&mut self, entries: BTreeMap<String, String>) {
        self.auth_file = entries;
    }

    /// The `oauth` entries of `auth.json`.
    pub fn set_logins(&mut self, logins: Logins) {
        self.logins = Some(Arc::new(logins));
    }

    /// Why `provider`'s login gave no access token the last time it was asked for one.
    pub fn login_problem(&self, provider: &str) -> Option<LoginError> {
        self.logins.as_ref().and_then(|l| l.problem(provider))
    }

    /// The `auth.json` logins rho cannot use, with why.
    pub fn unusable_logins(&self) -> Vec<LoginError> {
        self.logins.as_ref().map(|l| l.unusable()).unwrap_or_default()
    }

    /// The `apiKey` of a provider's `models.json` entry (a raw config value).
    pub fn set_configured_key(&mut self, provider: &str, raw: impl Into<String>) {
        self.configured.insert(provider.to_owned(), raw.into());
    }

    /// Starts every `!command` key of the auth file and models.json in the background.
    pub fn prefetch(&self) {
        prefetch_commands(self.auth_file.values().chain(self.configured.values()).cloned());
    }

    /// Resolves `provider`'s key now. Runs a `!command` value (once per process).
    pub fn resolve(&self, provider: &str) -> Option<String> {
        let env = self.env.as_ref();
        if let Some(key) = self.runtime.get(provider).filter(|k| !k.is_empty()) {
            return Some(key.clone());
        }
        if let Some(key) = self.auth_file_entry(provider).and_then(|raw| resolve_config_value(raw, env)) {
            return Some(key);
        }
        if let Some(logins) = self.logins.as_ref().filter(|l| l.has(provider)) {
            return match logins.access_token(provider) {
                Ok(token) => Some(token),
                Err(e) => {
                    // Said where the missing key is reported (see `login_problem`).
                    tracing::debug!("{e}");
                    None
                }
            };
        }
        if let Some(key) = env_vars_for(provider).iter().find_map(|var| env(var).filter(|v| !v.is_empty())) {
            return Some(key);
        }
        if let Some(key) = self.configured.get(provider).and_then(|raw| resolve_config_value(raw, env)) {
            return Some(key);
        }
        ambient_credentials(provider, env).then(|| crate::providers::vertex::ADC_MARKER.to_owned())
    }

    /// `provider`'s auth.json key, or the one filed under the provider's former name (pi 0.73
    /// filed `azure` as `azure-openai-responses`).
    fn auth_file_entry(&self, provider: &str) -> Option<&String> {
        self.auth_file.get(provider).or_else(|| self.auth_file.get(former_provider_name(provider)?))
    }

    /// Whether any source has a key for `provider`, without running commands: a configured
    /// `!command` counts even if it would fail; a `$NAME` whose variable is unset does not.
    pub fn is_configured(&self, provider: &str) -> bool {
        let env = self.env.as_ref();
        self.runtime.get(provider).is_some_and(|k| !k.is_empty())
            || self.auth_file_entry(provider).is_some_and(|raw| is_set(raw, env))
            || self.logins.as_ref().is_some_and(|l| l.has(provider))
            || env_vars_for(provider).iter().any(|var| env(var).is_some_and(|v| !v.is_empty()))
            || self.configured.get(provider).is_some_and(|raw| is_set(raw, env))
            || ambient_credentials(provider, env)
    }
}

/// Providers that authenticate without a key, from credentials their cloud's tools keep: Vertex
/// AI when Application Default Credentials, a project and a location are there; Bedrock when
/// one of the AWS credential sources pi checks for is configured (a profile, access keys, a
/// container or web-identity role).
fn ambient_credentials(provider: &str, env: &dyn Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
    match provider {
        "google-vertex" => crate::providers::vertex::adc::usable_in(env),
        "amazon-bedrock" => {
            set("AWS_PROFILE")
                || (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
                || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
                || set("AWS_WEB_IDENTITY_TOKEN_FILE")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> EnvLookup {
        env_from([("MY_KEY", "from-env"), ("ANTHROPIC_API_KEY", "ant-key"), ("EMPTY", "")])
    }

    #[test]
    fn config_values_have_three_forms() {
        let env = env();
        let env = env.as_ref();
        assert_eq!(resolve_config_value("!echo secret", env).as_deref(), Some("secret"));
        assert_eq!(resolve_config_value("MY_KEY", env).as_deref(), Some("from-env"));
        assert_eq!(resolve_config_value("$MY_KEY", env).as_deref(), Some("from-env"));
        assert_eq!(resolve_config_value("${MY_KEY}", env).as_deref(), Some("from-env"));
        assert_eq!(resolve_config_value("sk-literal", env).as_deref(), Some("sk-literal"));
        assert_eq!(resolve_config_value("UNSET_NAME", env).as_deref(), Some("UNSET_NAME"));
        assert_eq!(resolve_config_value("$UNSET_NAME", env), None);
        assert_eq!(resolve_config_value("EMPTY", env).as_deref(), Some("EMPTY"));
        assert_eq!(resolve_config_value("$EMPTY", env), None);
        assert_eq!(resolve_config_value("", env), None);
    }

    /// Two key commands that each wait for the other to have started: they only both answer
    /// when neither holds the other up (a cache locked while a command runs would make both
    /// time out).
    #[test]
    fn different_commands_run_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let wait_for = |mine: &std::path::Path, other: &std::path::Path, answer: &str| {
            format!(
                "!touch {}; i=0; while [ ! -f {} ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; [ -f {} ] && echo {answer}",
                mine.display(),
                other.display(),
                other.display()
            )
        };
        let first = wait_for(&a, &b, "A");
        let second = wait_for(&b, &a, "B");
        let env = env();
        let other = std::thread::spawn(move || resolve_config_value(&second, process_env().as_ref()));
        assert_eq!(resolve_config_value(&first, env.as_ref()).as_deref(), Some("A"));
        assert_eq!(other.join().unwrap().as_deref(), Some("B"));
    }

    #[test]
    fn commands_are_trimmed_and_failures_give_nothing() {
        let env = env();
        let env = env.as_ref();
        assert_eq!(resolve_config_value("!printf '  spaced\\n\\n'", env).as_deref(), Some("spaced"));
        assert_eq!(resolve_config_value("!echo partial; exit 3", env), None);
        assert_eq!(resolve_config_value("!true", env), None);
        assert_eq!(resolve_config_value("!", env), None);
        assert_eq!(resolve_config_value("!no-such-command-rho-test 2>/dev/null", env), None);
    }

    #[test]
    fn a_command_runs_once_per_process() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("count");
        let command = format!("!echo x >> '{}'; echo once", counter.display());
        let env = env();
        assert_eq!(resolve_config_value(&command, env.as_ref()).as_deref(), Some("once"));
        assert_eq!(resolve_config_value(&command, env.as_ref()).as_deref(), Some("once"));
        assert_eq!(std::fs::read_to_string(&counter).unwrap(), "x\n");
    }

    #[test]
    fn a_command_that_hangs_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let command = format!("sleep 30 & echo $! > '{}'; wait", pid_file.display());
        assert_eq!(execute(&command, Duration::from_millis(300)), None);
        let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        // The background `sleep` was in the command's group, so it was killed too. Once its
        // parent is gone it is reaped; wait for that (bounded) rather than for a fixed time.
        let gone = (0..400).any(|_| {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let dead = state.is_empty() || state.contains(") Z ");
            if !dead {
                std::thread::sleep(Duration::from_millis(10));
            }
            dead
        });
        assert!(gone, "the command's child survived the timeout");
    }

    #[test]
    fn env_vars_per_provider() {
        assert_eq!(env_vars_for("anthropic"), ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]);
        assert_eq!(env_var_for("anthropic"), Some("ANTHROPIC_API_KEY"));
        assert_eq!(env_var_for("openai"), Some("OPENAI_API_KEY"));
        assert_eq!(env_var_for("google"), Some("GEMINI_API_KEY"));
        assert_eq!(env_var_for("groq"), Some("GROQ_API_KEY"));
        assert_eq!(env_var_for("cerebras"), Some("CEREBRAS_API_KEY"));
        assert_eq!(env_var_for("xai"), Some("XAI_API_KEY"));
        assert_eq!(env_var_for("openrouter"), Some("OPENROUTER_API_KEY"));
        assert_eq!(env_var_for("mistral"), Some("MISTRAL_API_KEY"));
        assert_eq!(env_var_for("deepseek"), Some("DEEPSEEK_API_KEY"));
        assert_eq!(env_var_for("my-local-server"), None);
        // Every catalogue provider has a key variable, or a login rho can use instead.
        let login = |name: &str| crate::oauth::providers::find(name).is_some_and(|p| p.unusable.is_none());
        for provider in crate::catalog::PROVIDERS {
            assert!(env_var_for(provider.name).is_some() || login(provider.name), "{}", provider.name);
        }
    }

    #[test]
    fn keys_resolve_in_order() {
        let env = env_from([
            ("ANTHROPIC_OAUTH_TOKEN", "oauth-env"),
            ("ANTHROPIC_API_KEY", "api-env"),
            ("OPENAI_API_KEY", "openai-env"),
            ("AUTH_REF", "auth-from-env"),
        ]);
        let mut keys = ApiKeys::new(env);
        keys.set_configured_key("anthropic", "models-json");
        keys.set_configured_key("custom", "!echo custom-cmd");
        assert_eq!(keys.resolve("anthropic").as_deref(), Some("oauth-env"), "pi's order");
        keys.set_auth_file(BTreeMap::from([
            ("anthropic".to_owned(), "$AUTH_REF".to_owned()),
            ("openai".to_owned(), "$UNSET".to_owned()),
        ]));
        assert_eq!(keys.resolve("anthropic").as_deref(), Some("auth-from-env"));
        keys.set_runtime_key("anthropic", "runtime");
        assert_eq!(keys.resolve("anthropic").as_deref(), Some("runtime"));
        // auth.json gives nothing for openai, so the environment answers.
        assert_eq!(keys.resolve("openai").as_deref(), Some("openai-env"));
        assert_eq!(keys.resolve("custom").as_deref(), Some("custom-cmd"));
        assert_eq!(keys.resolve("groq"), None);
        assert!(keys.is_configured("custom"));
        assert!(keys.is_configured("openai"));
        assert!(!keys.is_configured("groq"));
        let debug = format!("{keys:?}");
        assert!(!debug.contains("runtime\"") && !debug.contains("custom-cmd"), "{debug}");
    }

    #[test]
    fn models_json_key_is_the_last_resort() {
        let mut keys = ApiKeys::new(env_from([("GROQ_API_KEY", "")]));
        assert!(!keys.is_configured("groq"), "an empty variable is no key");
        keys.set_configured_key("groq", "GROQ_FALLBACK_LITERAL");
        assert_eq!(keys.resolve("groq").as_deref(), Some("GROQ_FALLBACK_LITERAL"));
    }

    #[test]
    fn auth_file_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        assert!(load_auth_file(&path).unwrap().is_empty(), "missing file is empty");
        std::fs::write(
            &path,
            r#"{"anthropic": {"type": "api_key", "key": "sk-ant"},
                "openai-codex": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1},
                "groq": {"type": "api_key", "key": "!echo groq"}}"#,
        )
        .unwrap();
        let entries = load_auth_file(&path).unwrap();
        assert_eq!(
            entries,
            BTreeMap::from([
                ("anthropic".to_owned(), "sk-ant".to_owned()),
                ("groq".to_owned(), "!echo groq".to_owned()),
            ])
        );
        std::fs::write(&path, r#"{"anthropic": {"type": "api_key", "key": 5}}"#).unwrap();
        let err = load_auth_file(&path).unwrap_err().to_string();
        assert_eq!(err, format!("Invalid {}: anthropic: an \"api_key\" entry needs a string \"key\"", path.display()));
        std::fs::write(&path, "[1, 2]").unwrap();
        let err = load_auth_file(&path).unwrap_err().to_string();
        assert!(err.starts_with(&format!("Failed to parse {}", path.display())), "{err}");
    }
}
