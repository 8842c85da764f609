//! IOzone's text output as records: the auto/single-mode table (columns matched to the
//! two header lines by position, so tests skipped with `-i` leave gaps rather than shifting
//! numbers), the `-R` "Excel output is below" reports (preferred when present: one
//! report per operation), their `-+u` CPU reports, and the throughput-mode summary blocks
//! (children see, parent sees, min/max/avg, min xfer). Several runs in one log become
//! repetitions. Not: the `-b` workbook (see `biff` and `workbook`).

use super::{iozone_cpu_report_op, iozone_report_op, record, Imported};
use sharebench_core::op::Op;
use sharebench_core::operation::Operation;
use sharebench_core::record::WorkloadKind;
use sharebench_core::record::{Record, Scope, ThroughputSummary};
use std::collections::HashMap;

/// True when the text looks like IOzone's output.
pub fn looks_like(text: &str) -> bool {
    text.contains("Iozone: Performance Test")
        || text.contains("Excel output is below")
        || text.contains("Children see throughput")
        || (text.contains("reclen") && text.contains("rewrite"))
        || text.lines().any(|l| {
            let t = l.trim();
            t.starts_with('"') && t.to_ascii_lowercase().ends_with("report\"")
        })
}

/// Parses a whole IOzone log; `source` names it in the records' `run_id`.
pub fn parse(text: &str, source: &str) -> Result<Imported, String> {
    let mut lines: Vec<&str> = text.lines().collect();
    let mut out = Imported::default();
    if let Some(note) = cut_short(text, &mut lines) {
        out.notes.push(format!("{source}: {note}"));
    }
    let excel = parse_excel_reports(&lines, source);
    if excel.iter().any(|(cpu, _)| !cpu) {
        let (cpu, perf): (Vec<_>, Vec<_>) = excel.into_iter().partition(|(c, _)| *c);
        let mut records: Vec<Record> = perf.into_iter().map(|(_, r)| r).collect();
        attach_cpu(&mut records, cpu.into_iter().map(|(_, r)| r).collect());
        out.records = records;
    } else {
        out.records = parse_tables(&lines, source);
    }
    out.records.extend(parse_throughput(&lines, source));
    if text.contains("Output is in ops/sec") || text.contains("OPS Mode") {
        super::convert_units(&mut out.records, super::Unit::OpsPerSec);
        out.notes.push(format!(
            "{source}: operations per second converted to KiB/s"
        ));
    } else if text.contains("Output is in microseconds/op") || text.contains("Microseconds/op Mode")
    {
        super::convert_units(&mut out.records, super::Unit::MicrosPerOp);
        out.notes.push(format!(
            "{source}: microseconds per operation converted to KiB/s"
        ));
    }
    number_repetitions(&mut out.records);
    if out.records.is_empty() {
        let comma_decimals = text.split_whitespace().any(|w| {
            w.split_once(',').is_some_and(|(a, b)| {
                !a.is_empty()
                    && !b.is_empty()
                    && a.bytes().all(|c| c.is_ascii_digit())
                    && b.bytes().all(|c| c.is_ascii_digit())
            })
        });
        let hint = if comma_decimals {
            "; its numbers have decimal commas (a converted or localised copy?): IOzone writes \
             decimal points, so replace ',' by '.' in the figures"
        } else {
            ""
        };
        return Err(format!(
            "no IOzone results found (no table, -R report or throughput summary){hint}"
        ));
    }
    Ok(out)
}

/// Says whether a whole IOzone log (one with IOzone's banner) ends before IOzone's last
/// line, "iozone test complete.": a copy or a run cut short. A last line without its
/// newline was cut mid-way (a figure cut mid-number reads as a smaller one) and is dropped.
fn cut_short(text: &str, lines: &mut Vec<&str>) -> Option<String> {
    if !text.contains("Iozone: Performance Test") || text.contains("iozone test complete") {
        return None;
    }
    let dropped = if text.ends_with('\n') {
        None
    } else {
        lines.pop()
    };
    let last = lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut note = format!(
        "the log ends before IOzone's \"iozone test complete.\" (cut short?); its last complete line is \"{last}\""
    );
    if let Some(d) = dropped {
        note.push_str(&format!(
            "; the line after it was cut mid-way and is left out (\"{}\")",
            d.trim()
        ));
    }
    Some(note)
}

