//! Model and thinking-level commands through the real binary: set_model, cycle_model (with and
//! without a `--models` scope), get_available_models, set_thinking_level and
//! cycle_thinking_level, and the queue-mode setters.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, redact};
use serde_json::json;

#[tokio::test]
async fn set_model_answers_the_full_model_or_the_reference_error() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let model = rho.data(json!({"type": "set_model", "provider": "mock", "modelId": "mock-small"})).await;
    insta::assert_json_snapshot!(redact(&model));
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["model"]["name"], "Mock Small");

    let missing = rho.request(json!({"type": "set_model", "provider": "mock", "modelId": "nope"})).await;
    assert_eq!(missing["success"], false);
    assert_eq!(missing["error"], "Model not found: mock/nope");

    // Saved as the user's default model.
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings["defaultModel"], "mock-small");
    assert_eq!(settings["defaultProvider"], "mock");
}

#[tokio::test]
async fn cycle_model_walks_the_available_models_or_the_scope() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let models = rho.data(json!({"type": "get_available_models"})).await;
    let names: Vec<&str> = models["models"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Mock Model", "Mock Small"]);
    let cycled = rho.data(json!({"type": "cycle_model"})).await;
    assert_eq!(cycled["model"]["name"], "Mock Small");
    assert_eq!(cycled["isScoped"], false);
    assert_eq!(cycled["thinkingLevel"], "off");
    let back = rho.data(json!({"type": "cycle_model"})).await;
    assert_eq!(back["model"]["name"], "Mock Model");

    let mut scoped = Rho::start(&env, &["--no-session", "--models", "mock/mock-model"]).await;
    assert_eq!(scoped.data(json!({"type": "cycle_model"})).await, json!(null));
}

#[tokio::test]
async fn thinking_levels_are_validated_and_clamped_to_the_model() {
    let env = Env::with_api(vec![], "anthropic-messages", true).await;
    let mut rho = Rho::start(&env, &["--no-session", "--thinking", "high"]).await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["thinkingLevel"], "high");
    // xhigh is not offered by this model: clamped down to high.
    assert_eq!(rho.request(json!({"type": "set_thinking_level", "level": "xhigh"})).await["success"], true);
    assert_eq!(rho.data(json!({"type": "get_state"})).await["thinkingLevel"], "high");
    let levels: Vec<serde_json::Value> = {
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(rho.data(json!({"type": "cycle_thinking_level"})).await["level"].clone());
        }
        seen
    };
    assert_eq!(levels, [json!("off"), json!("minimal"), json!("low"), json!("medium"), json!("high"), json!("off")]);

    // A model without reasoning has nothing to cycle.
    rho.data(json!({"type": "set_model", "provider": "mock", "modelId": "mock-small"})).await;
    assert_eq!(rho.data(json!({"type": "cycle_thinking_level"})).await, json!(null));
    assert_eq!(rho.data(json!({"type": "get_state"})).await["thinkingLevel"], "off");
}

#[tokio::test]
async fn queue_modes_apply_and_are_saved() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    for (command, mode) in
        [("set_steering_mode", "all"), ("set_follow_up_mode", "all"), ("set_interrupt_mode", "immediate")]
    {
        let response = rho.request(json!({"type": command, "mode": mode})).await;
        assert_eq!(response.as_object().unwrap().len(), 4, "no data key: {response}");
        assert_eq!(response["success"], true);
    }
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((&state["steeringMode"], &state["followUpMode"]), (&json!("all"), &json!("all")));
    assert_eq!(state["interruptMode"], "immediate");
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings["interruptMode"], "immediate");
    assert_eq!(settings["steeringMode"], "all");
}

