//! A study file (TOML, under `studies/`): what a seed measured, as data. The lab it needs,
//! its scales (variables substituted into the steps), its steps (`sharebench run`
//! argument lines, or the lab actions `failover` and `replication-traffic`), and its
//! claims: what the seed said, and which records test it. A study file holds no verdicts;
//! those are computed from a run (see `check`). Not: running anything (the `study`
//! command of the CLI does).

use serde::{Deserialize, Serialize};
use sharebench_core::op::Op;
use sharebench_core::operation::Operation;
use sharebench_report::classes::SizeClass;
use std::collections::BTreeMap;

/// The step name under which every step's records are seen together, each target
/// renamed `TARGET@STEP` (to compare the same target across lab configurations).
pub const ALL_STEPS: &str = "*";

/// One study, as read from its file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    pub name: String,
    pub title: String,
    /// The seed it reproduces (a file name under shared/seeds).
    pub seed: String,
    /// The question the report opens with.
    pub question: String,
    /// What the study does, for `study list`.
    pub about: String,
    /// What this lab cannot reproduce of the seed, said in the report.
    #[serde(default)]
    pub departures: Vec<String>,
    #[serde(default)]
    pub lab: Option<LabNeeds>,
    /// What the study compares (servers, configurations), by name: what steps measure and
    /// claims name, each played by a user's target (`study run --target ROLE=TARGET`) or
    /// else by its lab default.
    #[serde(default)]
    pub roles: BTreeMap<String, Role>,
    pub scales: BTreeMap<String, Scale>,
    pub steps: Vec<Step>,
    /// The headline comparison: a step and two targets; or several, the first whose step
    /// has records heading the report (a step of roles the user mapped, else the lab's).
    #[serde(default)]
    pub answer: Option<Answers>,
    /// The claims whose verdicts answer the question, in the order the answer gives them
    /// (the report opens with them, with this run's numbers).
    #[serde(default)]
    pub answered_by: Vec<String>,
    #[serde(default)]
    pub claims: Vec<Claim>,
}

/// A thing a study compares: a server, a configuration. Not: a target; which target plays
/// it is decided when the study runs (`roles::Mapping`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Role {
    /// What it stands for in the seed ("the seed's Windows Server 2012 R2 NFS server").
    pub about: String,
    /// What a user may map it to (a directory on an NFS mount of ..., `nfs://`).
    pub maps_to: String,
    /// The lab target that plays it when the user maps none (`lab:nfs3@xfs`); none when the
    /// lab has nothing like it (a Windows server).
    #[serde(default)]
    pub lab: Option<String>,
}

/// How the lab must be for a step (study-wide, or overridden per step).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabNeeds {
    #[serde(default)]
    pub fs: Option<String>,
    #[serde(default)]
    pub link: Option<String>,
    /// ext3/ext4: blocks allocated in write order (`lab up --write-order`).
    #[serde(default)]
    pub write_order: Option<bool>,
    /// Samba's `strict allocate = yes` (`lab up --strict-allocate`).
    #[serde(default)]
    pub strict_allocate: Option<bool>,
    /// The disk profile under the backing images (`lab up --disk`): host, hdd,
    /// ebs-magnetic.
    #[serde(default)]
    pub disk: Option<String>,
}

impl LabNeeds {
    /// `self` with `over`'s fields where it has them.
    pub fn merged(&self, over: Option<&LabNeeds>) -> LabNeeds {
        let Some(o) = over else {
            return self.clone();
        };
        LabNeeds {
            fs: o.fs.clone().or_else(|| self.fs.clone()),
            link: o.link.clone().or_else(|| self.link.clone()),
            write_order: o.write_order.or(self.write_order),
            strict_allocate: o.strict_allocate.or(self.strict_allocate),
            disk: o.disk.clone().or_else(|| self.disk.clone()),
        }
    }
    pub fn disk(&self) -> &str {
        self.disk.as_deref().unwrap_or("host")
    }
    pub fn fs(&self) -> &str {
        self.fs.as_deref().unwrap_or("xfs")
    }
    pub fn link(&self) -> &str {
        self.link.as_deref().unwrap_or("unlimited")
    }
}