/// Gives each repeated (op, threads, file, record) its own repetition number, in order.
pub(crate) fn number_repetitions(records: &mut [Record]) {
    let mut seen: HashMap<(Operation, u32, u64, u64), u32> = HashMap::new();
    for r in records.iter_mut() {
        let n = seen
            .entry((r.op, r.threads, r.file_size, r.record_size))
            .or_insert(0);
        r.rep = *n;
        *n += 1;
    }
}

fn attach_cpu(records: &mut [Record], cpu: Vec<Record>) {
    let mut by_key: HashMap<(Operation, u64, u64), f64> = HashMap::new();
    for c in cpu {
        by_key.insert((c.op, c.file_size, c.record_size), c.throughput_kib_s);
    }
    for r in records.iter_mut() {
        if let Some(&pct) = by_key.get(&(r.op, r.file_size, r.record_size)) {
            r.cpu_util_pct = pct;
            r.cpu_total_s = pct / 100.0 * r.seconds;
        }
    }
}

/// Tokens of a line with the column where each ends (exclusive).
fn tokens_with_ends(line: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let chars: Vec<char> = line.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((chars[s..i].iter().collect(), i));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((chars[s..].iter().collect(), chars.len()));
    }
    out
}

/// Expands tabs to 8-column stops so positions line up as on a terminal.
fn detab(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c == '\t' {
            let n = 8 - out.chars().count() % 8;
            out.extend(std::iter::repeat_n(' ', n));
        } else {
            out.push(c);
        }
    }
    out
}

fn column_op(qualifier: Option<&str>, name: &str) -> Option<Op> {
    Some(match (qualifier, name.to_ascii_lowercase().as_str()) {
        (Some("random"), "read") => Op::RandomRead,
        (Some("random"), "write") => Op::RandomWrite,
        (Some("bkwd"), "read") => Op::BackwardRead,
        (Some("record"), "rewrite") => Op::RecordRewrite,
        (Some("stride"), "read") => Op::StrideRead,
        (_, "write") => Op::Write,
        (_, "rewrite") => Op::Rewrite,
        (_, "read") => Op::Read,
        (_, "reread") => Op::Reread,
        (_, "fwrite") => Op::Fwrite,
        (_, "frewrite") => Op::Frewrite,
        (_, "fread") => Op::Fread,
        (_, "freread") => Op::Freread,
        (_, "pwrite") => Op::Pwrite,
        (_, "repwrite") => Op::RePwrite,
        (_, "pread") => Op::Pread,
        (_, "repread") => Op::RePread,
        (_, "pwritev") => Op::Pwritev,
        (_, "repwritev") => Op::RePwritev,
        (_, "preadv") => Op::Preadv,
        (_, "repreadv") => Op::RePreadv,
        _ => return None,
    })
}

/// Digits IOzone prints a column's figure in (`%8lld`, `%9lld`, ...; the leading space
/// of `" %8lld"` is not counted). A figure that fills its width has no blank before it.
fn column_width(op: Option<Op>) -> usize {
    use Op::*;
    match op {
        Some(Read | Reread | Fwrite | Frewrite | Freread | RePwrite)
        | Some(RePread | Pwritev | RePreadv) => 9,
        Some(RePwritev | Preadv) => 10,
        _ => 8,
    }
}

/// Splits a table token that is several figures run together. IOzone prints each figure
/// right-aligned in a fixed width, so a figure as wide as its column touches the one
/// before it ("305715312902017" is write 3057153 then rewrite 12902017). The columns whose
/// header ends inside the token say how many figures it holds; every one but the first
/// fills its width exactly. A token that does not split that way stays whole.
fn split_fused(text: &str, end: usize, columns: &[(usize, Option<Op>)]) -> Vec<(String, usize)> {
    let start = end.saturating_sub(text.len());
    let inside: Vec<&(usize, Option<Op>)> = columns
        .iter()
        .filter(|(cend, _)| *cend > start + 1 && *cend <= end + 2)
        .collect();
    if inside.len() < 2 {
        return vec![(text.to_string(), end)];
    }
    let mut pieces = Vec::new();
    let mut rest = text;
    let mut piece_end = end;
    for (k, (_, op)) in inside.iter().enumerate().rev() {
        let w = column_width(*op);
        let take = if k == 0 { rest.len() } else { w };
        if take == 0 || take > rest.len() || (k == 0 && take > w) {
            return vec![(text.to_string(), end)];
        }
        let (head, tail) = rest.split_at(rest.len() - take);
        pieces.push((tail.to_string(), piece_end));
        piece_end -= take;
        rest = head;
    }
    pieces.reverse();
    pieces
}

