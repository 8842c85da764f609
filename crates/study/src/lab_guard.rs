//! The lab as a study has it: brought up with what each step needs (file system, disk,
//! link rate), again only when that changes, and taken down at the study's end, also when
//! it fails. Not: the lab itself (`sharebench-lab`), or what runs in it.

use crate::spec::{LabNeeds, Study};
use sharebench_session::error::{CliError, CliResult};
use std::io::Write;

/// The lab a step needs, as `lab up` options; an error names what the study gave.
pub fn up_options(needs: &LabNeeds) -> Result<sharebench_lab::UpOptions, String> {
    let fail = |e: anyhow::Error| format!("the study's lab: {e:#}");
    Ok(sharebench_lab::UpOptions {
        backings: sharebench_lab::backing::Backing::parse_list(
            needs.fs(),
            needs.write_order.unwrap_or(false),
            needs.strict_allocate.unwrap_or(false),
        )
        .map_err(fail)?,
        link: needs.link().parse().map_err(fail)?,
        disk: sharebench_lab::disk::DiskProfile::named(needs.disk()).map_err(fail)?,
        ..Default::default()
    })
}

/// Refuses, before anything runs, a study whose lab cannot come up here: a step asking
/// for a lab `lab up` refuses, and when a step that runs needs the lab (`uses_lab`), the
/// lab without root or a lab already up (the study brings up its own and takes it down).
pub fn check(study: &Study, uses_lab: bool) -> CliResult<()> {
    let base = study.lab.clone().unwrap_or_default();
    for step in &study.steps {
        up_options(&base.merged(step.lab.as_ref()))
            .map_err(|e| CliError::usage(format!("step {}: {e}", step.id)))?;
    }
    if !uses_lab {
        return Ok(());
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(CliError::usage(format!(
            "study {} uses the lab, which needs root",
            study.name
        )));
    }
    if sharebench_lab::state::LabState::load()
        .map_err(|e| CliError::usage(format!("{e:#}")))?
        .is_some()
    {
        return Err(CliError::usage(
            "a lab is already up; the study brings up its own: run 'sharebench lab down' first",
        ));
    }
    Ok(())
}

/// The lab's optional services, started only when a study needs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabServices {
    /// smbnetfs, the FUSE mount behind `lab:smb-fuse`.
    pub smb_fuse: bool,
    /// GlusterFS, most of `lab up`'s time.
    pub gluster: bool,
}

/// The study's lab: down at first, up as the steps need it, down again when dropped.
pub struct LabGuard {
    current: Option<LabNeeds>,
    services: LabServices,
}

impl LabGuard {
    pub fn new(services: LabServices) -> LabGuard {
        LabGuard {
            current: None,
            services,
        }
    }

    /// The lab up as `needs` has it: left as it is when it already is, else (taken down
    /// and) brought up.
    pub fn ensure(&mut self, needs: &LabNeeds, out: &mut dyn Write) -> CliResult<()> {
        if self.current.as_ref() == Some(needs) {
            return Ok(());
        }
        if self.current.is_some() {
            self.down(out);
        }
        let flag = |on: Option<bool>, name: &str| {
            if on.unwrap_or(false) {
                format!(" --{name}")
            } else {
                String::new()
            }
        };
        let _ = writeln!(
            out,
            "study: lab up (--fs {} --disk {} --link {}{}{}{}{})",
            needs.fs(),
            needs.disk(),
            needs.link(),
            flag(needs.write_order, "write-order"),
            flag(needs.strict_allocate, "strict-allocate"),
            flag(Some(!self.services.smb_fuse), "no-smb-fuse"),
            flag(Some(!self.services.gluster), "no-gluster"),
        );
        let opts = sharebench_lab::UpOptions {
            smb_fuse: self.services.smb_fuse,
            gluster: self.services.gluster,
            ..up_options(needs).map_err(CliError::failed)?
        };
        sharebench_lab::up(&opts).map_err(|e| CliError::failed(format!("lab up: {e:#}")))?;
        self.current = Some(needs.clone());
        Ok(())
    }

    /// The lab down, if the study brought it up; a failure is a warning naming the fix.
    pub fn down(&mut self, out: &mut dyn Write) {
        if self.current.take().is_some() {
            let _ = writeln!(out, "study: lab down");
            if let Err(e) = sharebench_lab::down() {
                let _ = writeln!(
                    std::io::stderr(),
                    "sharebench: warning: lab down: {e:#}; run 'sharebench lab down'"
                );
            }
        }
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        self.down(&mut std::io::stdout());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_study_asks_for_labs_that_lab_up_accepts() {
        for (name, _) in crate::BUILTIN {
            let (study, _) = crate::find(name).unwrap();
            let base = study.lab.clone().unwrap_or_default();
            for step in &study.steps {
                let needs = base.merged(step.lab.as_ref());
                let opts = up_options(&needs).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(opts.link.name(), needs.link(), "{name}");
            }
        }
        let bad = LabNeeds {
            link: Some("3mbit".into()),
            ..Default::default()
        };
        assert!(up_options(&bad)
            .unwrap_err()
            .contains("unknown --link '3mbit'"));
    }
}
