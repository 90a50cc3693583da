#![no_main]
// The trace reader on arbitrary bytes (gpumemsim::fuzz::Target::Trace).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Trace, data);
});
