use super::*;

fn model() -> Model {
    crate::providers::test_fixtures::model("azure-openai-responses", "azure-openai-responses", "gpt-5.4", "")
}

fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
}

#[test]
fn the_base_url_comes_from_the_url_the_resource_or_the_model() {
    let by_resource = Config::resolve(&model(), env(&[("AZURE_OPENAI_RESOURCE_NAME", "acme")])).unwrap();
    assert_eq!(
        by_resource,
        Config {
            base_url: "https://acme.openai.azure.com/openai/v1".into(),
            api_version: "v1".into(),
            deployment: "gpt-5.4".into()
        }
    );
    let bare = env(&[("AZURE_OPENAI_BASE_URL", "https://acme.openai.azure.com/"), ("AZURE_OPENAI_RESOURCE_NAME", "x")]);
    assert_eq!(Config::resolve(&model(), bare).unwrap().base_url, "https://acme.openai.azure.com/openai/v1");
    let proxy =
        env(&[("AZURE_OPENAI_BASE_URL", "http://127.0.0.1:9/openai/v1"), ("AZURE_OPENAI_API_VERSION", "preview")]);
    let config = Config::resolve(&model(), proxy).unwrap();
    assert_eq!((config.base_url.as_str(), config.api_version.as_str()), ("http://127.0.0.1:9/openai/v1", "preview"));
    assert!(Config::resolve(&model(), env(&[])).unwrap_err().starts_with("Azure OpenAI base URL is required"));
}

#[test]
fn deployments_are_named_by_the_map() {
    let vars = [
        ("AZURE_OPENAI_RESOURCE_NAME", "acme"),
        ("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-4o=prod-4o, gpt-5.4 = big ,x"),
    ];
    assert_eq!(Config::resolve(&model(), env(&vars)).unwrap().deployment, "big");
}
