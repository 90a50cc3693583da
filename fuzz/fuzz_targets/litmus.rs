#![no_main]
// The litmus reader on arbitrary bytes (gpumemsim::fuzz::Target::Litmus).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Litmus, data);
});