/// The auto/single-mode tables: a `KB reclen ...` header, then rows of integers.
fn parse_tables(lines: &[&str], source: &str) -> Vec<Record> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let header = detab(lines[i]);
        let toks = tokens_with_ends(&header);
        let is_header = toks.len() >= 3
            && toks[0].0.eq_ignore_ascii_case("kb")
            && toks[1].0.eq_ignore_ascii_case("reclen");
        if !is_header {
            i += 1;
            continue;
        }
        let qualifiers = if i > 0 {
            tokens_with_ends(&detab(lines[i - 1]))
        } else {
            Vec::new()
        };
        // (end column, op) per data column after KB and reclen.
        let columns: Vec<(usize, Option<Op>)> = toks[2..]
            .iter()
            .map(|(name, end)| {
                let q = qualifiers
                    .iter()
                    .find(|(_, qend)| qend.abs_diff(*end) <= 2)
                    .map(|(q, _)| q.as_str());
                (*end, column_op(q, name))
            })
            .collect();
        i += 1;
        while i < lines.len() {
            let row = detab(lines[i]);
            let cells = tokens_with_ends(&row);
            if cells.len() < 3
                || !cells
                    .iter()
                    .all(|(t, _)| t.bytes().all(|b| b.is_ascii_digit()))
            {
                break;
            }
            let kb: u64 = cells[0].0.parse().unwrap_or(0);
            let rec_kb: u64 = cells[1].0.parse().unwrap_or(0);
            let values: Vec<(String, usize)> = cells[2..]
                .iter()
                .flat_map(|(t, end)| split_fused(t, *end, &columns))
                .collect();
            let values = &values[..];
            let positional = values.len() == columns.len();
            let mut used = vec![false; columns.len()];
            for (k, (text, end)) in values.iter().enumerate() {
                let col = if positional {
                    Some(k)
                } else {
                    columns
                        .iter()
                        .enumerate()
                        .filter(|(c, _)| !used[*c])
                        .min_by_key(|(_, (cend, _))| cend.abs_diff(*end))
                        .map(|(c, _)| c)
                };
                let Some(c) = col else { continue };
                used[c] = true;
                let v: f64 = text.parse::<u64>().unwrap_or(0) as f64;
                if let (Some(op), true) = (columns[c].1, v > 0.0 && kb > 0 && rec_kb > 0) {
                    out.push(record(
                        WorkloadKind::Iozone,
                        source,
                        op.into(),
                        kb.saturating_mul(1024),
                        rec_kb.saturating_mul(1024),
                        v,
                    ));
                }
            }
            i += 1;
        }
    }
    out
}

fn quoted(text: &str) -> Option<&str> {
    let t = text.trim();
    t.strip_prefix('"')?.strip_suffix('"')
}

/// The -R reports: a quoted title, a header of quoted record sizes (KB), rows of a quoted
/// file size (KB) and values left to right. Returns (is CPU report, record) pairs.
fn parse_excel_reports(lines: &[&str], source: &str) -> Vec<(bool, Record)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(title) = quoted(lines[i]) else {
            i += 1;
            continue;
        };
        let (op, cpu) = match (iozone_cpu_report_op(title), iozone_report_op(title)) {
            (Some(op), _) => (op, true),
            (None, Some(op)) if title.to_ascii_lowercase().ends_with("report") => (op, false),
            _ => {
                i += 1;
                continue;
            }
        };
        i += 1;
        let Some(header) = lines.get(i) else { break };
        let recs: Vec<u64> = header
            .split_whitespace()
            .filter_map(|t| quoted(t).and_then(|x| x.parse().ok()))
            .collect();
        if recs.is_empty() {
            continue;
        }
        i += 1;
        while i < lines.len() {
            let line = lines[i].trim();
            if line.is_empty() {
                i += 1;
                // A blank line may separate rows; stop at the next title or non-row.
                continue;
            }
            let mut parts = line.split_whitespace();
            let Some(kb) = parts
                .next()
                .and_then(|t| quoted(t))
                .and_then(|x| x.parse::<u64>().ok())
            else {
                break;
            };
            for (k, v) in parts.enumerate() {
                let (Some(&rec_kb), Ok(v)) = (recs.get(k), v.parse::<f64>()) else {
                    continue;
                };
                if v > 0.0 && kb > 0 && rec_kb > 0 {
                    out.push((
                        cpu,
                        record(
                            WorkloadKind::Iozone,
                            source,
                            op.into(),
                            kb.saturating_mul(1024),
                            rec_kb.saturating_mul(1024),
                            v,
                        ),
                    ));
                }
            }
            i += 1;
        }
    }
    out
}

