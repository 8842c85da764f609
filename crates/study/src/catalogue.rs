//! What `study list` and `study roles` print: the shipped studies described (seed,
//! question, steps, claims, time per scale), and one study's roles (what each stands for,
//! its lab default, what a user may map it to). Not: running or checking anything.

use crate::spec::Study;
use std::fmt::Write;

/// Every study of `studies`, as `study list` describes it.
pub fn list(studies: &[Study]) -> String {
    let mut out = String::new();
    for s in studies {
        let _ = writeln!(out, "{}  ({})\n  {}", s.name, s.seed, s.title);
        let _ = writeln!(out, "  Question: {}", s.question);
        let _ = writeln!(out, "  {}", s.about);
        let claims = s.claims.iter().filter(|c| c.said.is_some()).count();
        let needs_lab = if s.needs_lab() {
            "; needs the lab (root)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {} steps, {claims} claims of the seed, {} figures{needs_lab}",
            s.steps.len(),
            s.claims.len() - claims,
        );
        if !s.roles.is_empty() {
            let names: Vec<&str> = s.roles.keys().map(String::as_str).collect();
            let _ = writeln!(
                out,
                "  Roles (map them to your servers with --target ROLE=TARGET): {}",
                names.join(", ")
            );
        }
        for (name, sc) in s.scales_by_cost() {
            let limits = sc
                .limits
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            let how = if sc.estimated {
                "estimated"
            } else {
                "measured"
            };
            let _ = writeln!(
                out,
                "  --scale {name:<9} about {} min ({how}){limits}",
                sc.minutes
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// `study`'s roles: each with what it stands for, its lab default, what it may be mapped
/// to and the steps that measure it.
pub fn roles(study: &Study) -> String {
    let mut out = String::new();
    if study.roles.is_empty() {
        let _ = writeln!(
            out,
            "study {} has no roles to map: its steps name their targets",
            study.name
        );
        return out;
    }
    let _ = writeln!(out, "Roles of study {}:", study.name);
    // A step measures a role if it does at any scale (a scale may list fewer).
    let scaled: Vec<Study> = study
        .scales
        .keys()
        .filter_map(|name| study.at_scale(name).ok())
        .collect();
    for (name, r) in &study.roles {
        let default = r.lab.as_deref().unwrap_or("none (map it to run its steps)");
        let steps: Vec<&str> = study
            .steps
            .iter()
            .enumerate()
            .filter(|(i, _)| scaled.iter().any(|s| s.steps[*i].targets.contains(name)))
            .map(|(_, s)| s.id.as_str())
            .collect();
        let _ = writeln!(
            out,
            "  {name}\n    {}\n    lab default: {default}\n    map to: {}\n    measured by steps: {}",
            r.about,
            r.maps_to,
            steps.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nMap them with: sharebench study run {} --target ROLE=TARGET [--target ...]\n\
         or in a file: --targets FILE.toml ([roles.NAME] with target and description)",
        study.name
    );
    let _ = writeln!(
        out,
        "\nOn your own system, what the lab does itself takes your commands (--hook NAME=COMMAND):"
    );
    for (name, what) in crate::hooks::KNOWN {
        let steps: Vec<&str> = study
            .steps
            .iter()
            .filter(|s| s.action.as_ref().is_some_and(|a| a.hooks().contains(&name)))
            .map(|s| s.id.as_str())
            .collect();
        let by = match steps.is_empty() {
            true if name == crate::hooks::SERVER_CPU => "any step".to_string(),
            true => continue,
            false => format!("step {}", steps.join(", ")),
        };
        let _ = writeln!(out, "  {name} ({by}): {what}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_name_their_defaults_and_steps() {
        let (s, _) = crate::find("nfs-server-configs").unwrap();
        let text = roles(&s);
        for needle in [
            "  windows-server\n",
            "lab default: none",
            "  linux-server\n",
            "lab default: lab:nfs3@xfs",
            "measured by steps: windows-vs-linux",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        // A role a small scale leaves out is still its step's (nfs-xfs: quick and above).
        let (s, _) = crate::find("small-files").unwrap();
        let text = roles(&s);
        let nfs = text.split("  nfs-xfs\n").nth(1).unwrap();
        assert!(nfs.contains("measured by steps: every-target"), "{text}");
        let all: Vec<Study> = crate::builtin().into_iter().map(|(s, _)| s).collect();
        assert!(
            all.iter().all(|s| !s.roles.is_empty()),
            "a study without roles"
        );
        assert!(list(&all).contains("Roles (map them"));
        // The hooks a study's steps take on the user's system, by step.
        let (s, _) = crate::find("dfs-nfs-vs-smb").unwrap();
        let text = roles(&s);
        for needle in [
            "  failover (step failover): ",
            "  restore (step failover): ",
            "  replica-bytes (step replication-traffic): ",
            "  replica-sync (step replication-traffic): ",
            "  server-cpu (any step): ",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        assert!(!roles(&crate::find("small-files").unwrap().0).contains("  failover ("));
    }
}
