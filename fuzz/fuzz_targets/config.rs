#![no_main]
// The config reader on arbitrary bytes (gpumemsim::fuzz::Target::Config).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Config, data);
});
