//! `smb://[WORKGROUP;]USER@HOST[:PORT]/SHARE/PATH[?client=libsmbclient]`: what an SMB target names,
//! and its password, for both SMB clients (`crate::smb`, libsmbclient; `crate::smb_rust`,
//! the pure-Rust smb2 crate). The password comes from `SHAREBENCH_SMB_PASSWORD` or from the
//! file named by `SHAREBENCH_SMB_PASSWORD_FILE`, never from the command line, and is never
//! printed. Not: connecting.

/// Environment variables the password may come from.
pub const PASSWORD_ENV: &str = "SHAREBENCH_SMB_PASSWORD";
pub const PASSWORD_FILE_ENV: &str = "SHAREBENCH_SMB_PASSWORD_FILE";

/// Which client library carries an `smb://` target (`?client=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// libsmbclient (Samba's C library): one request at a time, serialised across threads;
    /// kept to compare against, and as the client earlier results were measured with.
    Libsmbclient,
    /// The pure-Rust `smb2` crate: thread-safe and pipelined (`crate::smb_rust`), the default
    /// since it keeps requests in flight and N workers are N clients (issue 13).
    Smb2,
}

/// A parsed `smb://` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub workgroup: String,
    pub user: String,
    pub host: String,
    pub port: u16,
    pub share: String,
    pub path: String,
    pub client: Client,
}

/// `spec` with any password in it replaced by `***`, for error messages.
fn redact(spec: &str) -> String {
    match (spec.find("://"), spec.rfind('@')) {
        (Some(s), Some(at)) if s + 3 < at => match spec[s + 3..at].find(':') {
            Some(c) => format!("{}***{}", &spec[..s + 3 + c + 1], &spec[at..]),
            None => spec.to_string(),
        },
        _ => spec.to_string(),
    }
}

pub fn parse(spec: &str) -> Result<Target, String> {
    let shown = redact(spec);
    let bad = |why: &str| format!("target '{shown}': {why}");
    let rest = spec
        .strip_prefix("smb://")
        .ok_or_else(|| bad("not an smb:// URL"))?;
    let (rest, client) = match rest.split_once('?') {
        None => (rest, Client::Smb2),
        Some((r, "client=libsmbclient")) => (r, Client::Libsmbclient),
        Some((r, "client=smb2")) => (r, Client::Smb2),
        Some(_) => {
            return Err(bad(
                "the only '?' argument is client=smb2 (the default) or client=libsmbclient",
            ))
        }
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (userinfo, hostport) = authority
        .rsplit_once('@')
        .ok_or_else(|| bad("no user (smb://USER@HOST[:PORT]/SHARE/PATH)"))?;
    if userinfo.contains(':') {
        return Err(bad(&format!(
            "a password on the command line is refused; set {PASSWORD_ENV} or {PASSWORD_FILE_ENV}"
        )));
    }
    let (workgroup, user) = userinfo.split_once(';').unwrap_or(("", userinfo));
    if user.is_empty() {
        return Err(bad("no user (smb://USER@HOST[:PORT]/SHARE/PATH)"));
    }
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, p) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
        (h, p.strip_prefix(':'))
    } else {
        match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| bad(&format!("bad port '{p}'")))?,
        None => 445,
    };
    if host.is_empty() {
        return Err(bad("no host (smb://USER@HOST[:PORT]/SHARE/PATH)"));
    }
    let mut parts = path.split('/').filter(|s| !s.is_empty());
    let share = parts
        .next()
        .ok_or_else(|| bad("no share (smb://USER@HOST[:PORT]/SHARE/PATH)"))?;
    Ok(Target {
        workgroup: workgroup.to_string(),
        user: user.to_string(),
        host: host.to_string(),
        port,
        share: share.to_string(),
        path: parts.collect::<Vec<_>>().join("/"),
        client,
    })
}

/// The longest password file taken: a password and a newline, with room to spare.
const PASSWORD_FILE_MAX: u64 = 4096;

/// Reads a password file as ssh reads a private key: a regular file (not a FIFO or a
/// device, which could block or never end), of a few KiB at most, owned by this user or
/// root and readable by no one else; its first line, which must not be empty.
fn read_password_file(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let shown = path.display();
    let cannot = |e: std::io::Error| format!("{PASSWORD_FILE_ENV}: cannot read {shown}: {e}");
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(cannot)?;
    let meta = f.metadata().map_err(cannot)?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "{PASSWORD_FILE_ENV}: {shown} is not a regular file"
        ));
    }
    if meta.len() > PASSWORD_FILE_MAX {
        return Err(format!(
            "{PASSWORD_FILE_ENV}: {shown} is {} bytes; a password file holds one line of at most {PASSWORD_FILE_MAX}",
            meta.len()
        ));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        return Err(format!(
            "{PASSWORD_FILE_ENV}: {shown} belongs to user {}, not to you (uid {me}) or root",
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{PASSWORD_FILE_ENV}: {shown} can be read by others (mode {mode:04o}); make it private: chmod 600 {shown}"
        ));
    }
    let mut text = String::new();
    f.take(PASSWORD_FILE_MAX + 1)
        .read_to_string(&mut text)
        .map_err(cannot)?;
    let pw = text.lines().next().unwrap_or("");
    if pw.is_empty() {
        return Err(format!(
            "{PASSWORD_FILE_ENV}: {shown} is empty; its first line is the password"
        ));
    }
    Ok(pw.to_string())
}

/// The password, from the environment or a file; one-line errors that never show it.
pub fn password() -> Result<String, String> {
    if let Some(p) = std::env::var_os(PASSWORD_ENV) {
        return p
            .into_string()
            .map_err(|_| format!("{PASSWORD_ENV} is not valid UTF-8"));
    }
    if let Some(f) = std::env::var_os(PASSWORD_FILE_ENV) {
        return read_password_file(std::path::Path::new(&f));
    }
    Err(format!(
        "smb:// targets need a password: set {PASSWORD_ENV}, or {PASSWORD_FILE_ENV} to a file holding it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        let t = parse("smb://bench@127.0.0.1:4445/share/sub/dir/").unwrap();
        assert_eq!(
            t,
            Target {
                workgroup: String::new(),
                user: "bench".into(),
                host: "127.0.0.1".into(),
                port: 4445,
                share: "share".into(),
                path: "sub/dir".into(),
                client: Client::Smb2,
            }
        );
        let t = parse("smb://WG;u@localhost/s").unwrap();
        assert_eq!(
            (t.workgroup.as_str(), t.port, t.path.as_str()),
            ("WG", 445, "")
        );
    }

    #[test]
    fn refuses_bad_targets_and_passwords_in_urls() {
        for (spec, needle) in [
            ("smb://127.0.0.1/share", "no user"),
            (
                "smb://u:secret@127.0.0.1/share",
                "password on the command line",
            ),
            ("smb://u@127.0.0.1", "no share"),
            ("smb://u@127.0.0.1:x/s", "bad port"),
            ("smb://u@/s", "no host"),
        ] {
            let e = parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(!e.contains("secret"), "{e}");
        }
    }

    #[test]
    fn the_client_is_chosen_by_one_argument() {
        assert_eq!(
            parse("smb://u@h/s?client=smb2").unwrap().client,
            Client::Smb2
        );
        assert_eq!(parse("smb://u@h/s").unwrap().client, Client::Smb2);
        assert_eq!(
            parse("smb://u@h/s?client=libsmbclient").unwrap().client,
            Client::Libsmbclient
        );
        assert!(parse("smb://u@h/s?x=1")
            .unwrap_err()
            .contains("client=smb2"));
    }
}
