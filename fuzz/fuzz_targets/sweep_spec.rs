#![no_main]
// The sweep_spec reader on arbitrary bytes (gpumemsim::fuzz::Target::SweepSpec).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::SweepSpec, data);
});
