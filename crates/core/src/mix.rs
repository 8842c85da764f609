//! A load mix: which operations a load workload issues and in what proportions, on which
//! file and transfer sizes (weighted choices). Written as TOML under `mixes/` (the CLI
//! parses the file; this is the data and its checks), carried whole in `run.json` so a run
//! says what it ran. Not: the schedule or the I/O (`schedule`, `lane`).

use crate::size::{format_size, parse_size, BareUnit};
use serde::{Deserialize, Deserializer, Serialize};

/// The largest file a mix may name, and the most files per lane: a mix is a load
/// pattern, not a way to fill a share.
pub const MAX_FILE_SIZE: u64 = 1 << 30;
pub const MAX_FILES: u32 = 10_000;
/// The largest transfer: each lane holds a buffer this large.
pub const MAX_TRANSFER: u64 = 64 << 20;
/// The chunk in which a lane first writes its files (not timed).
pub const SETUP_CHUNK: u64 = 1 << 20;

/// One operation of a mix. Reads and writes stay inside the lane's files (their sizes do
/// not change); `create` writes a new file of a drawn size, `delete` removes the oldest
/// file `create` made (a `create` instead when there is none); once `create` has made as
/// many files as the set holds, it makes its oldest again (space stays bounded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    /// The next transfer of the file being read through, the next file at its end.
    ReadSeq,
    /// A transfer at a random transfer-aligned offset of a random file.
    ReadRandom,
    WriteSeq,
    WriteRandom,
    Create,
    Delete,
    /// stat() of a random file.
    Stat,
    /// The entries of the lane's directory.
    Readdir,
    /// open() and close() of a random file, nothing in between.
    OpenClose,
}

impl OpKind {
    pub fn name(self) -> &'static str {
        match self {
            OpKind::ReadSeq => "read-seq",
            OpKind::ReadRandom => "read-random",
            OpKind::WriteSeq => "write-seq",
            OpKind::WriteRandom => "write-random",
            OpKind::Create => "create",
            OpKind::Delete => "delete",
            OpKind::Stat => "stat",
            OpKind::Readdir => "readdir",
            OpKind::OpenClose => "open-close",
        }
    }

    /// Moves data in transfers (and so needs transfer sizes).
    pub fn transfers(self) -> bool {
        matches!(
            self,
            OpKind::ReadSeq
                | OpKind::ReadRandom
                | OpKind::WriteSeq
                | OpKind::WriteRandom
                | OpKind::Create
        )
    }
}

/// A size and how often it is drawn, relative to the other sizes of its list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Weighted {
    #[serde(deserialize_with = "size_or_text")]
    pub size: u64,
    pub weight: u32,
}

/// An operation and its share of the requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixOp {
    pub kind: OpKind,
    pub weight: u32,
    /// Transfer sizes of this operation; empty: the mix's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transfer_sizes: Vec<Weighted>,
}

/// A load mix (see docs/methods/workloads.md, "load", for the file format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    pub name: String,
    /// What the mix models and where that description comes from.
    pub about: String,
    /// Files each lane makes before the first load point and works on.
    pub files: u32,
    pub file_sizes: Vec<Weighted>,
    /// Transfer sizes of the operations that name none.
    #[serde(default)]
    pub transfer_sizes: Vec<Weighted>,
    #[serde(rename = "op")]
    pub ops: Vec<MixOp>,
}

fn size_or_text<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        Bytes(u64),
        Text(String),
    }
    match Size::deserialize(d)? {
        Size::Bytes(n) => Ok(n),
        Size::Text(t) => parse_size(&t, BareUnit::Bytes).map_err(serde::de::Error::custom),
    }
}

