//! Study files (TOML), with their run lines split as a step's are.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = sharebench_study::spec::Study::parse(&text);
    let _ = sharebench_study::spec::split_args(&text);
});
