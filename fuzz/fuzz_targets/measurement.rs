#![no_main]
// The measurement reader on arbitrary bytes (gpumemsim::fuzz::Target::Measurement).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::Measurement, data);
});
