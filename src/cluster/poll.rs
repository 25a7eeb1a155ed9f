//! How often the controller asks the API server: fast while something changes, backing off to
//! [`SLOWEST`] while nothing does (a 10-minute run costs a few hundred requests, not thousands),
//! and fast again as soon as anything moves. What "changed" means is the caller's fingerprint
//! of a round (the pods' uids and resourceVersions, the targets running).

use std::time::Duration;

/// The first wait, and the wait after a change.
pub(crate) const FASTEST: Duration = Duration::from_millis(1000);
/// The longest wait while nothing changes.
pub(crate) const SLOWEST: Duration = Duration::from_millis(5000);

/// The wait between two rounds.
pub(crate) struct Backoff {
    wait: Duration,
    last: Option<u64>,
}

impl Backoff {
    pub(crate) fn new() -> Self {
        Backoff {
            wait: FASTEST,
            last: None,
        }
    }

    /// The wait after a round whose state hashed to `fingerprint`: ×1.5 while it is unchanged.
    pub(crate) fn next(&mut self, fingerprint: u64) -> Duration {
        if self.last == Some(fingerprint) {
            self.wait = (self.wait * 3 / 2).min(SLOWEST);
        } else {
            self.wait = FASTEST;
        }
        self.last = Some(fingerprint);
        self.wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_while_nothing_changes_and_reset_on_a_change() {
        let mut b = Backoff::new();
        let waits: Vec<u128> = [1, 1, 1, 1, 1, 1, 2, 2]
            .iter()
            .map(|f| b.next(*f).as_millis())
            .collect();
        assert_eq!(waits, [1000, 1500, 2250, 3375, 5000, 5000, 1000, 1500]);
    }
}
