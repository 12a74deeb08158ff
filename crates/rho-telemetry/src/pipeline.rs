//! The export pipelines, one per process, built only when telemetry is configured: a batch span
//! processor and a periodic metric reader (each on a thread of its own, so recording a span or
//! a measurement never waits for the network), both sending through [`RuntimeClient`].
//! [`shutdown`] sends what is pending, within a bound: a slow collector delays rho's exit by
//! that much at most.

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use crate::config::{Config, Export, Protocol, Temporality};
use crate::http::RuntimeClient;
use crate::instruments::Instruments;

/// What was built for the signals that are on.
pub(crate) struct Pipeline {
    tracer_provider: Option<SdkTracerProvider>,
    pub tracer: Option<SdkTracer>,
    meter_provider: Option<SdkMeterProvider>,
    pub instruments: Option<Instruments>,
}

static PIPELINE: OnceLock<Pipeline> = OnceLock::new();

/// Why telemetry could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("telemetry needs a tokio runtime to export from")]
    NoRuntime,
    #[error("telemetry: {0}")]
    HttpClient(String),
    #[error("telemetry: the {signal} exporter could not be built: {source}")]
    Exporter {
        signal: &'static str,
        #[source]
        source: opentelemetry_otlp::ExporterBuildError,
    },
}

/// Builds the pipelines `config` asks for, once per process (a later call keeps the first
/// ones). Must be called on a tokio runtime, which the exports then run on.
pub fn start(config: &Config) -> Result<(), StartError> {
    if PIPELINE.get().is_some() {
        return Ok(());
    }
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| StartError::NoRuntime)?;
    let client = rho_ai::http::client(|builder| builder.timeout(config.timeout)).map_err(StartError::HttpClient)?;
    let http = || RuntimeClient::new(client.clone(), runtime.clone());
    let resource = resource(config);
    let tracer_provider = match &config.traces {
        Some(export) => {
            let exporter = opentelemetry_otlp::SpanExporter::builder().with_http().with_http_client(http());
            let exporter = configure(exporter, export)
                .build()
                .map_err(|source| StartError::Exporter { signal: "trace", source })?;
            Some(SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource.clone()).build())
        }
        None => None,
    };
    let meter_provider = match &config.metrics {
        Some(export) => {
            let temporality = match config.temporality {
                Temporality::Cumulative => opentelemetry_sdk::metrics::Temporality::Cumulative,
                Temporality::Delta => opentelemetry_sdk::metrics::Temporality::Delta,
                Temporality::LowMemory => opentelemetry_sdk::metrics::Temporality::LowMemory,
            };
            let exporter = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_http_client(http())
                .with_temporality(temporality);
            let exporter = configure(exporter, export)
                .build()
                .map_err(|source| StartError::Exporter { signal: "metric", source })?;
            Some(SdkMeterProvider::builder().with_periodic_exporter(exporter).with_resource(resource).build())
        }
        None => None,
    };
    let scope = || opentelemetry::InstrumentationScope::builder("rho").with_version(env!("CARGO_PKG_VERSION")).build();
    let tracer = tracer_provider.as_ref().map(|p| p.tracer_with_scope(scope()));
    let instruments = meter_provider.as_ref().map(|p| Instruments::new(&p.meter_with_scope(scope())));
    // Two sessions starting at once (ACP): the second's pipelines are dropped unused.
    let _ = PIPELINE.set(Pipeline { tracer_provider, tracer, meter_provider, instruments });
    Ok(())
}

/// The pipelines, when telemetry was started.
pub(crate) fn get() -> Option<&'static Pipeline> {
    PIPELINE.get()
}

/// Whether telemetry is on in this process.
pub fn enabled() -> bool {
    PIPELINE.get().is_some()
}

/// Sends what is pending and stops the pipelines, waiting `within` at most (the exporting
/// threads are left behind after that, and end with the process).
pub fn shutdown(within: Duration) {
    let Some(pipeline) = PIPELINE.get() else {
        return;
    };
    let (done, finished) = std::sync::mpsc::channel();
    let mut waiting = 0;
    let mut spawn = |name: &str, stop: Box<dyn FnOnce() -> Result<(), String> + Send>| {
        let done = done.clone();
        let spawned = std::thread::Builder::new().name(name.to_owned()).spawn(move || {
            if let Err(e) = stop() {
                tracing::warn!("telemetry: {e}");
            }
            let _ = done.send(());
        });
        if spawned.is_ok() {
            waiting += 1;
        }
    };
    if let Some(provider) = &pipeline.tracer_provider {
        spawn(
            "rho-otel-traces",
            Box::new(move || provider.shutdown_with_timeout(within).map_err(|e| format!("traces: {e}"))),
        );
    }
    if let Some(provider) = &pipeline.meter_provider {
        spawn("rho-otel-metrics", Box::new(move || provider.shutdown().map_err(|e| format!("metrics: {e}"))));
    }
    let deadline = std::time::Instant::now() + within;
    for _ in 0..waiting {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if finished.recv_timeout(left).is_err() {
            tracing::warn!("telemetry: what was pending is not all sent after {within:?}; rho exits without it");
            return;
        }
    }
}

/// The endpoint and headers from the settings, and the protocol.
fn configure<B: WithExportConfig + WithHttpConfig>(builder: B, export: &Export) -> B {
    let protocol = match export.protocol {
        Protocol::HttpProtobuf => opentelemetry_otlp::Protocol::HttpBinary,
        Protocol::HttpJson => opentelemetry_otlp::Protocol::HttpJson,
    };
    let builder = builder.with_protocol(protocol).with_headers(export.headers.clone());
    match &export.endpoint {
        Some(endpoint) => builder.with_endpoint(endpoint.clone()),
        None => builder,
    }
}

/// The SDK's resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), the service `rho`
/// unless they name it, and rho's version.
fn resource(config: &Config) -> Resource {
    let builder = Resource::builder().with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    if config.default_service_name { builder.with_service_name("rho") } else { builder }.build()
}
