#![no_main]
// What the NVRTC path reads on arbitrary bytes (gpumemsim::fuzz::Target::Nvrtc).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Nvrtc, data);
});
