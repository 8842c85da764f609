//! NFSv3's namespace calls by file handle, through libnfs 4.0's raw RPC API
//! (`<nfsc/libnfs-raw.h>`, the argument and reply structs of `<nfsc/libnfs-raw-nfs.h>`
//! declared by hand): LOOKUP3, CREATE3 (guarded), MKDIR3, SYMLINK3, REMOVE3, RMDIR3, RENAME3,
//! LINK3 and SETATTR3, each naming one entry in a directory whose handle the tool holds.
//! A server never follows a symlink in such a call, and nothing is resolved by path, so a
//! directory someone swaps for a link cannot send a create or a remove elsewhere.
//! A call is sent on a context's RPC connection and waited for in its event loop, on the
//! thread that owns the context, as libnfs's own synchronous calls do.
//! Not here: the path-based calls and file I/O (`libnfs.rs`), NFSv4, which policy uses these.

use super::libnfs::{Context, RawContext};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io;
use std::time::{Duration, Instant};

#[repr(C)]
pub(super) struct RawRpc {
    _opaque: [u8; 0],
}

/// XDR's variable-length opaque as libnfs holds it, a length and a pointer: `nfs_fh3`,
/// and NFSv4's `nfs_fh4`, `utf8string` and `attrlist4`.
#[derive(Clone, Copy)]
#[repr(C)]
pub(super) struct Bytes {
    len: u32,
    val: *const c_char,
}

impl Bytes {
    /// The argument naming `b`, which must outlive the call.
    pub(super) fn of(b: &[u8]) -> Bytes {
        Bytes {
            len: b.len() as u32,
            val: b.as_ptr().cast(),
        }
    }
}

/// `diropargs3`: a name in a directory.
#[repr(C)]
struct DirOp {
    dir: Bytes,
    name: *const c_char,
}

/// `sattr3`, flattened: each `set_*` discriminant followed by its value (64 bytes, as C
/// lays it out: `size` at 24 with its value at 32, `atime` at 40, `mtime` at 52).
#[repr(C)]
#[derive(Default)]
struct Sattr3 {
    set_mode: u32,
    mode: u32,
    set_uid: u32,
    uid: u32,
    set_gid: u32,
    gid: u32,
    set_size: u32,
    size: u64,
    set_atime: u32,
    atime: [u32; 2],
    set_mtime: u32,
    mtime: [u32; 2],
}

/// `createhow3` with mode GUARDED: the create fails if the name exists.
#[repr(C)]
struct CreateHow {
    mode: u32,
    attributes: Sattr3,
}

#[repr(C)]
struct CreateArgs {
    place: DirOp,
    how: CreateHow,
}

#[repr(C)]
struct MkdirArgs {
    place: DirOp,
    attributes: Sattr3,
}

#[repr(C)]
struct SymlinkArgs {
    place: DirOp,
    attributes: Sattr3,
    target: *const c_char,
}

#[repr(C)]
struct RenameArgs {
    from: DirOp,
    to: DirOp,
}

#[repr(C)]
struct LinkArgs {
    file: Bytes,
    link: DirOp,
}

/// `SETATTR3args` with no guard.
#[repr(C)]
struct SetattrArgs {
    object: Bytes,
    attributes: Sattr3,
    guard: [u32; 3],
}

/// libnfs's `struct nfs_fh`, what `nfs_get_fh` returns for an open file.
#[repr(C)]
struct NfsFh {
    len: c_int,
    val: *const c_char,
}

const GUARDED: u32 = 1;
const SET_TO_CLIENT_TIME: u32 = 2;
/// `ftype3` values met here.
pub const NF3REG: u32 = 1;
pub const NF3DIR: u32 = 2;
pub const NF3LNK: u32 = 5;

pub(super) type RpcCb = unsafe extern "C" fn(*mut RawRpc, c_int, *mut c_void, *mut c_void);

