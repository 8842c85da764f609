//! Which caller a thread's calls to a target belong to. A thread is its own caller, unless
//! a workload whose callers move between threads says otherwise with [`acting_as`]: the load
//! workload's lanes are made on one thread and driven on a new one each point. A client that
//! keeps a connection per caller (the smb2 client) puts one caller's open files and calls on
//! one connection, as a machine's client serves a process. Not a scheduler, and nothing a
//! backend must honour.

use std::cell::Cell;
use std::thread::ThreadId;

/// Who is calling: a thread, or a lane of a workload acting on threads of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Caller {
    Thread(ThreadId),
    Lane(u64),
}

thread_local! {
    static LANE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Runs `f` with this thread's calls counted as lane `lane`'s, then restores what was
/// (also when `f` panics).
pub fn acting_as<T>(lane: u64, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            LANE.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(LANE.with(|l| l.replace(Some(lane))));
    f()
}

/// The caller the calling thread acts for now.
pub fn current() -> Caller {
    LANE.with(Cell::get)
        .map(Caller::Lane)
        .unwrap_or_else(|| Caller::Thread(std::thread::current().id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_its_own_caller_until_it_acts_for_a_lane() {
        let me = current();
        assert_eq!(me, Caller::Thread(std::thread::current().id()));
        let other = std::thread::spawn(current).join().unwrap();
        assert_ne!(other, me, "two threads are two callers");
        acting_as(3, || {
            assert_eq!(current(), Caller::Lane(3));
            acting_as(5, || assert_eq!(current(), Caller::Lane(5)));
            assert_eq!(current(), Caller::Lane(3), "restored after a nested lane");
            // Another thread acting as the same lane is the same caller.
            let there = std::thread::spawn(|| acting_as(3, current)).join().unwrap();
            assert_eq!(there, Caller::Lane(3));
        });
        let _ = std::panic::catch_unwind(|| acting_as(7, || panic!("inside")));
        assert_eq!(current(), me, "restored after a panic");
    }
}
