//! nfs:// and smb:// target URLs.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = sharebench_backends::nfsurl::parse(&text);
    let _ = sharebench_backends::smburl::parse(&text);
});
