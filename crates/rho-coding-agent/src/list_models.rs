//! `rho --list-models [search]`: the models with credentials as a table (pi's columns), filtered
//! by a fuzzy search, sorted by provider then model id as pi sorts them (`localeCompare`).

use std::cmp::Ordering;

use rho_ai::catalog::locale_compare;
use rho_ai::{ModelRegistry, filter_models};
use rho_types::Model;

/// The table, or the reference's message when no model is available.
pub fn list_models(registry: &ModelRegistry, search: &str) -> String {
    let available = registry.available();
    if available.is_empty() {
        return "No models available. Set API keys in environment variables.\n".into();
    }
    let mut models = filter_models(available, search.trim());
    if models.is_empty() {
        return format!("No models match \"{}\".\n", search.trim());
    }
    models.sort_by(|a, b| by_provider_then_id(a, b));
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

/// pi's order: provider, then model id, each by `localeCompare` (a stable sort, so a model
/// listed twice keeps registry order).
fn by_provider_then_id(a: &Model, b: &Model) -> Ordering {
    locale_compare(&a.provider, &b.provider).then_with(|| locale_compare(&a.id, &b.id))
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

/// pi's `formatTokenCount`: `200K` and `1M` for whole thousands and millions, else one decimal
/// (`32.8K`, `1.0M` for 1,048,576, `1.1M` for 1,050,000), or the number itself below a thousand.
fn count(n: u64) -> String {
    let scaled = |unit_size: u64, unit: &str| {
        if n.is_multiple_of(unit_size) {
            return format!("{}{unit}", n / unit_size);
        }
        // JavaScript's `toFixed(1)` rounds an exact tie up, where Rust's formatting rounds it to
        // even; the division is exact only for multiples of a quarter unit.
        let exact_tie = n.is_multiple_of(unit_size / 4) && n % (unit_size / 10) == unit_size / 20;
        if exact_tie {
            let tenths = n / (unit_size / 10) + 1;
            return format!("{}.{}{unit}", tenths / 10, tenths % 10);
        }
        format!("{:.1}{unit}", n as f64 / unit_size as f64)
    };
    if n >= 1_000_000 {
        scaled(1_000_000, "M")
    } else if n >= 1_000 {
        scaled(1_000, "K")
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use rho_ai::auth::env_from;

    use super::*;

    /// The values and what pi 0.73.1's `formatTokenCount` prints for them.
    #[test]
    fn counts_read_like_the_reference() {
        let cases = [
            (200_000, "200K"),
            (1_000_000, "1M"),
            (2_000_000, "2M"),
            (1_048_576, "1.0M"),
            (1_050_000, "1.1M"),
            (1_250_000, "1.3M"),
            (32_768, "32.8K"),
            (32_250, "32.3K"),
            (1_250, "1.3K"),
            (1_150, "1.1K"),
            (4_095, "4.1K"),
            (999_950, "1000.0K"),
            (512, "512"),
        ];
        for (n, text) in cases {
            assert_eq!(count(n), text, "{n}");
        }
    }

    fn registry(keys: &[(&str, &str)], models_json: Option<&str>) -> ModelRegistry {
        let dir = tempfile::tempdir().unwrap();
        if let Some(text) = models_json {
            std::fs::write(dir.path().join("models.json"), text).unwrap();
        }
        let (registry, errors) = ModelRegistry::load_with_env(dir.path(), env_from(keys.iter().copied()));
        assert!(errors.is_empty(), "{errors:?}");
        registry
    }

    fn rows(table: &str) -> Vec<(String, String)> {
        table
            .lines()
            .skip(1)
            .map(|line| {
                let mut cells = line.split_whitespace();
                (cells.next().unwrap().to_owned(), cells.next().unwrap().to_owned())
            })
            .collect()
    }

    #[test]
    fn sorted_by_provider_then_id_as_pi_sorts() {
        let custom = r#"{"providers": {"Local": {"baseUrl": "http://localhost:1/v1", "api": "openai-completions",
            "models": [{"id": "zeta"}, {"id": "Alpha"}, {"id": "alpha-2"}]}}}"#;
        let keys = [("ZAI_API_KEY", "z"), ("ANTHROPIC_API_KEY", "a"), ("MINIMAX_API_KEY", "m")];
        let table = list_models(&registry(&keys, Some(custom)), "");
        let rows = rows(&table);
        let providers: Vec<&str> = rows.iter().map(|(p, _)| p.as_str()).collect();
        let mut distinct = providers.clone();
        distinct.dedup();
        assert_eq!(distinct, ["anthropic", "Local", "minimax", "zai"], "providers by localeCompare");
        let local: Vec<&str> = rows.iter().filter(|(p, _)| p == "Local").map(|(_, id)| id.as_str()).collect();
        assert_eq!(local, ["Alpha", "alpha-2", "zeta"], "the registry has them as zeta, Alpha, alpha-2");
        let anthropic: Vec<&str> = rows.iter().filter(|(p, _)| p == "anthropic").map(|(_, id)| id.as_str()).collect();
        assert_eq!(anthropic.len(), 18);
        assert_eq!(anthropic[..3], ["claude-fable-5", "claude-fable-5-1", "claude-fable-5-2"]);
        assert!(anthropic.is_sorted_by(|a, b| locale_compare(a, b).is_le()));
        assert_eq!(rows.iter().filter(|(p, _)| p == "minimax").count(), 4);
    }

    #[test]
    fn a_one_million_token_model_shows_1m() {
        let table = list_models(&registry(&[("ANTHROPIC_API_KEY", "a")], None), "claude-opus-4-7");
        let line = table.lines().find(|l| l.split_whitespace().nth(1) == Some("claude-opus-4-7")).unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells, ["anthropic", "claude-opus-4-7", "1M", "128K", "yes", "yes"]);
    }
}
