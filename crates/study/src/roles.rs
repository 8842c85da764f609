//! Who plays a study's roles in one run: the user's targets (`study run --target
//! ROLE=TARGET`, `--targets FILE.toml`), and the lab for the rest when the user maps none
//! (or with `--with-lab`); and so what each step measures, or why it is not run. Not: the
//! roles themselves (`spec::Role`), nor opening the targets (the session does).

use crate::spec::{Step, Study};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A user's target for a role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapped {
    /// Anything `sharebench run` takes: a directory, `nfs://`, `smb://`, `gluster://`.
    pub target: String,
    /// Whose system it is, in the user's words ("Windows Server 2022, Server for NFS").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The roles a run maps to the user's targets. Empty, the lab plays every role as the
/// study says, as before roles existed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    #[serde(default)]
    pub roles: BTreeMap<String, Mapped>,
    /// Roles left unmapped take their lab default, and steps only the lab can run run
    /// (`--with-lab`).
    #[serde(default)]
    pub with_lab: bool,
    /// The user's commands for what the lab does itself (`--hook NAME=COMMAND`; `hooks`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hooks: BTreeMap<String, String>,
    /// Roles that cannot be mounted at once with the others, each with the command that
    /// makes it the mounted one (`--switch ROLE=COMMAND`): their steps run one role at a
    /// time, in alternating blocks.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub switches: BTreeMap<String, String>,
    /// The user's client machines, one MPI rank each (`--hostfile`, mpirun's format): the
    /// multi-client steps run there, with the same mapping on every rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostfile: Option<std::path::PathBuf>,
}

/// What the user gave on the command line: `--target`s, a `--targets` file, `--hook`s
/// and `--with-lab`.
pub struct Given<'a> {
    pub targets: &'a [String],
    pub file: Option<&'a Path>,
    pub hooks: &'a [String],
    pub switches: &'a [String],
    pub hostfile: Option<&'a Path>,
    pub with_lab: bool,
}

/// The slots of an mpirun hostfile (`HOST [slots=N]` a line, `#` comments): how many ranks
/// it can hold. Refused when it is not a small regular file or names no host.
pub fn hostfile_slots(path: &Path) -> Result<u32, String> {
    let shown = path.display();
    let text = small_text(
        "--hostfile",
        path,
        "a hostfile (a text file, a host a line)",
    )?;
    let mut slots = 0;
    for line in text.lines() {
        let mut words = line.split('#').next().unwrap_or("").split_whitespace();
        if words.next().is_none() {
            continue;
        }
        let n = words
            .find_map(|w| w.strip_prefix("slots="))
            .map(|n| {
                n.parse::<u32>()
                    .map_err(|_| format!("--hostfile {shown}: '{line}': slots=N"))
            })
            .transpose()?
            .unwrap_or(1);
        slots += n;
    }
    if slots == 0 {
        return Err(format!("--hostfile {shown}: names no host"));
    }
    Ok(slots)
}

/// `NAME=COMMAND` of `--hook` and `--switch`.
fn name_and_command<'a>(flag: &str, arg: &'a str) -> Result<(&'a str, &'a str), String> {
    arg.split_once('=')
        .filter(|(n, c)| !n.is_empty() && !c.trim().is_empty())
        .ok_or_else(|| format!("{flag} {arg}: give NAME=COMMAND"))
}

/// `--targets FILE.toml`: one `[roles.NAME]` table (`target`, `description`) per role.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetsFile {
    roles: BTreeMap<String, Mapped>,
}

/// A targets file larger than this is not one.
const MAX_TARGETS_FILE: u64 = 64 * 1024;

/// The text of a small regular file a `flag` names (`what` it should be), or one line
/// saying why not.
fn small_text(flag: &str, path: &Path, what: &str) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("{flag} {shown}: {e}"))?;
    if !meta.is_file() || meta.len() > MAX_TARGETS_FILE {
        return Err(format!("{flag} {shown}: not {what}"));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{flag} {shown}: {e}"))
}

impl Mapping {
    pub fn is_empty(&self) -> bool {
        self.roles.is_empty()
    }

    /// Whether the lab plays the roles left unmapped and runs the steps only it can.
    pub fn uses_lab(&self) -> bool {
        self.roles.is_empty() || self.with_lab
    }

