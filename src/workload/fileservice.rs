//! Which of an instance's files the next I/O goes to (fio's `file_service_type`): files in turn,
//! one file's pass after another, or a file drawn uniformly or from zipf, pareto or normal
//! (fio draws those over `files << 10` values, unhashed, and keeps the top bits).

use super::dist::{Gauss, Pareto, Zipf};
use super::rng::Rng;
use crate::model::{FileService, JobSpec};

/// fio's `FIO_FSERVICE_SHIFT`.
const SHIFT: u32 = 10;

#[derive(Debug, Clone)]
enum Choice {
    RoundRobin,
    Sequential,
    Random,
    Zipf(Zipf, u64),
    Pareto(Pareto, u64),
    Normal(Gauss, u64),
}

/// Chooses files for one job instance.
#[derive(Debug, Clone)]
pub(crate) struct FileChooser {
    choice: Choice,
    n: usize,
    /// I/Os per choice (`random:8`).
    nr: u32,
    /// I/Os left before choosing again.
    left: u32,
    current: usize,
    next_rr: usize,
    started: bool,
    rng: Rng,
}

impl FileChooser {
    /// Plain round robin, one I/O per file: what `IoSource`'s fast path does itself.
    pub(crate) fn is_plain_round_robin(&self) -> bool {
        matches!(self.choice, Choice::RoundRobin) && self.nr <= 1
    }

    pub(crate) fn new(job: &JobSpec, n: usize, seed: u64) -> Self {
        let n = n.max(1);
        let mut rng = Rng::new(seed ^ 0xF11E);
        let ranges = (n as u64) << SHIFT;
        let center = job.blocks.file_service_center;
        // zipf and pareto start at a random place unless centered; normal is centered on the
        // middle file unless told otherwise (fio's rand_off).
        let skew_off = |rng: &mut Rng| match center {
            Some(c) => (c * ranges as f64) as u64,
            None => rng.below(ranges),
        };
        let choice = match job.blocks.file_service {
            FileService::RoundRobin => Choice::RoundRobin,
            FileService::Sequential => Choice::Sequential,
            FileService::Random => Choice::Random,
            FileService::Zipf(t) => Choice::Zipf(Zipf::new(ranges, t), skew_off(&mut rng)),
            FileService::Pareto(h) => Choice::Pareto(Pareto::new(ranges, h), skew_off(&mut rng)),
            FileService::Normal(d) => {
                let off = center.map_or(0, |c| {
                    (ranges as f64 * (c - 0.5)).rem_euclid(ranges as f64) as u64
                });
                Choice::Normal(Gauss::new(ranges, d), off)
            }
        };
        FileChooser {
            choice,
            n,
            nr: job.blocks.file_service_nr,
            left: 0,
            current: 0,
            next_rr: 0,
            started: false,
            rng,
        }
    }

    /// The file of the next I/O, and whether it was newly chosen. `done(f)`: file f has
    /// finished its pass (asked only by sequential service, for the current file).
    #[inline]
    pub(crate) fn next(&mut self, done: impl FnOnce(usize) -> bool) -> (usize, bool) {
        if self.started {
            let stay = match self.choice {
                Choice::Sequential => !done(self.current),
                _ => {
                    let stay = self.left > 0;
                    self.left = self.left.saturating_sub(1);
                    stay
                }
            };
            if stay {
                return (self.current, false);
            }
        }
        self.started = true;
        let ranges = (self.n as u64) << SHIFT;
        let f = match &self.choice {
            Choice::RoundRobin | Choice::Sequential => {
                let f = self.next_rr;
                self.next_rr = if f + 1 == self.n { 0 } else { f + 1 };
                f
            }
            Choice::Random => self.rng.below(self.n as u64) as usize,
            Choice::Zipf(z, off) => (((z.rank(&mut self.rng) + off) % ranges) >> SHIFT) as usize,
            Choice::Pareto(p, off) => (((p.rank(&mut self.rng) + off) % ranges) >> SHIFT) as usize,
            Choice::Normal(g, off) => (((g.rank(&mut self.rng) + off) % ranges) >> SHIFT) as usize,
        };
        self.current = f.min(self.n - 1);
        self.left = self.nr.saturating_sub(1);
        (self.current, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chooser(fs: FileService, nr: u32, n: usize) -> FileChooser {
        let mut j = JobSpec::default();
        j.blocks.file_service = fs;
        j.blocks.file_service_nr = nr;
        FileChooser::new(&j, n, 7)
    }

    #[test]
    fn roundrobin_and_random_switch_every_n_ios() {
        let mut c = chooser(FileService::RoundRobin, 1, 3);
        let v: Vec<usize> = (0..6).map(|_| c.next(|_| false).0).collect();
        assert_eq!(v, vec![0, 1, 2, 0, 1, 2]);
        let mut c = chooser(FileService::RoundRobin, 2, 3);
        let v: Vec<usize> = (0..6).map(|_| c.next(|_| false).0).collect();
        assert_eq!(v, vec![0, 0, 1, 1, 2, 2]);
        let mut c = chooser(FileService::Random, 8, 4);
        let v: Vec<usize> = (0..8000).map(|_| c.next(|_| false).0).collect();
        assert!(v.chunks(8).all(|w| w.iter().all(|&f| f == w[0])));
        let mut hits = [0u32; 4];
        v.iter().for_each(|&f| hits[f] += 1);
        assert!(hits.iter().all(|&h| (1600..2400).contains(&h)), "{hits:?}");
    }

    #[test]
    fn sequential_stays_until_the_file_is_done() {
        let mut c = chooser(FileService::Sequential, 1, 3);
        let mut k = 0;
        // Each file is done after 3 I/Os.
        let v: Vec<usize> = (0..9)
            .map(|_| {
                let (f, _) = c.next(|_| k % 3 == 0);
                k += 1;
                f
            })
            .collect();
        assert_eq!(v, vec![0, 0, 0, 1, 1, 1, 2, 2, 2]);
    }

    #[test]
    fn skewed_choices_favour_few_files() {
        let n = 10;
        for fs in [
            FileService::Zipf(1.2),
            FileService::Pareto(0.2),
            FileService::Normal(0.0),
        ] {
            let mut c = chooser(fs, 1, n);
            let mut hits = vec![0u32; n];
            for _ in 0..20_000 {
                hits[c.next(|_| false).0] += 1;
            }
            hits.sort_unstable_by(|a, b| b.cmp(a));
            let top2 = (hits[0] + hits[1]) as f64 / 20_000.0;
            // Uniform would give 20 %.
            assert!(top2 > 0.4, "{fs:?}: {hits:?}");
        }
    }
}
