#![no_main]
// The kernel reader on arbitrary bytes (gpumemsim::fuzz::Target::Kernel).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Kernel, data);
});