    /// The mapping a user gives: `--target ROLE=TARGET`s, a `--targets` file, and
    /// `--with-lab`; every role one of `study`'s.
    pub fn given(given: Given, study: &Study) -> Result<Mapping, String> {
        let mut m = Mapping {
            with_lab: given.with_lab,
            ..Mapping::default()
        };
        for a in given.targets {
            m.add_arg(a)?;
        }
        for h in given.hooks {
            let (name, command) = name_and_command("--hook", h)?;
            crate::hooks::check_name(name)?;
            if m.hooks.insert(name.into(), command.into()).is_some() {
                return Err(format!("--hook {name} is given twice"));
            }
        }
        for sw in given.switches {
            let (role, command) = name_and_command("--switch", sw)?;
            if m.switches.insert(role.into(), command.into()).is_some() {
                return Err(format!("--switch {role} is given twice"));
            }
        }
        if let Some(h) = given.hostfile {
            // Absolute: mpirun reads it when a step runs, from wherever it is started.
            let h =
                std::fs::canonicalize(h).map_err(|e| format!("--hostfile {}: {e}", h.display()))?;
            hostfile_slots(&h)?;
            m.hostfile = Some(h);
        }
        let file = given.file;
        if let Some(f) = file {
            m.add_file(f)?;
        }
        let extras = !m.hooks.is_empty() || !m.switches.is_empty() || m.hostfile.is_some();
        if m.is_empty() && (given.with_lab || extras) {
            return Err("--with-lab, --hook, --switch and --hostfile: map a role with --target or --targets first (without any, the lab plays every role)".into());
        }
        m.check(study)?;
        Ok(m)
    }

    /// Adds `ROLE=TARGET` (`--target`).
    pub fn add_arg(&mut self, arg: &str) -> Result<(), String> {
        let (role, target) = arg
            .split_once('=')
            .filter(|(r, t)| !r.is_empty() && !t.is_empty())
            .ok_or_else(|| format!("--target {arg}: give ROLE=TARGET (see 'study roles')"))?;
        self.add(
            role,
            Mapped {
                target: target.to_string(),
                description: None,
            },
        )
    }

    /// Adds every role of a targets file (`--targets`).
    pub fn add_file(&mut self, path: &Path) -> Result<(), String> {
        let shown = path.display();
        let text = small_text(
            "--targets",
            path,
            "a targets file (a TOML file under 64 KiB)",
        )?;
        let file: TargetsFile = toml::from_str(&text).map_err(|e| {
            format!(
                "--targets {shown}: {} (give [roles.NAME] tables of target and description)",
                e.message()
            )
        })?;
        for (role, m) in file.roles {
            self.add(&role, m)?;
        }
        Ok(())
    }

    fn add(&mut self, role: &str, m: Mapped) -> Result<(), String> {
        if m.target.trim().is_empty() {
            return Err(format!("role {role}: an empty target"));
        }
        if m.target.starts_with("lab:") {
            return Err(format!(
                "role {role}: {} is the lab's; the lab plays a role only as the study's default (see 'study roles'): leave {role} unmapped, with --with-lab when you map others",
                m.target
            ));
        }
        if self.roles.insert(role.to_string(), m).is_some() {
            return Err(format!("role {role} is mapped twice; map each role once"));
        }
        Ok(())
    }

    /// Every mapped (and switched) role is one the study names, and a switched role is
    /// mapped.
    pub fn check(&self, study: &Study) -> Result<(), String> {
        if let Some(role) = self.switches.keys().find(|r| !self.roles.contains_key(*r)) {
            return Err(format!(
                "--switch {role}: map the role first (--target {role}=...)"
            ));
        }
        for role in self.roles.keys() {
            if !study.roles.contains_key(role) {
                let known = study.roles.keys().cloned().collect::<Vec<_>>();
                return Err(if known.is_empty() {
                    format!(
                        "study {} has no roles to map (--target {role}=...)",
                        study.name
                    )
                } else {
                    format!(
                        "study {} has no role '{role}' (its roles: {}; see 'sharebench study roles {}')",
                        study.name,
                        known.join(", "),
                        study.name
                    )
                });
            }
        }
        Ok(())
    }
}

