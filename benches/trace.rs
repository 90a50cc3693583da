//! Trace replay speed (issue 4): the project's sample traces, generated in memory byte for byte by
//! `trace::synth`, replayed on the embedded H100 preset — loading (parsing the text) and simulation
//! timed apart, on one simulation thread and on two.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gpumemsim::config;
use gpumemsim::machine::{self, RunOptions};
use gpumemsim::trace::synth::{kernel_text, Synth, SynthAtomics};
use gpumemsim::trace::{self, Trace, TraceCommand};
use std::hint::black_box;
use std::path::{Path, PathBuf};

fn replay(c: &mut Criterion) {
    let h100 = config::load(None, &[]).expect("embedded preset");
    let mut g = c.benchmark_group("trace");
    g.sample_size(10);
    for (name, s) in [
        ("v70_distinct", Synth::sample(SynthAtomics::Distinct, 32)),
        ("v70_same_i8", Synth::sample(SynthAtomics::Same, 8)),
    ] {
        let text = kernel_text(&s);
        let path = Path::new(name).join("kernel-1.traceg");
        let k = trace::parse_kernel(&text, &path).expect("sample parses");
        let (_, thread_insts) = k.instruction_counts();
        g.throughput(Throughput::Elements(thread_insts));
        g.bench_function(format!("{name}_parse"), |b| {
            b.iter(|| black_box(trace::parse_kernel(&text, &path).expect("parses")))
        });
        let t = Trace {
            list: PathBuf::from(name).join("kernelslist.g"),
            commands: vec![TraceCommand::Kernel(std::sync::Arc::new(k))],
        };
        for threads in [1, 2] {
            let opts = RunOptions {
                threads,
                ..RunOptions::default()
            };
            g.bench_function(format!("{name}_simulate_{threads}_threads"), |b| {
                b.iter(|| black_box(machine::run_trace(&h100, &t, &opts).expect("runs")))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
