//! Number formatting the way the reference (JavaScript) writes numbers into model-visible texts:
//! integral values without a fraction (`5`, not `5.0`) and `toFixed` rounding half away from
//! zero, so notices read the same as pi's.

/// `String(n)` for the numbers tools print back (offsets, limits, timeouts).
pub fn number(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e15 { format!("{}", n as i64) } else { format!("{n}") }
}

/// `n.toFixed(digits)`: rounds to `digits` decimals, an exact tie going away from zero
/// (Rust's formatter would round it to even).
pub fn to_fixed(n: f64, digits: usize) -> String {
    if !n.is_finite() {
        return format!("{n}");
    }
    let digits = digits.min(15);
    let scale = 10f64.powi(digits as i32);
    let scaled = n.abs() * scale;
    if scaled < 1e15 && scaled.fract() == 0.5 {
        let rounded = (scaled.floor() + 1.0) / scale;
        let signed = if n < 0.0 { -rounded } else { rounded };
        return format!("{signed:.digits$}");
    }
    format!("{n:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_numbers_have_no_fraction() {
        assert_eq!(number(5.0), "5");
        assert_eq!(number(-3.0), "-3");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(0.1), "0.1");
    }

    #[test]
    fn to_fixed_rounds_ties_away_from_zero() {
        assert_eq!(to_fixed(1.125, 2), "1.13");
        assert_eq!(to_fixed(2.0, 2), "2.00");
        assert_eq!(to_fixed(1.5, 0), "2");
        assert_eq!(to_fixed(4000.0 / 2000.0, 2), "2.00");
        assert_eq!(to_fixed(1.0 / 3.0, 2), "0.33");
    }
}
