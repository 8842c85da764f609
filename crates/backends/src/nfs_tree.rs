//! Where an NFSv3 or NFSv4.0 target's names are made, changed and removed: always by the
//! handle of the directory that holds them, never by a path the server or libnfs would
//! resolve. The target's own directory is looked up once; a directory or file the tool makes
//! is kept by the handle its creation returned, so a name swapped in its place later (a
//! symlink, or someone else's directory) is never used; any other directory on a path is
//! looked up one name at a time, and a symlink or anything but a directory there is refused
//! as tampering.
//! Not here: file I/O, which goes through libnfs's open files (`nfs.rs`); the calls
//! themselves (`ffi::libnfs_handles` for NFSv3, `ffi::libnfs_compound` for NFSv4.0).

use crate::ffi::libnfs::Context;
use crate::ffi::libnfs_compound as h4;
use crate::ffi::libnfs_handles::{self as h, Change, Fh, NF3DIR, NF3LNK, NF3REG};
use sharebench_core::backend::tampered;
use std::collections::HashMap;
use std::io;
use std::sync::Mutex;

/// Which protocol's calls by handle a tree makes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wire {
    /// NFSv3's own calls, CREATE3 (guarded) included.
    V3,
    /// NFSv4.0's COMPOUNDs; regular files are made by the opener (`Tree::adopt`), since
    /// NFSv4.0 makes them only by OPEN.
    V40,
}

impl Wire {
    fn lookup(self, ctx: &mut Context, dir: &Fh, name: &str) -> io::Result<(Fh, Option<u32>)> {
        match self {
            Wire::V3 => h::lookup(ctx, dir, name),
            Wire::V40 => h4::lookup(ctx, dir, name),
        }
    }

    fn mkdir(self, ctx: &mut Context, dir: &Fh, name: &str, mode: u32) -> io::Result<Fh> {
        match self {
            Wire::V3 => h::mkdir(ctx, dir, name, mode),
            Wire::V40 => h4::mkdir(ctx, dir, name, mode),
        }
    }

    fn remove(self, ctx: &mut Context, dir: &Fh, name: &str, is_dir: bool) -> io::Result<()> {
        match self {
            Wire::V3 => h::remove(ctx, dir, name, is_dir),
            Wire::V40 => h4::remove(ctx, dir, name, is_dir),
        }
    }

    fn rename(self, ctx: &mut Context, from: (&Fh, &str), to: (&Fh, &str)) -> io::Result<()> {
        match self {
            Wire::V3 => h::rename(ctx, from, to),
            Wire::V40 => h4::rename(ctx, from, to),
        }
    }

    fn link(self, ctx: &mut Context, file: &Fh, dir: &Fh, name: &str) -> io::Result<()> {
        match self {
            Wire::V3 => h::link(ctx, file, dir, name),
            Wire::V40 => h4::link(ctx, file, dir, name),
        }
    }

    fn symlink(self, ctx: &mut Context, dir: &Fh, name: &str, target: &str) -> io::Result<()> {
        match self {
            Wire::V3 => h::symlink(ctx, dir, name, target),
            Wire::V40 => h4::symlink(ctx, dir, name, target),
        }
    }

    fn setattr(self, ctx: &mut Context, fh: &Fh, change: Change) -> io::Result<()> {
        match self {
            Wire::V3 => h::setattr(ctx, fh, change),
            Wire::V40 => h4::setattr(ctx, fh, change),
        }
    }
}

pub struct Tree {
    wire: Wire,
    /// The target's directory (the export path the user named, mounted as libnfs's root).
    root: Fh,
    /// What the tool made and has not removed, by its path under the root.
    made: Mutex<HashMap<String, Made>>,
}

/// A directory or file the tool made.
#[derive(Clone)]
struct Made {
    fh: Fh,
    is_dir: bool,
}

/// The key of `rel` in `Tree::made`.
fn key(rel: &str) -> io::Result<String> {
    Ok(names(rel)?.join("/"))
}

/// A path's names, without empty ones and `.`; `..` is refused.
fn names(rel: &str) -> io::Result<Vec<&str>> {
    let names: Vec<&str> = rel
        .split('/')
        .filter(|n| !n.is_empty() && *n != ".")
        .collect();
    if names.contains(&"..") {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'..' in {rel}"),
        ));
    }
    Ok(names)
}

