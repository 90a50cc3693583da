#![no_main]
// The ptx reader on arbitrary bytes (gpumemsim::fuzz::Target::Ptx).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Ptx, data);
});
