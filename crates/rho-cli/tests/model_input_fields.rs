//! pi 1.6's model fields `inputLimits`, `promptCache` and the structured `compat` values through
//! the real binary: a models.json model's image resize profile decides how an image `read`
//! returns reaches the server, `chatTemplateArgs` goes out as Baseten's `chat_template_args`
//! with its variables filled in, `allowedFallbackModels` goes out as Anthropic's `fallbacks`, and
//! `get_available_models` shows the fields as configured.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Output;

use base64::Engine as _;
use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// The mock's models.json with `extra` merged into `mock-model`'s entry.
fn configure_mock_model(env: &Env, extra: Value) {
    let path = env.agent_dir.join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let model = &mut models["providers"]["mock"]["models"][0];
    for (key, value) in extra.as_object().unwrap() {
        model[key] = value.clone();
    }
    std::fs::write(path, models.to_string()).unwrap();
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// An uncompressed RGB PNG of `width`×`height` with a gradient (zlib's stored blocks).
fn png(width: u32, height: u32) -> Vec<u8> {
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0);
        for x in 0..width {
            raw.extend([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8]);
        }
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend(len.to_le_bytes());
        zlib.extend((!len).to_le_bytes());
        zlib.extend(*block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend(((b << 16) | a).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], data: &[u8]| {
        out.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
    };
    let mut header = Vec::new();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]);
    chunk(b"IHDR", &header);
    chunk(b"IDAT", &zlib);
    chunk(b"IEND", &[]);
    out
}

/// The pixel size a PNG or baseline/progressive JPEG declares.
fn dimensions(image: &[u8]) -> (u32, u32) {
    if image.starts_with(b"\x89PNG") {
        let be = |at: usize| u32::from_be_bytes(image[at..at + 4].try_into().unwrap());
        return (be(16), be(20));
    }
    assert!(image.starts_with(&[0xFF, 0xD8]), "neither PNG nor JPEG");
    let mut at = 2;
    while at + 9 < image.len() {
        let (marker, len) = (image[at + 1], usize::from(u16::from_be_bytes([image[at + 2], image[at + 3]])));
        if (0xC0..=0xC2).contains(&marker) {
            let be16 = |i: usize| u32::from(u16::from_be_bytes([image[i], image[i + 1]]));
            return (be16(at + 7), be16(at + 5));
        }
        at += 2 + len;
    }
    panic!("no JPEG frame header");
}

/// Every base64 image an Anthropic request carries (tool results included).
fn request_images(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("image")
                && let Some(data) = map.get("source").and_then(|s| s.get("data")).and_then(Value::as_str)
            {
                found.push(data.to_owned());
            }
            map.values().for_each(|v| request_images(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| request_images(v, found)),
        _ => {}
    }
}

#[tokio::test]
async fn a_read_image_reaches_the_server_within_the_models_resize_profile() {
    let env = Env::new(vec![
        Turn::text("Looking.").with_tool_call("read", json!({"path": "shot.png"})),
        Turn::text("A gradient."),
    ])
    .await;
    let limits = json!({"maxRequestBytes": 1_000_000,
        "images": {"maxPerMessage": 4, "maxPerRequest": 8, "resize": {"maxWidth": 120, "maxHeight": 90, "maxBytes": 12_000}}});
    configure_mock_model(&env, json!({"inputLimits": limits, "promptCache": {"short": 300, "long": 3600}}));
    // 400×300 and about 470 KB of base64: within the default profile (2000×2000, 4.5 MiB), so
    // only the model's own profile shrinks it.
    let original = png(400, 300);
    std::fs::write(env.cwd.join("shot.png"), &original).unwrap();

    let mut rho = Rho::start(&env, &["--no-session", "--model", "mock/mock-model"]).await;
    let models = rho.data(json!({"type": "get_available_models"})).await;
    let shown = models["models"].as_array().unwrap().iter().find(|m| m["id"] == "mock-model").unwrap().clone();
    assert_eq!(shown["inputLimits"], limits);
    assert_eq!(shown["promptCache"], json!({"short": 300, "long": 3600}));
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["model"]["inputLimits"], limits);

    rho.request(json!({"type": "prompt", "message": "What is in shot.png?"})).await;
    rho.until_agent_end().await;

    let bodies = env.request_bodies();
    assert_eq!(bodies.len(), 2);
    let mut images = Vec::new();
    request_images(&bodies[1], &mut images);
    assert_eq!(images.len(), 1, "{}", bodies[1]);
    assert!(images[0].len() < 12_000, "{} bytes of base64", images[0].len());
    let decoded = base64::engine::general_purpose::STANDARD.decode(&images[0]).unwrap();
    let (width, height) = dimensions(&decoded);
    assert!(width <= 120 && height <= 90, "{width}x{height}");
    assert_eq!((width, height), (120, 90), "scaled once to the box, the aspect kept");
    let text = bodies[1].to_string();
    assert!(text.contains("[Image: original 400x300, displayed at 120x90."), "{text}");
}

