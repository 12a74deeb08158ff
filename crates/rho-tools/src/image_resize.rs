//! Shrinking images before they go to a model: at most 2000×2000 pixels and 4.5 MiB encoded
//! (under the providers' 5 MB limit). An image already within the limits is passed through
//! byte for byte. Otherwise it is scaled to fit (EXIF orientation applied first), encoded as
//! both PNG and JPEG and the smaller kept; if that is still too big, lower JPEG qualities and
//! then smaller scales are tried. An image that cannot be decoded is passed through unchanged.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageReader};

/// The limits an image must fit.
#[derive(Debug, Clone, Copy)]
pub struct ResizeLimits {
    pub max_width: u32,
    pub max_height: u32,
    pub max_bytes: usize,
    pub jpeg_quality: u8,
}

impl Default for ResizeLimits {
    fn default() -> Self {
        Self { max_width: 2000, max_height: 2000, max_bytes: 4_718_592, jpeg_quality: 80 }
    }
}

/// The image to send and how it relates to the original.
#[derive(Debug, Clone)]
pub struct ResizedImage {
    pub data: Vec<u8>,
    pub mime_type: String,
    pub original_width: u32,
    pub original_height: u32,
    pub width: u32,
    pub height: u32,
    pub was_resized: bool,
}

impl ResizedImage {
    fn unchanged(bytes: &[u8], mime: &str, width: u32, height: u32) -> Self {
        Self {
            data: bytes.to_vec(),
            mime_type: mime.to_owned(),
            original_width: width,
            original_height: height,
            width,
            height,
            was_resized: false,
        }
    }

    /// The note telling the model how displayed coordinates map to the original image.
    pub fn dimension_note(&self) -> Option<String> {
        if !self.was_resized || self.width == 0 {
            return None;
        }
        let scale = f64::from(self.original_width) / f64::from(self.width);
        Some(format!(
            "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {} to map to original image.]",
            self.original_width,
            self.original_height,
            self.width,
            self.height,
            crate::js::to_fixed(scale, 2)
        ))
    }
}

fn decode(bytes: &[u8]) -> Option<DynamicImage> {
    let reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format().ok()?;
    let mut decoder = reader.into_decoder().ok()?;
    let orientation = decoder.orientation().ok();
    let mut image = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(orientation) = orientation {
        image.apply_orientation(orientation);
    }
    Some(image)
}

struct Encoded {
    data: Vec<u8>,
    mime_type: &'static str,
}

fn encode_png(image: &DynamicImage) -> Option<Encoded> {
    let mut data = Vec::new();
    image.write_with_encoder(PngEncoder::new(&mut data)).ok()?;
    Some(Encoded { data, mime_type: "image/png" })
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Encoded> {
    let mut data = Vec::new();
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut data, quality)).ok()?;
    Some(Encoded { data, mime_type: "image/jpeg" })
}

fn round_scaled(value: u32, numerator: f64, denominator: f64) -> u32 {
    ((f64::from(value) * numerator / denominator).round() as u32).max(1)
}

