//! The load workload's mixes as the user names them: a shipped mix by name (the files of
//! `mixes/`, built into the binary so an installed sharebench has them), or a TOML file.
//! Not: what a mix means (`sharebench_core::mix`).

use crate::error::{CliError, CliResult};
use sharebench_core::mix::Mix;
use std::io::Read;

/// The shipped mixes, by name.
const SHIPPED: [(&str, &str); 3] = [
    ("build", include_str!("../../../mixes/build.toml")),
    ("genomics", include_str!("../../../mixes/genomics.toml")),
    ("media", include_str!("../../../mixes/media.toml")),
];

pub const NAMES: [&str; 3] = [SHIPPED[0].0, SHIPPED[1].0, SHIPPED[2].0];

/// A mix file is a page of TOML, not more.
const MAX_MIX_BYTES: u64 = 64 * 1024;

/// The mix `arg` names: a shipped one, else a file; checked.
pub fn load(arg: &str) -> CliResult<Mix> {
    let (text, from) = match SHIPPED.iter().find(|(n, _)| *n == arg) {
        Some((_, text)) => (text.to_string(), format!("mix {arg}")),
        None => (read(arg)?, format!("mix file '{arg}'")),
    };
    let mix: Mix = toml::from_str(&text).map_err(|e| {
        let first = e.message().lines().next().unwrap_or("").to_string();
        CliError::usage(format!("{from}: {first}"))
    })?;
    mix.validate()
        .map_err(|e| CliError::usage(format!("{from}: {e}")))?;
    Ok(mix)
}

fn read(path: &str) -> CliResult<String> {
    let bad = |why: String| {
        CliError::usage(format!(
            "--mix '{path}': {why} (shipped mixes: {})",
            NAMES.join(", ")
        ))
    };
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let meta = file.metadata().map_err(|e| bad(e.to_string()))?;
    if !meta.is_file() {
        return Err(bad("not a regular file".into()));
    }
    if meta.len() > MAX_MIX_BYTES {
        return Err(bad(format!("larger than {} KiB", MAX_MIX_BYTES / 1024)));
    }
    let mut text = String::new();
    file.take(MAX_MIX_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| bad(e.to_string()))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_mix_parses_says_it_is_not_spec_and_is_bounded() {
        for name in NAMES {
            let m = load(name).unwrap();
            assert_eq!(m.name, name);
            assert!(m.about.contains("sharebench's own"), "{name}: {}", m.about);
            assert!(m.about.contains("not SPEC"), "{name}: {}", m.about);
            let set = u64::from(m.files) * m.largest_file();
            assert!(set <= 512 << 20, "{name}: {set} bytes per worker");
        }
    }

    #[test]
    fn a_missing_or_bad_mix_is_one_line() {
        let e = load("no-such-mix").unwrap_err().to_string();
        assert!(e.contains("no-such-mix") && e.contains("build"), "{e}");
        assert!(!e.contains('\n'));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.toml");
        std::fs::write(&p, "name = \"x\"\nabout = \"y\"\nfiles = 1\nfile_sizes = []\n[[op]]\nkind = \"stat\"\nweight = 1\n").unwrap();
        let e = load(p.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("file_sizes"), "{e}");
        assert!(!e.contains('\n'));
    }
}