extern "C" {
    fn nfs_get_rpc_context(nfs: *mut RawContext) -> *mut RawRpc;
    fn nfs_get_fh(fh: *mut super::libnfs::RawFh) -> *mut NfsFh;
    fn rpc_get_fd(rpc: *mut RawRpc) -> c_int;
    fn rpc_which_events(rpc: *mut RawRpc) -> c_int;
    fn rpc_service(rpc: *mut RawRpc, revents: c_int) -> c_int;
    fn rpc_get_error(rpc: *mut RawRpc) -> *mut c_char;
    fn rpc_nfs3_lookup_async(rpc: *mut RawRpc, cb: RpcCb, a: *mut DirOp, p: *mut c_void) -> c_int;
    fn rpc_nfs3_create_async(
        rpc: *mut RawRpc,
        cb: RpcCb,
        a: *mut CreateArgs,
        p: *mut c_void,
    ) -> c_int;
    fn rpc_nfs3_mkdir_async(
        rpc: *mut RawRpc,
        cb: RpcCb,
        a: *mut MkdirArgs,
        p: *mut c_void,
    ) -> c_int;
    fn rpc_nfs3_symlink_async(
        rpc: *mut RawRpc,
        cb: RpcCb,
        a: *mut SymlinkArgs,
        p: *mut c_void,
    ) -> c_int;
    fn rpc_nfs3_remove_async(rpc: *mut RawRpc, cb: RpcCb, a: *mut DirOp, p: *mut c_void) -> c_int;
    fn rpc_nfs3_rmdir_async(rpc: *mut RawRpc, cb: RpcCb, a: *mut DirOp, p: *mut c_void) -> c_int;
    fn rpc_nfs3_rename_async(
        rpc: *mut RawRpc,
        cb: RpcCb,
        a: *mut RenameArgs,
        p: *mut c_void,
    ) -> c_int;
    fn rpc_nfs3_link_async(rpc: *mut RawRpc, cb: RpcCb, a: *mut LinkArgs, p: *mut c_void) -> c_int;
    fn rpc_nfs3_setattr_async(
        rpc: *mut RawRpc,
        cb: RpcCb,
        a: *mut SetattrArgs,
        p: *mut c_void,
    ) -> c_int;
}

/// How long a call may go without an answer before the connection is called lost; libnfs's
/// own RPC timeout (set on every context) ends it sooner.
const STALL: Duration = Duration::from_secs(90);

/// An NFSv3 file handle, as the server gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fh(Vec<u8>);

impl Fh {
    pub(super) fn bytes(&self) -> Bytes {
        Bytes::of(&self.0)
    }

    /// The argument naming `name` in this directory (both must outlive the call).
    fn entry(&self, name: &CString) -> DirOp {
        DirOp {
            dir: self.bytes(),
            name: name.as_ptr(),
        }
    }
}

/// Which part of a reply to keep, by the reply's type.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    /// Only the status (REMOVE3, RMDIR3, RENAME3, LINK3, SETATTR3).
    Status,
    /// LOOKUP3res: the handle at 8, the type at 32 when attributes follow (flag at 24).
    Lookup,
    /// CREATE3res, MKDIR3res, SYMLINK3res: a post_op_fh3 at 8, its handle at 16.
    Made,
    /// NFSv4's COMPOUND4res: the results (`nfs_resop4`, 160 bytes each, the result's status
    /// at 8) from 32, their count at 24; a GETFH's handle at 16, a GETATTR's `fattr4` at 16.
    Compound,
}

/// What a call's callback leaves for the waiting thread.
pub(super) struct Reply {
    shape: Shape,
    done: bool,
    /// RPC_STATUS_* of the call.
    rpc: c_int,
    /// nfsstat3 of the reply.
    nfs: u32,
    pub(super) fh: Option<Fh>,
    /// ftype3 (or NFSv4's nfs_ftype4, the same numbers), when the reply carried it.
    pub(super) kind: Option<u32>,
}

