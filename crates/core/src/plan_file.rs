//! A plan as a file: how `study run` hands the ranks of a multi-client step the plan it
//! parsed from the step's run line, so no rank parses that line again (`run
//! --plan-file`). JSON, as the plan serialises; written without following a symlink and
//! read with a bound. Not: a format for people to write (the options are).

use crate::plan::Plan;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The largest plan file read: a plan is a few KiB, its cells included.
const MAX_BYTES: u64 = 16 << 20;

/// Writes `plan` to `path`, replacing a regular file there; never through a symlink.
pub fn write(path: &Path, plan: &Plan) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(path).map_err(fail)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(fail)?;
    let json = serde_json::to_vec(plan).map_err(|e| e.to_string())?;
    f.write_all(&json).map_err(fail)
}

/// Reads a plan [`write`] wrote, checked as a plan built from options is.
pub fn read(path: &Path) -> Result<Plan, String> {
    let fail = |e: String| format!("{}: {e}", path.display());
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| fail(e.to_string()))?;
    let mut text = Vec::new();
    f.take(MAX_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| fail(e.to_string()))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(fail(format!("larger than {MAX_BYTES} bytes")));
    }
    let plan: Plan = serde_json::from_slice(&text).map_err(|e| fail(e.to_string()))?;
    plan.validate().map_err(fail)?;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::Op;
    use crate::plan::{explicit_cells, CachePolicy};

    #[test]
    fn a_plan_comes_back_as_it_went_and_a_symlink_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Plan {
            cells: explicit_cells(&[1 << 20], &[4096, 65536]).unwrap(),
            ops: vec![Op::Write, Op::Read],
            cache: CachePolicy::Drop,
            reps: 4,
            ..Plan::default()
        };
        let path = dir.path().join("p.json");
        write(&path, &plan).unwrap();
        write(&path, &plan).unwrap(); // replaces its own file
        assert_eq!(read(&path).unwrap(), plan);

        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(write(&link, &plan).is_err());
        assert!(read(&link).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");

        std::fs::write(&path, b"{\"reps\": \"many\"}").unwrap();
        assert!(read(&path)
            .unwrap_err()
            .starts_with(&path.display().to_string()));
    }
}
