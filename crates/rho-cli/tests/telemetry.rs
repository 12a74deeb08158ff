//! OpenTelemetry through the real binary, against an OTLP/HTTP collector of the test's own on
//! 127.0.0.1: a session with a tool call exports a prompt span with a model request span and a
//! tool call span under it (tokens, cost, tool names, the session's id) and its metrics, over
//! protobuf from the `OTEL_*` variables and over JSON from the `telemetry` settings; with
//! nothing configured nothing connects and no exporting thread runs; a collector that refuses
//! connections or never answers costs the session nothing but a log line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::common;

use common::{Env, Rho};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric};
use opentelemetry_proto::tonic::trace::v1::Span;
use parking_lot::Mutex;
use rho_mock_llm::{Turn, Usage};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

/// The variables that could turn telemetry on from the developer's environment.
const OTEL_VARIABLES: &[&str] = &[
    "OTEL_SDK_DISABLED",
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_LOGS_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
];

/// One export the collector received.
struct Post {
    path: String,
    content_type: String,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

/// An OTLP/HTTP collector on 127.0.0.1 that keeps every export and answers 200; its base URL.
async fn collector() -> (String, Arc<Mutex<Vec<Post>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
    let store = received.clone();
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let store = store.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, usize::MAX).await.unwrap().to_vec();
            let content_type =
                parts.headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            store.lock().push(Post { path: parts.uri.path().to_owned(), content_type, headers: parts.headers, body });
            axum::http::StatusCode::OK
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, received)
}

/// `rho --mode rpc` with `vars` set and no other `OTEL_*` variable.
async fn start(env: &Env, vars: &[(&str, &str)]) -> Rho {
    let mut command = env.command(&["--mode", "rpc", "--model", "mock/mock-model", "--no-session"]);
    for name in OTEL_VARIABLES {
        command.env_remove(name);
    }
    command.envs(vars.iter().copied());
    Rho::start_command(command).await
}

/// A reply that runs `bash` (with cache tokens), then one that answers.
async fn tool_session() -> Env {
    let usage = Usage { input: 100, output: 50, cache_read: 20, cache_write: 10, reasoning: 0 };
    Env::new(vec![Turn::tool_call("bash", json!({"command": "echo hi"})).with_usage(usage), Turn::text("done")]).await
}

/// Runs one prompt to `agent_settled`; its frames and the session's id.
async fn run_prompt(rho: &mut Rho) -> (Vec<Value>, String) {
    let state = rho.data(json!({"type": "get_state"})).await;
    rho.send(json!({"type": "prompt", "message": "say hi"})).await;
    let frames = rho.until(|f| f["type"] == "agent_settled").await;
    (frames, state["sessionId"].as_str().unwrap().to_owned())
}

/// Closes stdin and waits for rho's exit (it flushes its telemetry first); its stderr.
async fn finish(rho: &mut Rho) -> String {
    rho.close_stdin();
    assert!(rho.wait().await.success());
    let mut stderr = String::new();
    rho.child.stderr.take().unwrap().read_to_string(&mut stderr).await.unwrap();
    stderr
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

fn string(attributes: &[KeyValue], key: &str) -> String {
    match attribute(attributes, key) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        other => panic!("{key} is not a string: {other:?}"),
    }
}

fn int(attributes: &[KeyValue], key: &str) -> i64 {
    match attribute(attributes, key) {
        Some(any_value::Value::IntValue(n)) => *n,
        other => panic!("{key} is not an integer: {other:?}"),
    }
}

fn double(attributes: &[KeyValue], key: &str) -> f64 {
    match attribute(attributes, key) {
        Some(any_value::Value::DoubleValue(n)) => *n,
        other => panic!("{key} is not a double: {other:?}"),
    }
}

fn boolean(attributes: &[KeyValue], key: &str) -> bool {
    match attribute(attributes, key) {
        Some(any_value::Value::BoolValue(b)) => *b,
        other => panic!("{key} is not a bool: {other:?}"),
    }
}

/// The spans of every trace export (decoded as its content type says), with the service name.
fn spans(received: &[Post]) -> (Vec<Span>, Vec<String>) {
    let mut spans = Vec::new();
    let mut services = Vec::new();
    for post in received.iter().filter(|p| p.path == "/v1/traces") {
        let request: ExportTraceServiceRequest = decode(post);
        for resource_spans in request.resource_spans {
            let resource = resource_spans.resource.unwrap();
            services.push(string(&resource.attributes, "service.name"));
            spans.extend(resource_spans.scope_spans.into_iter().flat_map(|s| s.spans));
        }
    }
    (spans, services)
}

