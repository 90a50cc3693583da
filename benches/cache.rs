//! Tag-array lookups and fills: the inner loop of every L1 and L2 access.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gpumemsim::machine::cache::TagArray;
use gpumemsim::rng::SplitMix64;
use std::hint::black_box;

fn lookups(c: &mut Criterion) {
    let mut g = c.benchmark_group("tag_array");
    const N: u64 = 100_000;
    g.throughput(Throughput::Elements(N));
    // The L1 indexes sets by the line's low bits; a hashed L2 slice (100 slices) folds the line's place
    // in its slice.
    for (name, footprint, hashed) in [
        ("l1_hits", 64u64, None),
        ("l2_mixed", 40_000, None),
        ("l2_mixed_hashed", 40_000, Some(100)),
    ] {
        g.bench_function(name, |b| {
            let mut t = TagArray::new(256, 16, 128, hashed);
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
