//! How fast the server streams a flood (5000 text deltas of 20 bytes) to a client that reads
//! the raw body, in each wire format. The client only counts bytes, so the figure is the
//! server's (plus loopback HTTP), not an SSE decoder's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use rho_mock_llm::{MockServer, Script, Turn};

const COUNT: usize = 5000;
const SIZE: usize = 20;

fn flood(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let server = runtime
        .block_on(MockServer::start(Script::new(vec![Turn::flood(COUNT, SIZE).repeat(u32::MAX)])))
        .expect("server");
    // reqwest needs a crypto provider to build, though the mock speaks plain HTTP.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let paths = [
        ("anthropic-messages", "/v1/messages"),
        ("openai-completions", "/v1/chat/completions"),
        ("openai-responses", "/v1/responses"),
        ("google-generative-ai", "/v1beta/models/m:streamGenerateContent?alt=sse"),
    ];
    let mut group = c.benchmark_group("flood_5000x20");
    group.throughput(Throughput::Bytes((COUNT * SIZE) as u64));
    for (name, path) in paths {
        let url = format!("{}{path}", server.url());
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    let response = client
                        .post(&url)
                        .body(r#"{"model":"m","stream":true,"stream_options":{"include_usage":true}}"#)
                        .send()
                        .await
                        .expect("send");
                    let mut body = response.bytes_stream();
                    let mut bytes = 0usize;
                    while let Some(chunk) = body.next().await {
                        bytes += chunk.expect("chunk").len();
                    }
                    assert!(bytes > COUNT * SIZE);
                    bytes
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, flood);
criterion_main!(benches);
