//! Providers from an extension, through the fixture `provider.ts`: `--model` naming one of them
//! (found once the extensions are loaded), a reply the extension streams itself (text, a tool
//! call, usage priced by the model's cost, an abort, a failure), a configuration-only provider
//! rho talks to over HTTP with the provider's header, and unregistering.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho, redact};

fn assistant_end(frames: &[Value]) -> Value {
    let end = frames
        .iter()
        .rfind(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
        .expect("an assistant message_end");
    redact(&end["message"])
}

#[tokio::test]
async fn extensions_register_providers_that_rho_uses() {
    let Some(host) = pi_host("extensions_register_providers_that_rho_uses") else { return };
    let env = Env::new(vec![Turn::text("From the mock, through the proxy.")]).await.with_extension_host(host);
    std::fs::write(env.cwd.join("notes.txt"), "a note\n").unwrap();
    let mut command = env.command(&["--mode", "rpc", "-e", &fixture("provider.ts"), "--model", "echo/echo-1"]);
    command.env("PROXY_BASE_URL", env.server.url());
    let mut rho = Rho::start_command(command).await;

    // --model named a model only the extension provides.
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((&state["model"]["provider"], &state["model"]["id"]), (&json!("echo"), &json!("echo-1")), "{state}");
    let models = rho.data(json!({"type": "get_available_models"})).await;
    let names: Vec<String> = models["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}/{}", m["provider"].as_str().unwrap(), m["id"].as_str().unwrap()))
        .collect();
    assert!(names.contains(&"echo/echo-1".to_owned()) && names.contains(&"proxy/proxied".to_owned()), "{names:?}");

    // The extension streams the reply; rho prices its usage with the model's cost.
    rho.send(json!({"type": "prompt", "id": "p1", "message": "hello there"})).await;
    let frames = rho.until_agent_end().await;
    let streamed: String = frames
        .iter()
        .filter(|f| f["type"] == "message_update" && f["assistantMessageEvent"]["type"] == "text_delta")
        .map(|f| f["assistantMessageEvent"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, "Echo: hello there");
    insta::assert_json_snapshot!("provider_streamed_reply", assistant_end(&frames));

    // A tool call streamed in pieces runs, and the reply after it sees its result.
    rho.send(json!({"type": "prompt", "id": "p2", "message": "use a tool"})).await;
    let frames = rho.until_agent_end().await;
    let call = frames.iter().find(|f| f["type"] == "tool_execution_end").expect("the tool ran");
    assert_eq!(call["toolName"], "read");
    assert_eq!(assistant_end(&frames)["content"][0]["text"], "The tool said: a note\n");

    // A failure is the reply's error; an abort reaches the extension's signal.
    rho.send(json!({"type": "prompt", "id": "p3", "message": "please fail"})).await;
    let end = assistant_end(&rho.until_agent_end().await);
    assert_eq!((&end["stopReason"], &end["errorMessage"]), (&json!("error"), &json!("the echo service is down")));
    rho.send(json!({"type": "prompt", "id": "p4", "message": "please wait"})).await;
    rho.until(|f| f["type"] == "message_start" && f["message"]["role"] == "assistant").await;
    rho.send(json!({"type": "abort", "id": "a"})).await;
    let end = assistant_end(&rho.until_agent_end().await);
    assert_eq!(end["stopReason"], "aborted", "{end}");

    // A provider that is configuration only: rho sends the request, with its header.
    let switched = rho.request(json!({"type": "set_model", "provider": "proxy", "modelId": "proxied"})).await;
    assert_eq!(switched["success"], true, "{switched}");
    rho.send(json!({"type": "prompt", "id": "p5", "message": "through the proxy"})).await;
    let end = assistant_end(&rho.until_agent_end().await);
    assert_eq!(end["content"][0]["text"], "From the mock, through the proxy.");
    let request = env.server.last_request().unwrap();
    assert_eq!(request.body["model"], "proxied");
    assert_eq!(request.headers.get("x-proxy").map(String::as_str), Some("rho-test"));
    assert_eq!(request.headers.get("x-api-key").map(String::as_str), Some("proxy-key"));

    // Unregistered, its models are gone.
    rho.send(json!({"type": "prompt", "id": "d", "message": "/drop-echo"})).await;
    rho.until(|f| f["type"] == "response" && f["id"] == "d").await;
    let models = loop {
        let models = rho.data(json!({"type": "get_available_models"})).await;
        if !models.to_string().contains("echo-1") {
            break models;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert!(models.to_string().contains("proxied"), "{models}");
}

#[tokio::test]
async fn models_of_extension_providers_are_listed_and_model_flags_keep_their_order() {
    let Some(host) = pi_host("models_of_extension_providers_are_listed_and_model_flags_keep_their_order") else {
        return;
    };
    let env = Env::new(Vec::new()).await.with_extension_host(host);
    let mut command = env.command(&["-e", &fixture("provider.ts"), "--list-models", "echo"]);
    command.env("PROXY_BASE_URL", env.server.url());
    let listed = command.output().await.unwrap();
    assert!(listed.status.success(), "{listed:?}");
    let table = String::from_utf8(listed.stdout).unwrap();
    insta::assert_snapshot!("provider_models_listed", table);

    // A --model known at start is applied before the extensions load: what session_start
    // switches to stays.
    let mut rho =
        Rho::spawn(&env, &["-e", &fixture("provider.ts"), "--model", "mock/mock-model", "--switch-to-proxy"]).await;
    rho.until(|f| f["type"] == "ready").await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["model"]["id"], "proxied", "{state}");
    rho.close_stdin();
    rho.wait().await;

    let mut command = env.command(&["-e", &fixture("provider.ts"), "--model", "nowhere/nothing", "-p", "hi"]);
    command.env("PROXY_BASE_URL", env.server.url());
    let refused = command.output().await.unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.contains("Error: Model \"nowhere/nothing\" not found."), "{stderr}");
    assert!(env.request_bodies().is_empty());
}

#[tokio::test]
async fn a_provider_registered_whole_is_spoken_to_with_its_resolved_auth() {
    let Some(host) = pi_host("a_provider_registered_whole_is_spoken_to_with_its_resolved_auth") else { return };
    let env = Env::new(vec![Turn::text("From the local server.")]).await.with_extension_host(host);
    let mut command = env.command(&["--mode", "rpc", "-e", &fixture("native-provider.ts"), "--model", "local/local-1"]);
    command.env("LOCAL_BASE_URL", env.server.url());
    let mut rho = Rho::spawn_command(command);
    // The models of two APIs rho does not speak are refused, and it says why.
    let startup = rho.until(|f| f["type"] == "ready").await;
    let refused: Vec<&Value> = startup.iter().filter(|f| f["type"] == "extension_error").collect();
    assert_eq!(refused.len(), 1, "{startup:?}");
    assert_eq!(
        (&refused[0]["event"], &refused[0]["error"]),
        (
            &json!("register_provider"),
            &json!("Provider odd: rho streams one API of a provider through its extension, not odd-one, odd-two")
        )
    );

    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((&state["model"]["provider"], &state["model"]["id"]), (&json!("local"), &json!("local-1")), "{state}");
    rho.send(json!({"type": "prompt", "id": "p", "message": "hello"})).await;
    let frames = rho.until_agent_end().await;
    assert_eq!(assistant_end(&frames)["content"][0]["text"], "From the local server.");
    let request = env.server.requests().pop().unwrap();
    assert_eq!(request.headers.get("x-local").map(String::as_str), Some("native"), "{:?}", request.headers);
    assert_eq!(request.headers.get("x-api-key").map(String::as_str), Some("local-placeholder"));

    let models = rho.data(json!({"type": "get_available_models"})).await;
    assert!(!models.to_string().contains("\"odd\""), "{models}");

    // A provider with an API of its own streams the reply itself.
    rho.data(json!({"type": "set_model", "provider": "streamer", "modelId": "streamer-1"})).await;
    rho.send(json!({"type": "prompt", "id": "p2", "message": "say something"})).await;
    let frames = rho.until_agent_end().await;
    assert_eq!(assistant_end(&frames)["content"][0]["text"], "Streamed by the provider: say something");
    assert_eq!(env.server.requests().len(), 1, "the mock was asked once, by `local`");
}