/// The metrics of the last metrics export (cumulative: it holds the totals), by name.
fn metrics(received: &[Post]) -> BTreeMap<String, Metric> {
    let post = received.iter().rfind(|p| p.path == "/v1/metrics").expect("a metrics export");
    let request: ExportMetricsServiceRequest = decode(post);
    request
        .resource_metrics
        .into_iter()
        .flat_map(|r| r.scope_metrics)
        .flat_map(|s| s.metrics)
        .map(|m| (m.name.clone(), m))
        .collect()
}

fn decode<T: prost::Message + Default + serde::de::DeserializeOwned>(post: &Post) -> T {
    match post.content_type.as_str() {
        "application/x-protobuf" => T::decode(post.body.as_slice()).unwrap(),
        "application/json" => serde_json::from_slice(&post.body).unwrap(),
        other => panic!("an export sent as {other}"),
    }
}

/// The sum's data points of `metric`, each with its attributes.
fn sums(metric: &Metric) -> Vec<(Vec<KeyValue>, f64)> {
    match metric.data.as_ref().unwrap() {
        metric::Data::Sum(sum) => sum
            .data_points
            .iter()
            .map(|p| {
                let value = match p.value.unwrap() {
                    opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsInt(n) => n as f64,
                    opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsDouble(n) => n,
                };
                (p.attributes.clone(), value)
            })
            .collect(),
        other => panic!("{} is not a sum: {other:?}", metric.name),
    }
}

/// The prompt's span is the root of one trace, its two model requests and its tool call are its
/// children, each with the session's id; tokens, cost and the tool are as the frames say.
fn check_spans(received: &[Post], frames: &[Value], session_id: &str) {
    let (spans, services) = spans(received);
    assert!(services.iter().all(|s| s == "rho"), "{services:?}");
    let mut names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["chat mock-model", "chat mock-model", "execute_tool bash", "invoke_agent rho"]);
    let prompt = spans.iter().find(|s| s.name == "invoke_agent rho").unwrap();
    assert!(prompt.parent_span_id.is_empty());
    for span in &spans {
        assert_eq!(string(&span.attributes, "session.id"), session_id, "{}", span.name);
        assert_eq!(span.trace_id, prompt.trace_id, "{}", span.name);
        if span.name != prompt.name {
            assert_eq!(span.parent_span_id, prompt.span_id, "{} is a child of the prompt", span.name);
        }
    }
    assert_eq!(int(&prompt.attributes, "rho.model_requests"), 2);
    assert_eq!(int(&prompt.attributes, "rho.tool_calls"), 1);
    assert!(!boolean(&prompt.attributes, "rho.aborted"));

    // Each request as its message_end frame reports it, in order.
    let ends: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
        .map(|f| &f["message"])
        .collect();
    let mut requests: Vec<&Span> = spans.iter().filter(|s| s.name == "chat mock-model").collect();
    requests.sort_by_key(|s| s.start_time_unix_nano);
    assert_eq!(requests.len(), ends.len());
    for (span, message) in requests.iter().zip(&ends) {
        let a = &span.attributes;
        assert_eq!(string(a, "gen_ai.system"), "mock");
        assert_eq!(string(a, "gen_ai.request.model"), "mock-model");
        assert_eq!(string(a, "gen_ai.response.model"), "mock-model");
        assert_eq!(string(a, "gen_ai.operation.name"), "chat");
        assert_eq!(string(a, "rho.stop_reason"), message["stopReason"].as_str().unwrap());
        assert_eq!(int(a, "gen_ai.usage.input_tokens"), message["usage"]["input"].as_i64().unwrap());
        assert_eq!(int(a, "gen_ai.usage.output_tokens"), message["usage"]["output"].as_i64().unwrap());
        assert_eq!(int(a, "rho.usage.cache_read_tokens"), message["usage"]["cacheRead"].as_i64().unwrap());
        assert_eq!(int(a, "rho.usage.cache_write_tokens"), message["usage"]["cacheWrite"].as_i64().unwrap());
        assert_eq!(double(a, "rho.cost_usd"), message["usage"]["cost"]["total"].as_f64().unwrap());
    }
    let first = &requests[0].attributes;
    assert_eq!(
        (int(first, "gen_ai.usage.input_tokens"), int(first, "rho.usage.cache_read_tokens")),
        (100, 20),
        "the scripted usage"
    );
    assert!(double(first, "rho.cost_usd") > 0.0);

    let tool = spans.iter().find(|s| s.name == "execute_tool bash").unwrap();
    let call = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(string(&tool.attributes, "gen_ai.tool.name"), "bash");
    assert_eq!(string(&tool.attributes, "gen_ai.tool.call.id"), call["toolCallId"].as_str().unwrap());
    assert!(!boolean(&tool.attributes, "rho.tool.is_error"));
}

