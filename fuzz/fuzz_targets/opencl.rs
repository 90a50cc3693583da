#![no_main]
// The opencl reader on arbitrary bytes (gpumemsim::fuzz::Target::OpenCl).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::OpenCl, data);
});