/// The providers pi 0.73.1 lists that speak an API rho has (Moonshot, Fireworks, Xiaomi) are
/// in the catalogue with pi's key variables; a Moonshot model goes out as pi sends it
/// (Chat Completions with `max_tokens`, no `store`, no developer role).
#[tokio::test]
async fn a_moonshot_model_is_reached_with_its_key_variable() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("Kimi here.")]).await;
    std::fs::write(
        env.agent_dir.join("models.json"),
        json!({"providers": {"moonshotai": {"baseUrl": format!("{}/v1", env.server.url())}}}).to_string(),
    )
    .unwrap();
    let mut command = env.command(&["-p", "--no-session", "--model", "moonshotai/kimi-k2.6", "hi"]);
    command.env("MOONSHOT_API_KEY", "sk-moon").stdin(std::process::Stdio::null());
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Kimi here.\n");
    let request = env.server.last_request().unwrap();
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-moon"));
    assert_eq!(request.body["model"], "kimi-k2.6");
    assert!(request.body.get("max_tokens").is_some() && request.body.get("store").is_none(), "{}", request.body);
    assert_eq!(request.body["messages"][0]["role"], "system", "no developer role: {}", request.body);
}

/// Cloudflare's AI Gateway as pi serves it: the account and gateway placeholders of its base URL
/// are filled from the environment when the request is made (a missing one is named), and the
/// key goes in `cf-aig-authorization`, not in the provider's own header.
#[tokio::test]
async fn the_cloudflare_gateway_fills_its_url_and_takes_its_own_authorization() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("Through the gateway.")]).await;
    std::fs::write(
        env.agent_dir.join("models.json"),
        json!({"providers": {"cloudflare-ai-gateway": {"baseUrl": "http://{CLOUDFLARE_ACCOUNT_ID}:{CLOUDFLARE_GATEWAY_ID}"}}})
            .to_string(),
    )
    .unwrap();
    let port = env.server.addr().port().to_string();
    let run = |vars: Vec<(&'static str, String)>| {
        let mut command =
            env.command(&["-p", "--no-session", "--model", "cloudflare-ai-gateway/claude-haiku-4-5", "hi"]);
        command.env("CLOUDFLARE_API_KEY", "cf-key").env_remove("CLOUDFLARE_GATEWAY_ID").envs(vars);
        command.stdin(std::process::Stdio::null()).output()
    };
    let missing = run(vec![("CLOUDFLARE_ACCOUNT_ID", "127.0.0.1".into())]).await.unwrap();
    assert!(!missing.status.success());
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim_end(),
        "CLOUDFLARE_GATEWAY_ID is required for provider cloudflare-ai-gateway but is not set."
    );
    assert!(env.server.requests().is_empty());

    let output =
        run(vec![("CLOUDFLARE_ACCOUNT_ID", "127.0.0.1".into()), ("CLOUDFLARE_GATEWAY_ID", port)]).await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Through the gateway.\n");
    let request = env.server.last_request().unwrap();
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("cf-aig-authorization"), Some("Bearer cf-key"));
    assert_eq!((request.header("x-api-key"), request.header("authorization")), (None, None));
}

/// Azure OpenAI as pi reaches it: the Responses wire under the resource's `/openai/v1`, the
/// api version as a query, the key in `api-key`, the model named by its deployment.
#[tokio::test]
async fn an_azure_deployment_is_reached_as_pi_reaches_it() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("From Azure.")]).await;
    let mut command = env.command(&["-p", "--no-session", "--model", "azure-openai-responses/gpt-5.4", "hi"]);
    command
        .env("AZURE_OPENAI_API_KEY", "az-key")
        .env("AZURE_OPENAI_BASE_URL", format!("{}/openai/v1", env.server.url()))
        .env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-5.4=team-gpt")
        .env_remove("AZURE_OPENAI_API_VERSION")
        .env_remove("AZURE_OPENAI_RESOURCE_NAME")
        .stdin(std::process::Stdio::null());
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "From Azure.\n");
    let request = env.server.last_request().unwrap();
    assert_eq!((request.path.as_str(), request.query.as_str()), ("/openai/v1/responses", "api-version=v1"));
    assert_eq!(request.header("api-key"), Some("az-key"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.body["model"], "team-gpt");
    assert_eq!(request.body["store"], false, "as pi 1.6 sends it");
}