#[tokio::test]
async fn an_image_that_cannot_fit_the_profile_is_left_out_with_a_note() {
    let env = Env::new(vec![
        Turn::text("Looking.").with_tool_call("read", json!({"path": "shot.png"})),
        Turn::text("Nothing to see."),
    ])
    .await;
    configure_mock_model(&env, json!({"inputLimits": {"images": {"resize": {"maxBytes": 8}}}}));
    std::fs::write(env.cwd.join("shot.png"), png(40, 30)).unwrap();
    let mut rho = Rho::start(&env, &["--no-session", "--model", "mock/mock-model"]).await;
    rho.request(json!({"type": "prompt", "message": "What is in shot.png?"})).await;
    rho.until_agent_end().await;
    let bodies = env.request_bodies();
    let mut images = Vec::new();
    request_images(&bodies[1], &mut images);
    assert!(images.is_empty());
    assert!(
        bodies[1].to_string().contains("[Image omitted: could not be resized below the inline image size limit.]"),
        "{}",
        bodies[1]
    );
}

async fn print(env: &Env, args: &[&str]) -> Output {
    let child = env.command(args).spawn().unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(20), child.wait_with_output()).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_baseten_model_sends_its_chat_template_args_filled_in() {
    let env = Env::with_api(vec![Turn::text("On."), Turn::text("Off.")], "openai-completions", true).await;
    let args = json!({"enable_thinking": {"$var": "thinking.enabled"}, "effort": {"$var": "thinking.effort"},
        "late": {"$var": "thinking.effort", "omitWhenOff": true}, "template": "glm"});
    configure_mock_model(
        &env,
        json!({"thinkingLevelMap": {"high": "max"},
               "compat": {"thinkingFormat": "baseten", "supportsReasoningEffort": false, "chatTemplateArgs": args}}),
    );
    for level in ["high", "off"] {
        let out = print(&env, &["-p", "--no-session", "--model", "mock/mock-model", "--thinking", level, "hi"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let bodies = env.request_bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        bodies[0]["chat_template_args"],
        json!({"enable_thinking": true, "effort": "max", "late": "max", "template": "glm"})
    );
    assert_eq!(bodies[1]["chat_template_args"], json!({"enable_thinking": false, "template": "glm"}));
    assert!(bodies[0].get("reasoning_effort").is_none());
}

/// pi 1.6's `compat.allowedFallbackModels` on an Anthropic model: the request names them as
/// Anthropic's `fallbacks`.
#[tokio::test]
async fn allowed_fallback_models_are_sent_as_fallbacks() {
    let env = Env::with_api(vec![Turn::text("hi")], "anthropic-messages", false).await;
    let fallbacks = json!([{"provider": "mock", "model": "mock-backup", "cost": {"input": 1, "output": 2}}]);
    configure_mock_model(&env, json!({"compat": {"allowedFallbackModels": fallbacks}}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "hello"})).await;
    rho.until_agent_end().await;
    assert_eq!(env.request_bodies()[0]["fallbacks"], json!([{"model": "mock-backup"}]));
}
