//! Event-queue throughput: the engine's cost per event, the floor under every simulation.
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use gpumemsim::engine::EventQueue;
use std::hint::black_box;

fn queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    const N: u64 = 100_000;
    g.throughput(Throughput::Elements(N));
    // A steady state like the machine's: about 1000 pending events, each handler scheduling one more.
    g.bench_function("schedule_pop_1000_pending", |b| {
        b.iter_batched(
            || {
                let mut q = EventQueue::new();
                for i in 0..1000u64 {
                    q.schedule(i * 7 % 1000, i).unwrap();
                }
                q
            },
            |mut q| {
                for i in 0..N {
                    let (t, e) = q.pop().unwrap();
                    q.after(1 + (e * 2654435761 + i) % 500, black_box(e));
                    black_box(t);
                }
                q
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, queue);
criterion_main!(benches);
