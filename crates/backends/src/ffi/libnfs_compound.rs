//! NFSv4.0's namespace calls by file handle, through libnfs 4.0's raw COMPOUND
//! (`rpc_nfs4_compound_async`, the structs of `<nfsc/libnfs-raw-nfs4.h>` declared by hand).
//! Every COMPOUND starts from a handle the tool holds (PUTFH) and names one entry: LOOKUP,
//! CREATE of a directory or symlink, REMOVE, RENAME, LINK, or SETATTR of the handle itself.
//! A server never follows a symlink in such a call (a LOOKUP through one is
//! NFS4ERR_SYMLINK), and nothing is resolved by path.
//! Not here: regular files are not made here, since NFSv4.0 makes them only by OPEN, whose
//! state (the client id and the open owner's sequence) libnfs keeps to itself; the
//! calls' transport and wait are `libnfs_handles`'.

use super::libnfs::Context;
use super::libnfs_handles::{call, cstr, on_reply, Bytes, Change, Fh, RawRpc, RpcCb, Shape};
use std::ffi::{c_int, c_void, CString};
use std::io;

/// `bitmap4`: which attributes follow.
#[derive(Clone, Copy)]
#[repr(C)]
struct Bitmap {
    len: u32,
    val: *const u32,
}

/// `fattr4`: an attribute bitmap and the attributes' XDR encoding, in bit order.
#[derive(Clone, Copy)]
#[repr(C)]
struct Fattr {
    mask: Bitmap,
    vals: Bytes,
}

/// `CREATE4args`: `createtype4` (the type, then the link's text for NF4LNK, in a union of
/// 16 bytes), the name and the new object's attributes.
#[derive(Clone, Copy)]
#[repr(C)]
struct CreateArgs {
    kind: u32,
    link: Bytes,
    name: Bytes,
    attrs: Fattr,
}

/// `SETATTR4args`: a stateid (here the anonymous one, all zeros) and the attributes.
#[derive(Clone, Copy)]
#[repr(C)]
struct SetattrArgs {
    stateid: [u32; 4],
    attrs: Fattr,
}

#[derive(Clone, Copy)]
#[repr(C)]
struct RenameArgs {
    from: Bytes,
    to: Bytes,
}

/// The union of `nfs_argop4`, with the arguments of the operations sent here.
#[repr(C)]
union Args {
    /// PUTFH's handle; LOOKUP's, REMOVE's and LINK's name.
    one: Bytes,
    getattr: Bitmap,
    /// VERIFY and NVERIFY.
    verify: Fattr,
    create: CreateArgs,
    rename: RenameArgs,
    setattr: SetattrArgs,
    /// The union's size in C (PUTROOTFH and SAVEFH take nothing).
    none: [u64; 16],
}

/// `nfs_argop4`.
#[repr(C)]
struct Op {
    op: u32,
    args: Args,
}

/// `COMPOUND4args`.
#[repr(C)]
struct Compound {
    tag: Bytes,
    minor: u32,
    ops: Ops,
}

/// `COMPOUND4args`' `argarray`.
#[repr(C)]
struct Ops {
    len: u32,
    val: *mut Op,
}

const OP_CREATE: u32 = 6;
pub(super) const OP_GETATTR: u32 = 9;
pub(super) const OP_GETFH: u32 = 10;
const OP_LINK: u32 = 11;
const OP_LOOKUP: u32 = 15;
const OP_NVERIFY: u32 = 17;
const OP_PUTFH: u32 = 22;
const OP_PUTROOTFH: u32 = 24;
const OP_REMOVE: u32 = 28;
const OP_RENAME: u32 = 29;
const OP_SAVEFH: u32 = 32;
const OP_SETATTR: u32 = 34;
const OP_VERIFY: u32 = 37;

/// Attribute numbers: `FATTR4_*`.
const TYPE: u32 = 1;
const SIZE: u32 = 4;
const MODE: u32 = 33;
const TIME_ACCESS_SET: u32 = 48;
const TIME_MODIFY_SET: u32 = 54;
/// `nfs_ftype4` values met here (the same numbers as NFSv3's `ftype3`).
const NF4DIR: u32 = 2;
const NF4LNK: u32 = 5;
const SET_TO_CLIENT_TIME4: u32 = 1;

