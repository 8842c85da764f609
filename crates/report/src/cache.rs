//! Cache effects: where a label's throughput for an operation falls by more than 2x as the
//! file size grows (at one record size, against the best smaller file), set against the
//! client's RAM from the manifest. Typical causes: the buffered-read cliff when files no
//! longer fit in the page cache, or writes that stop being absorbed by it. Not proof of a
//! cause: the flag says where to look.

/// Defined in `model` (the types every stage shares); named here too.
pub use crate::model::CacheFlag;

use crate::model::{OpData, Source};
use std::collections::BTreeMap;

/// Throughput falling more than this factor is flagged.
pub const DROP_FACTOR: f64 = 2.0;

pub fn detect(ops: &[OpData], sources: &[Source]) -> Vec<CacheFlag> {
    let ram = |label: &str| -> Option<u64> {
        sources
            .iter()
            .find(|s| s.label == label)
            .and_then(|s| s.manifest.as_ref())
            .map(|m| m.host.memory_bytes)
            .filter(|&m| m > 0)
    };
    let mut out = Vec::new();
    for op in ops {
        for (label, cells) in &op.cells {
            // record size -> (file size, median), in file size order.
            let mut series: BTreeMap<u64, Vec<(u64, f64)>> = BTreeMap::new();
            for (&(f, r), c) in cells {
                series.entry(r).or_default().push((f, c.median));
            }
            // file size of the cliff -> flags at each record size.
            let mut at: BTreeMap<u64, Vec<CacheFlag>> = BTreeMap::new();
            for (r, pts) in series {
                let mut best: Option<(u64, f64)> = None;
                for (f, v) in pts {
                    if let Some((bf, bv)) = best {
                        if v * DROP_FACTOR < bv {
                            at.entry(f).or_default().push(CacheFlag {
                                label: label.clone(),
                                op: op.op,
                                from_file: bf,
                                from_kib_s: bv,
                                to_file: f,
                                to_kib_s: v,
                                record_size: r,
                                record_sizes_affected: 0,
                                ram_bytes: ram(label),
                            });
                            break;
                        }
                    }
                    if best.is_none_or(|(_, bv)| v > bv) {
                        best = Some((f, v));
                    }
                }
            }
            // One flag per cliff: the record size with the largest drop.
            for (_, flags) in at {
                let n = flags.len();
                if let Some(mut worst) = flags
                    .into_iter()
                    .max_by(|a, b| a.factor().total_cmp(&b.factor()))
                {
                    worst.record_sizes_affected = n;
                    out.push(worst);
                }
            }
        }
    }
    out
}