/// The phase of a "Children see throughput for N <phase> = X kB/sec" line.
fn phase_op(phase: &str) -> Option<Op> {
    Some(match phase.trim() {
        "initial writers" => Op::Write,
        "rewriters" => Op::Rewrite,
        "readers" => Op::Read,
        "re-readers" => Op::Reread,
        "reverse readers" => Op::BackwardRead,
        "stride readers" => Op::StrideRead,
        "random readers" => Op::RandomRead,
        "mixed workload" => Op::RandomMix,
        "random writers" => Op::RandomWrite,
        "pwrite writers" => Op::Pwrite,
        "pread readers" => Op::Pread,
        "fwriters" => Op::Fwrite,
        "freaders" => Op::Fread,
        _ => return None,
    })
}

/// The number after the last '=' of a line (the unit after it is ignored).
fn value_after_eq(line: &str) -> Option<f64> {
    line.rsplit('=')
        .next()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Throughput-mode summary blocks, each an aggregate record.
fn parse_throughput(lines: &[&str], source: &str) -> Vec<Record> {
    let mut out = Vec::new();
    let (mut file_kb, mut rec_kb) = (512u64, 4u64);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(rest) = line.strip_prefix("Each ") {
            // "Each process writes a 1024 kByte file in 1 kByte records"
            let words: Vec<&str> = rest.split_whitespace().collect();
            let nums: Vec<u64> = words.iter().filter_map(|w| w.parse().ok()).collect();
            if nums.len() >= 2 {
                file_kb = nums[0];
                rec_kb = nums[1];
            }
        }
        let Some(rest) = line.strip_prefix("Children see throughput for") else {
            i += 1;
            continue;
        };
        let Some((lhs, _)) = rest.split_once('=') else {
            i += 1;
            continue;
        };
        let mut words = lhs.split_whitespace();
        let threads: u32 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        let phase: Vec<&str> = words.collect();
        let (Some(op), Some(children)) = (phase_op(&phase.join(" ")), value_after_eq(line)) else {
            i += 1;
            continue;
        };
        let mut t = ThroughputSummary {
            children_see_kib_s: children,
            ..Default::default()
        };
        // -+u: "CPU utilization: Wall time W CPU time C CPU utilization P %".
        let mut cpu: Option<(f64, f64)> = None;
        let mut j = i + 1;
        while j < lines.len() && j <= i + 6 {
            let l = lines[j].trim();
            let v = value_after_eq(l);
            if l.starts_with("Parent sees") {
                t.parent_sees_kib_s = v.unwrap_or(0.0);
            } else if l.starts_with("Min throughput") {
                t.min_worker_kib_s = v.unwrap_or(0.0);
            } else if l.starts_with("Max throughput") {
                t.max_worker_kib_s = v.unwrap_or(0.0);
            } else if l.starts_with("Avg throughput") {
                t.avg_worker_kib_s = v.unwrap_or(0.0);
            } else if l.starts_with("Min xfer") {
                t.min_xfer_bytes = (v.unwrap_or(0.0) * 1024.0) as u64;
            } else if l.to_ascii_lowercase().starts_with("cpu utilization:") {
                let nums: Vec<f64> = l
                    .split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect();
                if let [_wall, cpu_s, pct] = nums[..] {
                    cpu = Some((cpu_s, pct));
                }
            } else if l.starts_with("Children see") {
                break;
            }
            j += 1;
        }
        if threads > 0 && children > 0.0 {
            let mut r = record(
                WorkloadKind::Iozone,
                source,
                op.into(),
                file_kb.saturating_mul(1024),
                rec_kb.saturating_mul(1024),
                children,
            );
            r.threads = threads;
            r.scope = Scope::Aggregate;
            r.bytes = r.file_size.saturating_mul(u64::from(threads));
            let wall = if t.parent_sees_kib_s > 0.0 {
                t.parent_sees_kib_s
            } else {
                children
            };
            r.seconds = r.bytes as f64 / 1024.0 / wall;
            r.throughput = Some(t);
            r.stonewalled = t.min_xfer_bytes > 0 && t.min_xfer_bytes < r.file_size;
            if let Some((cpu_s, pct)) = cpu {
                r.cpu_total_s = cpu_s;
                r.cpu_util_pct = pct;
            }
            out.push(r);
        }
        i = j.max(i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_positions_map_skipped_columns() {
        let text = "                                                            random  random    bkwd   record   stride                                   \n              KB  reclen   write rewrite    read    reread    read   write    read  rewrite     read   fwrite frewrite   fread  freread\n          409600      64   31782   22524                    816017   10411                  3779260                                  \n";
        let got = parse(text, "t").unwrap().records;
        let ops: Vec<(&str, f64)> = got
            .iter()
            .map(|r| (r.op.name(), r.throughput_kib_s))
            .collect();
        assert_eq!(
            ops,
            vec![
                ("write", 31782.0),
                ("rewrite", 22524.0),
                ("random-read", 816017.0),
                ("random-write", 10411.0),
                ("stride-read", 3779260.0)
            ]
        );
        assert_eq!(got[0].file_size, 409600 * 1024);
        assert_eq!(got[0].record_size, 64 * 1024);
    }

    /// A whole log cut short: a warning names the last complete line, and a row cut
    /// mid-number (4489337 read as 44893) is left out, not imported as a smaller figure.
    #[test]
    fn a_log_cut_short_is_flagged_and_its_cut_row_dropped() {
        let head = "\tIozone: Performance Test of File I/O\n\n              KB  reclen   write rewrite    read    reread\n            1024       4 4489337 4489338 4489339 4489340\n";
        let cut = format!("{head}            2048       4 4489337 44893");
        let got = parse(&cut, "t.txt").unwrap();
        assert_eq!(got.records.len(), 4, "only the complete row");
        assert!(got.records.iter().all(|r| r.throughput_kib_s > 4_000_000.0));
        let note = got.notes.join("\n");
        assert!(note.contains("t.txt: the log ends before"), "{note}");
        assert!(note.contains("1024       4 4489337 4489338"), "{note}");
        assert!(note.contains("cut mid-way"), "{note}");
        // Cut at a line's end: the rows are whole, the warning stays.
        let got = parse(head, "t.txt").unwrap();
        assert_eq!(got.records.len(), 4);
        assert!(!got.notes.join("").contains("cut mid-way"));
        assert_eq!(got.notes.len(), 1);
        // A whole log: nothing to say.
        let whole = format!("{head}\niozone test complete.\n");
        assert!(parse(&whole, "t.txt").unwrap().notes.is_empty());
    }

    #[test]
    fn excel_reports_win_over_the_table() {
        let text = "Excel output is below:\n\n\"Writer report\"\n        \"4\"  \"8\"\n\"64\"   100  200 \n\"128\"   300  400 \n\n\"Reader report\"\n        \"4\"  \"8\"\n\"64\"   500  0 \n";
        let got = parse(text, "t").unwrap().records;
        assert_eq!(got.len(), 5);
        assert_eq!(got[3].op, Op::Write.into());
        assert_eq!(got[3].file_size, 128 * 1024);
        assert_eq!(got[3].record_size, 8 * 1024);
        assert_eq!(got[3].throughput_kib_s, 400.0);
        assert_eq!(got[4].op, Op::Read.into());
    }

    #[test]
    fn run_together_columns_are_split_by_width() {
        // IOzone 3.414 on tmpfs: 8-digit figures fill %8lld and touch their neighbours.
        let text = "                                                            random  random    bkwd   record   stride                                   \n              KB  reclen   write rewrite    read    reread    read   write    read  rewrite     read   fwrite frewrite   fread  freread\n              64      32 305715312902017 15972885 209621911597288512902017                                                          \n";
        let got: Vec<(String, f64)> = parse(text, "t")
            .unwrap()
            .records
            .into_iter()
            .map(|r| (r.op.to_string(), r.throughput_kib_s))
            .collect();
        let want = [
            ("write", 3057153.0),
            ("rewrite", 12902017.0),
            ("read", 15972885.0),
            ("reread", 20962191.0),
            ("random-read", 15972885.0),
            ("random-write", 12902017.0),
        ];
        let want: Vec<(String, f64)> = want.iter().map(|(o, v)| (o.to_string(), *v)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn nothing_found_is_an_error() {
        assert!(parse("hello\nworld\n", "t").is_err());
    }
}
