//! The tool deletes only its own working directory: one whose marker is missing or
//! altered is refused, and its contents stay.

use sharebench_backends::posix::PosixBackend;
use sharebench_core::workdir::{Workdir, MARKER};

#[test]
fn removes_its_own_tree_and_nothing_else() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    std::fs::write(dir.path().join("neighbour.txt"), b"keep me").unwrap();
    let b = PosixBackend::new(dir.path()).unwrap();
    let wd = Workdir::create(&b, "own").unwrap();
    std::fs::create_dir_all(dir.path().join(&wd.path).join("a/b")).unwrap();
    std::fs::write(dir.path().join(&wd.path).join("a/b/f"), b"x").unwrap();
    wd.remove(&b).unwrap();
    assert!(!dir.path().join(&wd.path).exists());
    assert_eq!(
        std::fs::read(dir.path().join("neighbour.txt")).unwrap(),
        b"keep me"
    );
}

#[test]
fn refuses_a_directory_whose_marker_is_not_ours() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let b = PosixBackend::new(dir.path()).unwrap();
    let wd = Workdir::create(&b, "victim").unwrap();
    let data = dir.path().join(&wd.path).join("data");
    std::fs::write(&data, b"someone's").unwrap();
    // Someone else's marker (another run's), then no marker at all.
    std::fs::write(
        dir.path().join(&wd.path).join(MARKER),
        b"sharebench working directory of run other\n",
    )
    .unwrap();
    assert!(wd.remove(&b).is_err());
    std::fs::remove_file(dir.path().join(&wd.path).join(MARKER)).unwrap();
    let err = wd.remove(&b).unwrap_err();
    assert!(err.to_string().contains("refusing"), "{err}");
    assert_eq!(std::fs::read(&data).unwrap(), b"someone's");
}

#[test]
fn an_existing_directory_is_never_adopted() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    std::fs::create_dir(dir.path().join("sharebench-taken")).unwrap();
    let b = PosixBackend::new(dir.path()).unwrap();
    assert!(Workdir::create(&b, "taken").is_err());
}