extern "C" {
    fn rpc_nfs4_compound_async(
        rpc: *mut RawRpc,
        cb: RpcCb,
        a: *mut Compound,
        p: *mut c_void,
    ) -> c_int;
}

/// Attributes to send: their bitmap and XDR values, kept alive for a call.
struct Attrs {
    mask: [u32; 2],
    vals: Vec<u8>,
}

impl Attrs {
    fn none() -> Attrs {
        Attrs {
            mask: [0; 2],
            vals: Vec::new(),
        }
    }

    /// Adds attribute `n`, whose encoding is `val`; attributes must come in rising order.
    fn with(mut self, n: u32, val: &[u8]) -> Attrs {
        self.mask[(n / 32) as usize] |= 1 << (n % 32);
        self.vals.extend_from_slice(val);
        self
    }

    fn arg(&self) -> Fattr {
        Fattr {
            mask: Bitmap {
                len: 2,
                val: self.mask.as_ptr(),
            },
            vals: Bytes::of(&self.vals),
        }
    }

    fn of(change: &Change) -> Attrs {
        match *change {
            Change::Size(n) => Attrs::none().with(SIZE, &n.to_be_bytes()),
            Change::Mode(m) => Attrs::none().with(MODE, &m.to_be_bytes()),
            Change::Times(a, m) => Attrs::none()
                .with(TIME_ACCESS_SET, &settime(a))
                .with(TIME_MODIFY_SET, &settime(m)),
        }
    }
}

/// `settime4` set to the client's time `ns` (nanoseconds since the epoch).
fn settime(ns: i128) -> [u8; 16] {
    let s = ns
        .div_euclid(1_000_000_000)
        .clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    let n = ns.rem_euclid(1_000_000_000) as u32;
    let mut v = [0u8; 16];
    v[..4].copy_from_slice(&SET_TO_CLIENT_TIME4.to_be_bytes());
    v[4..12].copy_from_slice(&s.to_be_bytes());
    v[12..].copy_from_slice(&n.to_be_bytes());
    v
}

fn op(op: u32, args: Args) -> Op {
    Op { op, args }
}

fn no_args(code: u32) -> Op {
    op(code, Args { none: [0; 16] })
}

fn putfh(fh: &Fh) -> Op {
    op(OP_PUTFH, Args { one: fh.bytes() })
}

fn named(code: u32, name: &CString) -> Op {
    op(
        code,
        Args {
            one: name_arg(name),
        },
    )
}

fn name_arg(name: &CString) -> Bytes {
    Bytes::of(name.as_bytes())
}

/// The attribute request of a LOOKUP's GETATTR: the object's type.
static TYPE_ONLY: [u32; 1] = [1 << TYPE];

fn get_type() -> Op {
    op(
        OP_GETATTR,
        Args {
            getattr: Bitmap {
                len: 1,
                val: TYPE_ONLY.as_ptr(),
            },
        },
    )
}

/// Sends `ops` as one NFSv4.0 COMPOUND and waits for its answer; every pointer in them
/// must outlive this call.
fn compound(
    ctx: &mut Context,
    what: &str,
    name: &str,
    mut ops: Vec<Op>,
) -> io::Result<super::libnfs_handles::Reply> {
    let mut args = Compound {
        tag: Bytes::of(&[]),
        minor: 0,
        ops: Ops {
            len: ops.len() as u32,
            val: ops.as_mut_ptr(),
        },
    };
    // SAFETY: `args`, `ops` and what they point to outlive the call, which libnfs encodes
    // before it returns; the reply is read by `on_reply` as `Shape::Compound` says.
    call(ctx, what, name, Shape::Compound, |rpc, p| unsafe {
        rpc_nfs4_compound_async(rpc, on_reply, &mut args, p)
    })
}

/// `name` in the directory `dir`, never followed: its handle and type.
pub fn lookup(ctx: &mut Context, dir: &Fh, name: &str) -> io::Result<(Fh, Option<u32>)> {
    let c = cstr(name)?;
    let ops = vec![
        putfh(dir),
        named(OP_LOOKUP, &c),
        no_args(OP_GETFH),
        get_type(),
    ];
    let r = compound(ctx, "lookup", name, ops)?;
    let fh =
        r.fh.ok_or_else(|| io::Error::other(format!("nfs lookup {name}: no handle")))?;
    Ok((fh, r.kind))
}

