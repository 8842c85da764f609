//! Where the workers of a pass and their parent meet before the clock starts: a barrier
//! (as std's, a mutex and a condition variable) that the parent can also call off, when a
//! worker thread could not be started, so that those already waiting there return instead
//! of waiting forever. Not: stonewalling, nor any timing.

use std::sync::{Condvar, Mutex};

pub struct StartGate {
    parties: usize,
    state: Mutex<GateState>,
    opened: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    open: bool,
    called_off: bool,
}

impl StartGate {
    /// A gate that opens when `parties` callers (the workers and the parent) have arrived.
    pub fn new(parties: usize) -> StartGate {
        StartGate {
            parties,
            state: Mutex::default(),
            opened: Condvar::new(),
        }
    }

    /// Waits until everyone has arrived (true) or the gate is called off (false).
    pub fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.arrived += 1;
        if s.arrived >= self.parties {
            s.open = true;
            self.opened.notify_all();
        }
        while !s.open && !s.called_off {
            s = self.opened.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.open
    }

    /// Releases everyone waiting, and everyone who comes later, with false.
    pub fn call_off(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if !s.open {
            s.called_off = true;
        }
        self.opened.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_for_all_parties_or_lets_waiters_go_when_called_off() {
        let gate = StartGate::new(3);
        let opened = std::thread::scope(|s| {
            let a = s.spawn(|| gate.wait());
            let b = s.spawn(|| gate.wait());
            let me = gate.wait();
            [a.join().unwrap(), b.join().unwrap(), me]
        });
        assert_eq!(opened, [true; 3]);

        let gate = StartGate::new(3);
        let went = std::thread::scope(|s| {
            let a = s.spawn(|| gate.wait());
            std::thread::sleep(std::time::Duration::from_millis(20));
            gate.call_off();
            a.join().unwrap()
        });
        assert!(!went, "a waiter returns, told the pass is off");
        assert!(!gate.wait(), "and so does a late one");
    }
}
