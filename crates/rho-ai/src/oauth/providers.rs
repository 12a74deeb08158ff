//! The OAuth logins pi's `/login` stores in `auth.json`, by the provider id it files them under:
//! where each refreshes its tokens, how it asks, and whether rho can speak the API the login is
//! for.
//!
//! The token endpoint of each can be moved with an environment variable (for tests against a
//! local mock, and for proxies): `RHO_OAUTH_TOKEN_URL_ANTHROPIC`,
//! `RHO_OAUTH_TOKEN_URL_OPENAI_CODEX`, `RHO_OAUTH_TOKEN_URL_GITHUB_COPILOT`,
//! `RHO_OAUTH_TOKEN_URL_OPENROUTER`.

/// How a provider turns its refresh credential into a new access token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshGrant {
    /// `POST` a JSON `refresh_token` grant with the client id; `expires_in` seconds back
    /// (Anthropic).
    JsonRefreshToken,
    /// `POST` a form-encoded `refresh_token` grant with the client id; `expires_in` seconds back
    /// (OpenAI's ChatGPT login).
    FormRefreshToken,
    /// `GET` with the GitHub token as Bearer: a Copilot token and its `expires_at` back (the
    /// GitHub token stays the refresh credential).
    CopilotTokenExchange,
    /// Nothing to refresh: the login is a key that does not expire (OpenRouter's).
    Never,
    /// A form `refresh_token` grant for the client the login was issued (its stored
    /// `clientId`) and the resource its tokens are for (Sign in with ChatGPT).
    IssuedClientForResource,
    /// A new key minted with the stored identity token (Meta's: the identity token is not
    /// renewable).
    MintKey,
}

/// One OAuth login provider.
#[derive(Debug)]
pub struct OAuthProvider {
    /// The key of its entry in `auth.json` (pi's provider id).
    pub id: &'static str,
    /// What pi calls it in `/login`.
    pub name: &'static str,
    pub token_url: &'static str,
    /// The variable that replaces `token_url`.
    pub token_url_env: &'static str,
    /// Where the environment moves the whole server, token endpoint included (pi's
    /// `KIMI_CODE_OAUTH_HOST`); `token_url_env` still wins.
    pub server_from_env: Option<Endpoint>,
    pub client_id: &'static str,
    pub grant: RefreshGrant,
    /// Taken off the lifetime the server grants when the expiry is stored, so a token is
    /// refreshed a little before the server would refuse it (pi stores the same expiry).
    pub expiry_margin_ms: i64,
    /// The token lifetime taken when a token answer gives none (`None`: the answer must say).
    pub default_lifetime_s: Option<f64>,
    /// `None` when rho can use the login; else why not.
    pub unusable: Option<&'static str>,
}

/// An endpoint as the environment (`name → value`) places it.
pub type Endpoint = fn(&dyn Fn(&str) -> Option<String>) -> String;

/// A login server's root: the first of the variables `names` the environment sets, else
/// `default`, without a trailing `/`.
pub fn server(env: &dyn Fn(&str) -> Option<String>, names: &[&str], default: &str) -> String {
    names
        .iter()
        .find_map(|name| env(name).filter(|v| !v.is_empty()))
        .unwrap_or_else(|| default.to_owned())
        .trim_end_matches('/')
        .to_owned()
}

impl OAuthProvider {
    /// The token endpoint: `token_url_env` when set, else where the environment moved the server,
    /// else the provider's own.
    pub fn token_url(&self, env: &dyn Fn(&str) -> Option<String>) -> String {
        match env(self.token_url_env).filter(|u| !u.is_empty()) {
            Some(url) => url,
            None => self.server_from_env.map_or_else(|| self.token_url.to_owned(), |moved| moved(env)),
        }
    }
}

/// Five minutes: the margin pi takes off Anthropic's and Copilot's token lifetimes.
const FIVE_MINUTES_MS: i64 = 5 * 60 * 1000;

pub const ANTHROPIC: OAuthProvider = OAuthProvider {
    id: "anthropic",
    name: "Anthropic (Claude Pro/Max)",
    token_url: "https://platform.claude.com/v1/oauth/token",
    token_url_env: "RHO_OAUTH_TOKEN_URL_ANTHROPIC",
    server_from_env: None,
    client_id: "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
    grant: RefreshGrant::JsonRefreshToken,
    expiry_margin_ms: FIVE_MINUTES_MS,
    default_lifetime_s: None,
    unusable: None,
};

pub const OPENAI_CODEX: OAuthProvider = OAuthProvider {
    id: "openai-codex",
    name: "ChatGPT Plus/Pro (Codex Subscription)",
    token_url: "https://auth.openai.com/oauth/token",
    token_url_env: "RHO_OAUTH_TOKEN_URL_OPENAI_CODEX",
    server_from_env: None,
    client_id: "app_EMoamEEZ73f0CkXaXp7hrann",
    grant: RefreshGrant::FormRefreshToken,
    expiry_margin_ms: 0,
    default_lifetime_s: None,
    unusable: None,
};

pub const GITHUB_COPILOT: OAuthProvider = OAuthProvider {
    id: "github-copilot",
    name: "GitHub Copilot",
    token_url: "https://api.github.com/copilot_internal/v2/token",
    token_url_env: "RHO_OAUTH_TOKEN_URL_GITHUB_COPILOT",
    server_from_env: None,
    client_id: "Iv1.b507a08c87ecfe98",
    grant: RefreshGrant::CopilotTokenExchange,
    expiry_margin_ms: FIVE_MINUTES_MS,
    default_lifetime_s: None,
    unusable: None,
};

