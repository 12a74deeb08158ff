//! The text of the `task` tool's result, in xcsh's `<task-summary>` layout: a header with the
//! success count and duration, then per task its status, verification and reply (a preview cut
//! at a line end when the reply is long, pointing at the full output file), then what happened
//! to the isolated tasks' changes.

use std::fmt::Write;

use rho_rpc::VerificationStatus;

use super::result::SingleResult;

/// Replies longer than this are previewed.
const PREVIEW_CHARS: usize = 5_000;

pub fn render(results: &[SingleResult], duration_ms: u64, merge_summary: Option<&str>) -> String {
    let succeeded = results.iter().filter(|r| r.succeeded()).count();
    let cancelled = results.iter().filter(|r| r.aborted == Some(true)).count();
    let mut out = String::from("<task-summary>\n<header>");
    let _ = write!(out, "{succeeded}/{} succeeded", results.len());
    if cancelled > 0 {
        let _ = write!(out, " ({cancelled} cancelled)");
    }
    let _ = writeln!(out, " [{}]</header>\n", format_duration(duration_ms));
    for (i, r) in results.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n\n");
        }
        let _ = writeln!(out, "<agent id=\"{}\" agent=\"{}\">", r.id, r.agent);
        let _ = writeln!(out, "<status>{}</status>", status(r));
        if let Some(v) = &r.verification {
            let _ = writeln!(
                out,
                "<verification status=\"{}\" attempts=\"{}\" />",
                verification_status(v.status),
                v.attempts.len()
            );
        }
        if let Some(path) = &r.patch_path {
            let _ = writeln!(out, "<patch path=\"{}\" />", path.display());
        }
        let text = match (r.output.trim(), r.error.as_deref()) {
            ("", Some(error)) => error.trim(),
            ("", None) => "(no output)",
            (output, _) => output,
        };
        if text.chars().count() > PREVIEW_CHARS {
            let cut: String = text.chars().take(PREVIEW_CHARS).collect();
            let cut = cut.rfind('\n').map_or(cut.as_str(), |i| &cut[..i]);
            match &r.output_path {
                Some(path) => {
                    let _ = writeln!(out, "<preview full-path=\"{}\">\n{cut}\n</preview>", path.display());
                }
                None => {
                    let _ = writeln!(out, "<preview>\n{cut}\n</preview>");
                }
            }
        } else {
            let _ = writeln!(out, "<result>\n{text}\n</result>");
        }
        out.push_str("</agent>\n");
    }
    if let Some(merge) = merge_summary {
        let _ = writeln!(out, "\n<merge-summary>\n{merge}\n</merge-summary>");
    }
    out.push_str("</task-summary>");
    out
}

fn status(r: &SingleResult) -> String {
    if r.aborted == Some(true) {
        "cancelled".into()
    } else if r.exit_code == 0 && r.error.is_some() {
        "merge failed".into()
    } else if r.exit_code == 0 {
        "completed".into()
    } else {
        format!("failed (exit {})", r.exit_code)
    }
}

fn verification_status(s: VerificationStatus) -> &'static str {
    match s {
        VerificationStatus::NotRequested => "not_requested",
        VerificationStatus::Passed => "passed",
        VerificationStatus::Failed => "failed",
        VerificationStatus::Skipped => "skipped",
    }
}

/// `850ms`, `4.2s`, `3m 5s`.
pub fn format_duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m {}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(format_duration(850), "850ms");
        assert_eq!(format_duration(4_240), "4.2s");
        assert_eq!(format_duration(185_000), "3m 5s");
    }
}
