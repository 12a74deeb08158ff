use base64::Engine;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::*;
use crate::model::api;
use crate::providers::test_fixtures::model as fixture_model;

/// A key made for these tests only.
const TEST_KEY: &str = include_str!("test_key.pem");

fn gemini(base_url: &str) -> Model {
    fixture_model(api::GOOGLE_VERTEX, "google-vertex", "gemini-2.5-pro", base_url)
}

#[test]
fn endpoints_by_key_project_location_and_base_url() {
    let catalogue = gemini("https://{location}-aiplatform.googleapis.com");
    assert_eq!(
        endpoint(&catalogue, Some(("proj", "us-central1"))),
        "https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        endpoint(&catalogue, Some(("proj", "global"))),
        "https://aiplatform.googleapis.com/v1/projects/proj/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        endpoint(&catalogue, None),
        "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        endpoint(&gemini("http://127.0.0.1:9/"), Some(("p", "l"))),
        "http://127.0.0.1:9/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        endpoint(&gemini("https://proxy.example/v1beta1"), None),
        "https://proxy.example/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
}

#[test]
fn markers_and_placeholders_are_not_keys() {
    assert!(is_api_key("AIza-real"));
    for not_a_key in [ADC_MARKER, "gcp-vertex-credentials", "<your key>", " "] {
        assert!(!is_api_key(not_a_key), "{not_a_key}");
    }
}

#[test]
fn a_service_account_signs_its_assertion_with_rs256() {
    let jwt =
        adc::assertion("svc@proj.iam.gserviceaccount.com", TEST_KEY, Some("kid-1"), "https://t.example/token", 1_000)
            .unwrap();
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    let decode = |p: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p).unwrap();
    let header: Value = serde_json::from_slice(&decode(parts[0])).unwrap();
    assert_eq!(header, serde_json::json!({"alg": "RS256", "typ": "JWT", "kid": "kid-1"}));
    let claims: Value = serde_json::from_slice(&decode(parts[1])).unwrap();
    assert_eq!(
        claims,
        serde_json::json!({"iss": "svc@proj.iam.gserviceaccount.com", "scope": "https://www.googleapis.com/auth/cloud-platform",
            "aud": "https://t.example/token", "iat": 1000, "exp": 4600})
    );
    // The signature verifies with the key's public half.
    let body: String = TEST_KEY.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body).unwrap();
    let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
    let public =
        ring::signature::UnparsedPublicKey::new(&ring::signature::RSA_PKCS1_2048_8192_SHA256, pair.public().as_ref());
    let signed = format!("{}.{}", parts[0], parts[1]);
    assert!(public.verify(signed.as_bytes(), &decode(parts[2])).is_ok());
    assert!(adc::assertion("svc", "not a key", None, "aud", 0).is_err());
}

#[test]
fn adc_is_usable_with_the_file_a_project_and_a_location() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("adc.json");
    std::fs::write(&file, "{}").unwrap();
    let path = file.to_str().unwrap().to_owned();
    let with = |vars: &'static [(&'static str, &'static str)]| {
        let path = path.clone();
        move |name: &str| {
            if name == "GOOGLE_APPLICATION_CREDENTIALS" {
                return Some(path.clone());
            }
            vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        }
    };
    assert!(adc::usable_in(&with(&[("GOOGLE_CLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "global")])));
    assert!(adc::usable_in(&with(&[("GCLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "global")])));
    assert!(!adc::usable_in(&with(&[("GOOGLE_CLOUD_PROJECT", "p")])));
    assert!(!adc::usable_in(
        &|name: &str| (name == "GOOGLE_APPLICATION_CREDENTIALS").then(|| "/nonexistent".to_owned())
    ));
}
