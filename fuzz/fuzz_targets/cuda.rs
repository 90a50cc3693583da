#![no_main]
// The cuda reader on arbitrary bytes (gpumemsim::fuzz::Target::Cuda).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Cuda, data);
});