/// One scale (`tiny`, `quick`, `standard`, `full`): the values of the step variables and
/// what it costs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scale {
    /// Wall time on 2 cores, minutes (stated by `study list`): measured, unless
    /// `estimated` says it was extrapolated from a smaller scale.
    pub minutes: f64,
    #[serde(default)]
    pub estimated: bool,
    /// Where this scale stops short of the seed, and why (memory, disk).
    #[serde(default)]
    pub limits: Option<String>,
    /// How many blocks each step of an alternation runs (see `Step::alternate`); 3
    /// unless given, the fewest whose comparison can be decided.
    #[serde(default)]
    pub blocks: Option<u32>,
    /// What each `{name}` in the run lines stands for at this scale (`var_texts`). In the
    /// file each is one value: a word (`"32m"`, `"auto"`), a number, or an array of words (a
    /// target list), never a fragment of several options (`Study::parse` checks it).
    pub vars: BTreeMap<String, VarValue>,
}

/// A scale variable as the file gives it: one value of a type.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum VarValue {
    Int(i64),
    Float(f64),
    Word(String),
    Words(Vec<String>),
}

impl VarValue {
    /// The value as a run line takes it: a list's words separated by spaces.
    pub fn text(&self) -> String {
        match self {
            VarValue::Int(i) => i.to_string(),
            VarValue::Float(f) => f.to_string(),
            VarValue::Word(w) => w.clone(),
            VarValue::Words(ws) => ws.join(" "),
        }
    }

    /// One value each: a string with a space would be options in disguise
    /// (`"auto --max-reps 7"`), which a run line must name.
    fn check(&self, name: &str) -> Result<(), String> {
        let one_word = |w: &String| {
            if w.is_empty() || w.chars().any(char::is_whitespace) {
                Err(format!(
                    "variable {name} = \"{w}\": a variable is one value (a word, a number, or an array of words for a list), not options; name each option in the run line"
                ))
            } else {
                Ok(())
            }
        };
        match self {
            VarValue::Int(_) | VarValue::Float(_) => Ok(()),
            VarValue::Word(w) => one_word(w),
            VarValue::Words(ws) if ws.is_empty() => Err(format!("variable {name}: an empty list")),
            VarValue::Words(ws) => ws.iter().try_for_each(one_word),
        }
    }
}

/// Blocks per alternating step unless a scale says otherwise; also the fewest a block
/// comparison needs to be decided.
pub const DEFAULT_BLOCKS: u32 = 3;

impl Scale {
    /// Each variable's value as text, for `substitute`.
    pub fn var_texts(&self) -> BTreeMap<String, String> {
        self.vars
            .iter()
            .map(|(name, v)| (name.clone(), v.text()))
            .collect()
    }

    pub fn blocks(&self) -> u32 {
        self.blocks.unwrap_or(DEFAULT_BLOCKS)
    }
}

/// One step: a `sharebench run` line, or a lab action.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub id: String,
    pub title: String,
    /// Arguments of `sharebench run` (options, and its targets unless `targets` names
    /// roles; `{var}` from the scale).
    #[serde(default)]
    pub run: Option<String>,
    /// The roles the step measures, in order: their targets are the run's, and their names
    /// the records' (what claims compare). Empty: the run line names its targets itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// A lab action instead of (`replication-traffic`) or around (`failover`) the run.
    #[serde(default)]
    pub action: Option<Action>,
    /// Lab settings for this step (the lab is brought up again when they differ).
    #[serde(default)]
    pub lab: Option<LabNeeds>,
    /// Run on this many of the lab's client hosts at once (`lab mpirun`); one by default.
    #[serde(default)]
    pub clients: Option<u32>,
    /// The name of an alternation: steps that cannot share one run (a client option of
    /// the workload, a machine-wide setting) but are compared. They run in turns, block
    /// by block (A, B, A, B, ...; the scale's `blocks` each, into `steps/ID/block-N/`),
    /// and their comparisons take the blocks as replicates (docs/methods/statistics.md).
    #[serde(default)]
    pub alternate: Option<String>,
}

/// The lab actions a step can take; on a user's system (its role mapped) the user's
/// hooks take them (`hooks`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Action {
    /// Kill every process of `host` once the step's run has taken `after_records` records,
    /// restart it when the run ends, and time the replicated volume's heal.
    Failover { host: String, after_records: u64 },
    /// After a change of `change_pct` of a `size` file: bytes on the lab wire for a full
    /// copy, an rsync delta transfer and a Gluster heal.
    ReplicationTraffic { size: String, change_pct: f64 },
}

