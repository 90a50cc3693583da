//! Tag-array lookups and fills: the inner loop of every L1 and L2 access.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gpumemsim::machine::cache::TagArray;
use gpumemsim::rng::SplitMix64;
use std::hint::black_box;

fn lookups(c: &mut Criterion) {
    let mut g = c.benchmark_group("tag_array");
    const N: u64 = 100_000;
    g.throughput(Throughput::Elements(N));
    for (name, footprint) in [("l1_hits", 64u64), ("l2_mixed", 40_000)] {
        g.bench_function(name, |b| {
            let mut t = TagArray::new(256, 16, 128);
            let mut rng = SplitMix64::new(1);
            b.iter(|| {
                for _ in 0..N {
                    let line = rng.below(footprint) * 128;
                    if t.lookup(line).is_none() {
                        black_box(t.insert(line, |_| false));
                    }
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, lookups);
criterion_main!(benches);
