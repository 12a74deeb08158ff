use pretty_assertions::assert_eq;
use serde_json::json;

use super::format::{CacheRetention, Target, build_body};
use super::*;
use crate::model::ThinkingLevel;
use crate::model::api;
use crate::providers::test_fixtures::{conversation, model as fixture_model};

const CLAUDE: &str = "us.anthropic.claude-sonnet-4-20250514-v1:0";

fn bedrock(id: &str) -> Model {
    fixture_model(api::BEDROCK_CONVERSE_STREAM, "amazon-bedrock", id, "https://bedrock-runtime.us-east-1.amazonaws.com")
}

fn target(region: &str) -> Target<'_> {
    Target { region, cache: CacheRetention::Short }
}

#[test]
fn a_claude_conversation_is_shaped_as_pi_sends_it() {
    let model = bedrock(CLAUDE);
    let context = conversation(&model, "sig-1", ["toolu_1", "call|2"]);
    let body = build_body(&model, &context, &StreamOptions::default(), target("us-east-1"));
    let cache = json!({"cachePoint": {"type": "default"}});
    assert_eq!(
        body,
        json!({
            "messages": [
                {"role": "user", "content": [
                    {"text": "What is in a.txt?"},
                    {"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}},
                ]},
                {"role": "assistant", "content": [
                    {"reasoningContent": {"reasoningText": {"text": "Need to read it.", "signature": "sig-1"}}},
                    {"text": "Reading."},
                    {"toolUse": {"toolUseId": "toolu_1", "name": "read", "input": {"path": "a.txt"}}},
                    {"toolUse": {"toolUseId": "call_2", "name": "read", "input": {"path": "b.txt"}}},
                ]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "toolu_1", "content": [{"text": "hello"}], "status": "success"}},
                    {"toolResult": {"toolUseId": "call_2", "content": [
                        {"image": {"format": "jpeg", "source": {"bytes": "aW1n"}}},
                    ], "status": "error"}},
                ]},
                {"role": "assistant", "content": [{"text": "Other thoughts."}, {"text": "It says hello."}]},
                {"role": "user", "content": [{"text": "Thanks"}, cache.clone()]},
            ],
            "system": [{"text": "You are a test."}, cache],
            "inferenceConfig": {"maxTokens": 32000},
            "toolConfig": {"tools": [{"toolSpec": {
                "name": "read",
                "description": "Read a file",
                "inputSchema": {"json": context.tools[0].parameters},
            }}]},
        })
    );
}

#[test]
fn thinking_goes_in_additional_fields_for_claude_only() {
    let thinking = StreamOptions { thinking: ThinkingLevel::Medium, ..Default::default() };
    let budget = build_body(&bedrock(CLAUDE), &Default::default(), &thinking, target("us-east-1"));
    assert_eq!(
        budget["additionalModelRequestFields"],
        json!({
            "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
            "anthropic_beta": ["interleaved-thinking-2025-05-14"],
        })
    );
    assert_eq!(budget["inferenceConfig"]["maxTokens"], json!(32000 + 8192));

    let adaptive = bedrock("global.anthropic.claude-opus-4-6-v1");
    let body = build_body(&adaptive, &Default::default(), &thinking, target("us-east-1"));
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "medium"}})
    );
    // GovCloud rejects `display`.
    let gov = build_body(&adaptive, &Default::default(), &thinking, target("us-gov-west-1"));
    assert_eq!(gov["additionalModelRequestFields"]["thinking"], json!({"type": "adaptive"}));
    // Opus 4.7 has its own xhigh.
    let xhigh = StreamOptions { thinking: ThinkingLevel::Xhigh, ..Default::default() };
    let body = build_body(&bedrock("us.anthropic.claude-opus-4-7"), &Default::default(), &xhigh, target("us-east-1"));
    assert_eq!(body["additionalModelRequestFields"]["output_config"], json!({"effort": "xhigh"}));

    let other = build_body(&bedrock("openai.gpt-oss-120b-1:0"), &Default::default(), &thinking, target("us-east-1"));
    assert_eq!(other.get("additionalModelRequestFields"), None);
    let off = build_body(&bedrock(CLAUDE), &Default::default(), &StreamOptions::default(), target("us-east-1"));
    assert_eq!(off.get("additionalModelRequestFields"), None);
}

#[test]
fn other_models_get_no_cache_points_and_no_signatures() {
    let model = bedrock("meta.llama3-70b-instruct-v1:0");
    let context = conversation(&model, "sig-1", ["a", "b"]);
    let body = build_body(&model, &context, &StreamOptions::default(), target("us-east-1"));
    assert_eq!(body["system"], json!([{"text": "You are a test."}]));
    assert_eq!(body["messages"][0]["content"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"reasoningContent": {"reasoningText": {"text": "Need to read it."}}})
    );
    assert_eq!(body["messages"][4]["content"], json!([{"text": "Thanks"}]));
    // A long retention asks for an hour.
    let claude = bedrock(CLAUDE);
    let long = Target { region: "us-east-1", cache: CacheRetention::Long };
    let body = build_body(&claude, &conversation(&claude, "s", ["a", "b"]), &StreamOptions::default(), long);
    assert_eq!(body["system"][1], json!({"cachePoint": {"type": "default", "ttl": "1h"}}));
}

