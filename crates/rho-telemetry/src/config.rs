//! Which signals rho exports, and how: the standard `OTEL_*` variables first, then the
//! `telemetry.*` settings. Nothing is on unless one of them says so (an endpoint alone turns
//! nothing on). What the OTLP exporter reads from the environment by itself (the endpoints, the
//! headers, the timeouts) it still reads; only what rho decides differently is resolved here:
//! that a signal is on at all, the protocol (HTTP only, protobuf unless asked otherwise), the
//! settings' endpoint and headers, and the service name `rho`.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// The `telemetry.*` settings (rho-coding-agent reads them from the global settings file).
#[derive(Debug, Clone, Default)]
pub struct FileSettings {
    /// `telemetry.enabled`: export traces and metrics where no `OTEL_*_EXPORTER` says otherwise.
    pub enabled: bool,
    /// `telemetry.endpoint`: the collector's base URL (`/v1/traces` and `/v1/metrics` are
    /// appended), where no `OTEL_EXPORTER_OTLP_*ENDPOINT` variable names one.
    pub endpoint: Option<String>,
    /// `telemetry.protocol`: `http/protobuf` or `http/json`, where no variable names one.
    pub protocol: Option<String>,
    /// `telemetry.headers`: sent with every export (a variable's header of the same name wins).
    pub headers: BTreeMap<String, String>,
}

/// OTLP's HTTP encodings (gRPC is not built in: it would bring a second HTTP stack).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    HttpProtobuf,
    HttpJson,
}

/// The two signals rho exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Traces,
    Metrics,
}

impl Signal {
    fn upper(self) -> &'static str {
        match self {
            Self::Traces => "TRACES",
            Self::Metrics => "METRICS",
        }
    }

    /// The path OTLP/HTTP appends to a base endpoint.
    fn path(self) -> &'static str {
        match self {
            Self::Traces => "/v1/traces",
            Self::Metrics => "/v1/metrics",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            Self::Traces => "traces",
            Self::Metrics => "metrics",
        }
    }
}

/// How one signal is exported.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub protocol: Protocol,
    /// The full URL, when it comes from the settings (the exporter reads the variables' itself).
    pub endpoint: Option<String>,
    pub headers: HashMap<String, String>,
}

/// How metrics are aggregated between exports (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temporality {
    Cumulative,
    Delta,
    LowMemory,
}

/// What is exported; `None` from [`Config::resolve`] when nothing is.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub traces: Option<Export>,
    pub metrics: Option<Export>,
    pub temporality: Temporality,
    /// How long one export request may take (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s by default).
    pub timeout: Duration,
    /// No `OTEL_SERVICE_NAME` and no `service.name` in `OTEL_RESOURCE_ATTRIBUTES`: rho names
    /// the service `rho`.
    pub default_service_name: bool,
}

impl Config {
    /// The configuration `file` and the variables `env` gives (`env` is `std::env::var` in
    /// rho), and warnings for what was asked and cannot be done.
    pub fn resolve(file: &FileSettings, env: &dyn Fn(&str) -> Option<String>) -> (Option<Config>, Vec<String>) {
        let env = |name: &str| env(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let mut warnings = Vec::new();
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return (None, warnings);
        }
        let mut export = |signal: Signal| {
            if !exporter_on(signal, file, &env, &mut warnings) {
                return None;
            }
            let protocol = protocol(signal, file, &env, &mut warnings)?;
            let endpoint_set = env(&format!("OTEL_EXPORTER_OTLP_{}_ENDPOINT", signal.upper())).is_some()
                || env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some();
            let endpoint = match &file.endpoint {
                Some(base) if !endpoint_set => Some(format!("{}{}", base.trim_end_matches('/'), signal.path())),
                _ => None,
            };
            let headers = file.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            Some(Export { protocol, endpoint, headers })
        };
        let traces = export(Signal::Traces);
        let metrics = export(Signal::Metrics);
        if traces.is_none() && metrics.is_none() {
            return (None, warnings);
        }
        let temporality = match env("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE").map(|v| v.to_lowercase()) {
            Some(v) if v == "delta" => Temporality::Delta,
            Some(v) if v == "lowmemory" => Temporality::LowMemory,
            Some(v) if v != "cumulative" => {
                warnings.push(format!(
                    "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE={v} is not cumulative, delta or lowmemory: cumulative is used"
                ));
                Temporality::Cumulative
            }
            _ => Temporality::Cumulative,
        };
        let timeout = env("OTEL_EXPORTER_OTLP_TIMEOUT")
            .and_then(|ms| ms.parse::<u64>().ok())
            .map_or(Duration::from_secs(10), Duration::from_millis);
        let named_in_attributes = env("OTEL_RESOURCE_ATTRIBUTES")
            .is_some_and(|attributes| attributes.split(',').any(|kv| kv.trim_start().starts_with("service.name=")));
        let default_service_name = env("OTEL_SERVICE_NAME").is_none() && !named_in_attributes;
        (Some(Config { traces, metrics, temporality, timeout, default_service_name }), warnings)
    }
}