/// Fits `bytes` (an image of type `mime`) into `limits`.
pub fn resize_image(bytes: &[u8], mime: &str, limits: ResizeLimits) -> ResizedImage {
    let Some(image) = decode(bytes) else {
        return ResizedImage::unchanged(bytes, mime, 0, 0);
    };
    let (original_width, original_height) = (image.width(), image.height());
    if original_width <= limits.max_width && original_height <= limits.max_height && bytes.len() <= limits.max_bytes {
        return ResizedImage::unchanged(bytes, mime, original_width, original_height);
    }

    let (mut target_width, mut target_height) = (original_width, original_height);
    if target_width > limits.max_width {
        target_height = round_scaled(target_height, f64::from(limits.max_width), f64::from(target_width));
        target_width = limits.max_width;
    }
    if target_height > limits.max_height {
        target_width = round_scaled(target_width, f64::from(limits.max_height), f64::from(target_height));
        target_height = limits.max_height;
    }

    let mut best: Option<(Encoded, u32, u32)> = None;
    let mut attempt = |width: u32, height: u32, qualities: &[u8]| -> Option<ResizedImage> {
        let resized = image.resize_exact(width, height, FilterType::Lanczos3);
        let png = encode_png(&resized);
        for &quality in qualities {
            let jpeg = encode_jpeg(&resized, quality);
            let candidate = match (&png, &jpeg) {
                (Some(p), Some(j)) => Some(if p.data.len() <= j.data.len() { p } else { j }),
                (p, j) => p.as_ref().or(j.as_ref()),
            };
            let Some(candidate) = candidate else {
                continue;
            };
            if candidate.data.len() <= limits.max_bytes {
                return Some(ResizedImage {
                    data: candidate.data.clone(),
                    mime_type: candidate.mime_type.to_owned(),
                    original_width,
                    original_height,
                    width,
                    height,
                    was_resized: true,
                });
            }
            let is_better = best.as_ref().is_none_or(|(b, _, _)| candidate.data.len() < b.data.len());
            if is_better {
                best = Some((Encoded { data: candidate.data.clone(), mime_type: candidate.mime_type }, width, height));
            }
        }
        None
    };

    let qualities = [85u8, 70, 55, 40];
    let first = [limits.jpeg_quality];
    if let Some(done) = attempt(target_width, target_height, &first) {
        return done;
    }
    if let Some(done) = attempt(target_width, target_height, &qualities) {
        return done;
    }
    for scale in [1.0f64, 0.75, 0.5, 0.35, 0.25] {
        let width = (f64::from(target_width) * scale).round() as u32;
        let height = (f64::from(target_height) * scale).round() as u32;
        if width < 100 || height < 100 {
            break;
        }
        if let Some(done) = attempt(width, height, &qualities) {
            return done;
        }
    }
    match best {
        Some((encoded, width, height)) => ResizedImage {
            data: encoded.data,
            mime_type: encoded.mime_type.to_owned(),
            original_width,
            original_height,
            width,
            height,
            was_resized: true,
        },
        None => ResizedImage::unchanged(bytes, mime, original_width, original_height),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{ImageBuffer, Rgb};

    fn png_bytes(width: u32, height: u32) -> Vec<u8> {
        let img =
            ImageBuffer::from_fn(width, height, |x, y| Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8]));
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img).write_with_encoder(PngEncoder::new(&mut out)).unwrap();
        out
    }

    #[test]
    fn small_images_pass_through_untouched() {
        let bytes = png_bytes(10, 20);
        let r = resize_image(&bytes, "image/png", ResizeLimits::default());
        assert!(!r.was_resized);
        assert_eq!(r.data, bytes);
        assert_eq!((r.width, r.height), (10, 20));
        assert_eq!(r.dimension_note(), None);
    }

    #[test]
    fn large_images_are_scaled_to_fit() {
        let bytes = png_bytes(300, 150);
        let limits = ResizeLimits { max_width: 100, max_height: 100, ..ResizeLimits::default() };
        let r = resize_image(&bytes, "image/png", limits);
        assert!(r.was_resized);
        assert_eq!((r.width, r.height), (100, 50));
        assert_eq!((r.original_width, r.original_height), (300, 150));
        let decoded = decode(&r.data).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (100, 50));
        assert_eq!(
            r.dimension_note().unwrap(),
            "[Image: original 300x150, displayed at 100x50. Multiply coordinates by 3.00 to map to original image.]"
        );
    }

    #[test]
    fn undecodable_images_pass_through() {
        let bytes = b"\x89PNG\r\n\x1a\nnot really".to_vec();
        let r = resize_image(&bytes, "image/png", ResizeLimits::default());
        assert!(!r.was_resized);
        assert_eq!(r.data, bytes);
    }
}
