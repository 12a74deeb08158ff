//! Shrinking images before they go to a model, to the current model's resize profile
//! (`inputLimits.images.resize`), by default at most 2000×2000 pixels and 4.5 MiB of base64
//! (under the providers' 5 MB limit), as pi 1.6 does. An image already within the limits is
//! passed through byte for byte. Otherwise it is scaled to fit (EXIF orientation applied first),
//! encoded as PNG and as JPEG at the profile's quality and the smaller kept; if neither fits,
//! lower JPEG qualities are tried, then the size shrinks by a quarter at a time down to 1×1. An
//! image that fits nowhere is left out ([`resize_image`] gives `None`); one that cannot be
//! decoded is passed through unchanged.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageDecoder, ImageReader};
use rho_types::model::ImageResize;

/// What the model is told in place of an image that fits nowhere.
pub const IMAGE_TOO_LARGE: &str = "[Image omitted: could not be resized below the inline image size limit.]";

/// The limits an image must fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeLimits {
    pub max_width: u32,
    pub max_height: u32,
    /// The largest base64-encoded payload, in bytes.
    pub max_bytes: u64,
    pub jpeg_quality: u8,
}

impl Default for ResizeLimits {
    fn default() -> Self {
        Self { max_width: 2000, max_height: 2000, max_bytes: 4_718_592, jpeg_quality: 80 }
    }
}

impl ResizeLimits {
    /// A model's resize profile, the defaults for what it leaves out.
    pub fn for_profile(profile: Option<ImageResize>) -> Self {
        let d = Self::default();
        let Some(p) = profile else { return d };
        Self {
            max_width: p.max_width.unwrap_or(d.max_width),
            max_height: p.max_height.unwrap_or(d.max_height),
            max_bytes: p.max_bytes.unwrap_or(d.max_bytes),
            jpeg_quality: p.jpeg_quality.unwrap_or(d.jpeg_quality),
        }
    }
}

