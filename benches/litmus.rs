//! Litmus simulation rate: message-passing (MP) iterations per second on the tiny config, launches
//! spread over all cores as `gpumemsim litmus` does (issue 3 aims at 100,000 per second on 2 cores).
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gpumemsim::config;
use gpumemsim::litmus::{self, LitmusOptions};
use std::hint::black_box;
use std::path::Path;

fn mp(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tiny = config::load(Some(&root.join("configs/tiny.toml")), &[]).expect("tiny config");
    let test = litmus::parse(litmus::MP_TEST, "<builtin MP>").expect("MP parses");
    const N: u64 = 16_384;
    let mut g = c.benchmark_group("litmus");
    g.throughput(Throughput::Elements(N));
    g.sample_size(10);
    g.bench_function("mp_tiny_iterations", |b| {
        b.iter(|| {
            let opts = LitmusOptions {
                iterations: N,
                seed: 1,
                ..LitmusOptions::default()
            };
            black_box(litmus::run(&test, &tiny, &opts).expect("runs"))
        })
    });
    g.finish();
}

criterion_group!(benches, mp);
criterion_main!(benches);
