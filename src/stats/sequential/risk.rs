//! What every rule shares: the side decided, the risk budget, and when a look counts.

/// Where a metric's true value lies relative to one threshold, as far as the data can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Not decided (yet): run on.
    Undecided,
    /// The true value is below `threshold·(1-margin)`, at the rule's confidence.
    Below,
    /// The true value is above `threshold·(1+margin)`, at the rule's confidence.
    Above,
}

/// What every rule shares: the risk of a wrong decision for this threshold (`alpha`, e.g.
/// 0.001/k when the caller splits 99.9 % over k thresholds), the relative indifference
/// `margin` (e.g. 0.10), the progress measure's `full` amount (samples or milliseconds of the
/// full recipe) and `floor` (no decision before it), and the `growth` between counted looks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Risk {
    /// Chance of any wrong decision for this threshold over the whole run.
    pub alpha: f64,
    /// Relative indifference margin around the threshold.
    pub margin: f64,
    /// Progress (samples or ms) of the full recipe.
    pub full: u64,
    /// Progress before which nothing is decided (warm-up, minimum samples).
    pub floor: u64,
    /// Factor by which progress must grow between counted looks (e.g. 1.5).
    pub growth: f64,
}

/// Smallest growth honoured: a growth at or below 1 would allow unbounded looks.
const MIN_GROWTH: f64 = 1.01;

impl Risk {
    fn growth(&self) -> f64 {
        self.growth.max(MIN_GROWTH)
    }

    /// A floor of 0 is taken as 1, so geometric growth can start.
    fn floor(&self) -> u64 {
        self.floor.max(1)
    }

    /// Most looks that can be counted between floor and full with this growth (>= 1): one at
    /// each of floor·growth^i below full, plus one at full.
    pub(crate) fn max_looks(&self) -> u32 {
        let full = self.full as f64;
        let mut at = self.floor() as f64;
        let mut looks = 1;
        while at < full {
            looks += 1;
            at *= self.growth();
        }
        looks
    }

    /// The alpha each counted look may spend: alpha / max_looks (Bonferroni over the looks,
    /// which holds whatever the dependence between looks).
    pub(crate) fn alpha_per_look(&self) -> f64 {
        self.alpha / f64::from(self.max_looks())
    }
}

/// When a look counts: at the floor, after each `growth`, and once at full; never more than
/// `max_looks` (the i-th counted look below full has progress >= floor·growth^i, so there are
/// at most as many as `max_looks` counts).
#[derive(Debug, Clone, Copy)]
pub(super) struct LookClock {
    risk: Risk,
    max_looks: u32,
    looks: u32,
    last: Option<u64>,
    at_full: bool,
}

impl LookClock {
    pub(super) fn new(risk: Risk) -> Self {
        LookClock {
            risk,
            max_looks: risk.max_looks(),
            looks: 0,
            last: None,
            at_full: false,
        }
    }

    /// Whether a look at `progress` counts; if so, it is recorded.
    pub(super) fn count(&mut self, progress: u64) -> bool {
        if progress < self.risk.floor() || self.at_full || self.looks >= self.max_looks {
            return false;
        }
        let due = match self.last {
            None => true,
            Some(last) => {
                progress >= self.risk.full || progress as f64 >= last as f64 * self.risk.growth()
            }
        };
        if due {
            self.looks += 1;
            self.last = Some(progress);
            self.at_full = progress >= self.risk.full;
        }
        due
    }

    pub(super) fn looks(&self) -> u32 {
        self.looks
    }

    pub(super) fn alpha_per_look(&self) -> f64 {
        self.risk.alpha / f64::from(self.max_looks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk(floor: u64, full: u64, growth: f64) -> Risk {
        Risk {
            alpha: 0.001,
            margin: 0.1,
            full,
            floor,
            growth,
        }
    }

    #[test]
    fn max_looks_counts_geometric_steps_and_full() {
        // 500, 750, 1125, 1688, 2531, 3797, 5695, 8543 < 9800, then 9800.
        assert_eq!(risk(500, 9800, 1.5).max_looks(), 9);
        assert_eq!(risk(1000, 1000, 1.5).max_looks(), 1);
        assert_eq!(risk(2000, 1000, 1.5).max_looks(), 1);
        assert_eq!(risk(100, 150, 1.5).max_looks(), 2);
        assert!((risk(500, 9800, 1.5).alpha_per_look() - 0.001 / 9.0).abs() < 1e-18);
        // A growth of 1 or less cannot mean unbounded looks.
        assert!(risk(0, 1_000_000, 1.0).max_looks() < 2000);
    }

    #[test]
    fn looks_count_at_floor_growth_and_full_and_never_exceed_max() {
        for (floor, full, growth, step) in [
            (500, 9800, 1.5, 1),
            (500, 9800, 1.5, 333),
            (3000, 60_000, 1.5, 100),
            (1, 50, 1.2, 7),
        ] {
            let r = risk(floor, full, growth);
            let mut clock = LookClock::new(r);
            let mut counted = Vec::new();
            let mut p = 0;
            while p <= full + 3 * step {
                if clock.count(p) {
                    counted.push(p);
                }
                p += step;
            }
            assert!(counted[0] >= floor && counted[0] < floor + step);
            assert!(counted
                .windows(2)
                .all(|w| w[1] as f64 >= w[0] as f64 * growth || w[1] >= full));
            assert!(*counted.last().unwrap() >= full, "{counted:?}");
            assert!(
                counted.len() as u32 <= r.max_looks(),
                "{counted:?} vs {}",
                r.max_looks()
            );
            assert_eq!(clock.looks() as usize, counted.len());
        }
    }
}