/// The size of `len` bytes once base64-encoded.
fn base64_len(len: usize) -> u64 {
    (len as u64).div_ceil(3) * 4
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

/// An image's width and height from its header.
fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    ImageReader::new(Cursor::new(bytes)).with_guessed_format().ok()?.into_dimensions().ok()
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

/// Fits `bytes` (an image of type `mime`) into `limits`; `None` when no size and encoding fits.
pub fn resize_image(bytes: &[u8], mime: &str, limits: ResizeLimits) -> Option<ResizedImage> {
    // What fits already is known from the header alone: no decoding.
    if let Some((width, height)) = dimensions(bytes)
        && width.max(height) <= limits.max_width.min(limits.max_height)
        && base64_len(bytes.len()) < limits.max_bytes
    {
        return Some(ResizedImage::unchanged(bytes, mime, width, height));
    }
    let Some(image) = decode(bytes) else {
        return Some(ResizedImage::unchanged(bytes, mime, 0, 0));
    };
    let (original_width, original_height) = (image.width(), image.height());
    if original_width <= limits.max_width
        && original_height <= limits.max_height
        && base64_len(bytes.len()) < limits.max_bytes
    {
        return Some(ResizedImage::unchanged(bytes, mime, original_width, original_height));
    }

    let (mut width, mut height) = (original_width, original_height);
    if width > limits.max_width {
        height = (f64::from(height) * f64::from(limits.max_width) / f64::from(width)).round() as u32;
        width = limits.max_width;
    }
    if height > limits.max_height {
        width = (f64::from(width) * f64::from(limits.max_height) / f64::from(height)).round() as u32;
        height = limits.max_height;
    }
    let (mut width, mut height) = (width.max(1), height.max(1));

    // The profile's quality first, then the lower ones, each once.
    let mut qualities = vec![limits.jpeg_quality];
    qualities.extend([85u8, 70, 55, 40].into_iter().filter(|q| *q != limits.jpeg_quality));
    let fits = |encoded: &Encoded| base64_len(encoded.data.len()) < limits.max_bytes;
    loop {
        let resized = image.resize_exact(width, height, FilterType::Lanczos3);
        let png = encode_png(&resized);
        let mut jpegs = qualities.iter().map(|q| encode_jpeg(&resized, *q));
        let first_jpeg = jpegs.next().flatten();
        // The smaller of PNG and JPEG at the profile's quality, then the other, then lower qualities.
        let jpeg_smaller = matches!((&png, &first_jpeg), (Some(p), Some(j)) if j.data.len() < p.data.len());
        let preferred = if jpeg_smaller { [first_jpeg, png] } else { [png, first_jpeg] };
        let found = preferred.into_iter().flatten().find(&fits).or_else(|| jpegs.flatten().find(&fits));
        if let Some(encoded) = found {
            return Some(ResizedImage {
                data: encoded.data,
                mime_type: encoded.mime_type.to_owned(),
                original_width,
                original_height,
                width,
                height,
                was_resized: true,
            });
        }
        if width == 1 && height == 1 {
            return None;
        }
        let next = |side: u32| if side == 1 { 1 } else { (side * 3 / 4).max(1) };
        (width, height) = (next(width), next(height));
    }
}

/// Fits the images of a prompt (base64, as hosts and attachments give them) into the model's
/// profile: each one as it is when it fits, shrunk when it does not; `None` in its place when no
/// size fits (its text note is [`IMAGE_TOO_LARGE`]). An image that is not valid base64 is left
/// as it is (the provider says what it makes of it).
pub fn fit_images(
    images: Vec<rho_types::types::ImageContent>,
    profile: Option<ImageResize>,
) -> Vec<Option<rho_types::types::ImageContent>> {
    use base64::Engine;
    let engine = base64::engine::general_purpose::STANDARD;
    let limits = ResizeLimits::for_profile(profile);
    images
        .into_iter()
        .map(|image| {
            let Ok(bytes) = engine.decode(image.data.as_bytes()) else { return Some(image) };
            let resized = resize_image(&bytes, &image.mime_type, limits)?;
            if !resized.was_resized {
                return Some(image);
            }
            Some(rho_types::types::ImageContent {
                data: engine.encode(&resized.data).into(),
                mime_type: resized.mime_type,
            })
        })
        .collect()
}

/// A tool result's content with its images fitted as [`fit_images`] fits a prompt's; an image
/// that fits nowhere becomes the note [`IMAGE_TOO_LARGE`].
pub fn fit_content(
    content: Vec<rho_types::types::UserContent>,
    profile: Option<ImageResize>,
) -> Vec<rho_types::types::UserContent> {
    use rho_types::types::UserContent;
    content
        .into_iter()
        .map(|block| match block {
            UserContent::Image(image) => match fit_images(vec![image], profile).pop().flatten() {
                Some(image) => UserContent::Image(image),
                None => UserContent::text(IMAGE_TOO_LARGE),
            },
            other => other,
        })
        .collect()
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
        let r = resize_image(&bytes, "image/png", ResizeLimits::default()).unwrap();
        assert!(!r.was_resized);
        assert_eq!(r.data, bytes);
        assert_eq!((r.width, r.height), (10, 20));
        assert_eq!(r.dimension_note(), None);
    }

    #[test]
    fn large_images_are_scaled_to_fit() {
        let bytes = png_bytes(300, 150);
        let limits = ResizeLimits { max_width: 100, max_height: 100, ..ResizeLimits::default() };
        let r = resize_image(&bytes, "image/png", limits).unwrap();
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
        let r = resize_image(&bytes, "image/png", ResizeLimits::default()).unwrap();
        assert!(!r.was_resized);
        assert_eq!(r.data, bytes);
    }

    #[test]
    fn a_profile_fills_in_the_defaults() {
        let profile = ImageResize { max_width: Some(512), jpeg_quality: Some(60), ..ImageResize::default() };
        assert_eq!(
            ResizeLimits::for_profile(Some(profile)),
            ResizeLimits { max_width: 512, max_height: 2000, max_bytes: 4_718_592, jpeg_quality: 60 }
        );
        assert_eq!(ResizeLimits::for_profile(None), ResizeLimits::default());
    }

    #[test]
    fn the_byte_limit_counts_base64() {
        let bytes = png_bytes(64, 64);
        // The raw file fits, its base64 (a third larger) does not.
        let max_bytes = bytes.len() as u64 + 1;
        assert!(base64_len(bytes.len()) >= max_bytes);
        let limits = ResizeLimits { max_bytes, ..ResizeLimits::default() };
        let r = resize_image(&bytes, "image/png", limits).unwrap();
        assert!(r.was_resized);
        assert!(base64_len(r.data.len()) < max_bytes);
    }

    #[test]
    fn an_image_that_fits_nowhere_is_left_out() {
        let limits = ResizeLimits { max_bytes: 16, ..ResizeLimits::default() };
        assert!(resize_image(&png_bytes(40, 40), "image/png", limits).is_none());
    }
}
