//! Sizes and size lists as every option takes them (`4k`, `1m,16m`, `1k..1t`).
#![no_main]
use sharebench_core::size::{parse_size, parse_size_list, BareUnit};
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parse_size(&text, BareUnit::Bytes);
    let _ = parse_size_list(&text, BareUnit::KiB);
});
