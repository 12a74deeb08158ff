//! A model's input limits and prompt-cache lifetimes (pi 1.6's `inputLimits` and `promptCache`),
//! as the catalogue, `models.json` and `modelOverrides` give them and hosts are shown them.
//!
//! Every field is optional, as in pi: a field left out means "the default" (for an image's resize
//! profile, 2000×2000 pixels, 4.5 MiB of base64, JPEG quality 80; see rho-tools'
//! `image_resize`). An override merges field by field over the model's own ([`InputLimits::merge`],
//! [`PromptCache::merge`]). rho acts on `images.resize` only; the request and per-message limits
//! and the cache lifetimes are kept and shown, as pi 1.6 does with most of them.

use serde::{Deserialize, Serialize};

/// `inputLimits`: what one request to the model may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputLimits {
    /// The largest serialized request, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_request_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<ImageInputLimits>,
}

/// `inputLimits.images`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageInputLimits {
    /// How a new image is shrunk before it enters the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resize: Option<ImageResize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_message: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_request: Option<u64>,
}

/// `inputLimits.images.resize`: the box and the encoded size an image must fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageResize {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_height: Option<u32>,
    /// The largest base64-encoded payload, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jpeg_quality: Option<u8>,
}

/// `promptCache`: how long, in seconds, a prompt cache entry of each retention tier lives.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PromptCache {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long: Option<f64>,
}

impl InputLimits {
    /// `over` on top of `base`, field by field (`images` and its `resize` too).
    pub fn merge(base: Option<Self>, over: Option<Self>) -> Option<Self> {
        let Some(over) = over else { return base };
        let base = base.unwrap_or_default();
        let images = match over.images {
            None => base.images,
            Some(o) => {
                let b = base.images.unwrap_or_default();
                Some(ImageInputLimits {
                    resize: match o.resize {
                        None => b.resize,
                        Some(r) => Some(ImageResize::merge(b.resize.unwrap_or_default(), r)),
                    },
                    max_per_message: o.max_per_message.or(b.max_per_message),
                    max_per_request: o.max_per_request.or(b.max_per_request),
                })
            }
        };
        Some(Self { max_request_bytes: over.max_request_bytes.or(base.max_request_bytes), images })
    }

    /// The resize profile for new images, when the model has one.
    pub fn image_resize(&self) -> Option<ImageResize> {
        self.images?.resize
    }

    /// What is out of range (pi's schema: counts of at least 1, a JPEG quality of 1 to 100).
    pub fn problem(&self) -> Option<String> {
        let positive = [
            ("maxRequestBytes", self.max_request_bytes),
            ("images.maxPerMessage", self.images.and_then(|i| i.max_per_message)),
            ("images.maxPerRequest", self.images.and_then(|i| i.max_per_request)),
            ("images.resize.maxWidth", self.image_resize().and_then(|r| r.max_width).map(u64::from)),
            ("images.resize.maxHeight", self.image_resize().and_then(|r| r.max_height).map(u64::from)),
            ("images.resize.maxBytes", self.image_resize().and_then(|r| r.max_bytes)),
        ];
        if let Some((field, _)) = positive.iter().find(|(_, v)| *v == Some(0)) {
            return Some(format!("inputLimits.{field} must be at least 1"));
        }
        match self.image_resize().and_then(|r| r.jpeg_quality) {
            Some(q) if !(1..=100).contains(&q) => {
                Some("inputLimits.images.resize.jpegQuality must be from 1 to 100".into())
            }
            _ => None,
        }
    }
}

impl ImageResize {
    fn merge(base: Self, over: Self) -> Self {
        Self {
            max_width: over.max_width.or(base.max_width),
            max_height: over.max_height.or(base.max_height),
            max_bytes: over.max_bytes.or(base.max_bytes),
            jpeg_quality: over.jpeg_quality.or(base.jpeg_quality),
        }
    }
}

impl PromptCache {
    /// `over` on top of `base`, tier by tier.
    pub fn merge(base: Option<Self>, over: Option<Self>) -> Option<Self> {
        let Some(over) = over else { return base };
        let base = base.unwrap_or_default();
        Some(Self { short: over.short.or(base.short), long: over.long.or(base.long) })
    }

    /// What is out of range (pi's schema: lifetimes above 0).
    pub fn problem(&self) -> Option<String> {
        [("short", self.short), ("long", self.long)]
            .into_iter()
            .find(|(_, v)| v.is_some_and(|s| !(s.is_finite() && s > 0.0)))
            .map(|(tier, _)| format!("promptCache.{tier} must be a number above 0"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> T {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn limits_round_trip_with_only_the_fields_given() {
        let json = r#"{"maxRequestBytes":33554432,"images":{"resize":{"maxWidth":2000,"maxBytes":4718592},"maxPerRequest":600}}"#;
        let limits: InputLimits = parse(json);
        assert_eq!(limits.image_resize().unwrap().max_height, None);
        assert_eq!(crate::json::to_string(&limits).unwrap(), json);
        assert_eq!(crate::json::to_string(&parse::<PromptCache>(r#"{"short":300}"#)).unwrap(), r#"{"short":300}"#);
    }

    #[test]
    fn an_override_merges_field_by_field() {
        let base: InputLimits = parse(
            r#"{"maxRequestBytes":100,"images":{"maxPerMessage":20,"resize":{"maxWidth":2000,"jpegQuality":80}}}"#,
        );
        let over: InputLimits = parse(r#"{"images":{"resize":{"maxWidth":512,"maxBytes":1000}}}"#);
        let merged = InputLimits::merge(Some(base), Some(over)).unwrap();
        assert_eq!(
            crate::json::to_string(&merged).unwrap(),
            r#"{"maxRequestBytes":100,"images":{"resize":{"maxWidth":512,"maxBytes":1000,"jpegQuality":80},"maxPerMessage":20}}"#
        );
        assert_eq!(InputLimits::merge(Some(base), None), Some(base));
        assert_eq!(InputLimits::merge(None, Some(over)), Some(over));
        let cache = PromptCache::merge(parse(r#"{"short":300,"long":3600}"#), parse(r#"{"long":7200}"#)).unwrap();
        assert_eq!((cache.short, cache.long), (Some(300.0), Some(7200.0)));
    }

    #[test]
    fn out_of_range_values_are_named() {
        let zero: InputLimits = parse(r#"{"images":{"resize":{"maxWidth":0}}}"#);
        assert_eq!(zero.problem().unwrap(), "inputLimits.images.resize.maxWidth must be at least 1");
        let quality: InputLimits = parse(r#"{"images":{"resize":{"jpegQuality":101}}}"#);
        assert!(quality.problem().unwrap().contains("jpegQuality"));
        assert_eq!(parse::<InputLimits>(r#"{"images":{"resize":{"jpegQuality":100}}}"#).problem(), None);
        assert!(parse::<PromptCache>(r#"{"long":0}"#).problem().unwrap().contains("promptCache.long"));
    }
}
