//! Links the C libraries behind the native clients: libnfs for feature `nfs`, libsmbclient
//! for feature `smb`, libgfapi for feature `gluster`. Finds them with pkg-config (the
//! command, no crate), and fails with the package to install when one is missing. Nothing
//! to do without those features.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    if std::env::var_os("CARGO_FEATURE_NFS").is_some() {
        link("libnfs", "libnfs-dev");
    }
    if std::env::var_os("CARGO_FEATURE_SMB").is_some() {
        link("smbclient", "libsmbclient-dev");
    }
    if std::env::var_os("CARGO_FEATURE_GLUSTER").is_some() {
        link("glusterfs-api", "libglusterfs-dev");
    }
}

/// Emits the link flags pkg-config gives for `module`, or stops the build naming `package`.
fn link(module: &str, package: &str) {
    let out = Command::new("pkg-config")
        .args(["--libs", module])
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run pkg-config ({e}): install pkg-config and {package} (scripts/install-deps.sh)")
        });
    if !out.status.success() {
        panic!(
            "pkg-config cannot find {module}: install {package} (scripts/install-deps.sh), or build without the feature that needs it ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    for flag in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
        }
    }
}
