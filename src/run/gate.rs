//! The start gate for a phase's workers: they start together once all have arrived, or at once
//! when the gate is aborted (a worker thread could not be spawned), so no thread waits forever
//! for a sibling that never came.

use std::sync::{Condvar, Mutex};

pub(crate) struct Gate {
    /// (arrived, aborted)
    state: Mutex<(usize, bool)>,
    cv: Condvar,
    n: usize,
}

impl Gate {
    pub(crate) fn new(n: usize) -> Self {
        Gate {
            state: Mutex::new((0, false)),
            cv: Condvar::new(),
            n,
        }
    }

    pub(crate) fn wait(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.0 += 1;
        if s.0 >= self.n {
            self.cv.notify_all();
        }
        while s.0 < self.n && !s.1 {
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    pub(crate) fn abort(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_when_all_arrive_or_when_aborted() {
        let g = Gate::new(3);
        std::thread::scope(|s| {
            let a = s.spawn(|| g.wait());
            let b = s.spawn(|| g.wait());
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(!a.is_finished() && !b.is_finished());
            g.wait();
        });
        let g = Gate::new(3);
        std::thread::scope(|s| {
            let a = s.spawn(|| g.wait());
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(!a.is_finished());
            g.abort();
        });
    }
}
