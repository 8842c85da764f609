//! The native nfs:// and smb:// clients against real servers the tests start on loopback
//! (NFS-Ganesha with the VFS FSAL, Samba's smbd, and rpcbind when none runs) and stop by
//! PID at the end, also when a test fails (guards with Drop). Servers need root; a missing
//! server binary fails loudly with the package to install.

mod common;
use common::*;
use serde_json::Value;
use std::fs;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const SMB_PORT: u16 = 4445;
const SMB_USER: &str = "sbtest";
const SMB_PASSWORD: &str = "sb-Test-pw1";

/// Fails unless `bin` can be run, naming the Debian package that provides it.
fn need(bin: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        .unwrap_or(false)
        || ["/usr/sbin", "/sbin"]
            .iter()
            .any(|d| Path::new(d).join(bin).is_file());
    assert!(
        found,
        "'{bin}' is missing: install {package} (scripts/install-deps.sh installs the test servers)"
    );
}

fn listening(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

/// A server process of this test, stopped by its PID on drop: SIGTERM, then SIGKILL
/// after 10 s.
struct Daemon {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Daemon {
    /// Starts `cmd` in a process group of its own: smbd signals its whole group when it
    /// stops, which must not reach the test.
    fn start(name: &'static str, cmd: &mut Command, log: PathBuf) -> Daemon {
        use std::os::unix::process::CommandExt;
        let out = fs::File::create(&log).unwrap();
        let child = cmd
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Daemon { name, child, log }
    }

    /// Waits until `ready` holds, failing with the server's log if it exits or times out.
    fn wait_for(&mut self, what: &str, ready: impl Fn() -> bool) {
        let start = Instant::now();
        while !ready() {
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!(
                    "{} exited ({st}) before {what}:\n{}",
                    self.name,
                    self.log_tail()
                );
            }
            if start.elapsed() > Duration::from_secs(30) {
                panic!(
                    "{} not ready after 30 s ({what}):\n{}",
                    self.name,
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_tail(&self) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory the servers may use (ext4 under /var/tmp; the VFS FSAL needs file
/// handles, and smbd's `nobody` must be able to reach the share).
fn server_dir(prefix: &str) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .unwrap();
    sh_ok("chmod", &["0755", d.path().to_str().unwrap()]);
    d
}

fn sh_ok(cmd: &str, args: &[&str]) {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// NFS-Ganesha exporting a scratch directory on 127.0.0.1 (NFSv3 and v4), with rpcbind.
/// Fields drop in order: Ganesha first, then the rpcbind this test started, then the dirs.
struct Ganesha {
    /// The server's process, which the failover hook below stops and lets go on.
    pid: u32,
    _daemon: Daemon,
    _rpcbind: Option<Daemon>,
    export: PathBuf,
    _dir: tempfile::TempDir,
}

const PSEUDO: &str = "/sbtest";

impl Ganesha {
    fn start() -> Ganesha {
        need("ganesha.nfsd", "nfs-ganesha and nfs-ganesha-vfs");
        need("rpcbind", "rpcbind");
        need("rpcinfo", "rpcbind");
        assert!(
            Path::new("/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so").exists()
                || Path::new("/usr/lib/ganesha/libfsalvfs.so").exists(),
            "Ganesha's VFS FSAL is missing: install nfs-ganesha-vfs"
        );
        assert!(
            !listening(2049),
            "something already listens on 127.0.0.1:2049; stop it before this test"
        );
        let dir = server_dir("sbganesha");
        let export = dir.path().join("export");
        let recov = dir.path().join("recov");
        fs::create_dir(&export).unwrap();
        fs::create_dir(&recov).unwrap();
        let rpcbind = if listening(111) {
            None
        } else {
            let mut d = Daemon::start(
                "rpcbind",
                Command::new("rpcbind").args(["-f", "-w"]),
                dir.path().join("rpcbind.log"),
            );
            d.wait_for("port 111 listens", || listening(111));
            Some(d)
        };
        let conf = dir.path().join("ganesha.conf");
        fs::write(
            &conf,
            format!(
                "NFS_CORE_PARAM {{ Protocols = 3, 4; Bind_addr = 127.0.0.1; Enable_NLM = false; Enable_RQUOTA = false; }}\n\
                 NFSV4 {{ Graceless = true; RecoveryBackend = fs; RecoveryRoot = {}; }}\n\
                 EXPORT {{ Export_Id = 77; Path = {}; Pseudo = {PSEUDO}; Access_Type = RW; Squash = No_Root_Squash; SecType = sys; Protocols = 3, 4; FSAL {{ Name = VFS; }} }}\n",
                recov.display(),
                export.display()
            ),
        )
        .unwrap();
        let log = dir.path().join("ganesha.log");
        let mut daemon = Daemon::start(
            "ganesha.nfsd",
            Command::new("ganesha.nfsd").args([
                "-F",
                "-f",
                conf.to_str().unwrap(),
                "-L",
                log.to_str().unwrap(),
                "-p",
                dir.path().join("ganesha.pid").to_str().unwrap(),
                "-N",
                "NIV_EVENT",
            ]),
            dir.path().join("ganesha.out"),
        );
        daemon.log = log;
        daemon.wait_for("NFS and MOUNT are registered with rpcbind", || {
            listening(2049)
                && Command::new("rpcinfo")
                    .args(["-p", "127.0.0.1"])
                    .output()
                    .is_ok_and(|o| {
                        let t = String::from_utf8_lossy(&o.stdout);
                        t.contains("mountd") && t.contains(" 2049 ")
                    })
        });
        Ganesha {
            pid: daemon.child.id(),
            _daemon: daemon,
            _rpcbind: rpcbind,
            export,
            _dir: dir,
        }
    }

    fn v3_url(&self) -> String {
        format!("nfs://127.0.0.1{}/?version=3", self.export.display())
    }
}

/// smbd on 127.0.0.1:4445 with a self-contained configuration: its own state directories
/// and passdb, signing mandatory, SMB3 only. The SMB user `sbtest` maps to the existing
/// Unix account `nobody` (no Unix user is created). It is also an MS-DFS root (share `dfs`,
/// its link `link` referring to `\\127.0.0.1\share`) and listens on 445 too, the port a
/// client dials for a referral's target.
struct Samba {
    _daemon: Daemon,
    share: PathBuf,
    _dir: tempfile::TempDir,
}

impl Samba {
    fn start() -> Samba {
        need("smbd", "samba");
        need("smbpasswd", "samba-common-bin");
        for port in [SMB_PORT, 445] {
            assert!(
                !listening(port),
                "something already listens on 127.0.0.1:{port}; stop it before this test"
            );
        }
        let dir = server_dir("sbsamba");
        let d = |n: &str| {
            let p = dir.path().join(n);
            fs::create_dir_all(&p).unwrap();
            p.display().to_string()
        };
        let share = dir.path().join("share");
        fs::create_dir(&share).unwrap();
        sh_ok("chmod", &["0777", share.to_str().unwrap()]);
        let dfs_root = dir.path().join("dfs");
        fs::create_dir(&dfs_root).unwrap();
        std::os::unix::fs::symlink(r"msdfs:127.0.0.1\share", dfs_root.join("link")).unwrap();
        let map = dir.path().join("users.map");
        fs::write(&map, format!("nobody = {SMB_USER}\n")).unwrap();
        let conf = dir.path().join("smb.conf");
        fs::write(
            &conf,
            format!(
                "[global]\n\
                 smb ports = {SMB_PORT} 445\n\
                 host msdfs = yes\n\
                 interfaces = 127.0.0.1\n\
                 bind interfaces only = yes\n\
                 disable netbios = yes\n\
                 load printers = no\n\
                 printing = bsd\n\
                 printcap name = /dev/null\n\
                 disable spoolss = yes\n\
                 server role = standalone server\n\
                 server min protocol = SMB3\n\
                 server signing = mandatory\n\
                 map to guest = never\n\
                 passdb backend = tdbsam:{}\n\
                 username map = {}\n\
                 lock directory = {}\n\
                 state directory = {}\n\
                 cache directory = {}\n\
                 private dir = {}\n\
                 pid directory = {}\n\
                 ncalrpc dir = {}\n\
                 log file = {}/log.%m\n\
                 [share]\n\
                 path = {}\n\
                 read only = no\n\
                 [dfs]\n\
                 path = {}\n\
                 msdfs root = yes\n",
                dir.path().join("private/passdb.tdb").display(),
                map.display(),
                d("lock"),
                d("state"),
                d("cache"),
                d("private"),
                d("pid"),
                d("ncalrpc"),
                d("log"),
                share.display(),
                dfs_root.display()
            ),
        )
        .unwrap();
        let mut add = Command::new("smbpasswd")
            .args(["-c", conf.to_str().unwrap(), "-s", "-a", "nobody"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot run smbpasswd");
        {
            use std::io::Write;
            let mut stdin = add.stdin.take().unwrap();
            write!(stdin, "{SMB_PASSWORD}\n{SMB_PASSWORD}\n").unwrap();
        }
        let o = add.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "smbpasswd: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut daemon = Daemon::start(
            "smbd",
            Command::new("smbd").args([
                "--foreground",
                "--no-process-group",
                "--debug-stdout",
                "-d",
                "1",
                "-s",
                conf.to_str().unwrap(),
            ]),
            dir.path().join("smbd.log"),
        );
        daemon.wait_for("port 4445 listens", || listening(SMB_PORT));
        Samba {
            _daemon: daemon,
            share,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("smb://{SMB_USER}@127.0.0.1:{SMB_PORT}/share/")
    }

    /// The share through the DFS root's link.
    fn dfs_url(&self) -> String {
        format!("smb://{SMB_USER}@127.0.0.1:{SMB_PORT}/dfs/link/")
    }
}

/// `sharebench ARGS` with the SMB password (or none) in the environment.
fn run_env(args: &[&str], password: Option<&str>) -> Output {
    let mut cmd = bin();
    cmd.env_remove("SHAREBENCH_SMB_PASSWORD")
        .env_remove("SHAREBENCH_SMB_PASSWORD_FILE");
    if let Some(p) = password {
        cmd.env("SHAREBENCH_SMB_PASSWORD", p);
    }
    cmd.args(args).output().expect("cannot start sharebench")
}

/// Runs every operation with --verify (4 cells) and checks all 88 records are ok.
/// Samples of 10 ms, not the default 100: the small cells still take several passes
/// (rounds against the real server, checked below) in a tenth of the time.
fn every_op_verified(target: &str, password: Option<&str>) -> Vec<Value> {
    every_op_verified_with(target, password, &[])
}

/// `every_op_verified` with more options.
fn every_op_verified_with(target: &str, password: Option<&str>, more: &[&str]) -> Vec<Value> {
    let out = shm_dir();
    let out_dir = out.path().join("r");
    let mut args = vec![
        "run",
        "-i",
        "all",
        "--verify",
        "--file-sizes",
        "256k,1m",
        "--record-sizes",
        "4k,64k",
        "--reps",
        "1",
        "--min-sample-time",
        "10ms",
        "--out",
        out_dir.to_str().unwrap(),
        target,
    ];
    args.extend_from_slice(more);
    let o = run_env(&args, password);
    assert!(
        o.status.success(),
        "{target}: exit {:?}: {}",
        o.status.code(),
        stderr(&o)
    );
    let recs = records(&out_dir);
    assert_eq!(recs.len(), 4 * 22, "{target}: records");
    for r in &recs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["verify"], true, "{r}");
        assert_whole_file_per_pass(r);
        assert!(r["throughput_kib_s"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert!(
        recs.iter().any(|r| r["passes"].as_u64() > Some(1)),
        "{target}: no sample took more than one pass"
    );
    recs
}

/// Asserts exit `code` and one stderr line containing `needle`.
fn assert_one_line(o: &Output, code: i32, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {err}");
    assert!(lines[0].contains(needle), "{err:?} lacks {needle:?}");
}

#[test]
fn nfs_every_operation_verifies_against_ganesha() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let g = Ganesha::start();
    let recs = every_op_verified(&g.v3_url(), None);
    assert_eq!(recs[0]["backend"], "nfs");
    assert_eq!(recs[0]["client"], "libnfs-nfs3");
    assert_no_workdir(&g.export);

    // Eight requests in flight through libnfs's asynchronous calls: every operation still
    // verifies, answered in whatever order; the ones whose order allows no overlap run at 1.
    let recs = every_op_verified_with(&g.v3_url(), None, &["--iodepth", "8"]);
    for r in &recs {
        let one = ["record-rewrite", "fwrite", "frewrite", "fread", "freread"];
        let want = if one.contains(&r["op"].as_str().unwrap()) {
            1
        } else {
            8
        };
        assert_eq!(r["iodepth"], want, "{r}");
    }
    assert_no_workdir(&g.export);
    // nconnect=4: each file open on four connections, the queue's requests spread over them.
    let recs = every_op_verified_with(
        &format!("{}&nconnect=4", g.v3_url()),
        None,
        &["--iodepth", "8"],
    );
    assert!(recs.iter().any(|r| r["iodepth"] == 8));
    assert_no_workdir(&g.export);

    // NFSv4.1 (files through sharebench's own data path, a session per caller; the
    // namespace through nfs-rs, every COMPOUND led by SEQUENCE): every operation verified,
    // writes of any size. This Ganesha announces itself as a pNFS metadata server (its
    // default); the data path asks for no layouts, nfs-rs's lookups need none.
    let recs = every_op_verified(&format!("nfs://127.0.0.1{PSEUDO}?version=4.1"), None);
    assert!(
        recs.iter()
            .all(|r| r["backend"] == "nfs" && r["client"] == "sharebench-nfs4.1"),
        "{:?}",
        recs[0]
    );
    assert_no_workdir(&g.export);
    // NFSv4.2: the same clients on sessions of minor version 2 (Ganesha 4.3 needed nfs-rs's
    // EXCHANGE_ID fix in third_party/nfs-rs.patches to accept it).
    let out42 = shm_dir();
    let dir42 = out42.path().join("r");
    let v42 = format!("nfs://127.0.0.1{PSEUDO}?version=4.2");
    let o = run_env(
        &[
            "run",
            "-i",
            "write,read,random-read,pwrite,pread",
            "--verify",
            "--file-sizes",
            "256k",
            "--record-sizes",
            "4k,64k",
            "--reps",
            "1",
            "--out",
            dir42.to_str().unwrap(),
            &v42,
        ],
        None,
    );
    assert!(o.status.success(), "v4.2: {}", stderr(&o));
    let recs = records(&dir42);
    assert_eq!(recs.len(), 10);
    assert!(
        recs.iter()
            .all(|r| r["status"] == "ok" && r["client"] == "sharebench-nfs4.2"),
        "{:?}",
        recs[0]
    );
    assert_no_workdir(&g.export);

    // NFSv4.0: small records work end to end; a 4 KiB write is refused with a clear error.
    let v4 = format!("nfs://127.0.0.1{PSEUDO}?version=4");
    let out = shm_dir();
    let args = |rs: &'static str, dir: &Path| -> Vec<String> {
        [
            "run",
            "-i",
            "write,read,pwrite,pread",
            "--verify",
            "--file-sizes",
            "64k",
            "--record-sizes",
            rs,
            "--reps",
            "2",
            "--out",
            dir.to_str().unwrap(),
            &v4,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let ok_args = args("2k", &out.path().join("ok"));
    let o = run_env(
        &ok_args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    assert!(o.status.success(), "v4: {}", stderr(&o));
    let recs = records(&out.path().join("ok"));
    assert_eq!(recs.len(), 8);
    assert!(recs
        .iter()
        .all(|r| r["status"] == "ok" && r["client"] == "libnfs-nfs4.0"));
    let mut deep_args = args("2k", &out.path().join("deep"));
    deep_args.extend(["--iodepth".to_string(), "4".to_string()]);
    let o = run_env(
        &deep_args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    assert!(o.status.success(), "v4 --iodepth 4: {}", stderr(&o));
    assert!(records(&out.path().join("deep"))
        .iter()
        .all(|r| r["status"] == "ok" && r["iodepth"] == 4));
    // NFSv4.1 keeps requests in flight on the open file's session slots: every operation
    // verified at depth 4, vectored calls (larger than one READ) included.
    let v41 = format!("nfs://127.0.0.1{PSEUDO}?version=4.1");
    let recs = every_op_verified_with(&v41, None, &["--iodepth", "4"]);
    assert!(recs
        .iter()
        .any(|r| r["iodepth"] == 4 && r["client"] == "sharebench-nfs4.1"));
    assert_no_workdir(&g.export);
    let big_args = args("4k", &out.path().join("big"));
    let o = run_env(
        &big_args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("libnfs 4.0 cannot encode NFSv4 WRITEs"),
        "{}",
        stderr(&o)
    );
    assert_no_workdir(&g.export);

    // A study's role played by this server, outside the lab: its native URL maps the
    // role, the other role a directory; the seed's claim gets a verdict from them.
    let shm = shm_dir();
    let study_out = out.path().join("study");
    let o = run_env(
        &[
            "study",
            "run",
            "nfs-server-configs",
            "--scale",
            "tiny",
            "--target",
            &format!("linux-server={}", g.v3_url()),
            "--target",
            &format!("windows-server={}", shm.path().display()),
            "--out",
            study_out.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let line = stdout(&o)
        .lines()
        .find(|l| l.contains(" linux-outperforms-windows: "))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(
        ["agrees", "disagrees", "inconclusive"]
            .iter()
            .any(|v| line.trim_start().starts_with(v)),
        "{}",
        stdout(&o)
    );
    let recs = records(&study_out.join("steps/windows-vs-linux"));
    assert!(recs
        .iter()
        .any(|r| r["target"] == "linux-server" && r["client"] == "libnfs-nfs3"));
    assert_no_workdir(&g.export);

    // The main job's failover step on this server outside the lab: the user's hooks stand
    // in for the lab's. The failover hook stops the test's own server by PID for a second
    // and lets it go on (an outage the run rides through); the restore hook checks that it
    // is back. Both run, their output is kept, and the step's figures are the lab's.
    // Its replication traffic on a replica of the test's own: rsync's delta algorithm
    // (DFS Replication's RDC in the lab's terms) copies the export to a second directory
    // whenever the study waits for the replicas to agree, and the bytes rsync sent are
    // the replica link's counter.
    let pid = g.pid;
    let hooked = out.path().join("hooked");
    let replica = out.path().join("replica");
    let counts = out.path().join("replica-bytes");
    fs::create_dir(&replica).unwrap();
    fs::write(&counts, "").unwrap();
    let (export, replica_s, counts_s) = (
        g.export.display().to_string(),
        replica.display().to_string(),
        counts.display().to_string(),
    );
    let sync = format!(
        "rsync -aI --no-whole-file --delete --stats {export}/ {replica_s}/ | sed -n 's/^Total bytes sent: //p' | tr -d , >> {counts_s}"
    );
    let bytes = format!("awk '{{s += $1}} END {{print s + 0}}' {counts_s}");
    let o = run_env(
        &[
            "study",
            "run",
            "dfs-nfs-vs-smb",
            "--scale",
            "tiny",
            "--target",
            &format!("replicated={}", g.v3_url()),
            "--hook",
            &format!("failover=kill -STOP {pid} && sleep 1 && kill -CONT {pid} && echo paused"),
            "--hook",
            &format!("restore=kill -0 {pid} && echo back"),
            "--hook",
            &format!("replica-sync={sync}"),
            "--hook",
            &format!("replica-bytes={bytes}"),
            "--out",
            hooked.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("step matrix: not run: map --target nfs=..."),
        "{}",
        stdout(&o)
    );
    let st: Value = serde_json::from_slice(&fs::read(hooked.join("study.json")).unwrap()).unwrap();
    let figure = |name: &str| {
        st["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no figure {name}: {st}"))
            .clone()
    };
    assert!(figure("crash-at")["note"]
        .as_str()
        .unwrap()
        .contains("failover hook"));
    assert_eq!(figure("verify-failures")["value"], 0.0, "{st}");
    assert!(figure("measurements-ok")["value"].as_f64().unwrap() > 0.0);
    let log =
        |name: &str| fs::read_to_string(hooked.join(format!("steps/failover.hook-{name}.log")));
    assert_eq!(log("failover").unwrap(), "paused\n");
    assert_eq!(log("restore").unwrap(), "back\n");
    // The new 16 MiB file crossed whole, its 1% change as a delta: more than the bytes
    // changed, far less than the file.
    let mib = |name: &str| figure(name)["value"].as_f64().unwrap();
    let (changed, full, delta) = (mib("changed"), mib("full-copy"), mib("replication"));
    assert!((16.0..17.0).contains(&full), "full copy {full} MiB: {st}");
    assert!(
        changed > 0.0 && delta >= changed && delta < full / 4.0,
        "changed {changed}, replication {delta} MiB: {st}"
    );
    let syncs = fs::read_to_string(&counts).unwrap();
    assert_eq!(
        syncs.lines().count(),
        3,
        "three waits for the replicas: {syncs}"
    );
    assert!(hooked
        .join("steps/replication-traffic.hook-replica-sync-after-change.log")
        .exists());
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.trim_start().starts_with("measured")
                && l.contains(" replication-traffic: changed = ")),
        "{}",
        stdout(&o)
    );
    assert_no_workdir(&g.export);
}

#[test]
fn smb_every_operation_verifies_against_samba() {
    require_root();
    if !nix_is_root() {
        return;
    }
    let s = Samba::start();
    // smb:// is the smb2 crate's client; libsmbclient on request.
    let url = s.url();
    let lib_url = format!("{url}?client=libsmbclient");
    let recs = every_op_verified(&lib_url, Some(SMB_PASSWORD));
    assert_eq!(recs[0]["backend"], "smb");
    assert_eq!(recs[0]["client"], "libsmbclient");
    assert_no_workdir(&s.share);

    // Three workers (serialised inside libsmbclient) and the password from a file.
    let out = shm_dir();
    let pw_file = out.path().join("pw");
    fs::write(&pw_file, format!("{SMB_PASSWORD}\n")).unwrap();
    // Private, as a password file must be.
    fs::set_permissions(
        &pw_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let o = bin()
        .env_remove("SHAREBENCH_SMB_PASSWORD")
        .env("SHAREBENCH_SMB_PASSWORD_FILE", &pw_file)
        .args([
            "run",
            "-i",
            "write,read,random-read",
            "--verify",
            "--threads",
            "3",
            "--file-sizes",
            "1m",
            "--record-sizes",
            "64k",
            "--reps",
            "1",
            "--out",
            out.path().join("t").to_str().unwrap(),
            &lib_url,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(records(&out.path().join("t"))
        .iter()
        .all(|r| r["status"] == "ok"));
    assert_no_workdir(&s.share);

    // A wrong password, through either client: one clear line, exit 2, nothing created.
    for u in [&url, &lib_url] {
        let o = run_env(
            &["run", "--out", out.path().join("bad").to_str().unwrap(), u],
            Some("wrong"),
        );
        assert_one_line(&o, 2, "wrong user or password");
        assert!(!stderr(&o).contains("wrong\n") && !stderr(&o).contains(SMB_PASSWORD));
        assert_no_workdir(&s.share);
    }

    // The pure-Rust client (smb2 crate), the default and by name: every operation
    // verified, one request at a time and eight in flight; three workers are three sessions.
    let recs = every_op_verified(&url, Some(SMB_PASSWORD));
    assert_eq!(recs[0]["client"], "smb2-rs");
    let rs_url = format!("{url}?client=smb2");
    let recs = every_op_verified_with(&rs_url, Some(SMB_PASSWORD), &["--iodepth", "8"]);
    assert!(recs.iter().any(|r| r["iodepth"] == 8));
    let o = run_env(
        &[
            "run",
            "-i",
            "write,read",
            "--verify",
            "--threads",
            "3",
            "--file-sizes",
            "1m",
            "--record-sizes",
            "64k",
            "--reps",
            "1",
            "--out",
            out.path().join("rs3").to_str().unwrap(),
            &rs_url,
        ],
        Some(SMB_PASSWORD),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_no_workdir(&s.share);

    // libsmbclient waits for each reply: a deeper queue is refused before any I/O.
    let o = run_env(
        &[
            "run",
            "--iodepth",
            "4",
            "--out",
            out.path().join("deep").to_str().unwrap(),
            &lib_url,
        ],
        Some(SMB_PASSWORD),
    );
    assert_one_line(&o, 2, "libsmbclient client waits for each reply");
    assert!(!out.path().join("deep").join("results.jsonl").exists());

    the_main_job_on_a_dfs_path_of_ones_own(&s);
}

/// Seed 000's question asked of a DFS namespace outside the lab: the main job with its
/// `smb` role mapped to the namespace's link (the referral followed to the share) and its
/// `nfs` role to a directory; the steps of unmapped roles are not run, the comparison of
/// the two is decided, and the study says whose system it measured.
fn the_main_job_on_a_dfs_path_of_ones_own(s: &Samba) {
    let nfs = shm_dir();
    let out = shm_dir();
    let dir = out.path().join("study");
    let namespaces = lab_namespaces();
    let (nfs_role, smb_role) = (
        format!("nfs={}", nfs.path().display()),
        format!("smb={}", s.dfs_url()),
    );
    let o = run_env(
        &[
            "study",
            "run",
            "dfs-nfs-vs-smb",
            "--scale",
            "tiny",
            "--target",
            &nfs_role,
            "--target",
            &smb_role,
            "--out",
            dir.to_str().unwrap(),
        ],
        Some(SMB_PASSWORD),
    );
    let text = stdout(&o);
    assert!(o.status.success(), "{}\n{text}", stderr(&o));
    assert!(
        text.contains("step fair-clients-depth1: not run: map --target smb-direct="),
        "{text}"
    );
    let decided = text
        .lines()
        .filter(|l| {
            ["agrees ", "disagrees ", "inconclusive "]
                .iter()
                .any(|v| l.trim_start().starts_with(v))
        })
        .count();
    assert!(decided >= 3, "{text}");
    let manifest = fs::read_to_string(dir.join("steps/matrix/run.json")).unwrap();
    assert!(
        manifest.contains(r"dfs-referral=\\\\127.0.0.1:445\\share"),
        "{manifest}"
    );
    let html = fs::read_to_string(dir.join("report/report.html")).unwrap();
    assert!(html.contains("Whose systems") && html.contains(&s.dfs_url()));
    assert_eq!(
        lab_namespaces(),
        namespaces,
        "a mapped study made a namespace"
    );
    assert_no_workdir(&s.share);
}

#[test]
fn native_clients_refuse_non_loopback_hosts_and_passwords_in_urls() {
    let out = shm_dir();
    let o = |args: &[&str], pw: Option<&str>| {
        let mut a = vec!["run", "--out", out.path().to_str().unwrap()];
        a.extend_from_slice(args);
        run_env(&a, pw)
    };
    if sharebench_in_host_netns() {
        assert_one_line(
            &o(&["nfs://192.0.2.1/export?version=3"], None),
            2,
            "not a loopback address",
        );
        assert_one_line(
            &o(&["smb://u@192.0.2.1/share"], Some("x")),
            2,
            "not a loopback address",
        );
        assert_one_line(
            &o(&["nfs://nfs.example.com/export"], None),
            2,
            "does not use DNS",
        );
    }
    let pw_url = o(&["smb://u:hunter2@127.0.0.1/share"], None);
    assert_one_line(&pw_url, 2, "password on the command line is refused");
    assert!(!stderr(&pw_url).contains("hunter2"));
    assert_one_line(
        &o(&["smb://u@127.0.0.1/share"], None),
        2,
        "SHAREBENCH_SMB_PASSWORD",
    );
    assert_one_line(
        &o(&["nfs://127.0.0.1/x?version=4.3"], None),
        2,
        "unknown NFS version '4.3'",
    );
}

/// True when the test runs in the host's network namespace (where the refusal applies).
fn sharebench_in_host_netns() -> bool {
    use std::os::unix::fs::MetadataExt;
    let ns = |p: &str| fs::metadata(p).map(|m| (m.dev(), m.ino()));
    matches!((ns("/proc/self/ns/net"), ns("/proc/1/ns/net")), (Ok(a), Ok(b)) if a == b)
}
