//! `rho auth` without a session, through the real binary against the mock: the bearer token a
//! login resolves to, refreshed first when it would expire too soon.

use rho_mock_llm::IssuedTokens;
use serde_json::json;

use super::{LIFETIME_S, anthropic_at_mock, now_ms, output, read_auth, rho, write_auth};
use crate::common::Env;

/// `rho auth print-bearer-token` (pi 1.6): the login's token, refreshed first when it has less than
/// `--min-expiry` left (30 minutes unless said); a provider with an API key only has none.
#[tokio::test]
async fn print_bearer_token_refreshes_a_token_that_would_expire_too_soon() {
    let env = Env::new(Vec::new()).await;
    anthropic_at_mock(&env);
    let ten_minutes = now_ms() + 10 * 60 * 1000;
    write_auth(
        &env,
        &json!({
            "openai": {"type": "api_key", "key": "sk-openai"},
            "anthropic": {"type": "oauth", "refresh": "rt-old", "access": "sk-ant-oat01-old", "expires": ten_minutes}
        }),
    );
    let print = |args: &[&str]| {
        let mut all = vec!["auth", "print-bearer-token"];
        all.extend_from_slice(args);
        output(rho(&env, &all))
    };
    // Ten minutes are enough for five: the token as it is, nothing asked of the server.
    let out = print(&["--provider", "anthropic", "--min-expiry", "5m"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "sk-ant-oat01-old\n");
    assert!(env.server.requests().is_empty());

    // Not for the default thirty: refreshed, written back, printed.
    env.server.accept_oauth_refresh(
        "rt-old",
        IssuedTokens {
            access_token: "sk-ant-oat01-new".into(),
            refresh_token: Some("rt-new".into()),
            expires_in: LIFETIME_S,
        },
    );
    let out = print(&["--model", "anthropic/claude-sonnet-4-5"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "sk-ant-oat01-new\n");
    assert_eq!(read_auth(&env)["anthropic"]["access"], "sk-ant-oat01-new");

    let out = print(&["--provider", "openai"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "Error: Provider \"openai\" is not configured with an OAuth bearer token\n"
    );
    let out = print(&["--provider", "anthropic", "--min-expiry", "soon"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--min-expiry must use a duration such as 30m or 1h"));
}
