//! rho's OpenTelemetry wiring (rho-telemetry does the exporting): started from the `OTEL_*`
//! variables and the `telemetry.*` settings when a session's settings are read, a session's
//! events observed on their way to the mode's sink, and what is pending sent as rho exits.
//! When nothing turns telemetry on, none of it exists: no exporter, no thread, and sinks are
//! not wrapped.

use std::collections::BTreeMap;
use std::sync::{Arc, Once};
use std::time::Duration;

use parking_lot::Mutex;
use rho_agent::Backpressure;
use rho_rpc::SessionEvent;
use rho_telemetry::{Config, FileSettings, SessionObserver};

use crate::agent_session::{AgentSessionEvent, SessionEventSink};
use crate::config::Settings;

/// How long rho's exit waits for pending telemetry at most.
const FLUSH_WITHIN: Duration = Duration::from_secs(3);

/// Starts exporting when the variables or `settings` say so (once per process; problems are
/// warnings on stderr, and rho goes on without telemetry).
pub fn start(settings: &Settings) {
    // All that a start without telemetry reads: two variables and one setting. The rest, here
    // and in rho-telemetry, is not run, so its code is not even paged in.
    let asked = ["OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"].iter().any(|name| std::env::var_os(name).is_some())
        || settings.get("telemetry.enabled").and_then(|v| v.as_bool()) == Some(true);
    if asked {
        start_asked(settings);
    }
}

#[cold]
fn start_asked(settings: &Settings) {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let file = FileSettings {
            enabled: settings.get_bool("telemetry.enabled").unwrap_or(false),
            endpoint: settings.get_string("telemetry.endpoint").filter(|e| !e.trim().is_empty()),
            protocol: settings.get("telemetry.protocol").and_then(|p| p.as_str()).map(str::to_owned),
            headers: settings.get_as::<BTreeMap<String, String>>("telemetry.headers").unwrap_or_default(),
        };
        let (config, warnings) = Config::resolve(&file, &|name| std::env::var(name).ok());
        for warning in warnings {
            eprintln!("Warning: telemetry: {warning}");
        }
        if let Some(config) = config
            && let Err(e) = rho_telemetry::start(&config)
        {
            eprintln!("Warning: {e}");
        }
    });
}

/// Sends what is pending (bounded); nothing to do when telemetry is off.
pub fn shutdown() {
    rho_telemetry::shutdown(FLUSH_WITHIN);
}

/// `sink`, with the session's events observed first when telemetry is on; `sink` itself when
/// it is off. `session_id` holds the current session's id.
pub(crate) fn observed(sink: Arc<dyn SessionEventSink>, session_id: &Arc<Mutex<String>>) -> Arc<dyn SessionEventSink> {
    match SessionObserver::new(session_id.clone()) {
        Some(observer) => Arc::new(Observed { inner: sink, observer }),
        None => sink,
    }
}

struct Observed {
    inner: Arc<dyn SessionEventSink>,
    observer: SessionObserver,
}

impl SessionEventSink for Observed {
    fn emit(&self, event: AgentSessionEvent) {
        match &event {
            AgentSessionEvent::Agent(agent_event) => self.observer.observe(agent_event),
            AgentSessionEvent::Session(SessionEvent::AgentSettled { aborted }) => self.observer.settled(*aborted),
            _ => {}
        }
        self.inner.emit(event);
    }

    fn backpressure(&self) -> Option<Arc<Backpressure>> {
        self.inner.backpressure()
    }

    fn wants_subagent_progress(&self) -> bool {
        self.inner.wants_subagent_progress()
    }

    fn wants_subagent_events(&self) -> bool {
        self.inner.wants_subagent_events()
    }
}