#[test]
fn a_thinking_block_without_its_signature_goes_back_as_text() {
    let model = bedrock(CLAUDE);
    let mut context = conversation(&model, "", ["a", "b"]);
    context.messages.truncate(1);
    let mut context2 = conversation(&model, "", ["a", "b"]);
    context.messages.push(context2.messages.remove(1));
    let body = build_body(&model, &context, &StreamOptions::default(), target("us-east-1"));
    assert_eq!(body["messages"][1]["content"][0], json!({"text": "Need to read it."}));
}

#[test]
fn the_place_follows_pi_order() {
    let standard = "https://bedrock-runtime.us-east-1.amazonaws.com";
    let place = |base, configured, profile, profile_region, over| {
        Place::resolve(base, configured, profile, profile_region, over)
    };
    // Nothing configured: the model's standard endpoint and its region.
    assert_eq!(
        place(standard, None, false, None, None),
        Place { endpoint: standard.into(), region: "us-east-1".into() }
    );
    // A configured region moves a standard endpoint to that region.
    assert_eq!(
        place(standard, Some("eu-west-1"), false, None, None),
        Place { endpoint: "https://bedrock-runtime.eu-west-1.amazonaws.com".into(), region: "eu-west-1".into() }
    );
    // A profile's region, when no region is set.
    assert_eq!(
        place(standard, None, true, Some("ap-south-1"), None),
        Place { endpoint: "https://bedrock-runtime.ap-south-1.amazonaws.com".into(), region: "ap-south-1".into() }
    );
    assert_eq!(place(standard, None, true, None, None).region, "us-east-1");
    // A custom endpoint (a proxy) is always used; it names no region.
    assert_eq!(
        place("http://127.0.0.1:9/", Some("eu-west-1"), false, None, None),
        Place { endpoint: "http://127.0.0.1:9/".into(), region: "eu-west-1".into() }
    );
    assert_eq!(place("http://127.0.0.1:9", None, false, None, None).region, "us-east-1");
    // AWS_ENDPOINT_URL_BEDROCK_RUNTIME wins.
    assert_eq!(place(standard, None, false, None, Some("http://vpce")).endpoint, "http://vpce");
}

#[test]
fn standard_endpoints_are_recognised() {
    assert_eq!(standard_endpoint_region("https://bedrock-runtime.us-west-2.amazonaws.com"), Some("us-west-2"));
    assert_eq!(
        standard_endpoint_region("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/"),
        Some("us-gov-west-1")
    );
    assert_eq!(standard_endpoint_region("https://bedrock-runtime.cn-north-1.amazonaws.com.cn:443"), Some("cn-north-1"));
    assert_eq!(standard_endpoint_region("https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com"), None);
    assert_eq!(standard_endpoint_region("http://127.0.0.1:8080"), None);
    assert_eq!(standard_endpoint_region(""), None);
}

#[test]
fn a_model_arn_stays_one_path_segment() {
    let arn = "arn:aws:bedrock:us-east-1:123:application-inference-profile/abc";
    assert_eq!(
        utf8_percent_encode(arn, PATH_SEGMENT).to_string(),
        "arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Aapplication-inference-profile%2Fabc"
    );
    assert_eq!(utf8_percent_encode(CLAUDE, PATH_SEGMENT).to_string(), "us.anthropic.claude-sonnet-4-20250514-v1%3A0");
}

#[test]
fn signing_adds_the_date_token_and_authorization() {
    let credentials =
        aws_credential_types::Credentials::new("AKIDEXAMPLE", "secret", Some("session".into()), None, "test");
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    let url = "http://127.0.0.1:9/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream";
    sign(&mut headers, url, b"{}", &credentials, "eu-west-1").unwrap();
    let auth = headers["authorization"].to_str().unwrap();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"), "{auth}");
    assert!(auth.contains("/eu-west-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="), "{auth}");
    assert_eq!(headers["x-amz-security-token"], "session");
    assert_eq!(headers["x-amz-date"].len(), "20261127T172803Z".len());
}

#[test]
fn error_statuses_read_as_pi_reports_them() {
    let mut headers = HeaderMap::new();
    headers
        .insert("x-amzn-errortype", HeaderValue::from_static("ValidationException:http://internal.amazon.com/coral/"));
    assert_eq!(
        describe_error(&headers, r#"{"message":"Malformed input request"}"#),
        "Validation error: Malformed input request"
    );
    headers.insert("x-amzn-errortype", HeaderValue::from_static("AccessDeniedException"));
    assert_eq!(describe_error(&headers, r#"{"Message":"no"}"#), "AccessDeniedException: {\"Message\":\"no\"}");
    assert_eq!(describe_error(&HeaderMap::new(), r#"{"message":"plain"}"#), "plain");
}