/// A Bedrock command with the AWS variables the test sets and no others: no profile, config or
/// credentials file of the machine's, no instance metadata.
fn bedrock_command(env: &Env, vars: &[(&str, String)]) -> tokio::process::Command {
    std::fs::write(
        env.agent_dir.join("models.json"),
        json!({"providers": {"amazon-bedrock": {"baseUrl": env.server.url()}}}).to_string(),
    )
    .unwrap();
    let mut command = env.command(&[
        "-p",
        "--no-session",
        "--model",
        "amazon-bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0",
        "hi",
    ]);
    for var in [
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_BEDROCK_SKIP_AUTH",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ] {
        command.env_remove(var);
    }
    let missing = env.agent_dir.join("no-aws-files");
    command
        .env("AWS_CONFIG_FILE", missing.join("config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", missing.join("credentials"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .envs(vars.iter().map(|(k, v)| (*k, v.clone())))
        .stdin(std::process::Stdio::null());
    command
}

/// Amazon Bedrock as pi reaches it with AWS keys in the environment: ConverseStream at the
/// model's path, signed with SigV4 for `bedrock` in the configured region (the session token
/// sent with it), answered with AWS's binary event stream.
#[tokio::test]
async fn a_bedrock_model_is_signed_with_the_environments_keys() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("From Bedrock.")]).await;
    let vars = [
        ("AWS_ACCESS_KEY_ID", "AKIDRHOTEST".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "secret".to_owned()),
        ("AWS_SESSION_TOKEN", "session-token".to_owned()),
        ("AWS_REGION", "eu-central-1".to_owned()),
    ];
    let output = bedrock_command(&env, &vars).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "From Bedrock.\n");
    let request = env.server.last_request().unwrap();
    assert_eq!(request.path, "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream");
    let auth = request.header("authorization").unwrap_or_default();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDRHOTEST/"), "{auth}");
    assert!(auth.contains("/eu-central-1/bedrock/aws4_request, SignedHeaders="), "{auth}");
    assert_eq!(request.header("x-amz-security-token"), Some("session-token"));
    assert!(request.header("x-amz-date").is_some());
    // The default thinking level asks Claude for a budget, added to the output cap.
    assert_eq!(request.body["inferenceConfig"]["maxTokens"], 32000 + 8192);
    assert_eq!(request.body["additionalModelRequestFields"]["thinking"]["budget_tokens"], 8192);
    assert_eq!(
        request.body["messages"][0]["content"],
        json!([{"text": "hi"}, {"cachePoint": {"type": "default"}}]),
        "the prompt, marked for caching"
    );
}

/// In a container (ECS, EKS pod identity) the credentials come from the endpoint
/// `AWS_CONTAINER_CREDENTIALS_FULL_URI` names, fetched through rho's own HTTP client; a Bedrock
/// API key instead goes as a bearer token and nothing is signed.
#[tokio::test]
async fn bedrock_takes_container_credentials_or_an_api_key() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("Signed."), rho_mock_llm::Turn::text("Keyed.")]).await;
    let uri = format!("{}/aws/container-credentials", env.server.url());
    let output = bedrock_command(&env, &[("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri)]).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Signed.\n");
    let request = env.server.last_request().unwrap();
    let auth = request.header("authorization").unwrap_or_default();
    let credential = format!("Credential={}/", rho_mock_llm::CONTAINER_ACCESS_KEY_ID);
    assert!(auth.contains(&credential) && auth.contains("/us-east-1/bedrock/"), "{auth}");
    assert_eq!(request.header("x-amz-security-token"), Some(rho_mock_llm::CONTAINER_SESSION_TOKEN));

    let key = [("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key".to_owned())];
    let output = bedrock_command(&env, &key).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Keyed.\n");
    let request = env.server.last_request().unwrap();
    assert_eq!(request.header("authorization"), Some("Bearer bedrock-api-key"));
    assert_eq!(request.header("x-amz-date"), None);
}

/// Without any AWS credential source, Bedrock's models are not offered and a request for one
/// names what is missing, as for any provider without a key.
#[tokio::test]
async fn bedrock_without_credentials_sends_nothing() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("unused")]).await;
    let output = bedrock_command(&env, &[]).output().await.unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("amazon-bedrock"), "{stderr}");
    assert!(env.server.requests().is_empty());
}