/// The directory `path` names from the server's root, each name looked up in one COMPOUND
/// (which never follows a symlink): the handle of a target's export path.
pub fn root(ctx: &mut Context, path: &str) -> io::Result<(Fh, Option<u32>)> {
    let names = path
        .split('/')
        .filter(|n| !n.is_empty())
        .map(cstr)
        .collect::<io::Result<Vec<_>>>()?;
    let mut ops = vec![no_args(OP_PUTROOTFH)];
    ops.extend(names.iter().map(|n| named(OP_LOOKUP, n)));
    ops.extend([no_args(OP_GETFH), get_type()]);
    let r = compound(ctx, "lookup", path, ops)?;
    let fh =
        r.fh.ok_or_else(|| io::Error::other(format!("nfs lookup {path}: no handle")))?;
    Ok((fh, r.kind))
}

/// CREATE of a directory or symlink named `name` in `dir`: its handle.
fn create(
    ctx: &mut Context,
    (dir, name): (&Fh, &str),
    kind: u32,
    link: Option<&CString>,
    attrs: &Attrs,
) -> io::Result<Fh> {
    let c = cstr(name)?;
    let args = CreateArgs {
        kind,
        link: link.map_or(Bytes::of(&[]), name_arg),
        name: name_arg(&c),
        attrs: attrs.arg(),
    };
    let ops = vec![
        putfh(dir),
        op(OP_CREATE, Args { create: args }),
        no_args(OP_GETFH),
    ];
    let what = if kind == NF4DIR { "mkdir" } else { "symlink" };
    let r = compound(ctx, what, name, ops)?;
    r.fh.ok_or_else(|| io::Error::other(format!("nfs {what} {name}: no handle")))
}

/// Makes the directory `name` in `dir`.
pub fn mkdir(ctx: &mut Context, dir: &Fh, name: &str, mode: u32) -> io::Result<Fh> {
    let attrs = Attrs::none().with(MODE, &mode.to_be_bytes());
    create(ctx, (dir, name), NF4DIR, None, &attrs)
}

/// Makes the symlink `name` in `dir`, holding `target` as given.
pub fn symlink(ctx: &mut Context, dir: &Fh, name: &str, target: &str) -> io::Result<()> {
    let t = cstr(target)?;
    create(ctx, (dir, name), NF4LNK, Some(&t), &Attrs::none()).map(drop)
}

/// Removes the entry `name` from `dir`, whatever it points to: a directory only with
/// `is_dir`, anything else only without (VERIFY or NVERIFY of its type, in the same
/// COMPOUND, stops the REMOVE otherwise, as rmdir and unlink would).
pub fn remove(ctx: &mut Context, dir: &Fh, name: &str, is_dir: bool) -> io::Result<()> {
    let c = cstr(name)?;
    let dir_type = Attrs::none().with(TYPE, &NF4DIR.to_be_bytes());
    let check = if is_dir { OP_VERIFY } else { OP_NVERIFY };
    let ops = vec![
        putfh(dir),
        named(OP_LOOKUP, &c),
        op(
            check,
            Args {
                verify: dir_type.arg(),
            },
        ),
        putfh(dir),
        named(OP_REMOVE, &c),
    ];
    let what = if is_dir { "rmdir" } else { "unlink" };
    compound(ctx, what, name, ops).map(drop)
}

/// Renames `from` in `from_dir` to `to` in `to_dir`.
pub fn rename(
    ctx: &mut Context,
    (from_dir, from): (&Fh, &str),
    (to_dir, to): (&Fh, &str),
) -> io::Result<()> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    let args = RenameArgs {
        from: name_arg(&f),
        to: name_arg(&t),
    };
    let ops = vec![
        putfh(from_dir),
        no_args(OP_SAVEFH),
        putfh(to_dir),
        op(OP_RENAME, Args { rename: args }),
    ];
    compound(ctx, "rename", from, ops).map(drop)
}

