//! results.jsonl, read as `report` reads it (a line at a time).
#![no_main]
use std::io::{Seek, Write};
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // An unlinked file on tmpfs: nothing is left behind, nothing touches a disk.
    let mut f = tempfile::tempfile_in("/dev/shm").unwrap();
    f.write_all(data).unwrap();
    f.rewind().unwrap();
    let _ = sharebench_core::record::read_jsonl_from(f, std::path::Path::new("fuzz"));
});