impl Action {
    /// What the action is, for a line that says why a step did not run.
    pub fn what(&self) -> &'static str {
        match self {
            Action::Failover { .. } => "failover",
            Action::ReplicationTraffic { .. } => "replication traffic",
        }
    }

    /// The hooks (`--hook NAME=...`) that take the action on a user's own system.
    pub fn hooks(&self) -> [&'static str; 2] {
        match self {
            Action::Failover { .. } => ["failover", "restore"],
            Action::ReplicationTraffic { .. } => {
                [crate::hooks::REPLICA_BYTES, crate::hooks::REPLICA_SYNC]
            }
        }
    }
}

/// The headline: which targets the answer compares, on which step.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    pub step: String,
    pub a: String,
    pub b: String,
}

/// One headline comparison, or several in order of preference.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answers {
    One(Answer),
    Several(Vec<Answer>),
}

impl Answers {
    pub fn all(&self) -> &[Answer] {
        match self {
            Answers::One(a) => std::slice::from_ref(a),
            Answers::Several(v) => v,
        }
    }
}

/// A claim of the seed (with `said`), or a figure the study reports without one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    /// The seed's words; absent for a figure measured without a claim.
    #[serde(default)]
    pub said: Option<String>,
    /// Where in the seed.
    #[serde(default)]
    pub source: Option<String>,
    pub check: Check,
}

/// How a claim is tested against the records of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Check {
    /// `a` has higher throughput than `b` over the cells of `ops` (in `class`, and with
    /// `threads` workers when given: throughput mode's children-see).
    Faster {
        step: String,
        a: String,
        b: String,
        ops: Vec<Op>,
        #[serde(default)]
        class: Option<SizeClass>,
        /// Only the cells of this corner of the matrix.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        corner: Option<Corner>,
        #[serde(default)]
        threads: Option<u32>,
    },
    /// `a`'s repetitions vary less than `b`'s (per-cell coefficient of variation).
    Steadier {
        step: String,
        a: String,
        b: String,
        ops: Vec<Op>,
        #[serde(default)]
        class: Option<SizeClass>,
    },
    /// `b` has far more dips (cells below 70% of both record-size neighbours) than `a`.
    FewerDips {
        step: String,
        a: String,
        b: String,
        ops: Vec<Op>,
        #[serde(default)]
        class: Option<SizeClass>,
    },
    /// Every target's median CPU utilisation (client, or server) reaches `pct`, for files
    /// of at least `min_file`.
    CpuAbove {
        step: String,
        targets: Vec<String>,
        ops: Vec<Op>,
        pct: f64,
        #[serde(default)]
        min_file: Option<String>,
        #[serde(default)]
        server: bool,
    },
    /// `a` and `b` use CPU within `tolerance_pct` of each other.
    CpuSimilar {
        step: String,
        a: String,
        b: String,
        ops: Vec<Op>,
        #[serde(default = "default_tolerance")]
        tolerance_pct: f64,
    },
    /// `a` beats `b` on a metric of `op`'s records (lower time or extents, higher rate or
    /// throughput). `a` and `b` may name another step's target as `TARGET@STEP`.
    Better {
        step: String,
        a: String,
        b: String,
        op: Operation,
        /// `b`'s operation, when it differs from `a`'s (create against remove).
        #[serde(default)]
        op_b: Option<Operation>,
        metric: Metric,
        /// Only records of this many concurrent streams (the stream workload).
        #[serde(default)]
        streams: Option<u32>,
    },
    /// The shape of a metric of `op` along a swept axis (the metadata workload's counts,
    /// or file sizes).
    Curve {
        step: String,
        target: String,
        op: Operation,
        axis: Axis,
        metric: Metric,
        shape: Shape,
    },
    /// Targets ordered best first by a metric of `op` (`TARGET@STEP` allowed).
    Ranking {
        step: String,
        order: Vec<String>,
        op: Operation,
        metric: Metric,
    },
    /// `a` carries more load than `b` before its p99 latency reaches `bound_ms` (the load
    /// workload's curves: per repetition, the rate up to which p99 stays under it).
    LoadCapacity {
        step: String,
        a: String,
        b: String,
        bound_ms: f64,
    },
    /// A number measured by a lab action (`failover`, `replication-traffic`).
    Measured { step: String, names: Vec<String> },
    /// A claim this lab cannot test at all (no Windows server, no kernel NFS server): the
    /// report says "not tested" and `why`.
    NotInLab { why: String },
}

