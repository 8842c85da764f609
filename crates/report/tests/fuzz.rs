//! The importers never panic, whatever the bytes (proptest; the project's fuzzing).

use proptest::prelude::*;
use sharebench_report::import::{biff, fio, iozone_text, workbook};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn biff_reader_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut b = vec![0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00];
        b.extend(tail);
        if let Ok(g) = biff::read(&b) {
            let _ = workbook::parse(&g, "x");
        }
    }

    #[test]
    fn biff_records_with_plausible_headers_never_panic(
        recs in proptest::collection::vec((prop_oneof![Just(2u16), Just(3), Just(4), Just(0x203), Just(0x204), any::<u16>()], proptest::collection::vec(any::<u8>(), 0..40)), 0..40)
    ) {
        let mut b = vec![0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00];
        for (kind, body) in recs {
            b.extend(kind.to_le_bytes());
            b.extend((body.len() as u16).to_le_bytes());
            b.extend(body);
        }
        b.extend([0x0a, 0, 0, 0]);
        if let Ok(g) = biff::read(&b) {
            let _ = workbook::parse(&g, "x");
        }
    }

    #[test]
    fn iozone_text_never_panics(s in "(\\PC|\\n|\\t| |\"|[0-9]){0,600}") {
        let _ = iozone_text::parse(&s, "x");
    }

    #[test]
    fn iozone_text_shaped_input_never_panics(
        rows in proptest::collection::vec(proptest::collection::vec("[0-9]{0,12}|\"[0-9]{0,8}\"|report|Writer report|=|kB/sec", 0..12), 0..20)
    ) {
        let mut s = String::from("  KB  reclen   write rewrite    read    reread\n\"Writer report\"\n  \"4\"  \"8\"\nChildren see throughput for  4 initial writers = 12 kB/sec\nEach process writes a 99 kByte file in 0 kByte records\n");
        for r in rows {
            s.push_str(&r.join("  "));
            s.push('\n');
        }
        let _ = iozone_text::parse(&s, "x");
    }

    #[test]
    fn fio_never_panics(s in "\\PC{0,400}") {
        let _ = fio::parse(&s, "x");
        let _ = fio::parse(&format!("{{\"fio version\":1,\"jobs\":[{s}]}}"), "x");
    }

    #[test]
    fn calamine_path_never_panics(b in proptest::collection::vec(any::<u8>(), 0..1024)) {
        let mut z = b"PK\x03\x04".to_vec();
        z.extend(b);
        if let Ok(g) = workbook::read_with_calamine(&z) {
            let _ = workbook::parse(&g, "x");
        }
    }
}
