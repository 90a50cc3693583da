//! Accel-Sim trace replay (issue 4): the synthetic traces replay with the trace's instruction counts,
//! `atomics.combine_same_address_lanes` changes the L2 atomic units' operations as it should, host
//! copies evict their lines, shared memory, barriers and register dependencies are timed, `.xz`
//! input replays like plain text, and truncated or unreplayable traces are errors naming file and
//! line. Traces are generated with `trace::synth` (the samples are not in the repository) or written
//! out by hand.

use gpumemsim::config::{self, GpuConfig};
use gpumemsim::machine::{self, RunOptions, RunResult};
use gpumemsim::runner::{self, RunArgs};
use gpumemsim::trace::synth::{kernel_text, write_dir, Synth, SynthAtomics};
use gpumemsim::trace::{self, Trace};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn cfg(name: &str, sets: &[&str]) -> GpuConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let path = (name != "h100").then(|| root().join(format!("configs/{name}.toml")));
    config::load(path.as_deref(), &sets).expect("config loads")
}

/// A fresh empty folder under the system's temp dir.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpumemsim-traces-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn synth(atomics: SynthAtomics, iters: u32, blocks: u32) -> Synth {
    Synth {
        atomics,
        iters,
        blocks,
        block_threads: 256,
    }
}

/// The synthetic kernel as a one-kernel trace, parsed from memory.
fn synth_trace(s: &Synth) -> Trace {
    let k = trace::parse_kernel(&kernel_text(s), Path::new("synth/kernel-1.traceg"))
        .expect("synthetic trace parses");
    Trace {
        list: PathBuf::from("synth/kernelslist.g"),
        commands: vec![trace::TraceCommand::Kernel(std::sync::Arc::new(k))],
    }
}

fn replay(cfg: &GpuConfig, t: &Trace) -> RunResult {
    machine::run_trace(cfg, t, &RunOptions::default()).expect("trace replays")
}

fn stat(r: &RunResult, loc: &str, metric: &str) -> f64 {
    r.stats
        .get(loc, metric)
        .unwrap_or_else(|| panic!("no statistic {loc}.{metric}"))
}

/// A trace directory with one kernel per text and the given `kernelslist.g` lines.
fn write_trace(name: &str, kernels: &[&str], list: &str) -> PathBuf {
    let d = temp_dir(name);
    for (i, k) in kernels.iter().enumerate() {
        std::fs::write(d.join(format!("kernel-{}.traceg", i + 1)), k).unwrap();
    }
    std::fs::write(d.join("kernelslist.g"), list).unwrap();
    d
}

/// Header of a hand-written kernel: `blocks` blocks of `threads` threads and `shmem` bytes.
fn header(id: u32, blocks: u32, threads: u32, shmem: u32) -> String {
    format!(
        "-kernel name = k{id}\n-kernel id = {id}\n-grid dim = ({blocks},1,1)\n-block dim = ({threads},1,1)\n\
         -shmem = {shmem}\n-nregs = 32\n-binary version = 90\n-shmem base_addr = 0x7f0000000000\n\
         -local mem base_addr = 0x7e0000000000\n-accelsim tracer version = 4\n\n"
    )
}

/// One block whose warps run the given instruction lines (each list ends with its EXIT).
fn block(id: u32, warps: &[Vec<String>]) -> String {
    let mut s = format!("#BEGIN_TB\nthread block = {id},0,0\n");
    for (w, insts) in warps.iter().enumerate() {
        s.push_str(&format!("warp = {w}\ninsts = {}\n", insts.len()));
        for i in insts {
            s.push_str(i);
            s.push('\n');
        }
    }
    s.push_str("#END_TB\n");
    s
}