/// `AWS_PROFILE` names a profile of the shared files: its keys sign the request and, with no
/// `AWS_REGION`, its region is the one signed for.
#[tokio::test]
async fn bedrock_takes_a_profiles_keys_and_region() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("From the profile.")]).await;
    let aws = env.agent_dir.join("aws");
    std::fs::create_dir_all(&aws).unwrap();
    let credentials = "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n\n\
                       [work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = w\n";
    std::fs::write(aws.join("credentials"), credentials).unwrap();
    std::fs::write(aws.join("config"), "[profile work]\nregion = ap-southeast-2\n").unwrap();
    let mut command = bedrock_command(&env, &[("AWS_PROFILE", "work".to_owned())]);
    command.env("AWS_CONFIG_FILE", aws.join("config")).env("AWS_SHARED_CREDENTIALS_FILE", aws.join("credentials"));
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "From the profile.\n");
    let request = env.server.last_request().unwrap();
    let auth = request.header("authorization").unwrap_or_default();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDWORK/"), "{auth}");
    assert!(auth.contains("/ap-southeast-2/bedrock/aws4_request"), "{auth}");
    assert_eq!(request.header("x-amz-security-token"), None);
}

/// On EKS (IRSA) the credentials are a web identity token exchanged with STS: the token file and
/// role come from the environment, and STS's `AssumeRoleWithWebIdentity` is called through rho's
/// HTTP client (here the mock's, through `AWS_ENDPOINT_URL_STS`).
#[tokio::test]
async fn bedrock_exchanges_a_web_identity_token_with_sts() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("From the pod.")]).await;
    let token = env.agent_dir.join("web-identity-token");
    std::fs::write(&token, "a-web-identity-token").unwrap();
    let vars = [
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.display().to_string()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/mock".to_owned()),
        ("AWS_ROLE_SESSION_NAME", "rho".to_owned()),
        ("AWS_REGION", "us-west-2".to_owned()),
        ("AWS_ENDPOINT_URL_STS", format!("{}/aws/sts/", env.server.url())),
    ];
    let output = bedrock_command(&env, &vars).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "From the pod.\n");
    let requests = env.server.requests();
    let sts = requests.iter().find(|r| r.path.starts_with("/aws/sts")).expect("STS was asked");
    let form = sts.body.as_str().unwrap_or_default().to_owned();
    assert!(
        form.contains("Action=AssumeRoleWithWebIdentity") && form.contains("WebIdentityToken=a-web-identity-token"),
        "{form}"
    );
    let request = env.server.last_request().unwrap();
    let auth = request.header("authorization").unwrap_or_default();
    let credential = format!("Credential={}/", rho_mock_llm::WEB_IDENTITY_ACCESS_KEY_ID);
    assert!(auth.contains(&credential) && auth.contains("/us-west-2/bedrock/"), "{auth}");
    assert_eq!(request.header("x-amz-security-token"), Some(rho_mock_llm::WEB_IDENTITY_SESSION_TOKEN));
}

/// pi 1.6's models.json `samplingParams`: the model's defaults in every request, the thinking
/// level's overrides on top (an OpenAI-style API; others ignore them, as pi does).
#[tokio::test]
async fn sampling_params_of_models_json_reach_the_request() {
    let turns = vec![rho_mock_llm::Turn::text("One."), rho_mock_llm::Turn::text("Two.")];
    let env = Env::with_api(turns, "openai-completions", true).await;
    let file = env.agent_dir.join("models.json");
    let mut models: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    models["providers"]["mock"]["models"][0]["samplingParams"] = json!({"temperature": 0.2, "top_p": 0.9});
    models["providers"]["mock"]["models"][0]["samplingParamsByThinkingLevel"] =
        json!({"high": {"temperature": 0.6, "top_k": 20}, "sideways": {"top_k": 1}});
    std::fs::write(&file, models.to_string()).unwrap();

    let mut rho = Rho::start(&env, &["--no-session", "--thinking", "low"]).await;
    rho.send(json!({"type": "prompt", "message": "one"})).await;
    rho.until_agent_end().await;
    rho.data(json!({"type": "set_thinking_level", "level": "high"})).await;
    rho.send(json!({"type": "prompt", "message": "two"})).await;
    rho.until_agent_end().await;
    let bodies = env.request_bodies();
    let fields = |i: usize| (bodies[i]["temperature"].clone(), bodies[i]["top_p"].clone(), bodies[i]["top_k"].clone());
    assert_eq!(fields(0), (json!(0.2), json!(0.9), serde_json::Value::Null));
    assert_eq!(fields(1), (json!(0.6), json!(0.9), json!(20)), "the level's overrides win, key by key");
}