/// A corner of the file-size x record-size matrix that a claim is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Corner {
    /// The larger half of the step's file sizes, with records of at most 16 KiB
    /// (IOzone's small records): large only as the scale's sizes allow.
    LargeFilesSmallRecords,
}

impl Corner {
    /// The largest record the corner takes.
    pub const SMALL_RECORD: u64 = 16 << 10;

    pub fn name(self) -> &'static str {
        match self {
            Corner::LargeFilesSmallRecords => "the larger half of the files, records up to 16 KiB",
        }
    }

    /// The cells of `keys` (file size, record size) in the corner.
    pub fn cells(self, keys: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let mut files: Vec<u64> = keys.iter().map(|k| k.0).collect();
        files.sort_unstable();
        files.dedup();
        let Some(&from) = files.get(files.len() / 2) else {
            return Vec::new();
        };
        keys.iter()
            .copied()
            .filter(|&(f, r)| f >= from && r <= Self::SMALL_RECORD)
            .collect()
    }
}

fn default_tolerance() -> f64 {
    15.0
}

/// The swept axis of a curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Axis {
    /// The metadata workload's `files` (the swept count).
    Count,
    FileSize,
}

/// What a curve is said to look like (the rules are in docs/reference/studies.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// Low at the start, a peak inside, lower at the end.
    RiseThenFall,
    /// Highest at the start, lower at the end.
    Falls,
    /// Within 25% from lowest to highest.
    Flat,
    /// A drop to less than half between two neighbouring points.
    Cliff,
}

/// Which number of a record a workload check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// `seconds` (lower is better).
    Seconds,
    /// `ops_per_s` (higher is better).
    Rate,
    /// Throughput, KiB/s (higher is better).
    Throughput,
    /// `extents_per_file` (lower is better).
    Extents,
    /// Server CPU seconds (lower is better).
    ServerCpu,
    /// Client CPU seconds (lower is better).
    ClientCpu,
    /// Client and server CPU seconds together (lower is better): everything a protocol
    /// costs, on whichever side (a FUSE client's daemon counts as client CPU).
    TotalCpu,
}

impl Metric {
    pub fn lower_is_better(self) -> bool {
        !matches!(self, Metric::Rate | Metric::Throughput)
    }
    pub fn name(self) -> &'static str {
        match self {
            Metric::Seconds => "time",
            Metric::Rate => "rate",
            Metric::Throughput => "throughput",
            Metric::Extents => "extents per file",
            Metric::ServerCpu => "server CPU time",
            Metric::ClientCpu => "client CPU time",
            Metric::TotalCpu => "client and server CPU time",
        }
    }
}

impl Check {
    pub fn step(&self) -> &str {
        match self {
            Check::Faster { step, .. }
            | Check::Steadier { step, .. }
            | Check::FewerDips { step, .. }
            | Check::CpuAbove { step, .. }
            | Check::CpuSimilar { step, .. }
            | Check::Better { step, .. }
            | Check::Ranking { step, .. }
            | Check::Curve { step, .. }
            | Check::LoadCapacity { step, .. }
            | Check::Measured { step, .. } => step,
            Check::NotInLab { .. } => "",
        }
    }
}

impl Study {
    /// Parses and checks a study file; errors are one line naming what is wrong.
    pub fn parse(text: &str) -> Result<Study, String> {
        let s = Study::parse_saved(text)?;
        for scale in s.scales.values() {
            for (name, v) in &scale.vars {
                v.check(name)?;
            }
        }
        Ok(s)
    }