/// Counters of the prompt, the requests, the tokens by type, the cost and the tool call by
/// outcome, and the two duration histograms.
fn check_metrics(received: &[Post], frames: &[Value], session_id: &str) {
    let metrics = metrics(received);
    let total = |name: &str| sums(&metrics[name]).iter().map(|(_, v)| v).sum::<f64>();
    assert_eq!(total("rho.prompt.count"), 1.0);
    assert_eq!(total("rho.model_request.count"), 2.0);
    let tokens: BTreeMap<String, f64> = sums(&metrics["rho.token.usage"])
        .into_iter()
        .map(|(attributes, value)| {
            assert_eq!(string(&attributes, "session.id"), session_id);
            (string(&attributes, "gen_ai.token.type"), value)
        })
        .collect();
    let usage = |field: &str| {
        frames
            .iter()
            .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
            .map(|f| f["message"]["usage"][field].as_f64().unwrap())
            .sum::<f64>()
    };
    assert_eq!(tokens["input"], usage("input"));
    assert_eq!(tokens["output"], usage("output"));
    assert_eq!(tokens["cache_read"], 20.0);
    assert_eq!(tokens["cache_write"], 10.0);
    let cost: f64 = frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
        .map(|f| f["message"]["usage"]["cost"]["total"].as_f64().unwrap())
        .sum();
    assert!((total("rho.cost.usage") - cost).abs() < 1e-12, "{} vs {cost}", total("rho.cost.usage"));
    let calls = sums(&metrics["rho.tool_call.count"]);
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (string(&calls[0].0, "gen_ai.tool.name"), string(&calls[0].0, "rho.tool.outcome"), calls[0].1),
        ("bash".to_owned(), "ok".to_owned(), 1.0)
    );
    for (name, count) in [("rho.tool_call.duration", 1), ("rho.model_request.duration", 2)] {
        match metrics[name].data.as_ref().unwrap() {
            metric::Data::Histogram(h) => assert_eq!(h.data_points.iter().map(|p| p.count).sum::<u64>(), count),
            other => panic!("{name} is not a histogram: {other:?}"),
        }
    }
}

/// The standard variables turn both signals on; they go over http/protobuf (the default) to
/// the endpoint's `/v1/traces` and `/v1/metrics`.
#[tokio::test]
async fn a_session_s_spans_and_metrics_reach_the_collector_the_variables_name() {
    let (url, received) = collector().await;
    let env = tool_session().await;
    let mut rho = start(
        &env,
        &[("OTEL_TRACES_EXPORTER", "otlp"), ("OTEL_METRICS_EXPORTER", "otlp"), ("OTEL_EXPORTER_OTLP_ENDPOINT", &url)],
    )
    .await;
    let (frames, session_id) = run_prompt(&mut rho).await;
    let stderr = finish(&mut rho).await;
    assert!(!stderr.contains("telemetry"), "{stderr}");
    let received = received.lock();
    assert!(received.iter().all(|p| p.content_type == "application/x-protobuf"));
    check_spans(&received, &frames, &session_id);
    check_metrics(&received, &frames, &session_id);
}

/// The `telemetry` settings section turns it on too, here over http/json with a header of
/// the settings; print mode's JSON events are observed as RPC mode's are.
#[tokio::test]
async fn the_telemetry_settings_export_over_json_in_json_mode() {
    let (url, received) = collector().await;
    let env = tool_session().await;
    let settings = json!({"telemetry": {
        "enabled": true, "endpoint": format!("{url}/otlp/"), "protocol": "http/json", "headers": {"x-team": "agents"}
    }});
    std::fs::write(env.agent_dir.join("settings.json"), settings.to_string()).unwrap();
    let mut command = env.command(&["--mode", "json", "--model", "mock/mock-model", "say hi"]);
    for name in OTEL_VARIABLES {
        command.env_remove(name);
    }
    let out = tokio::time::timeout(std::time::Duration::from_secs(20), command.output()).await.unwrap().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let frames: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let session_id = frames[0]["id"].as_str().unwrap().to_owned();
    let received = received.lock();
    assert!(received.iter().all(|p| p.content_type == "application/json"));
    assert!(received.iter().all(|p| p.headers.get("x-team").is_some_and(|v| v == "agents")));
    let paths: std::collections::BTreeSet<&str> = received.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["/otlp/v1/metrics", "/otlp/v1/traces"].into());
    let renamed: Vec<Post> = received
        .iter()
        .map(|p| Post {
            path: p.path.trim_start_matches("/otlp").to_owned(),
            content_type: p.content_type.clone(),
            headers: p.headers.clone(),
            body: p.body.clone(),
        })
        .collect();
    check_spans(&renamed, &frames, &session_id);
    check_metrics(&renamed, &frames, &session_id);
}