fn run_dir(dir: &Path, config: &str, sets: &[&str]) -> Result<runner::RunOutput, runner::RunError> {
    runner::execute(&RunArgs {
        input: dir.to_path_buf(),
        config: (config != "h100").then(|| root().join(format!("configs/{config}.toml"))),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
}

#[test]
fn replayed_instruction_counts_equal_the_traces() {
    for (config, s) in [
        ("tiny", synth(SynthAtomics::Distinct, 2, 6)),
        ("h100", synth(SynthAtomics::Same, 3, 20)),
        ("v100", synth(SynthAtomics::None, 2, 10)),
    ] {
        let t = synth_trace(&s);
        let (warp, thread) = t.kernels().next().unwrap().instruction_counts();
        let r = replay(&cfg(config, &[]), &t);
        assert_eq!(
            stat(&r, "gpu", "warp_instructions"),
            warp as f64,
            "{config}"
        );
        assert_eq!(
            stat(&r, "gpu", "thread_instructions"),
            thread as f64,
            "{config}"
        );
        assert_eq!(
            stat(&r, "trace.kernel1", "thread_instructions"),
            thread as f64
        );
        // Three memory instructions per iteration with atomics, two without.
        let per_iter = if s.atomics == SynthAtomics::None {
            2
        } else {
            3
        };
        let mem = (s.blocks * 8 * s.iters * per_iter) as f64;
        assert_eq!(stat(&r, "gpu", "memory_instructions"), mem, "{config}");
        assert_eq!(stat(&r, "kernel", "timing_only"), 1.0);
        assert!(r.cycles > 0 && r.checks.is_empty() && r.buffers.is_empty());
    }
}

#[test]
fn combining_same_address_lanes_makes_one_atomic_operation_per_warp_instruction() {
    let s = synth(SynthAtomics::Same, 2, 8);
    let t = synth_trace(&s);
    let reds = (s.blocks * 8 * s.iters) as f64;
    let on = replay(
        &cfg("h100", &["atomics.combine_same_address_lanes=true"]),
        &t,
    );
    // The preset serialises a warp's lanes (measured on the H100).
    let off = replay(&cfg("h100", &[]), &t);
    for r in [&on, &off] {
        assert_eq!(stat(r, "atomics.l2", "lane_operations"), reds * 32.0);
    }
    assert_eq!(stat(&on, "atomics.l2", "operations"), reds);
    assert_eq!(stat(&off, "atomics.l2", "operations"), reds * 32.0);
    // Lane by lane, the one address takes 32 unit cycles per instruction instead of one: the unit
    // is busier, operations queue longer, and the kernel takes longer.
    for m in ["utilisation", "mean_queue_delay"] {
        assert!(
            stat(&off, "atomics.l2", m) > stat(&on, "atomics.l2", m),
            "{m}: lane by lane {} vs combined {}",
            stat(&off, "atomics.l2", m),
            stat(&on, "atomics.l2", m)
        );
    }
    assert!(off.cycles > on.cycles);
    // Distinct addresses: one operation per lane either way.
    let d = synth_trace(&synth(SynthAtomics::Distinct, 2, 8));
    for sets in [&[][..], &["atomics.combine_same_address_lanes=true"][..]] {
        let r = replay(&cfg("h100", sets), &d);
        assert_eq!(stat(&r, "atomics.l2", "operations"), reds * 32.0);
    }
}

#[test]
fn a_trace_replays_from_its_directory_or_its_list_and_reproducibly() {
    let d = temp_dir("dir");
    write_dir(&d, &synth(SynthAtomics::Distinct, 2, 4)).unwrap();
    let a = run_dir(&d, "tiny", &[]).expect("directory replays");
    let b = run_dir(&d.join("kernelslist.g"), "tiny", &[]).expect("list replays");
    assert_eq!(a.result.cycles, b.result.cycles);
    assert_eq!(a.result.stats, b.result.stats);
    assert!(a.summary.contains("timing only"), "{}", a.summary);
}

#[test]
fn xz_compressed_kernels_replay_like_plain_text() {
    let s = synth(SynthAtomics::Same, 2, 4);
    let plain = write_trace("plain", &[&kernel_text(&s)], "kernel-1.traceg\n");
    let xz = temp_dir("xz");
    let mut out = Vec::new();
    lzma_rs::xz_compress(&mut kernel_text(&s).as_bytes(), &mut out).unwrap();
    std::fs::write(xz.join("kernel-1.traceg.xz"), out).unwrap();
    std::fs::write(xz.join("kernelslist.g"), "kernel-1.traceg.xz\n").unwrap();
    let a = run_dir(&plain, "tiny", &[]).unwrap();
    let b = run_dir(&xz, "tiny", &[]).unwrap();
    assert_eq!(a.result.cycles, b.result.cycles);
    assert_eq!(a.result.stats, b.result.stats);
}

#[test]
fn a_truncated_trace_is_an_error_naming_file_and_line() {
    let text = kernel_text(&synth(SynthAtomics::Distinct, 2, 2));
    let cut: String = text.lines().take(30).map(|l| format!("{l}\n")).collect();
    let d = write_trace("truncated", &[&cut], "kernel-1.traceg\n");
    let e = run_dir(&d, "tiny", &[])
        .err()
        .expect("a truncated trace fails")
        .to_string();
    let file = d.join("kernel-1.traceg").display().to_string();
    assert!(e.contains(&format!("{file}:30:")), "{e}");
    assert!(e.contains("truncated"), "{e}");
    // A missing kernel file is named with the list's line.
    let d = write_trace("missing", &[], "\nkernel-7.traceg\n");
    let e = run_dir(&d, "tiny", &[])
        .err()
        .expect("missing kernel")
        .to_string();
    assert!(
        e.contains("kernelslist.g:2:") && e.contains("kernel-7.traceg"),
        "{e}"
    );
}

#[test]
fn a_block_that_does_not_fit_an_sm_is_an_error_naming_the_kernel_file() {
    let k = header(1, 1, 32, 1 << 20) + &block(0, &[vec!["0000 ffffffff 0 EXIT 0 0".into()]]);
    let d = write_trace("shmem", &[&k], "kernel-1.traceg\n");
    let e = run_dir(&d, "tiny", &[])
        .err()
        .expect("too much shared memory")
        .to_string();
    assert!(
        e.contains("kernel-1.traceg") && e.contains("sm.max_shared_bytes"),
        "{e}"
    );
    // Parameters belong to kernels, not traces.
    let e = runner::execute(&RunArgs {
        input: d.clone(),
        params: vec![("N".into(), 1)],
        ..Default::default()
    })
    .err()
    .expect("--param on a trace")
    .to_string();
    assert!(e.contains("--param N"), "{e}");
}

/// A kernel of one warp loading the 32 consecutive words at `base`, then exiting.
fn load_kernel(id: u32, base: u64) -> String {
    header(id, 1, 32, 0)
        + &block(
            0,
            &[vec![
                format!("0000 ffffffff 1 R4 LDG.E 1 R2 4 1 {base:#x} 4"),
                "0010 ffffffff 1 R5 IADD3 1 R4 0".into(),
                "0020 ffffffff 0 EXIT 0 0".into(),
            ]],
        )
}

#[test]
fn a_host_copy_between_kernels_evicts_its_lines_from_the_caches() {
    // An ordinary address, and the address space's last line (whose end, 2^64, no sum may reach;
    // the copy covers it from the line before, to the last byte but one).
    for (name, base, copy, bytes) in [
        ("", 0x7f40_0000_0000u64, 0x7f40_0000_0000u64, 128u64),
        ("-last", !127u64, !255u64, 255),
    ] {
        let k1 = load_kernel(1, base);
        let k2 = load_kernel(2, base);
        let kept = write_trace(
            &format!("kept{name}"),
            &[&k1, &k2],
            "kernel-1.traceg\nkernel-2.traceg\n",
        );
        let list = format!("kernel-1.traceg\nMemcpyHtoD,{copy:#x},{bytes}\nkernel-2.traceg\n");
        let copied = write_trace(&format!("copied{name}"), &[&k1, &k2], &list);
        let a = run_dir(&kept, "tiny", &[]).unwrap().result;
        let b = run_dir(&copied, "tiny", &[]).unwrap().result;
        // The second kernel hits in L2 unless the copy put its line back in DRAM only.
        assert_eq!(stat(&a, "dram", "reads"), 1.0, "{base:#x}");
        assert_eq!(stat(&b, "dram", "reads"), 2.0, "{base:#x}");
        assert!(stat(&b, "trace.kernel2", "cycles") > stat(&a, "trace.kernel2", "cycles"));
        assert_eq!(stat(&a, "kernel", "launches"), 2.0);
    }
}

#[test]
fn register_dependencies_and_opcode_classes_set_the_pace() {
    // Eight dependent IMADs (each waits for the previous) vs eight independent ones.
    let chain: Vec<String> = (0..8)
        .map(|i| format!("{:04x} ffffffff 1 R2 IMAD 1 R2 0", i * 16))
        .chain(["0080 ffffffff 0 EXIT 0 0".to_string()])
        .collect();
    let independent: Vec<String> = (0..8)
        .map(|i| format!("{:04x} ffffffff 1 R{} IMAD 1 R1 0", i * 16, 2 + i))
        .chain(["0080 ffffffff 0 EXIT 0 0".to_string()])
        .collect();
    let dep = write_trace(
        "dep",
        &[&(header(1, 1, 32, 0) + &block(0, &[chain]))],
        "kernel-1.traceg\n",
    );
    let ind = write_trace(
        "indep",
        &[&(header(1, 1, 32, 0) + &block(0, &[independent]))],
        "kernel-1.traceg\n",
    );
    let a = run_dir(&dep, "tiny", &[]).unwrap().result;
    let b = run_dir(&ind, "tiny", &[]).unwrap().result;
    // tiny: int_mul = 4 cycles; the chain waits 3 more cycles at each of 7 dependences.
    assert_eq!(a.cycles - b.cycles, 7 * 3, "{} vs {}", a.cycles, b.cycles);
    let slower = run_dir(&dep, "tiny", &["sm.latency.int_mul=10"])
        .unwrap()
        .result;
    assert_eq!(slower.cycles - a.cycles, 7 * 6);
    // An opcode the table does not know is timed as integer ALU and counted.
    let k = header(1, 1, 32, 0)
        + &block(
            0,
            &[vec![
                "0000 ffffffff 1 R2 FOOBAR.X 0 0".into(),
                "0010 0000ffff 1 R3 FOOBAR.X 0 0".into(),
                "0020 ffffffff 0 EXIT 0 0".into(),
            ]],
        );
    let d = write_trace("unknown", &[&k], "kernel-1.traceg\n");
    let out = run_dir(&d, "tiny", &[]).unwrap();
    assert_eq!(
        stat(&out.result, "trace.kernel1.unknown_opcode", "FOOBAR.X"),
        2.0
    );
    assert!(
        out.summary.contains("FOOBAR.X: 2 instructions"),
        "{}",
        out.summary
    );
}

#[test]
fn shared_memory_accesses_are_timed_by_their_banks() {
    // 32 lanes, 4-byte words: stride 4 is conflict-free, stride 128 puts every lane on bank 0.
    let sts = |stride: u32| {
        let k = header(1, 1, 32, 8192)
            + &block(
                0,
                &[vec![
                    format!("0000 ffffffff 0 STS 2 R1 R2 4 1 0x7f0000000000 {stride}"),
                    format!("0010 ffffffff 1 R3 LDS 1 R1 4 1 0x7f0000000000 {stride}"),
                    "0020 ffffffff 1 R4 ATOMS.ADD 2 R1 R3 4 1 0x7f0000000000 4".into(),
                    "0030 ffffffff 0 EXIT 0 0".into(),
                ]],
            );
        let d = write_trace(&format!("sts{stride}"), &[&k], "kernel-1.traceg\n");
        run_dir(&d, "tiny", &[]).unwrap().result
    };
    let free = sts(4);
    let conflict = sts(128);
    assert_eq!(stat(&free, "sm", "bank_conflict"), 0.0);
    // Two accesses with 32 distinct words on one bank: 31 extra cycles each.
    assert_eq!(stat(&conflict, "sm", "bank_conflict"), 62.0);
    assert_eq!(stat(&conflict, "sm", "shared_accesses"), 3.0);
    assert_eq!(stat(&conflict, "atomics.sm", "shared_ops"), 32.0);
    assert!(conflict.cycles > free.cycles);
}

/// A dependent chain of `n` MUFU instructions on R2 from `pc`.
fn mufu_chain(pc: u32, n: u32) -> Vec<String> {
    (0..n)
        .map(|i| format!("{:04x} ffffffff 1 R2 MUFU.RCP 1 R2 0", pc + i * 16))
        .collect()
}

#[test]
fn a_barrier_holds_every_warp_of_the_block_until_the_last_arrives() {
    // Warp 0 runs a dependent chain before the barrier, warp 1 one after it. With a barrier the
    // chains run one after the other; with a NOP in its place, side by side.
    let run = |sync: &str, name: &str| {
        let mut w0 = mufu_chain(0, 4);
        w0.push(format!("0040 ffffffff 0 {sync} 0 0"));
        w0.push("0050 ffffffff 0 EXIT 0 0".into());
        let mut w1 = vec![format!("0040 ffffffff 0 {sync} 0 0")];
        w1.extend(mufu_chain(0x50, 4));
        w1.push("0090 ffffffff 0 EXIT 0 0".into());
        let k = header(1, 1, 64, 0) + &block(0, &[w0, w1]);
        run_dir(&write_trace(name, &[&k], "kernel-1.traceg\n"), "tiny", &[])
            .unwrap()
            .result
    };
    let (with_bar, without) = (run("BAR.SYNC", "bar"), run("NOP", "nop"));
    // tiny: special = 8 cycles; each chain spends 3 x 8 cycles waiting on its dependences.
    assert!(with_bar.cycles >= 2 * 3 * 8, "{}", with_bar.cycles);
    assert!(without.cycles < 3 * 8 + 8, "{}", without.cycles);
    // MEMBAR.GPU after a store waits for the store's acknowledgement from L2.
    let fenced = header(1, 1, 32, 0)
        + &block(
            0,
            &[vec![
                "0000 ffffffff 0 STG.E 2 R2 R3 4 1 0x7f5000000000 4".into(),
                "0010 ffffffff 0 MEMBAR.SC.GPU 0 0".into(),
                "0020 ffffffff 0 EXIT 0 0".into(),
            ]],
        );
    let r = run_dir(
        &write_trace("membar", &[&fenced], "kernel-1.traceg\n"),
        "tiny",
        &[],
    )
    .unwrap()
    .result;
    assert!(stat(&r, "sm", "fence_stall") > 0.0);
    assert_eq!(
        stat(&r, "l1", "invalidations"),
        1.0,
        "a device-scope fence acquires"
    );
}

#[test]
fn strong_accesses_take_their_scope() {
    // A weak load of a line that is in L1 hits; a .STRONG.GPU load of it goes to L2.
    let k = |q: &str| {
        header(1, 1, 32, 0)
            + &block(
                0,
                &[vec![
                    "0000 ffffffff 1 R4 LDG.E 1 R2 4 1 0x7f6000000000 4".into(),
                    format!("0010 ffffffff 1 R5 LDG.E{q} 1 R4 4 1 0x7f6000000000 4"),
                    "0020 ffffffff 0 EXIT 0 0".into(),
                ]],
            )
    };
    let weak = run_dir(
        &write_trace("weak", &[&k("")], "kernel-1.traceg\n"),
        "tiny",
        &[],
    )
    .unwrap()
    .result;
    let strong = run_dir(
        &write_trace("strong", &[&k(".STRONG.GPU")], "kernel-1.traceg\n"),
        "tiny",
        &[],
    )
    .unwrap()
    .result;
    assert_eq!(stat(&weak, "l1", "bypass_loads"), 0.0);
    assert_eq!(stat(&strong, "l1", "bypass_loads"), 1.0);
    assert!(stat(&weak, "l1", "hit_rate") > 0.0);
}

/// A synthetic trace written to `dir` with its thread blocks in the file in `order` (block ids).
fn write_blocks_in_order(dir: &Path, s: &Synth, order: &[usize]) {
    let text = kernel_text(s);
    let first = text.find("#BEGIN_TB").expect("a block");
    let (head, body) = text.split_at(first);
    let blocks: Vec<String> = body
        .split_inclusive("#END_TB\n")
        .map(|b| b.trim_start_matches('\n').to_string())
        .filter(|b| !b.is_empty())
        .collect();
    assert_eq!(blocks.len(), s.blocks as usize);
    let mut out = head.to_string();
    for &i in order {
        out.push_str(&blocks[i]);
        out.push('\n');
    }
    std::fs::create_dir_all(dir).expect("dir");
    std::fs::write(dir.join("kernel-1.traceg"), out).expect("write");
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").expect("write");
}

#[test]
fn a_streamed_trace_replays_as_the_one_parsed_in_memory_and_holds_only_resident_blocks() {
    // 40 blocks of 256 threads on the tiny config (4 SMs × 2 such blocks): five waves.
    let c = cfg("tiny", &[]);
    let s = synth(SynthAtomics::Distinct, 2, 40);
    let dir = temp_dir("stream");
    write_dir(&dir, &s).expect("write the trace");
    let streamed = trace::load(&dir).expect("streamed trace loads");
    let k = streamed.kernels().next().expect("a kernel");
    assert!(k.is_streamed());
    assert_eq!(
        k.resident_blocks(),
        (0, 0),
        "the first pass parses no block"
    );
    let want = replay(&c, &synth_trace(&s));
    let got = replay(&c, &streamed);
    assert_eq!(got.cycles, want.cycles);
    assert_eq!(got.stats, want.stats);
    let (now, peak) = k.resident_blocks();
    assert_eq!(
        now, 0,
        "every block is freed once its work-group has finished"
    );
    // The resident groups' blocks, and those read ahead (on a reader thread when the machine has
    // another core): bounded by the SMs, not the grid's 40.
    let fit = 4 * 2 + 4 * machine::READ_AHEAD_PER_SM;
    assert!(
        (1..=fit).contains(&peak) && fit < 40,
        "at most the {fit} resident and read-ahead blocks at once, not the grid's 40: {peak}"
    );
    assert_eq!(
        k.instruction_counts(),
        synth_trace(&s)
            .kernels()
            .next()
            .unwrap()
            .instruction_counts()
    );
    // Any number of threads: the same run.
    let two = machine::run_trace(
        &c,
        &trace::load_threads(&dir, 2).expect("loads"),
        &RunOptions {
            threads: 2,
            ..RunOptions::default()
        },
    )
    .expect("replays on two threads");
    assert_eq!((two.cycles, &two.stats), (want.cycles, &want.stats));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn thread_blocks_out_of_file_order_are_dispatched_in_grid_order() {
    let c = cfg("tiny", &[]);
    let s = synth(SynthAtomics::Same, 1, 12);
    let dir = temp_dir("order");
    let order: Vec<usize> = (0..12).rev().collect();
    write_blocks_in_order(&dir, &s, &order);
    let t = trace::load(&dir).expect("loads");
    let k = t.kernels().next().unwrap();
    assert_eq!(k.blocks[0].id, [11, 0, 0]);
    assert_eq!(k.block_index_of_group(0), 11);
    let got = replay(&c, &t);
    let want = replay(&c, &synth_trace(&s));
    assert_eq!((got.cycles, got.stats), (want.cycles, want.stats));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_in_a_block_read_late_is_an_error_naming_its_line() {
    let c = cfg("tiny", &[]);
    let s = synth(SynthAtomics::Distinct, 1, 20);
    let dir = temp_dir("late");
    let text = kernel_text(&s);
    // A malformed register in the last block's last warp: the first pass does not decode it.
    let at = text.rfind("RED.E.ADD.STRONG.GPU 2 R10").expect("an atomic");
    let bad = format!(
        "{}RED.E.ADD.STRONG.GPU 2 Q10{}",
        &text[..at],
        &text[at + 26..]
    );
    std::fs::write(dir.join("kernel-1.traceg"), &bad).expect("write");
    std::fs::write(dir.join("kernelslist.g"), "kernel-1.traceg\n").expect("write");
    let t = trace::load(&dir).expect("the structure is sound: the first pass accepts it");
    let e = machine::run_trace(&c, &t, &RunOptions::default())
        .expect_err("the block fails when it is read")
        .to_string();
    let line = bad[..at].lines().count();
    let whole = trace::parse_kernel(&bad, &dir.join("kernel-1.traceg"))
        .expect_err("a whole read fails too")
        .to_string();
    assert_eq!(e, whole, "the same error as a whole-file read");
    assert!(
        e.contains(&format!("kernel-1.traceg:{line}:")) && e.contains("`Q10` is not a register"),
        "{e}"
    );
    // A truncated file is found by the first pass.
    std::fs::write(dir.join("kernel-1.traceg"), &text[..text.len() - 300]).expect("write");
    let e = trace::load(&dir).expect_err("truncated").to_string();
    assert!(e.contains("truncated"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