/// Sign in with ChatGPT for the `openai` provider (pi 1.6): a ChatGPT subscription's user
/// token for api.openai.com, refreshed three minutes early for the client the login was issued.
pub const OPENAI_CHATGPT: OAuthProvider = OAuthProvider {
    id: "openai",
    name: "OpenAI (ChatGPT subscription)",
    token_url: "https://auth.openai.com/api/accounts/oauth/token",
    token_url_env: "RHO_OAUTH_TOKEN_URL_OPENAI",
    server_from_env: None,
    client_id: super::openai_chatgpt::DYNAMIC_CLIENT_ID,
    grant: RefreshGrant::IssuedClientForResource,
    expiry_margin_ms: 3 * 60 * 1000,
    default_lifetime_s: None,
    unusable: None,
};

/// Meta's sign-in (pi 1.6, a Muse subscription): a device login whose identity token mints a
/// Model API key that lives about a day, minted again when stale.
pub const META: OAuthProvider = OAuthProvider {
    id: "meta",
    name: "Meta (Muse subscription)",
    token_url: "https://auth.meta.com/oidc/device/token/",
    token_url_env: "RHO_OAUTH_TOKEN_URL_META",
    server_from_env: Some(super::meta::token_url),
    client_id: "1031625952748946",
    grant: RefreshGrant::MintKey,
    expiry_margin_ms: 0,
    default_lifetime_s: None,
    unusable: None,
};

/// Radius's sign-in (pi 1.6, pi's gateway): a device login at the gateway, refreshed a minute
/// early as a form `refresh_token` grant.
pub const RADIUS: OAuthProvider = OAuthProvider {
    id: "radius",
    name: "Radius",
    token_url: "https://radius.pi.dev/v1/oauth/token",
    token_url_env: "RHO_OAUTH_TOKEN_URL_RADIUS",
    server_from_env: Some(super::radius::token_url),
    client_id: "pi-gateway",
    grant: RefreshGrant::FormRefreshToken,
    expiry_margin_ms: 60 * 1000,
    default_lifetime_s: None,
    unusable: None,
};

/// OpenRouter's sign-in (pi 1.6): an API key the user controls, filed as a login that never
/// expires.
pub const OPENROUTER: OAuthProvider = OAuthProvider {
    id: "openrouter",
    name: "OpenRouter",
    token_url: "https://openrouter.ai/api/v1/auth/keys",
    token_url_env: "RHO_OAUTH_TOKEN_URL_OPENROUTER",
    server_from_env: None,
    client_id: "",
    grant: RefreshGrant::Never,
    expiry_margin_ms: 0,
    default_lifetime_s: None,
    unusable: None,
};

/// Kimi Code's subscription login (pi 1.6): a device login at auth.kimi.com, refreshed as a form
/// `refresh_token` grant (`KIMI_CODE_OAUTH_HOST` moves the server, as in pi).
pub const KIMI_CODING: OAuthProvider = OAuthProvider {
    id: "kimi-coding",
    name: "Kimi Code (subscription)",
    token_url: "https://auth.kimi.com/api/oauth/token",
    token_url_env: "RHO_OAUTH_TOKEN_URL_KIMI_CODING",
    server_from_env: Some(super::kimi_coding::token_url),
    client_id: "17e5f671-d194-4dfb-9706-5516cb48c098",
    grant: RefreshGrant::FormRefreshToken,
    expiry_margin_ms: 0,
    default_lifetime_s: None,
    unusable: None,
};

/// xAI's subscription login (pi 1.6: SuperGrok or X Premium): a device login at auth.x.ai,
/// refreshed five minutes early as a form `refresh_token` grant.
pub const XAI: OAuthProvider = OAuthProvider {
    id: "xai",
    name: "xAI (Grok/X subscription)",
    token_url: "https://auth.x.ai/oauth2/token",
    token_url_env: "RHO_OAUTH_TOKEN_URL_XAI",
    server_from_env: Some(super::xai::token_url),
    client_id: "b1a00492-073a-47ea-816f-4c329264a828",
    grant: RefreshGrant::FormRefreshToken,
    expiry_margin_ms: FIVE_MINUTES_MS,
    // xAI may leave the lifetime out of an answer: an hour, as pi takes it.
    default_lifetime_s: Some(3600.0),
    unusable: None,
};

/// Every login rho offers: pi 0.73.1's three and pi 1.6's Kimi Code, Meta, Sign in with
/// ChatGPT, OpenRouter, Radius and xAI sign-ins. (Google has none: its Gemini CLI and
/// Antigravity logins are gone from pi.)
pub const PROVIDERS: &[&OAuthProvider] =
    &[&ANTHROPIC, &GITHUB_COPILOT, &KIMI_CODING, &META, &OPENAI_CHATGPT, &OPENAI_CODEX, &OPENROUTER, &RADIUS, &XAI];

/// The login provider filed under `id` in `auth.json`.
pub fn find(id: &str) -> Option<&'static OAuthProvider> {
    PROVIDERS.iter().copied().find(|p| p.id == id)
}

/// Why rho cannot take a login filed under `id` that pi no longer offers (older pi versions'
/// Google logins); `None` for any other id.
pub fn retired(id: &str) -> Option<&'static str> {
    match id {
        "google-gemini-cli" | "google-antigravity" => Some(
            "it is a Google Cloud Code login (Gemini CLI / Antigravity), whose API rho does not speak \
             (set GEMINI_API_KEY for Google's models)",
        ),
        _ => None,
    }
}
