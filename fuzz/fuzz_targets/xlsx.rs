//! .xlsx (and BIFF5/8 .xls) workbooks through calamine, then the IOzone sheet parser.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(grid) = sharebench_report::import::workbook::read_with_calamine(data) {
        let _ = sharebench_report::import::workbook::parse(&grid, "fuzz");
    }
});
