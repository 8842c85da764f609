//! fio's JSON output (with whatever fio printed before it).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = sharebench_report::import::fio::parse(&text, "fuzz");
});