/// Copies a `nfs_fh3` the reply owns.
///
/// # Safety
/// `p` points to a live `nfs_fh3` whose `data_val` holds `data_len` bytes.
unsafe fn copy_fh(p: *const u8) -> Fh {
    // SAFETY: the caller's promise; the bytes are copied before the reply is freed.
    unsafe {
        let fh = &*(p as *const Bytes);
        Fh(held(fh.val.cast::<u8>(), fh.len).to_vec())
    }
}

/// The `len` items a reply holds at `p` (none when `p` is null).
///
/// # Safety
/// A non-null `p` points to `len` initialised items that outlive the slice's use.
unsafe fn held<'a, T>(p: *const T, len: u32) -> &'a [T] {
    if p.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: the caller's promise, for a non-null pointer.
    unsafe { std::slice::from_raw_parts(p, len as usize) }
}

pub(super) unsafe extern "C" fn on_reply(
    _rpc: *mut RawRpc,
    status: c_int,
    data: *mut c_void,
    p: *mut c_void,
) {
    // SAFETY: `p` is the `Reply` that `call` boxed and keeps alive (leaking it if it stops
    // waiting), and callbacks run inside rpc_service on the thread that waits, so nothing
    // else touches it meanwhile. On RPC_STATUS_SUCCESS `data` is the reply struct of the
    // call's type, laid out as `Shape` says (offsets from libnfs-raw-nfs.h and
    // libnfs-raw-nfs4.h on LP64, checked by the layout tests), alive for the length of the
    // callback; a COMPOUND4res's array holds as many results as its count says, and only
    // results whose status is 0 carry a handle or attributes.
    unsafe {
        let r = &mut *(p as *mut Reply);
        r.done = true;
        r.rpc = status;
        if status != 0 || data.is_null() {
            return;
        }
        let base = data as *const u8;
        r.nfs = *(base as *const u32);
        if r.nfs != 0 {
            return;
        }
        match r.shape {
            Shape::Status => {}
            Shape::Lookup => {
                r.fh = Some(copy_fh(base.add(8)));
                if *(base.add(24) as *const u32) != 0 {
                    r.kind = Some(*(base.add(32) as *const u32));
                }
            }
            Shape::Made => {
                if *(base.add(8) as *const u32) != 0 {
                    r.fh = Some(copy_fh(base.add(16)));
                }
            }
            Shape::Compound => {
                let n = *(base.add(24) as *const u32) as usize;
                let results = *(base.add(32) as *const *const u8);
                for i in 0..n {
                    let res = results.add(i * 160);
                    if *(res.add(8) as *const u32) != 0 {
                        continue;
                    }
                    match *(res as *const u32) {
                        super::libnfs_compound::OP_GETFH => r.fh = Some(copy_fh(res.add(16))),
                        super::libnfs_compound::OP_GETATTR => {
                            let mask = &*(res.add(16) as *const Bytes);
                            let vals = &*(res.add(32) as *const Bytes);
                            let words = held(mask.val.cast::<u32>(), mask.len);
                            let vals = held(vals.val.cast::<u8>(), vals.len);
                            r.kind = super::libnfs_compound::type_of(words, vals);
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// nfsstat3 or nfsstat4 as an errno (most of their codes are the Linux errno of the same
/// number). NFS4ERR_SAME and NFS4ERR_NOT_SAME come only from the type check of an unlink
/// (a directory) and of an rmdir (not a directory).
fn errno_of(status: u32) -> c_int {
    match status {
        10009 => libc::EISDIR,
        10014 => libc::ESTALE,
        10027 => libc::ENOTDIR,
        10029 => libc::ELOOP,
        63 => libc::ENAMETOOLONG,
        66 => libc::ENOTEMPTY,
        69 => libc::EDQUOT,
        70 => libc::ESTALE,
        71 => libc::EREMOTE,
        10004 => libc::ENOTSUP,
        10008 => libc::EAGAIN,
        s if s < 10000 => s as c_int,
        _ => libc::EIO,
    }
}

pub(super) fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("name with a NUL byte: {s:?}"),
        )
    })
}

/// Sends one call with `send` (which queues it with `on_reply` and the reply's address)
/// and runs the context's event loop until it is answered.
pub(super) fn call(
    ctx: &mut Context,
    op: &str,
    what: &str,
    shape: Shape,
    send: impl FnOnce(*mut RawRpc, *mut c_void) -> c_int,
) -> io::Result<Reply> {
    // SAFETY: a live, mounted context; its RPC context lives as long as it does.
    let rpc = unsafe { nfs_get_rpc_context(ctx.raw()) };
    let reply = Box::into_raw(Box::new(Reply {
        shape,
        done: false,
        rpc: 0,
        nfs: 0,
        fh: None,
        kind: None,
    }));
    let lost = |why: String| io::Error::other(format!("nfs {op} {what}: {why}"));
    if send(rpc, reply.cast()) != 0 {
        // SAFETY: the call was not queued, so no callback will see `reply`.
        drop(unsafe { Box::from_raw(reply) });
        return Err(lost(rpc_error(rpc)));
    }
    let started = Instant::now();
    loop {
        // SAFETY: `reply` is ours until a callback runs, and callbacks run only inside
        // rpc_service below, on this thread.
        if unsafe { (*reply).done } {
            break;
        }
        if started.elapsed() > STALL {
            // The reply stays allocated: a late callback may still write it.
            return Err(lost("no answer from the server".into()));
        }
        // SAFETY: a live RPC context; poll gets one valid pollfd.
        let rc = unsafe {
            let mut pfd = libc::pollfd {
                fd: rpc_get_fd(rpc),
                events: rpc_which_events(rpc) as libc::c_short,
                revents: 0,
            };
            // 100 ms: libnfs times calls out only inside rpc_service.
            if libc::poll(&mut pfd, 1, 100) < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(lost(e.to_string()));
                }
                continue;
            }
            rpc_service(rpc, pfd.revents as c_int)
        };
        // SAFETY: as above.
        if rc < 0 && !unsafe { (*reply).done } {
            return Err(lost(format!(
                "the connection to the server was lost ({})",
                rpc_error(rpc)
            )));
        }
    }
    // SAFETY: answered, so no callback will touch it again; it is ours to free.
    let r = *unsafe { Box::from_raw(reply) };
    if r.rpc != 0 {
        return Err(lost(format!("RPC status {} ({})", r.rpc, rpc_error(rpc))));
    }
    if r.nfs != 0 {
        let errno = errno_of(r.nfs);
        let kind = io::Error::from_raw_os_error(errno).kind();
        let text = io::Error::from_raw_os_error(errno);
        return Err(io::Error::new(kind, format!("nfs {op} {what}: {text}")));
    }
    Ok(r)
}

fn rpc_error(rpc: *mut RawRpc) -> String {
    // SAFETY: a live RPC context; the text is null or NUL-terminated, copied at once.
    unsafe {
        let p = rpc_get_error(rpc);
        if p.is_null() {
            "no reason given".into()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

/// `name` in the directory `dir`, never followed: its handle, and its type when the server
/// said it.
pub fn lookup(ctx: &mut Context, dir: &Fh, name: &str) -> io::Result<(Fh, Option<u32>)> {
    let c = cstr(name)?;
    let mut a = dir.entry(&c);
    // SAFETY: the arguments (and the bytes they point to) outlive the call, which libnfs
    // encodes before it returns.
    let r = call(ctx, "lookup", name, Shape::Lookup, |rpc, p| unsafe {
        rpc_nfs3_lookup_async(rpc, on_reply, &mut a, p)
    })?;
    let fh =
        r.fh.ok_or_else(|| io::Error::other(format!("nfs lookup {name}: no handle")))?;
    Ok((fh, r.kind))
}

/// The handle of a name just made, from the reply or, if the server left it out, looked up.
fn made(ctx: &mut Context, dir: &Fh, name: &str, r: Reply) -> io::Result<Fh> {
    match r.fh {
        Some(fh) => Ok(fh),
        None => lookup(ctx, dir, name).map(|(fh, _)| fh),
    }
}

fn with_mode(mode: u32) -> Sattr3 {
    Sattr3 {
        set_mode: 1,
        mode,
        ..Sattr3::default()
    }
}

/// Creates the regular file `name` in `dir`; fails with AlreadyExists if the name is taken
/// (by anything, a symlink included), so nothing already there is ever opened.
pub fn create(ctx: &mut Context, dir: &Fh, name: &str, mode: u32) -> io::Result<Fh> {
    let c = cstr(name)?;
    let mut a = CreateArgs {
        place: dir.entry(&c),
        how: CreateHow {
            mode: GUARDED,
            attributes: with_mode(mode),
        },
    };
    // SAFETY: as in `lookup`.
    let r = call(ctx, "create", name, Shape::Made, |rpc, p| unsafe {
        rpc_nfs3_create_async(rpc, on_reply, &mut a, p)
    })?;
    made(ctx, dir, name, r)
}

/// Makes the directory `name` in `dir`.
pub fn mkdir(ctx: &mut Context, dir: &Fh, name: &str, mode: u32) -> io::Result<Fh> {
    let c = cstr(name)?;
    let mut a = MkdirArgs {
        place: dir.entry(&c),
        attributes: with_mode(mode),
    };
    // SAFETY: as in `lookup`.
    let r = call(ctx, "mkdir", name, Shape::Made, |rpc, p| unsafe {
        rpc_nfs3_mkdir_async(rpc, on_reply, &mut a, p)
    })?;
    made(ctx, dir, name, r)
}

/// Makes the symlink `name` in `dir`, holding `target` as given.
pub fn symlink(ctx: &mut Context, dir: &Fh, name: &str, target: &str) -> io::Result<()> {
    let (c, t) = (cstr(name)?, cstr(target)?);
    let mut a = SymlinkArgs {
        place: dir.entry(&c),
        attributes: Sattr3::default(),
        target: t.as_ptr(),
    };
    // SAFETY: as in `lookup`.
    call(ctx, "symlink", name, Shape::Made, |rpc, p| unsafe {
        rpc_nfs3_symlink_async(rpc, on_reply, &mut a, p)
    })
    .map(drop)
}

/// Removes the entry `name` from `dir` (a directory with `is_dir`), whatever it points to.
pub fn remove(ctx: &mut Context, dir: &Fh, name: &str, is_dir: bool) -> io::Result<()> {
    let c = cstr(name)?;
    let mut a = dir.entry(&c);
    let op = if is_dir { "rmdir" } else { "unlink" };
    // SAFETY: as in `lookup`.
    call(ctx, op, name, Shape::Status, |rpc, p| unsafe {
        if is_dir {
            rpc_nfs3_rmdir_async(rpc, on_reply, &mut a, p)
        } else {
            rpc_nfs3_remove_async(rpc, on_reply, &mut a, p)
        }
    })
    .map(drop)
}

/// Renames `from` in `from_dir` to `to` in `to_dir`.
pub fn rename(
    ctx: &mut Context,
    (from_dir, from): (&Fh, &str),
    (to_dir, to): (&Fh, &str),
) -> io::Result<()> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    let mut a = RenameArgs {
        from: from_dir.entry(&f),
        to: to_dir.entry(&t),
    };
    // SAFETY: as in `lookup`.
    call(ctx, "rename", from, Shape::Status, |rpc, p| unsafe {
        rpc_nfs3_rename_async(rpc, on_reply, &mut a, p)
    })
    .map(drop)
}

/// Makes `name` in `dir` a hard link to `file`.
pub fn link(ctx: &mut Context, file: &Fh, dir: &Fh, name: &str) -> io::Result<()> {
    let c = cstr(name)?;
    let mut a = LinkArgs {
        file: file.bytes(),
        link: dir.entry(&c),
    };
    // SAFETY: as in `lookup`.
    call(ctx, "link", name, Shape::Status, |rpc, p| unsafe {
        rpc_nfs3_link_async(rpc, on_reply, &mut a, p)
    })
    .map(drop)
}

/// What SETATTR3 changes.
pub enum Change {
    Size(u64),
    Mode(u32),
    /// Access and modification times, nanoseconds since the epoch.
    Times(i128, i128),
}

fn nfstime(ns: i128) -> [u32; 2] {
    let s = ns.div_euclid(1_000_000_000).clamp(0, u32::MAX as i128) as u32;
    [s, ns.rem_euclid(1_000_000_000) as u32]
}

/// Changes one attribute of the object `fh`.
pub fn setattr(ctx: &mut Context, fh: &Fh, change: Change) -> io::Result<()> {
    let mut attributes = Sattr3::default();
    match change {
        Change::Size(n) => (attributes.set_size, attributes.size) = (1, n),
        Change::Mode(m) => (attributes.set_mode, attributes.mode) = (1, m),
        Change::Times(a, m) => {
            (attributes.set_atime, attributes.atime) = (SET_TO_CLIENT_TIME, nfstime(a));
            (attributes.set_mtime, attributes.mtime) = (SET_TO_CLIENT_TIME, nfstime(m));
        }
    }
    let mut a = SetattrArgs {
        object: fh.bytes(),
        attributes,
        guard: [0; 3],
    };
    // SAFETY: as in `lookup`.
    call(ctx, "setattr", "file", Shape::Status, |rpc, p| unsafe {
        rpc_nfs3_setattr_async(rpc, on_reply, &mut a, p)
    })
    .map(drop)
}

/// The handle of a file open through libnfs's path calls.
pub fn handle_of(file: &super::libnfs::OpenFile) -> Fh {
    let (_, raw) = file.raw();
    // SAFETY: a live handle; libnfs returns its own `nfs_fh`, whose bytes are copied.
    unsafe {
        let fh = &*nfs_get_fh(raw);
        Fh(std::slice::from_raw_parts(fh.val.cast::<u8>(), fh.len.max(0) as usize).to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The sizes and offsets of libnfs-raw-nfs.h on x86-64 (gcc's offsetof of the C structs).
    #[test]
    fn structs_are_laid_out_as_in_c() {
        assert_eq!(size_of::<Bytes>(), 16);
        assert_eq!(size_of::<DirOp>(), 24);
        assert_eq!(size_of::<Sattr3>(), 64);
        assert_eq!(offset_of!(Sattr3, set_size), 24);
        assert_eq!(offset_of!(Sattr3, set_atime), 40);
        assert_eq!(offset_of!(Sattr3, set_mtime), 52);
        assert_eq!(offset_of!(CreateHow, attributes), 8);
        assert_eq!(size_of::<CreateArgs>(), 96);
        assert_eq!(size_of::<MkdirArgs>(), 88);
        assert_eq!(offset_of!(SymlinkArgs, target), 88);
        assert_eq!(size_of::<SymlinkArgs>(), 96);
        assert_eq!(size_of::<RenameArgs>(), 48);
        assert_eq!(size_of::<LinkArgs>(), 40);
        assert_eq!(offset_of!(SetattrArgs, guard), 80);
        assert_eq!(size_of::<SetattrArgs>(), 96);
    }

    #[test]
    fn nfs_statuses_become_errnos() {
        assert_eq!(errno_of(17), libc::EEXIST);
        assert_eq!(errno_of(66), libc::ENOTEMPTY);
        assert_eq!(errno_of(70), libc::ESTALE);
        assert_eq!(errno_of(10001), libc::EIO);
    }

    #[test]
    fn times_before_the_epoch_are_clamped() {
        assert_eq!(
            nfstime(1_500_000_000_250_000_000),
            [1_500_000_000, 250_000_000]
        );
        assert_eq!(nfstime(-1)[0], 0);
    }
}
