//! run.json, the manifest of a run.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<sharebench_core::manifest::Manifest>(data);
});