/// Makes `name` in `dir` a hard link to `file`.
pub fn link(ctx: &mut Context, file: &Fh, dir: &Fh, name: &str) -> io::Result<()> {
    let c = cstr(name)?;
    let ops = vec![
        putfh(file),
        no_args(OP_SAVEFH),
        putfh(dir),
        named(OP_LINK, &c),
    ];
    compound(ctx, "link", name, ops).map(drop)
}

/// Changes one attribute of the object `fh` (with the anonymous stateid: no open is needed).
pub fn setattr(ctx: &mut Context, fh: &Fh, change: Change) -> io::Result<()> {
    let attrs = Attrs::of(&change);
    let args = SetattrArgs {
        stateid: [0; 4],
        attrs: attrs.arg(),
    };
    let ops = vec![putfh(fh), op(OP_SETATTR, Args { setattr: args })];
    compound(ctx, "setattr", "file", ops).map(drop)
}

/// Reads the type from a GETATTR reply's attributes: `mask` (its words) and `vals`.
pub(super) fn type_of(mask: &[u32], vals: &[u8]) -> Option<u32> {
    // Only TYPE is asked for, and it is the lowest attribute that can come back but for
    // the supported-attributes bitmap (0), which is never asked for.
    let has = mask
        .first()
        .is_some_and(|w| w & (1 << TYPE) != 0 && w & 1 == 0);
    (has && vals.len() >= 4).then(|| u32::from_be_bytes([vals[0], vals[1], vals[2], vals[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The sizes and offsets of libnfs-raw-nfs4.h on x86-64 (gcc's offsetof of the C
    /// structs).
    #[test]
    fn structs_are_laid_out_as_in_c() {
        assert_eq!(size_of::<Fattr>(), 32);
        assert_eq!(offset_of!(Fattr, vals), 16);
        assert_eq!(size_of::<CreateArgs>(), 72);
        assert_eq!(offset_of!(CreateArgs, link), 8);
        assert_eq!(offset_of!(CreateArgs, name), 24);
        assert_eq!(offset_of!(CreateArgs, attrs), 40);
        assert_eq!(size_of::<SetattrArgs>(), 48);
        assert_eq!(offset_of!(SetattrArgs, attrs), 16);
        assert_eq!(size_of::<RenameArgs>(), 32);
        assert_eq!(size_of::<Op>(), 136);
        assert_eq!(offset_of!(Op, args), 8);
        assert_eq!(size_of::<Compound>(), 40);
        assert_eq!(offset_of!(Compound, minor), 16);
        assert_eq!(offset_of!(Compound, ops), 24);
        assert_eq!(offset_of!(Ops, val), 8);
    }

    #[test]
    fn attributes_are_encoded_in_bit_order() {
        let a = Attrs::of(&Change::Size(0x1_0000_0002));
        assert_eq!(a.mask, [1 << 4, 0]);
        assert_eq!(a.vals, [0, 0, 0, 1, 0, 0, 0, 2]);
        let a = Attrs::of(&Change::Mode(0o640));
        assert_eq!(a.mask, [0, 1 << 1]);
        assert_eq!(a.vals, 0o640u32.to_be_bytes());
        let a = Attrs::of(&Change::Times(1_500_000_000_250_000_000, -1));
        assert_eq!(a.mask, [0, (1 << 16) | (1 << 22)]);
        assert_eq!(a.vals.len(), 32);
        assert_eq!(a.vals[..4], [0, 0, 0, 1]);
        assert_eq!(
            i64::from_be_bytes(a.vals[4..12].try_into().unwrap()),
            1_500_000_000
        );
        assert_eq!(
            u32::from_be_bytes(a.vals[12..16].try_into().unwrap()),
            250_000_000
        );
        assert_eq!(i64::from_be_bytes(a.vals[20..28].try_into().unwrap()), -1);
        assert_eq!(
            u32::from_be_bytes(a.vals[28..32].try_into().unwrap()),
            999_999_999
        );
    }

    #[test]
    fn the_type_is_read_only_when_it_came_back() {
        assert_eq!(type_of(&[1 << 1], &[0, 0, 0, 2]), Some(NF4DIR));
        assert_eq!(type_of(&[0], &[0, 0, 0, 2]), None);
        assert_eq!(type_of(&[1 << 1], &[0, 0]), None);
        assert_eq!(type_of(&[], &[]), None);
    }
}
