//! IOzone's text output (tables, -R reports, throughput summaries).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = sharebench_report::import::iozone_text::parse(&text, "fuzz");
});