impl Mix {
    /// Checks what serde cannot: weights, sizes and that every operation has its sizes.
    /// The error is one line for the user.
    pub fn validate(&self) -> Result<(), String> {
        let list = |what: &str, l: &[Weighted], max: u64| -> Result<(), String> {
            if l.iter().map(|w| u64::from(w.weight)).sum::<u64>() == 0 {
                return Err(format!("{what}: no size with a weight above 0"));
            }
            match l.iter().find(|w| w.size == 0 || w.size > max) {
                Some(w) => Err(format!(
                    "{what}: {} is outside 1 byte .. {}",
                    format_size(w.size),
                    format_size(max)
                )),
                None => Ok(()),
            }
        };
        if self.files == 0 || self.files > MAX_FILES {
            return Err(format!("files = {}: 1 .. {MAX_FILES}", self.files));
        }
        list("file_sizes", &self.file_sizes, MAX_FILE_SIZE)?;
        if self.ops.iter().map(|o| u64::from(o.weight)).sum::<u64>() == 0 {
            return Err("no [[op]] with a weight above 0".into());
        }
        for o in self.ops.iter().filter(|o| o.weight > 0) {
            let own = !o.transfer_sizes.is_empty();
            if own {
                list(
                    &format!("{} transfer_sizes", o.kind.name()),
                    &o.transfer_sizes,
                    MAX_TRANSFER,
                )?;
            } else if o.kind.transfers() {
                list(
                    &format!("transfer_sizes (for {})", o.kind.name()),
                    &self.transfer_sizes,
                    MAX_TRANSFER,
                )?;
            }
        }
        Ok(())
    }

    /// The largest file a lane may hold: the bytes of its file set are at most
    /// `files` x this, plus what `create` adds.
    pub fn largest_file(&self) -> u64 {
        self.file_sizes.iter().map(|w| w.size).max().unwrap_or(0)
    }

    /// The largest transfer any operation makes.
    pub fn largest_transfer(&self) -> u64 {
        self.ops
            .iter()
            .flat_map(|o| self.transfers_of(o))
            .map(|w| w.size)
            .max()
            .unwrap_or(0)
    }

    /// The buffer each lane holds: the largest transfer, and at least the 1 MiB chunk in
    /// which a lane first writes its files.
    pub fn lane_buffer(&self) -> u64 {
        self.largest_transfer().max(SETUP_CHUNK)
    }

    /// The transfer sizes of an operation.
    pub fn transfers_of<'a>(&'a self, op: &'a MixOp) -> &'a [Weighted] {
        if op.transfer_sizes.is_empty() {
            &self.transfer_sizes
        } else {
            &op.transfer_sizes
        }
    }
}

/// Draws by weight: `weights` with a total above 0, `r` uniform in 0 .. total.
pub fn pick(weights: impl Iterator<Item = u32>, r: u64) -> usize {
    let mut left = r;
    let mut last = 0;
    for (i, w) in weights.enumerate() {
        if w == 0 {
            continue;
        }
        if left < u64::from(w) {
            return i;
        }
        left -= u64::from(w);
        last = i;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(text: &str) -> Result<Mix, String> {
        let m: Mix = serde_json::from_str(text).map_err(|e| e.to_string())?;
        m.validate().map(|()| m)
    }

    const GOOD: &str = r#"{"name": "t", "about": "a test", "files": 4,
        "file_sizes": [{"size": "1m", "weight": 1}, {"size": 4096, "weight": 3}],
        "transfer_sizes": [{"size": "64k", "weight": 1}],
        "op": [{"kind": "read-random", "weight": 3}, {"kind": "stat", "weight": 1},
               {"kind": "create", "weight": 1, "transfer_sizes": [{"size": "4k", "weight": 1}]}]}"#;

    #[test]
    fn sizes_as_text_or_bytes_and_round_trip() {
        let m = mix(GOOD).unwrap();
        assert_eq!(m.file_sizes[0].size, 1 << 20);
        assert_eq!(m.file_sizes[1].size, 4096);
        assert_eq!(m.transfers_of(&m.ops[2])[0].size, 4096);
        assert_eq!(m.transfers_of(&m.ops[0])[0].size, 65536);
        let again: Mix = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(again, m);
    }

    #[test]
    fn bad_mixes_say_what_is_wrong() {
        let no_transfers = GOOD.replace(r#""transfer_sizes": [{"size": "64k", "weight": 1}],"#, "");
        assert!(mix(&no_transfers).unwrap_err().contains("read-random"));
        assert!(mix(&GOOD.replace("\"files\": 4", "\"files\": 0"))
            .unwrap_err()
            .contains("files"));
        assert!(mix(&GOOD.replace("\"1m\"", "\"2g\""))
            .unwrap_err()
            .contains("outside"));
        assert!(mix(&GOOD.replace("read-random", "teleport")).is_err());
        assert!(mix(&GOOD.replace("\"about\"", "\"abuot\"")).is_err());
    }

    #[test]
    fn pick_follows_weights_and_skips_zero() {
        let w = [0u32, 3, 1];
        let got: Vec<usize> = (0..4).map(|r| pick(w.iter().copied(), r)).collect();
        assert_eq!(got, vec![1, 1, 1, 2]);
    }
}
