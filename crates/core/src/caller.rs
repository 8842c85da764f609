//! Which caller a thread's calls to a target belong to. A thread is its own caller, unless
//! a workload whose callers move between threads says otherwise with [`acting_as`]: the load
//! workload's lanes are made on one thread and driven on a new one each point. A client that
//! keeps a connection per caller (the smb2 client) puts one caller's open files and calls on
//! one connection, as a machine's client serves a process. Not a scheduler, and nothing a
//! backend must honour.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
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

/// What each caller holds (a client's connection), for as long as something keeps it:
/// the map holds it weakly, so it goes when its last holder lets go.
pub struct PerCaller<T> {
    held: Mutex<HashMap<Caller, Weak<T>>>,
}

impl<T> Default for PerCaller<T> {
    fn default() -> Self {
        PerCaller {
            held: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> PerCaller<T> {
    fn held(&self) -> MutexGuard<'_, HashMap<Caller, Weak<T>>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the calling caller holds, if `usable`; else what `make` gives, held from now on.
    pub fn get_or_make<E>(
        &self,
        usable: impl Fn(&T) -> bool,
        make: impl FnOnce() -> Result<Arc<T>, E>,
    ) -> Result<Arc<T>, E> {
        let me = current();
        let kept = self.held().get(&me).and_then(Weak::upgrade);
        if let Some(t) = kept.filter(|t| usable(t)) {
            return Ok(t);
        }
        let t = make()?;
        let mut held = self.held();
        held.retain(|_, w| w.strong_count() > 0);
        held.insert(me, Arc::downgrade(&t));
        Ok(t)
    }

    /// How many load lanes hold something now.
    pub fn lanes(&self) -> usize {
        self.held()
            .iter()
            .filter(|(c, w)| matches!(c, Caller::Lane(_)) && w.strong_count() > 0)
            .count()
    }
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

    #[test]
    fn a_caller_keeps_what_it_holds_until_it_lets_go_or_it_is_unusable() {
        let per: PerCaller<u32> = PerCaller::default();
        let make = |v| move || Ok::<_, ()>(Arc::new(v));
        let a = per.get_or_make(|_| true, make(1)).unwrap();
        assert_eq!(*per.get_or_make(|_| true, make(2)).unwrap(), 1, "kept");
        assert_eq!(
            *per.get_or_make(|v| *v != 1, make(3)).unwrap(),
            3,
            "unusable: new"
        );
        drop(a);
        assert_eq!(
            *per.get_or_make(|_| true, make(4)).unwrap(),
            4,
            "let go: new"
        );
        let lane = acting_as(0, || per.get_or_make(|_| true, make(5)).unwrap());
        assert_eq!(per.lanes(), 1);
        drop(lane);
        assert_eq!(per.lanes(), 0);
    }
}
