//! Frame timings for the benchmark (bench/tui): with `RHO_TUI_FRAME_STATS=<file>` set, the
//! number of frames, the time to the first one (from the mode's start) and the work per frame
//! are written to that file as JSON when the mode ends.

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub struct FrameStats {
    out: Option<PathBuf>,
    started: Instant,
    first: Option<Duration>,
    frames: u64,
    total: Duration,
    max: Duration,
    over_16ms: u64,
}

impl FrameStats {
    pub fn from_env(started: Instant) -> Self {
        let out = std::env::var_os("RHO_TUI_FRAME_STATS").map(PathBuf::from);
        Self { out, started, first: None, frames: 0, total: Duration::ZERO, max: Duration::ZERO, over_16ms: 0 }
    }

    /// One frame that took `work`, ending now.
    pub fn record(&mut self, work: Duration) {
        self.first.get_or_insert_with(|| self.started.elapsed());
        self.frames += 1;
        self.total += work;
        self.max = self.max.max(work);
        if work > Duration::from_millis(16) {
            self.over_16ms += 1;
        }
    }

    pub fn write(&self) {
        let Some(out) = &self.out else { return };
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let json = serde_json::json!({
            "frames": self.frames,
            "firstFrameMs": self.first.map(ms),
            "totalFrameMs": ms(self.total),
            "maxFrameMs": ms(self.max),
            "framesOver16ms": self.over_16ms,
        });
        let _ = std::fs::write(out, json.to_string());
    }
}