    /// Parses the study a study directory ran (its `study.toml`), for verdicts and reports:
    /// checked as `parse` does, but for the form of its scale variables, which a study file
    /// of an older sharebench wrote as option fragments.
    pub fn parse_saved(text: &str) -> Result<Study, String> {
        let s: Study = toml::from_str(text).map_err(|e| {
            let msg = e.message().to_string();
            match e.span() {
                Some(span) => {
                    let line = text[..span.start].matches('\n').count() + 1;
                    format!("line {line}: {msg}")
                }
                None => msg,
            }
        })?;
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), String> {
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            return Err(format!(
                "study name '{}': use letters, digits and '-'",
                self.name
            ));
        }
        if self.scales.is_empty() {
            return Err("no [scales.*] given".into());
        }
        // Roles and lab configurations as each scale lists them (a step's `targets` may name
        // a scale's list, `"{roles}"`).
        for name in self.scales.keys() {
            let scaled = self
                .at_scale(name)
                .map_err(|e| format!("scale {name}: {e}"))?;
            scaled.check_roles()?;
            for step in &scaled.steps {
                scaled.check_configurations(step)?;
            }
        }
        let mut ids = std::collections::BTreeSet::new();
        for step in &self.steps {
            if !ids.insert(step.id.as_str()) {
                return Err(format!("two steps have the id '{}'", step.id));
            }
            if step.id.is_empty() || step.id.contains(['/', '.', ' ']) {
                return Err(format!("step id '{}': no spaces, dots or slashes", step.id));
            }
            if step.clients.is_some_and(|n| n > 1) && step.action.is_some() {
                return Err(format!(
                    "step '{}': a multi-client step cannot take a lab action",
                    step.id
                ));
            }
            if step.alternate.is_some() && step.action.is_some() {
                return Err(format!(
                    "step '{}': a step that alternates cannot take a lab action",
                    step.id
                ));
            }
            match (&step.run, &step.action) {
                (None, None) => return Err(format!("step '{}': give run or action", step.id)),
                (None, Some(Action::Failover { .. })) => {
                    return Err(format!("step '{}': a failover needs a run", step.id))
                }
                _ => {}
            }
            for (name, scale) in &self.scales {
                let size = match &step.action {
                    Some(Action::ReplicationTraffic { size, .. }) => Some(size),
                    _ => None,
                };
                for text in step.run.iter().chain(size) {
                    substitute(text, &scale.var_texts())
                        .map_err(|e| format!("step '{}', scale {name}: {e}", step.id))?;
                }
            }
        }
        for (group, members) in self.alternations() {
            if members.len() < 2 {
                return Err(format!(
                    "alternate = \"{group}\": only step '{}' has it; an alternation needs two steps or more",
                    members[0].id
                ));
            }
        }
        if let Some((name, _)) = self.scales.iter().find(|(_, s)| s.blocks == Some(0)) {
            return Err(format!("scale {name}: blocks must be at least 1"));
        }
        let mut claim_ids = std::collections::BTreeSet::new();
        for c in &self.claims {
            if !claim_ids.insert(c.id.as_str()) {
                return Err(format!("two claims have the id '{}'", c.id));
            }
            if let Check::LoadCapacity { bound_ms, .. } = c.check {
                if !(bound_ms > 0.0 && bound_ms.is_finite()) {
                    return Err(format!("claim '{}': bound_ms must be above 0", c.id));
                }
            }
            let step = c.check.step();
            if !matches!(c.check, Check::NotInLab { .. })
                && step != ALL_STEPS
                && !ids.contains(step)
            {
                return Err(format!(
                    "claim '{}' reads step '{}', which the study does not have",
                    c.id,
                    c.check.step()
                ));
            }
        }
        if let Some(id) = self
            .answered_by
            .iter()
            .find(|id| !claim_ids.contains(id.as_str()))
        {
            return Err(format!(
                "answered_by names claim '{id}', which the study does not have"
            ));
        }
        for a in self.answer.iter().flat_map(Answers::all) {
            if a.step != ALL_STEPS && !ids.contains(a.step.as_str()) {
                return Err(format!("answer reads unknown step '{}'", a.step));
            }
        }
        Ok(())
    }

    /// Role names are words (`linux-server`), their lab defaults lab targets, and a step
    /// measures only roles the study names, each once, with a run line to run them.
    fn check_roles(&self) -> Result<(), String> {
        for (name, role) in &self.roles {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Err(format!("role '{name}': use letters, digits and '-'"));
            }
            if let Some(lab) = role.lab.as_deref().filter(|l| !l.starts_with("lab:")) {
                return Err(format!(
                    "role '{name}': lab = \"{lab}\" is not a lab target (lab:...)"
                ));
            }
        }
        for step in &self.steps {
            let mut seen = std::collections::BTreeSet::new();
            for role in &step.targets {
                if !self.roles.contains_key(role) {
                    return Err(format!(
                        "step '{}' measures role '{role}', which the study does not name in [roles]",
                        step.id
                    ));
                }
                if !seen.insert(role) {
                    return Err(format!("step '{}' names role '{role}' twice", step.id));
                }
            }
            let traffic = matches!(step.action, Some(Action::ReplicationTraffic { .. }));
            if traffic && (step.run.is_some() || step.targets.len() > 1) {
                // It writes and changes one file on one replicated share, and nothing else.
                return Err(format!(
                    "step '{}': a replication-traffic action takes no run line and at most one role",
                    step.id
                ));
            }
            if !step.targets.is_empty() && !traffic && step.run.is_none() {
                return Err(format!(
                    "step '{}': a step of roles needs a run line (or a replication-traffic action)",
                    step.id
                ));
            }
        }
        Ok(())
    }

    /// A step's `lab:TARGET@CONFIG` must name a configuration its lab holds (an item of
    /// its `fs` list), and a step must not be called like one (`NAME@ID` reads step `ID`).
    fn check_configurations(&self, step: &Step) -> Result<(), String> {
        let needs = self
            .lab
            .clone()
            .unwrap_or_default()
            .merged(step.lab.as_ref());
        let items: Vec<&str> = needs.fs().split(',').map(str::trim).collect();
        if items.contains(&step.id.as_str()) {
            return Err(format!(
                "step id '{}' is also a configuration of its lab; name the step otherwise",
                step.id
            ));
        }
        // The lab's flags add to every item's name; the items alone are then no guide.
        if needs.write_order == Some(true) || needs.strict_allocate == Some(true) {
            return Ok(());
        }
        let run = step.run.as_deref().unwrap_or_default();
        let defaults = step
            .targets
            .iter()
            .filter_map(|r| self.roles.get(r).and_then(|r| r.lab.as_deref()));
        for token in run
            .split_whitespace()
            .chain(defaults)
            .filter(|t| t.starts_with("lab:"))
        {
            if let Some((_, config)) = token.split_once('@') {
                if !items.contains(&config) {
                    return Err(format!(
                        "step '{}': {token} names a configuration its lab does not have (fs = \"{}\")",
                        step.id,
                        needs.fs()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The p99 bound, ms, that the step's load curves are read at: the bound of the
    /// first `load-capacity` claim on it (its step report shows the same rate).
    pub fn latency_bound_ms(&self, step: &str) -> Option<f64> {
        self.claims.iter().find_map(|c| match &c.check {
            Check::LoadCapacity {
                step: s, bound_ms, ..
            } if s == step => Some(*bound_ms),
            _ => None,
        })
    }

    /// The study's alternations: each name with its steps, in the study's order.
    pub fn alternations(&self) -> BTreeMap<&str, Vec<&Step>> {
        let mut out: BTreeMap<&str, Vec<&Step>> = BTreeMap::new();
        for s in &self.steps {
            if let Some(g) = &s.alternate {
                out.entry(g.as_str()).or_default().push(s);
            }
        }
        out
    }

    /// The scale called `name`, or an error listing the known ones.
    /// The study as it runs at scale `name`: each step's `targets` with the scale's role
    /// lists in place of the variables that name them (`"{roles}"`).
    pub fn at_scale(&self, name: &str) -> Result<Study, String> {
        let scale = self.scale(name)?;
        let mut s = self.clone();
        for step in &mut s.steps {
            let mut roles = Vec::with_capacity(step.targets.len());
            for t in &step.targets {
                let Some(var) = t.strip_prefix('{').and_then(|v| v.strip_suffix('}')) else {
                    roles.push(t.clone());
                    continue;
                };
                match scale.vars.get(var) {
                    Some(VarValue::Words(ws)) => roles.extend(ws.iter().cloned()),
                    Some(VarValue::Word(w)) => roles.push(w.clone()),
                    _ => {
                        return Err(format!(
                            "step '{}' measures the roles {{{var}}}, which the scale does not list",
                            step.id
                        ))
                    }
                }
            }
            step.targets = roles;
        }
        Ok(s)
    }

    pub fn scale(&self, name: &str) -> Result<&Scale, String> {
        self.scales.get(name).ok_or_else(|| {
            format!(
                "study {} has no scale '{name}' (known: {})",
                self.name,
                self.scales.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// Scales from the cheapest to the dearest.
    pub fn scales_by_cost(&self) -> Vec<(&String, &Scale)> {
        let mut v: Vec<_> = self.scales.iter().collect();
        v.sort_by(|a, b| a.1.minutes.total_cmp(&b.1.minutes));
        v
    }

    /// Whether any step needs the lab when no role is mapped.
    pub fn needs_lab(&self) -> bool {
        self.lab.is_some() || self.steps.iter().any(|s| self.step_needs_lab(s))
    }

    /// Whether `step` needs the lab when none of its roles is mapped: it takes a lab
    /// action, runs on several clients, has lab settings, or measures lab targets (named in
    /// its run line, or its roles' defaults).
    pub fn step_needs_lab(&self, s: &Step) -> bool {
        s.lab.is_some()
            || s.action.is_some()
            || s.clients.is_some()
            || s.run.as_deref().is_some_and(|r| r.contains("lab:"))
            || s.targets
                .iter()
                .any(|r| self.roles.get(r).is_some_and(|r| r.lab.is_some()))
    }
}

/// Replaces every `{name}` in `text` with its value; an unknown name is an error.
pub fn substitute(text: &str, vars: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("unclosed '{{' in '{text}'"))?;
        let name = &after[..close];
        let value = vars
            .get(name)
            .ok_or_else(|| format!("unknown variable '{{{name}}}'"))?;
        out.push_str(value);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Splits an argument line on whitespace, keeping single- or double-quoted words whole.
pub fn split_args(line: &str) -> Result<Vec<String>, String> {
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    args.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("unclosed quote in '{line}'"));
    }
    if any || !cur.is_empty() {
        args.push(cur);
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "t"
title = "T"
seed = "s.txt"
question = "Q?"
about = "A"
[scales.tiny]
minutes = 1
vars = { max = "1m" }
[[steps]]
id = "m"
title = "M"
run = "/tmp -i write --file-sizes {max}"
[[claims]]
id = "c"
said = "x is faster"
check = { kind = "faster", step = "m", a = "x", b = "y", ops = ["write"] }
"#;

    #[test]
    fn a_scale_lists_the_roles_a_step_measures() {
        let text = MINIMAL
            .replace(
                r#"vars = { max = "1m" }"#,
                "vars = { max = \"1m\", roles = [\"x\"] }\n[scales.quick]\nminutes = 2\nvars = { max = \"1m\", roles = [\"x\", \"y\"] }",
            )
            .replace(
                r#"run = "/tmp -i write"#,
                "targets = [\"{roles}\"]\nrun = \"-i write",
            )
            .replace(
                "[scales.tiny]",
                "[roles.x]\nabout = \"X\"\nmaps_to = \"a dir\"\n[roles.y]\nabout = \"Y\"\nmaps_to = \"a dir\"\n[scales.tiny]",
            );
        let s = Study::parse(&text).unwrap();
        assert_eq!(s.at_scale("tiny").unwrap().steps[0].targets, ["x"]);
        assert_eq!(s.at_scale("quick").unwrap().steps[0].targets, ["x", "y"]);
        // A scale's list must name roles of the study, and a step's variable must be there.
        let e = Study::parse(&text.replace(r#"["x", "y"]"#, r#"["x", "z"]"#)).unwrap_err();
        assert!(e.contains("role 'z'"), "{e}");
        let e = Study::parse(&text.replace(r#"roles = ["x"] "#, r#"other = ["x"] "#)).unwrap_err();
        assert!(e.contains("{roles}"), "{e}");
    }

    #[test]
    fn scale_variables_are_one_value_each() {
        let with = |vars: &str| Study::parse(&MINIMAL.replace(r#"{ max = "1m" }"#, vars));
        let s = with(r#"{ max = "1m", reps = 7, t = ["a", "b"] }"#).unwrap();
        let v = &s.scales["tiny"].var_texts();
        assert_eq!((v["reps"].as_str(), v["t"].as_str()), ("7", "a b"));
        for bad in [
            r#"{ max = "auto --max-reps 7" }"#,
            r#"{ max = "" }"#,
            r#"{ max = ["a b"] }"#,
            r#"{ max = [] }"#,
        ] {
            let e = with(bad).unwrap_err();
            assert!(e.contains("variable max"), "{bad}: {e}");
        }
        // A study directory of an older sharebench, whose study.toml gave fragments, is
        // still read for its verdicts and report.
        let old = MINIMAL.replace(r#"{ max = "1m" }"#, r#"{ max = "auto --max-reps 7" }"#);
        assert!(Study::parse_saved(&old).is_ok());
    }

    #[test]
    fn parses_a_minimal_study() {
        let s = Study::parse(MINIMAL).unwrap();
        assert_eq!(s.steps[0].id, "m");
        assert!(matches!(s.claims[0].check, Check::Faster { .. }));
        assert!(!s.needs_lab());
    }

    #[test]
    fn rejects_unknown_variables_steps_and_fields() {
        let bad_var = MINIMAL.replace("{max}", "{nope}");
        assert!(Study::parse(&bad_var)
            .unwrap_err()
            .contains("unknown variable '{nope}'"));
        let bad_step = MINIMAL.replace("step = \"m\", a", "step = \"z\", a");
        assert!(Study::parse(&bad_step).unwrap_err().contains("step 'z'"));
        // A configuration the step's lab does not hold, and a step named like one.
        let side_by_side = MINIMAL.replace(
            "run = \"/tmp -i",
            "lab = { fs = \"xfs,ext4\" }\nrun = \"lab:nfs3@xfs lab:nfs3@ext4 -i",
        );
        assert!(Study::parse(&side_by_side).is_ok());
        let e = Study::parse(&side_by_side.replace("@ext4", "@btrfs")).unwrap_err();
        assert!(e.contains("lab:nfs3@btrfs names a configuration"), "{e}");
        let e = Study::parse(&side_by_side.replace("id = \"m\"", "id = \"xfs\"")).unwrap_err();
        assert!(e.contains("step id 'xfs'"), "{e}");
        // Operations and size classes are the matrix's own names, checked as the file is read.
        let e =
            Study::parse(&MINIMAL.replace("ops = [\"write\"]", "ops = [\"wirte\"]")).unwrap_err();
        assert!(e.contains("wirte") && e.contains("random-read"), "{e}");
        let sized = MINIMAL.replace(
            "ops = [\"write\"]",
            "ops = [\"write\"], class = \"very-large\"",
        );
        assert!(Study::parse(&sized).is_ok());
        let e = Study::parse(&sized.replace("very-large", "huge")).unwrap_err();
        assert!(e.contains("huge") && e.contains("medium"), "{e}");
        let bad_field = MINIMAL.replace("about = \"A\"", "about = \"A\"\nverdict = \"agrees\"");
        let e = Study::parse(&bad_field).unwrap_err();
        assert!(e.contains("line ") && e.contains("verdict"), "{e}");
    }

    #[test]
    fn alternations_need_two_steps_and_no_action() {
        let two = MINIMAL.replace(
            "[[claims]]",
            "alternate = \"g\"\n[[steps]]\nid = \"n\"\ntitle = \"N\"\nrun = \"/tmp -i write\"\nalternate = \"g\"\n[[claims]]",
        );
        let s = Study::parse(&two).unwrap();
        let groups = s.alternations();
        assert_eq!(
            groups["g"].iter().map(|s| &s.id).collect::<Vec<_>>(),
            ["m", "n"]
        );
        assert_eq!(s.scale("tiny").unwrap().blocks(), DEFAULT_BLOCKS);
        let lone = two.replace(
            "run = \"/tmp -i write\"\nalternate = \"g\"",
            "run = \"/tmp\"",
        );
        let e = Study::parse(&lone).unwrap_err();
        assert!(e.contains("only step 'm' has it"), "{e}");
        let zero = two.replace("minutes = 1", "minutes = 1\nblocks = 0");
        assert!(Study::parse(&zero)
            .unwrap_err()
            .contains("blocks must be at least 1"));
    }

    #[test]
    fn substitutes_and_splits() {
        let vars = BTreeMap::from([("a".to_string(), "16m".to_string())]);
        assert_eq!(substitute("x {a} y", &vars).unwrap(), "x 16m y");
        assert!(substitute("x {a", &vars).is_err());
        assert_eq!(
            split_args("run 'a b' c  \"\" d").unwrap(),
            vec!["run", "a b", "c", "", "d"]
        );
        assert!(split_args("a 'b").is_err());
    }

    #[test]
    fn lab_needs_merge() {
        let base = LabNeeds {
            fs: Some("xfs".into()),
            ..LabNeeds::default()
        };
        let over = LabNeeds {
            link: Some("10mbit".into()),
            disk: Some("ebs-magnetic".into()),
            ..LabNeeds::default()
        };
        let m = base.merged(Some(&over));
        assert_eq!(
            (m.fs(), m.link(), m.disk()),
            ("xfs", "10mbit", "ebs-magnetic")
        );
        assert_eq!(base.disk(), "host");
    }
}