fn refused(rel: &str, what: &str) -> io::Error {
    tampered(format!("nfs {rel}: {what}, not followed"))
}

impl Tree {
    /// The tree under the mounted root, whose handle is `root`.
    pub fn new(wire: Wire, root: Fh) -> Tree {
        Tree {
            wire,
            root,
            made: Mutex::new(HashMap::new()),
        }
    }

    fn made(&self) -> std::sync::MutexGuard<'_, HashMap<String, Made>> {
        self.made.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The handle of what the tool made at `rel`, if it is a directory (`is_dir`) or a file.
    fn made_at(&self, rel: &str, is_dir: bool) -> io::Result<Option<Fh>> {
        let key = key(rel)?;
        Ok(self
            .made()
            .get(&key)
            .filter(|m| m.is_dir == is_dir)
            .map(|m| m.fh.clone()))
    }

    fn note(&self, rel: &str, fh: &Fh, is_dir: bool) -> io::Result<()> {
        let made = Made {
            fh: fh.clone(),
            is_dir,
        };
        self.made().insert(key(rel)?, made);
        Ok(())
    }

    /// The directory that holds the last name of `rel`, and that name.
    pub fn parent(&self, ctx: &mut Context, rel: &str) -> io::Result<(Fh, String)> {
        let names = names(rel)?;
        let Some((last, dirs)) = names.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no name in an empty path",
            ));
        };
        // The deepest directory on the way that the tool made, then a lookup per name.
        let (mut dir, from) = {
            let made = self.made();
            (0..=dirs.len())
                .rev()
                .find_map(|n| {
                    if n == 0 {
                        return Some((self.root.clone(), 0));
                    }
                    made.get(&dirs[..n].join("/"))
                        .filter(|m| m.is_dir)
                        .map(|m| (m.fh.clone(), n))
                })
                .expect("the root is always found")
        };
        for name in &dirs[from..] {
            let (next, kind) = self.wire.lookup(ctx, &dir, name)?;
            match kind {
                Some(NF3DIR) => dir = next,
                Some(NF3LNK) => return Err(refused(rel, &format!("{name} is a symlink"))),
                _ => return Err(refused(rel, &format!("{name} is not a directory"))),
            }
        }
        Ok((dir, (*last).to_string()))
    }

    /// The object `rel` names, itself (a symlink is refused), and its type.
    fn object(&self, ctx: &mut Context, rel: &str) -> io::Result<(Fh, u32)> {
        let (dir, name) = self.parent(ctx, rel)?;
        let (fh, kind) = self.wire.lookup(ctx, &dir, &name)?;
        match kind {
            Some(NF3LNK) => Err(refused(rel, "a symlink")),
            Some(k) => Ok((fh, k)),
            None => Err(io::Error::other(format!(
                "nfs {rel}: the server gave no attributes"
            ))),
        }
    }

    /// The regular file `rel`: made (GUARDED, so nothing already there is ever taken) when
    /// `create` and the name is free, else the existing one (the tool's own without a
    /// lookup: its opener checks the name still leads to it). Says whether it was made.
    /// On NFSv4.0 nothing is made here: the opener makes the file and `adopt`s it.
    pub fn file(
        &self,
        ctx: &mut Context,
        rel: &str,
        create: bool,
        mode: u32,
    ) -> io::Result<(Fh, bool)> {
        if create && self.wire == Wire::V3 {
            let (dir, name) = self.parent(ctx, rel)?;
            match h::create(ctx, &dir, &name, mode) {
                Ok(fh) => {
                    self.note(rel, &fh, false)?;
                    return Ok((fh, true));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(fh) = self.made_at(rel, false)? {
            return Ok((fh, false));
        }
        match self.object(ctx, rel)? {
            (fh, NF3REG) => Ok((fh, false)),
            (_, NF3DIR) => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("nfs {rel}: a directory"),
            )),
            _ => Err(refused(rel, "not a regular file")),
        }
    }

    /// Whether regular files are made by `file` (NFSv3), else by the opener and `adopt`ed.
    pub fn makes_files(&self) -> bool {
        self.wire == Wire::V3
    }

    /// Keeps the file `fh`, which the opener has just made at `rel` by path, as the tool's
    /// own, once the directory the tool holds names it there: else the path led elsewhere
    /// (someone changed a directory on it) and the new, empty file is left where it is.
    pub fn adopt(&self, ctx: &mut Context, rel: &str, fh: &Fh) -> io::Result<()> {
        let (dir, name) = self.parent(ctx, rel)?;
        match self.wire.lookup(ctx, &dir, &name) {
            Ok((found, _)) if found == *fh => self.note(rel, fh, false),
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Err(tampered(format!(
                "nfs {rel}: the file made by this path is not in the tool's directory, not used"
            ))),
        }
    }

    pub fn mkdir(&self, ctx: &mut Context, rel: &str, mode: u32) -> io::Result<()> {
        let (dir, name) = self.parent(ctx, rel)?;
        let fh = self.wire.mkdir(ctx, &dir, &name, mode)?;
        self.note(rel, &fh, true)
    }

    /// Removes the name `rel` (never followed). A directory the tool made is removed only
    /// while its name still leads to it: a name someone else has put in its place is theirs.
    pub fn remove(&self, ctx: &mut Context, rel: &str, is_dir: bool) -> io::Result<()> {
        let (dir, name) = self.parent(ctx, rel)?;
        if is_dir {
            self.check_made(ctx, rel)?;
        }
        self.wire.remove(ctx, &dir, &name, is_dir)?;
        self.forget(rel)
    }

    /// Refuses a directory the tool made whose name now leads elsewhere (to something put in
    /// its place): for the calls that still go by path, such as listing it.
    pub fn check_made(&self, ctx: &mut Context, rel: &str) -> io::Result<()> {
        let Some(ours) = self.made_at(rel, true)? else {
            return Ok(());
        };
        let (dir, name) = self.parent(ctx, rel)?;
        if self.wire.lookup(ctx, &dir, &name)?.0 != ours {
            return Err(tampered(format!(
                "nfs {rel}: no longer the directory the tool made, left as it is"
            )));
        }
        Ok(())
    }

    /// Drops what the tool kept of `rel` and of what is under it.
    fn forget(&self, rel: &str) -> io::Result<()> {
        let key = key(rel)?;
        let under = format!("{key}/");
        self.made()
            .retain(|k, _| *k != key && !k.starts_with(&under));
        Ok(())
    }

    pub fn rename(&self, ctx: &mut Context, from: &str, to: &str) -> io::Result<()> {
        let (from_dir, from_name) = self.parent(ctx, from)?;
        let (to_dir, to_name) = self.parent(ctx, to)?;
        self.wire
            .rename(ctx, (&from_dir, &from_name), (&to_dir, &to_name))?;
        // What moved is looked up again at its new name when next used.
        self.forget(from)
    }

    pub fn link(&self, ctx: &mut Context, existing: &str, new: &str) -> io::Result<()> {
        let file = self.own_or_found(ctx, existing)?;
        let (dir, name) = self.parent(ctx, new)?;
        self.wire.link(ctx, &file, &dir, &name)
    }

    pub fn symlink(&self, ctx: &mut Context, target: &str, link: &str) -> io::Result<()> {
        let (dir, name) = self.parent(ctx, link)?;
        self.wire.symlink(ctx, &dir, &name, target)
    }

    /// Changes an attribute of `rel` itself (a symlink is refused).
    pub fn setattr(&self, ctx: &mut Context, rel: &str, change: Change) -> io::Result<()> {
        let fh = self.own_or_found(ctx, rel)?;
        self.wire.setattr(ctx, &fh, change)
    }

    /// The file or directory the tool made at `rel`, else what `rel` names (not a symlink).
    fn own_or_found(&self, ctx: &mut Context, rel: &str) -> io::Result<Fh> {
        for is_dir in [false, true] {
            if let Some(fh) = self.made_at(rel, is_dir)? {
                return Ok(fh);
            }
        }
        Ok(self.object(ctx, rel)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_names_and_dot_dot_is_refused() {
        assert_eq!(names("a//b/./c").unwrap(), ["a", "b", "c"]);
        assert!(names("a/../b").is_err());
        assert!(names("").unwrap().is_empty());
    }
}
