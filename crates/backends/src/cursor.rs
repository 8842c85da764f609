//! The cursor of a file whose client has positional calls only (libsmbclient, gfapi,
//! NFSv4.1, smb2, the client cache): `read`, `write` and `seek` of its `FileHandle` as
//! `pread`/`pwrite` at a position the handle keeps. Not: files with a cursor of their
//! own (POSIX, libnfs), which implement the three themselves.

/// Writes `read`, `write` and `seek` into an `impl FileHandle` block, over that impl's
/// `pread`/`pwrite` and the `u64` field `$pos`: a read or write at the cursor moves it past
/// what was moved; `seek` only sets it.
macro_rules! cursor_over_positional_calls {
    ($pos:ident) => {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.pread(buf, self.$pos)?;
            self.$pos += n as u64;
            Ok(n)
        }

        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = self.pwrite(buf, self.$pos)?;
            self.$pos += n as u64;
            Ok(n)
        }

        fn seek(&mut self, offset: u64) -> std::io::Result<()> {
            self.$pos = offset;
            Ok(())
        }
    };
}