/// `OTEL_<SIGNAL>_EXPORTER` (a list; rho knows `otlp` and `none`), else the settings.
fn exporter_on(
    signal: Signal,
    file: &FileSettings,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> bool {
    let name = format!("OTEL_{}_EXPORTER", signal.upper());
    let Some(value) = env(&name) else {
        return file.enabled;
    };
    let mut on = false;
    for exporter in value.split(',').map(|e| e.trim().to_lowercase()).filter(|e| !e.is_empty()) {
        match exporter.as_str() {
            "otlp" => on = true,
            "none" => {}
            other => warnings.push(format!("{name}: rho exports {} over OTLP only, not to {other}", signal.plural())),
        }
    }
    on
}

/// `OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL`, `OTEL_EXPORTER_OTLP_PROTOCOL`, the settings, or
/// `http/protobuf`; `None` (with a warning) for one rho cannot send.
fn protocol(
    signal: Signal,
    file: &FileSettings,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> Option<Protocol> {
    let signal_name = format!("OTEL_EXPORTER_OTLP_{}_PROTOCOL", signal.upper());
    let (source, value) = match (env(&signal_name), env("OTEL_EXPORTER_OTLP_PROTOCOL"), &file.protocol) {
        (Some(v), _, _) => (signal_name, v),
        (None, Some(v), _) => ("OTEL_EXPORTER_OTLP_PROTOCOL".to_owned(), v),
        (None, None, Some(v)) => ("telemetry.protocol".to_owned(), v.clone()),
        (None, None, None) => return Some(Protocol::HttpProtobuf),
    };
    match value.to_lowercase().as_str() {
        "http/protobuf" => Some(Protocol::HttpProtobuf),
        "http/json" => Some(Protocol::HttpJson),
        other => {
            warnings.push(format!(
                "{source}={other}: rho sends OTLP over HTTP only (http/protobuf or http/json); its {} are not exported",
                signal.plural()
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(file: &FileSettings, vars: &[(&str, &str)]) -> (Option<Config>, Vec<String>) {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Config::resolve(file, &|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_is_on_by_default_and_an_endpoint_alone_turns_nothing_on() {
        assert_eq!(resolve(&FileSettings::default(), &[]), (None, vec![]));
        assert_eq!(resolve(&FileSettings::default(), &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")]).0, None);
    }

    #[test]
    fn each_signal_is_turned_on_by_its_own_variable() {
        let (config, warnings) = resolve(&FileSettings::default(), &[("OTEL_TRACES_EXPORTER", "otlp")]);
        let config = config.unwrap();
        assert!(warnings.is_empty());
        assert_eq!(
            config.traces,
            Some(Export { protocol: Protocol::HttpProtobuf, endpoint: None, headers: HashMap::new() })
        );
        assert_eq!(config.metrics, None);
        assert!(config.default_service_name);
        let config = resolve(&FileSettings::default(), &[("OTEL_METRICS_EXPORTER", "none,otlp")]).0.unwrap();
        assert!(config.traces.is_none() && config.metrics.is_some());
    }

    #[test]
    fn the_sdk_switch_and_none_win_over_the_settings() {
        let file = FileSettings { enabled: true, ..FileSettings::default() };
        assert_eq!(resolve(&file, &[("OTEL_SDK_DISABLED", "TRUE")]).0, None);
        let config = resolve(&file, &[("OTEL_TRACES_EXPORTER", "none")]).0.unwrap();
        assert!(config.traces.is_none() && config.metrics.is_some());
    }

    #[test]
    fn the_settings_endpoint_gets_each_signal_s_path_unless_a_variable_names_one() {
        let file = FileSettings {
            enabled: true,
            endpoint: Some("https://collector.example/otlp/".into()),
            protocol: Some("http/json".into()),
            headers: BTreeMap::from([("x-key".into(), "k".into())]),
        };
        let config = resolve(&file, &[]).0.unwrap();
        let traces = config.traces.unwrap();
        assert_eq!(traces.endpoint.as_deref(), Some("https://collector.example/otlp/v1/traces"));
        assert_eq!(traces.protocol, Protocol::HttpJson);
        assert_eq!(traces.headers.get("x-key").map(String::as_str), Some("k"));
        assert_eq!(config.metrics.unwrap().endpoint.as_deref(), Some("https://collector.example/otlp/v1/metrics"));
        let config = resolve(&file, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")]).0.unwrap();
        assert_eq!(config.traces.unwrap().endpoint, None);
    }

    #[test]
    fn grpc_and_unknown_exporters_are_warned_about() {
        let (config, warnings) = resolve(
            &FileSettings::default(),
            &[
                ("OTEL_TRACES_EXPORTER", "otlp"),
                ("OTEL_METRICS_EXPORTER", "prometheus"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ],
        );
        assert_eq!(config, None);
        assert_eq!(
            warnings,
            [
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: rho sends OTLP over HTTP only (http/protobuf or http/json); its traces are not exported",
                "OTEL_METRICS_EXPORTER: rho exports metrics over OTLP only, not to prometheus",
            ]
        );
    }

    #[test]
    fn the_service_is_rho_unless_named() {
        let on = [("OTEL_TRACES_EXPORTER", "otlp")];
        assert!(resolve(&FileSettings::default(), &on).0.unwrap().default_service_name);
        let named = [on[0], ("OTEL_SERVICE_NAME", "fleet")];
        assert!(!resolve(&FileSettings::default(), &named).0.unwrap().default_service_name);
        let attributes = [on[0], ("OTEL_RESOURCE_ATTRIBUTES", "team=a, service.name=fleet")];
        assert!(!resolve(&FileSettings::default(), &attributes).0.unwrap().default_service_name);
    }
}