/// What a step measures in a run: its targets with the names its records take (the
/// roles, or the targets themselves), whether the lab must be up for it; or why it is not
/// run.
#[derive(Debug, Clone, PartialEq)]
pub enum Play {
    Run {
        names: Vec<String>,
        targets: Vec<String>,
        lab: bool,
        /// One role at a time, in alternating blocks (a role of the step is switched).
        one_at_a_time: bool,
    },
    NotRun(String),
}

/// `step` under `mapping`; `line_targets` are the targets its run line names itself (with
/// the scale's values in place).
pub fn play(study: &Study, step: &Step, line_targets: &[String], mapping: &Mapping) -> Play {
    if step.targets.is_empty() {
        let lab = step.lab.is_some()
            || step.action.is_some()
            || step.clients.is_some()
            || (study.lab.is_some() && step.run.is_none())
            || line_targets.iter().any(|t| t.starts_with("lab:"));
        if lab && !mapping.uses_lab() {
            return Play::NotRun(
                "it needs the lab (its targets, a lab action or the lab's client hosts); add --with-lab to run it".into(),
            );
        }
        return Play::Run {
            names: line_targets.to_vec(),
            targets: line_targets.to_vec(),
            lab,
            one_at_a_time: false,
        };
    }
    let mut targets = Vec::new();
    let mut missing = Vec::new();
    let mut lab = step.clients.is_some_and(|n| n > 1);
    for role in &step.targets {
        let default = study.roles.get(role).and_then(|r| r.lab.as_deref());
        match (mapping.roles.get(role), default) {
            (Some(m), _) => targets.push(m.target.clone()),
            (None, Some(l)) if mapping.uses_lab() => {
                targets.push(l.to_string());
                lab = true;
            }
            (None, d) => missing.push((role.as_str(), d.is_some())),
        }
    }
    if missing.is_empty() {
        let one_at_a_time = step
            .targets
            .iter()
            .any(|r| mapping.switches.contains_key(r));
        if one_at_a_time {
            let what = match (&step.action, step.clients.is_some_and(|n| n > 1)) {
                (Some(action), _) => Some(action.what()),
                (None, true) => Some("multi-client step"),
                (None, false) => None,
            };
            if let Some(what) = what {
                return Play::NotRun(format!(
                    "a switched role cannot take part in a {what}; run it without --switch"
                ));
            }
        }
        if let Some(action) = step.action.as_ref().filter(|_| !lab) {
            // The user's system: the lab's action becomes the user's hooks.
            let absent: Vec<String> = action
                .hooks()
                .iter()
                .filter(|h| !mapping.hooks.contains_key(**h))
                .map(|h| format!("--hook {h}=..."))
                .collect();
            if !absent.is_empty() {
                return Play::NotRun(format!(
                    "its {} needs the lab or your commands: give {}",
                    action.what(),
                    absent.join(" and ")
                ));
            }
        }
        let clients = step.clients.unwrap_or(1);
        let own_clients = clients > 1 && mapping.hostfile.is_some() && !mapping.uses_lab();
        if own_clients {
            let slots = mapping
                .hostfile
                .as_deref()
                .map_or(0, |h| hostfile_slots(h).unwrap_or(0));
            if slots < clients {
                return Play::NotRun(format!(
                    "it runs on {clients} client machines and the hostfile holds {slots} slots"
                ));
            }
            lab = false;
        }
        if lab && !mapping.uses_lab() {
            return Play::NotRun(format!(
                "it runs on {clients} client machines: give --hostfile FILE (one line per client), or --with-lab for the lab's client hosts"
            ));
        }
        return Play::Run {
            names: step.targets.clone(),
            targets,
            lab,
            one_at_a_time,
        };
    }
    let maps: Vec<String> = missing
        .iter()
        .map(|(r, _)| format!("--target {r}=..."))
        .collect();
    let or_lab = if missing.iter().all(|(_, has_default)| *has_default) {
        " (or add --with-lab for the lab's)"
    } else if mapping.uses_lab() {
        " (the lab has none)"
    } else {
        ""
    };
    Play::NotRun(format!("map {} to run it{or_lab}", maps.join(" and ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STUDY: &str = r#"
name = "t"
title = "T"
seed = "s.txt"
question = "Q?"
about = "A"
[roles.linux]
about = "a Linux NFS server"
maps_to = "a directory on its mount"
lab = "lab:nfs3"
[roles.windows]
about = "a Windows NFS server"
maps_to = "a directory on its mount"
[scales.tiny]
minutes = 1
vars = {}
[[steps]]
id = "both"
title = "B"
targets = ["linux", "windows"]
run = "-i write"
[[steps]]
id = "lab-only"
title = "L"
run = "lab:smb -i write"
[[steps]]
id = "local"
title = "D"
run = "/tmp -i write"
"#;

    fn steps() -> (Study, Vec<Vec<String>>) {
        let s = Study::parse(STUDY).unwrap();
        let lines = vec![vec![], vec!["lab:smb".into()], vec!["/tmp".into()]];
        (s, lines)
    }

    fn plays(m: &Mapping) -> Vec<Play> {
        let (s, lines) = steps();
        s.steps
            .iter()
            .zip(&lines)
            .map(|(st, l)| play(&s, st, l, m))
            .collect()
    }

    #[test]
    fn without_a_mapping_the_lab_plays_what_it_can() {
        let p = plays(&Mapping::default());
        assert_eq!(
            p[0],
            Play::NotRun("map --target windows=... to run it (the lab has none)".into())
        );
        assert!(matches!(&p[1], Play::Run { lab: true, .. }));
        assert!(matches!(&p[2], Play::Run { lab: false, .. }));
    }

    #[test]
    fn mapped_roles_run_on_the_users_targets_under_the_roles_names() {
        let mut m = Mapping::default();
        m.add_arg("windows=/mnt/win").unwrap();
        m.add_arg("linux=/mnt/lin").unwrap();
        let p = plays(&m);
        assert_eq!(
            p[0],
            Play::Run {
                names: vec!["linux".into(), "windows".into()],
                targets: vec!["/mnt/lin".into(), "/mnt/win".into()],
                lab: false,
                one_at_a_time: false,
            }
        );
        // The lab's own step is not run with a mapping, unless the lab is asked for.
        assert!(matches!(&p[1], Play::NotRun(w) if w.contains("--with-lab")));
        assert!(matches!(&p[2], Play::Run { .. }));
        m.with_lab = true;
        assert!(matches!(&plays(&m)[1], Play::Run { lab: true, .. }));
    }

    #[test]
    fn an_unmapped_role_takes_its_lab_default_only_with_the_lab() {
        let mut m = Mapping::default();
        m.add_arg("windows=/mnt/win").unwrap();
        assert_eq!(
            plays(&m)[0],
            Play::NotRun(
                "map --target linux=... to run it (or add --with-lab for the lab's)".into()
            )
        );
        m.with_lab = true;
        assert_eq!(
            plays(&m)[0],
            Play::Run {
                names: vec!["linux".into(), "windows".into()],
                targets: vec!["lab:nfs3".into(), "/mnt/win".into()],
                lab: true,
                one_at_a_time: false,
            }
        );
    }

    #[test]
    fn a_lab_target_is_not_a_mapping() {
        let mut m = Mapping::default();
        let e = m.add_arg("linux=lab:nfs4").unwrap_err();
        assert!(e.contains("leave linux unmapped"), "{e}");
        assert!(m.roles.is_empty());
    }

    #[test]
    fn a_step_on_the_labs_client_hosts_needs_the_lab_even_when_mapped() {
        let text = STUDY.replace(
            "targets = [\"linux\", \"windows\"]",
            "targets = [\"linux\", \"windows\"]\nclients = 3",
        );
        let s = Study::parse(&text).unwrap();
        let mut m = Mapping::default();
        m.add_arg("windows=/mnt/win").unwrap();
        m.add_arg("linux=/mnt/lin").unwrap();
        assert!(
            matches!(play(&s, &s.steps[0], &[], &m), Play::NotRun(w) if w.contains("--hostfile"))
        );
        // The user's client machines: one line each, or slots.
        let dir = tempfile::tempdir().unwrap();
        let hosts = dir.path().join("hosts");
        std::fs::write(&hosts, "# three PCs\npc1\npc2 slots=1\n").unwrap();
        m.hostfile = Some(hosts.clone());
        assert!(
            matches!(play(&s, &s.steps[0], &[], &m), Play::NotRun(w) if w.contains("holds 2 slots"))
        );
        std::fs::write(&hosts, "pc1\npc2\npc3 # the third\n").unwrap();
        assert!(matches!(
            play(&s, &s.steps[0], &[], &m),
            Play::Run { lab: false, .. }
        ));
        assert_eq!(hostfile_slots(&hosts), Ok(3));
        std::fs::write(&hosts, "pc1 slots=x\n").unwrap();
        assert!(hostfile_slots(&hosts).unwrap_err().contains("slots=N"));
        m.hostfile = None;
        m.with_lab = true;
        assert!(matches!(
            play(&s, &s.steps[0], &[], &m),
            Play::Run { lab: true, .. }
        ));
    }

    #[test]
    fn replication_traffic_on_a_mapped_role_takes_the_users_hooks() {
        let text = STUDY.replace(
            "[[steps]]\nid = \"lab-only\"",
            "[[steps]]\nid = \"traffic\"\ntitle = \"R\"\ntargets = [\"linux\"]\naction = { kind = \"replication-traffic\", size = \"1m\", change_pct = 1.0 }\n[[steps]]\nid = \"lab-only\"",
        );
        let s = Study::parse(&text).unwrap();
        let step = &s.steps[1];
        assert_eq!(step.id, "traffic");
        // The lab's own traffic, without a mapping.
        assert!(matches!(
            play(&s, step, &[], &Mapping::default()),
            Play::Run { lab: true, .. }
        ));
        let mut m = Mapping::default();
        m.add_arg("linux=/mnt/lin").unwrap();
        assert_eq!(
            play(&s, step, &[], &m),
            Play::NotRun("its replication traffic needs the lab or your commands: give --hook replica-bytes=... and --hook replica-sync=...".into())
        );
        m.hooks.insert("replica-bytes".into(), "cat /c".into());
        m.hooks.insert("replica-sync".into(), "true".into());
        assert_eq!(
            play(&s, step, &[], &m),
            Play::Run {
                names: vec!["linux".into()],
                targets: vec!["/mnt/lin".into()],
                lab: false,
                one_at_a_time: false,
            }
        );
        // A switched role is refused first, with what the step is.
        m.switches.insert("linux".into(), "true".into());
        assert!(matches!(play(&s, step, &[], &m),
            Play::NotRun(w) if w.contains("cannot take part in a replication traffic")));
        // One role, and no run line beside the action.
        let two = text.replace(
            "targets = [\"linux\"]\naction",
            "targets = [\"linux\", \"windows\"]\naction",
        );
        assert!(Study::parse(&two)
            .unwrap_err()
            .contains("a replication-traffic action takes no run line and at most one role"));
    }

    #[test]
    fn bad_mappings_are_one_line_errors() {
        let (s, _) = steps();
        let mut m = Mapping::default();
        for bad in ["windows", "=x", "windows="] {
            assert!(m.add_arg(bad).unwrap_err().contains("ROLE=TARGET"), "{bad}");
        }
        m.add_arg("windows=/a").unwrap();
        assert!(m
            .add_arg("windows=/b")
            .unwrap_err()
            .contains("mapped twice"));
        m.add_arg("mac=/c").unwrap();
        let e = m.check(&s).unwrap_err();
        assert!(
            e.contains("no role 'mac'") && e.contains("linux, windows"),
            "{e}"
        );
    }

    #[test]
    fn a_targets_file_maps_roles_with_their_descriptions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.toml");
        std::fs::write(
            &p,
            "[roles.windows]\ntarget = \"/mnt/win\"\ndescription = \"Windows Server 2022, NTFS\"\n",
        )
        .unwrap();
        let mut m = Mapping::default();
        m.add_file(&p).unwrap();
        assert_eq!(
            m.roles["windows"].description.as_deref(),
            Some("Windows Server 2022, NTFS")
        );
        std::fs::write(&p, "[roles.windows]\ntraget = \"/x\"\n").unwrap();
        let e = Mapping::default().add_file(&p).unwrap_err();
        assert!(e.contains("traget"), "{e}");
        let e = Mapping::default()
            .add_file(Path::new("/dev/zero"))
            .unwrap_err();
        assert!(e.contains("not a targets file"), "{e}");
    }
}
