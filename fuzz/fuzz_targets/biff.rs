//! IOzone's -b workbooks in BIFF2-4, as sharebench's own reader takes them.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(grid) = sharebench_report::import::biff::read(data) {
        let _ = sharebench_report::import::workbook::parse(&grid, "fuzz");
    }
});