/// The names of rho's threads (`/proc/<pid>/task/*/comm`).
fn thread_names(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .map(|task| std::fs::read_to_string(task.path().join("comm")).unwrap_or_default().trim().to_owned())
        .collect()
}

/// Whether `listener` has a connection waiting (one attempted and not yet accepted).
async fn connected(listener: &tokio::net::TcpListener) -> bool {
    tokio::time::timeout(std::time::Duration::ZERO, listener.accept()).await.is_ok()
}

/// An endpoint alone, or every variable with `OTEL_SDK_DISABLED=true`, turns nothing on: no
/// connection is made and no exporting thread runs; with the exporters on, they do run.
#[tokio::test]
async fn with_nothing_turned_on_nothing_connects_and_no_exporter_runs() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", url.as_str());
    let on = [("OTEL_TRACES_EXPORTER", "otlp"), ("OTEL_METRICS_EXPORTER", "otlp"), endpoint];
    let disabled = [on[0], on[1], endpoint, ("OTEL_SDK_DISABLED", "true")];
    for vars in [&[][..], &[endpoint][..], &disabled[..]] {
        let env = tool_session().await;
        let mut rho = start(&env, vars).await;
        run_prompt(&mut rho).await;
        let threads = thread_names(rho.child.id().unwrap());
        assert!(!threads.iter().any(|t| t.starts_with("OpenTelemetry")), "{vars:?}: {threads:?}");
        finish(&mut rho).await;
        assert!(!connected(&listener).await, "{vars:?}: rho connected to the collector");
    }
    // The same look finds the exporters when they are on.
    let env = tool_session().await;
    let mut rho = start(&env, &on).await;
    run_prompt(&mut rho).await;
    let threads = thread_names(rho.child.id().unwrap());
    assert!(threads.iter().filter(|t| t.starts_with("OpenTelemetry")).count() == 2, "{threads:?}");
    rho.child.kill().await.unwrap();
}

/// A session against `endpoint` runs two prompts as it would without telemetry and exits;
/// its stderr.
async fn session_against(endpoint: &str) -> String {
    let env =
        Env::new(vec![Turn::tool_call("bash", json!({"command": "echo hi"})), Turn::text("done"), Turn::text("again")])
            .await;
    let vars = [
        ("OTEL_TRACES_EXPORTER", "otlp"),
        ("OTEL_METRICS_EXPORTER", "otlp"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
        // Exports while the session runs, not only at its end.
        ("OTEL_BSP_SCHEDULE_DELAY", "1"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "20"),
    ];
    let mut rho = start(&env, &vars).await;
    let (frames, _) = run_prompt(&mut rho).await;
    assert_eq!(common::tool_results(&frames), [("hi\n".to_owned(), false)]);
    rho.send(json!({"type": "prompt", "message": "again"})).await;
    let frames = rho.until(|f| f["type"] == "agent_settled").await;
    let answer = frames.iter().rfind(|f| f["type"] == "message_end").unwrap();
    assert_eq!(answer["message"]["content"][0]["text"], "again");
    finish(&mut rho).await
}

/// A collector that refuses connections: the session goes on and ends as usual; the failure is
/// a warning on stderr once per signal, not once per export.
#[tokio::test]
async fn a_collector_that_refuses_connections_costs_a_log_line() {
    let (_refusing, port) = common::refusing_port();
    let url = format!("http://127.0.0.1:{port}");
    let stderr = session_against(&url).await;
    let warnings = stderr.lines().filter(|l| l.contains("telemetry: cannot export")).count();
    assert!((1..=2).contains(&warnings), "{stderr}");
}

/// A collector that takes connections and never answers: the session goes on as usual, and rho
/// still exits (its flush at exit is bounded).
#[tokio::test]
async fn a_collector_that_never_answers_does_not_hold_the_session_or_its_exit() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            connections.push(stream);
        }
    });
    session_against(&url).await;
    held.abort();
}
