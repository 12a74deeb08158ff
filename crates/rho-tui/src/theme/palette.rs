//! Hex colours for the terminal: 24-bit where it takes them, else the nearest of the 256-colour
//! palette (pi's detection and pi's nearest-colour rule, so a theme looks the same in both).

use ratatui::style::Color;

/// How hex colours are sent to the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    TrueColor,
    /// The 256-colour palette only.
    Indexed,
}

impl ColorMode {
    /// pi's rule: `COLORTERM=truecolor|24bit` and Windows Terminal have 24-bit colour; a dumb,
    /// linux or screen `TERM`, an empty one and Apple's Terminal have 256; the rest 24-bit.
    pub fn detect(var: impl Fn(&str) -> Option<String>) -> ColorMode {
        let colorterm = var("COLORTERM").unwrap_or_default();
        if colorterm == "truecolor" || colorterm == "24bit" || var("WT_SESSION").is_some() {
            return ColorMode::TrueColor;
        }
        let term = var("TERM").unwrap_or_default();
        let screen = term == "screen" || term.starts_with("screen-") || term.starts_with("screen.");
        if matches!(term.as_str(), "" | "dumb" | "linux")
            || var("TERM_PROGRAM").as_deref() == Some("Apple_Terminal")
            || screen
        {
            return ColorMode::Indexed;
        }
        ColorMode::TrueColor
    }
}

/// `#rrggbb` as its three channels.
pub fn hex(text: &str) -> Option<(u8, u8, u8)> {
    let digits = text.strip_prefix('#')?;
    if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let channel = |i: usize| u8::from_str_radix(&digits[i..i + 2], 16).ok();
    Some((channel(0)?, channel(2)?, channel(4)?))
}

/// The colour to send for `r g b` in `mode`.
pub fn rgb(r: u8, g: u8, b: u8, mode: ColorMode) -> Color {
    match mode {
        ColorMode::TrueColor => Color::Rgb(r, g, b),
        ColorMode::Indexed => Color::Indexed(nearest_index(r, g, b)),
    }
}

/// The channel values of the 6×6×6 cube (indexes 16-231).
const CUBE: [i32; 6] = [0, 95, 135, 175, 215, 255];

fn nearest(values: impl Iterator<Item = i32>, target: i32) -> usize {
    let mut best = (0, i32::MAX);
    for (i, v) in values.enumerate() {
        let d = (target - v).abs();
        if d < best.1 {
            best = (i, d);
        }
    }
    best.0
}

/// Weighted distance (the eye is most sensitive to green).
fn distance((r1, g1, b1): (i32, i32, i32), (r2, g2, b2): (i32, i32, i32)) -> f64 {
    let (dr, dg, db) = (f64::from(r1 - r2), f64::from(g1 - g2), f64::from(b1 - b2));
    dr * dr * 0.299 + dg * dg * 0.587 + db * db * 0.114
}

/// The nearest palette index: the cube's, or the grey ramp's (232-255) for a colour with
/// hardly any hue that the ramp matches better.
fn nearest_index(r: u8, g: u8, b: u8) -> u8 {
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    let (ri, gi, bi) = (nearest(CUBE.into_iter(), r), nearest(CUBE.into_iter(), g), nearest(CUBE.into_iter(), b));
    let cube_distance = distance((r, g, b), (CUBE[ri], CUBE[gi], CUBE[bi]));
    let gray = (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round() as i32;
    let gi_ramp = nearest((0..24).map(|i| 8 + i * 10), gray);
    let ramp = 8 + gi_ramp as i32 * 10;
    let gray_distance = distance((r, g, b), (ramp, ramp, ramp));
    let spread = r.max(g).max(b) - r.min(g).min(b);
    if spread < 10 && gray_distance < cube_distance { 232 + gi_ramp as u8 } else { (16 + 36 * ri + 6 * gi + bi) as u8 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_needs_six_digits() {
        assert_eq!(hex("#8abeb7"), Some((0x8a, 0xbe, 0xb7)));
        assert_eq!(hex("#8abeb"), None);
        assert_eq!(hex("8abeb7"), None);
        assert_eq!(hex("#8abexx"), None);
    }

    #[test]
    fn nearest_index_prefers_the_grey_ramp_for_greys() {
        assert_eq!(nearest_index(0xff, 0, 0), 196);
        assert_eq!(nearest_index(0x80, 0x80, 0x80), 244);
        assert_eq!(nearest_index(0x5f, 0x87, 0xff), 69);
    }

    #[test]
    fn detection_follows_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(ColorMode::detect(env(&[("TERM", "xterm-256color")])), ColorMode::TrueColor);
        assert_eq!(ColorMode::detect(env(&[("TERM", "screen-256color")])), ColorMode::Indexed);
        assert_eq!(ColorMode::detect(env(&[("TERM", "screen"), ("COLORTERM", "truecolor")])), ColorMode::TrueColor);
        assert_eq!(ColorMode::detect(env(&[])), ColorMode::Indexed);
    }
}
