//! `rho --list-models [search]`: the models with credentials as a table (pi's columns), filtered
//! by a fuzzy search.

use rho_ai::{Model, ModelRegistry, filter_models};

/// The table, or the reference's message when no model is available.
pub fn list_models(registry: &ModelRegistry, search: &str) -> String {
    let available = registry.available();
    if available.is_empty() {
        return "No models available. Set API keys in environment variables.\n".into();
    }
    let models = filter_models(available, search.trim());
    if models.is_empty() {
        return format!("No models match \"{}\".\n", search.trim());
    }
    let header = ["provider", "model", "context", "max-out", "thinking", "images"].map(str::to_owned);
    let rows: Vec<[String; 6]> = models.iter().map(|m| row(m)).collect();
    let mut widths = header.clone().map(|h| h.len());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for r in std::iter::once(&header).chain(&rows) {
        let line: Vec<String> = r.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn row(m: &Model) -> [String; 6] {
    [
        m.provider.clone(),
        m.id.clone(),
        count(m.context_window),
        count(m.max_tokens),
        if m.reasoning { "yes" } else { "no" }.into(),
        if m.supports_images() { "yes" } else { "no" }.into(),
    ]
}

/// `200K`, `1M`, `1.5M`, or the number itself below a thousand.
fn count(n: u64) -> String {
    let scaled = |v: f64, unit: &str| {
        let text = format!("{v:.1}");
        format!("{}{unit}", text.strip_suffix(".0").unwrap_or(&text))
    };
    if n >= 1_000_000 {
        scaled(n as f64 / 1_000_000.0, "M")
    } else if n >= 1_000 {
        scaled(n as f64 / 1_000.0, "K")
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_read_like_the_reference() {
        assert_eq!(count(200_000), "200K");
        assert_eq!(count(1_000_000), "1M");
        assert_eq!(count(1_048_576), "1M");
        assert_eq!(count(32_768), "32.8K");
        assert_eq!(count(512), "512");
    }
}
