//! pi 1.6's perceptual colour values in themes, `okhsl(h s% l%)` and `oklch(l% c h)`, turned into
//! the sRGB the terminal is given (OKLab's conversions are the `palette` crate's). An `oklch`
//! colour outside sRGB keeps its lightness and hue and loses chroma until it fits, as pi maps it.

use ::palette::convert::FromColorUnclamped;
use ::palette::{FromColor, LinSrgb, Okhsl, Oklab, Srgb};

/// `okhsl(…)` or `oklch(…)` as 8-bit sRGB; `None` for anything else or a malformed value.
pub fn parse(text: &str) -> Option<(u8, u8, u8)> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    if let Some(args) = lower.strip_prefix("okhsl(").and_then(|r| r.strip_suffix(')')) {
        let [h, s, l] = three(args)?;
        let hue = number(h.strip_suffix("deg").unwrap_or(h))?;
        let okhsl = Okhsl::new(hue as f32, fraction(s)? as f32, fraction(l)? as f32);
        return Some(to_bytes(Srgb::from_color(okhsl)));
    }
    if let Some(args) = lower.strip_prefix("oklch(").and_then(|r| r.strip_suffix(')')) {
        let [l, c, h] = three(args)?;
        let hue = number(h.strip_suffix("deg").unwrap_or(h))?;
        return Some(oklch(fraction(l)?, number(c)?, hue));
    }
    None
}

/// Three space-separated arguments.
fn three(args: &str) -> Option<[&str; 3]> {
    let parts: Vec<&str> = args.split_whitespace().collect();
    parts.try_into().ok()
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// `50%` is 0.5; a bare number is taken as it is.
fn fraction(text: &str) -> Option<f64> {
    match text.strip_suffix('%') {
        Some(percent) => number(percent).map(|n| n / 100.0),
        None => number(text),
    }
}

fn in_gamut(c: LinSrgb<f64>) -> bool {
    const EPSILON: f64 = 1e-7;
    [c.red, c.green, c.blue].iter().all(|v| *v >= -EPSILON && *v <= 1.0 + EPSILON)
}

/// An OKLCh colour in sRGB, its chroma reduced (by bisection) until it fits.
fn oklch(l: f64, c: f64, hue: f64) -> (u8, u8, u8) {
    let (sin, cos) = hue.to_radians().sin_cos();
    let at = |chroma: f64| LinSrgb::<f64>::from_color_unclamped(Oklab::new(l, chroma * cos, chroma * sin));
    let direct = at(c);
    let linear = if in_gamut(direct) {
        direct
    } else {
        let (mut low, mut high, mut best) = (0.0, c, at(0.0));
        for _ in 0..20 {
            let chroma = (low + high) / 2.0;
            let candidate = at(chroma);
            if in_gamut(candidate) {
                low = chroma;
                best = candidate;
            } else {
                high = chroma;
            }
        }
        best
    };
    let srgb: Srgb<f64> = Srgb::from_linear(linear);
    to_bytes(Srgb::new(srgb.red as f32, srgb.green as f32, srgb.blue as f32))
}

fn to_bytes(c: Srgb<f32>) -> (u8, u8, u8) {
    let byte = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    (byte(c.red), byte(c.green), byte(c.blue))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn okhsl_and_oklch_values_as_pi_gives_them() {
        assert_eq!(parse("okhsl(0 0% 100%)"), Some((255, 255, 255)));
        assert_eq!(parse("okhsl(0 0% 0%)"), Some((0, 0, 0)));
        assert_eq!(parse("oklch(100% 0 0)"), Some((255, 255, 255)));
        // Out of sRGB: the chroma goes, white stays white.
        assert_eq!(parse("oklch(100% 0.3 150)"), Some((255, 255, 255)));
        // The values pi 1.6's own parser gives (pi-tui's colors.js, colorToRgb).
        assert_eq!(parse("oklch(62.8% 0.2577 29.23deg)"), Some((255, 0, 0)));
        assert_eq!(parse("okhsl(234 3% 89%)"), Some((222, 224, 225)));
        assert_eq!(parse("okhsl(20 72% 67%)"), Some((234, 127, 129)));
        assert_eq!(parse("OKHSL(234deg 3% 89%)"), parse("okhsl(234 3% 89%)"));
        for bad in ["okhsl(1 2)", "oklch(a b c)", "okhsl(1 2 3", "hsl(1 2% 3%)"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
