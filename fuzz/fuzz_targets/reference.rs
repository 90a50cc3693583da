#![no_main]
// The reference reader on arbitrary bytes (gpumemsim::fuzz::Target::Reference).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Reference, data);
});
