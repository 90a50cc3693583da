#![no_main]
// The cli_values reader on arbitrary bytes (gpumemsim::fuzz::Target::CliValues).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gpumemsim::fuzz::run(gpumemsim::fuzz::Target::CliValues, data);
});
