//! fio's disk util window: a device's counters added up over the periods when a phase's threads
//! run, so that layout, cleanup and the time between phases are never in `util` (the rule and
//! its sources are in `disk.rs`'s documentation).

use super::disk::{DiskError, DiskSnapshot, DiskStat, DiskTarget};
use super::summary::DiskReport;

/// Counters of a target accumulated over one or more periods (fio's disk util window; see the
/// module docs), and the time those periods lasted.
#[derive(Debug, Clone)]
pub(crate) struct DiskWindow {
    pub target: DiskTarget,
    open: Option<DiskSnapshot>,
    stat: DiskStat,
    slaves: Vec<DiskStat>,
    elapsed_ms: f64,
    periods: u32,
}

impl DiskWindow {
    pub(crate) fn new(target: DiskTarget) -> Self {
        let n = target.slaves.len();
        DiskWindow {
            target,
            open: None,
            stat: DiskStat::default(),
            slaves: vec![DiskStat::default(); n],
            elapsed_ms: 0.0,
            periods: 0,
        }
    }

    /// Start a period now (does nothing if one is already open).
    pub(crate) fn open(&mut self) -> Result<(), DiskError> {
        if self.open.is_none() {
            self.open = Some(self.target.snapshot()?);
        }
        Ok(())
    }

    /// End the open period now and add its deltas (does nothing if none is open).
    pub(crate) fn close(&mut self) -> Result<(), DiskError> {
        let Some(start) = self.open.take() else {
            return Ok(());
        };
        let now = self.target.snapshot()?;
        self.elapsed_ms += now.at.saturating_duration_since(start.at).as_secs_f64() * 1000.0;
        self.stat = self.stat.plus(&now.stat.delta(&start.stat));
        for (acc, (n, s)) in self
            .slaves
            .iter_mut()
            .zip(now.slaves.iter().zip(start.slaves.iter()))
        {
            *acc = acc.plus(&n.delta(s));
        }
        self.periods += 1;
        Ok(())
    }

    /// Total length of the closed periods.
    #[cfg(test)]
    fn elapsed_ms(&self) -> f64 {
        self.elapsed_ms
    }

    /// fio's report over the periods so far; `None` before the first complete period.
    pub(crate) fn report(&self) -> Option<DiskReport> {
        if self.periods == 0 {
            return None;
        }
        let mut r = self.stat.to_report(&self.target.name, self.elapsed_ms);
        r.slaves = self
            .target
            .slaves
            .iter()
            .zip(&self.slaves)
            .map(|(name, s)| s.to_report(name, self.elapsed_ms))
            .collect();
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::super::disk::{resolve, SYS_CLASS_BLOCK};
    use super::*;
    use std::fs;
    use std::io::Write;
    use std::path::Path;
    use std::time::Instant;

    /// This machine: ext4 on /dev/vda, so a temp dir under /tmp resolves to a real disk whose
    /// counters move when we write and fsync.
    #[test]
    fn tmp_resolves_to_a_disk_and_counts_writes() {
        let dir = match tempfile::tempdir_in(std::env::temp_dir()) {
            Ok(d) => d,
            Err(e) => panic!("tempdir: {e}"),
        };
        let Some(t) = resolve(dir.path()).expect("resolve") else {
            eprintln!(
                "skipping: {} has no block device here",
                dir.path().display()
            );
            return;
        };
        assert!(Path::new(SYS_CLASS_BLOCK)
            .join(&t.name)
            .join("stat")
            .exists());
        assert!(!Path::new(SYS_CLASS_BLOCK)
            .join(&t.name)
            .join("partition")
            .exists());
        let mut w = DiskWindow::new(t.clone());
        assert!(w.report().is_none(), "no period yet");
        let write_and_sync = |name: &str| {
            let mut f = fs::File::create(dir.path().join(name)).expect("create");
            f.write_all(&vec![7u8; 1 << 20]).expect("write");
            f.sync_all().expect("fsync");
        };
        let t0 = Instant::now();
        w.open().expect("open");
        write_and_sync("x");
        w.close().expect("close");
        let first = w.elapsed_ms();
        // Between periods (fio's layout and cleanup): neither the time nor the I/O counts.
        std::thread::sleep(std::time::Duration::from_millis(300));
        write_and_sync("y");
        w.open().expect("open");
        write_and_sync("z");
        w.close().expect("close");
        w.close().expect("closing twice is harmless");
        let wall = t0.elapsed().as_secs_f64() * 1000.0;
        let total = w.elapsed_ms();
        assert!(
            total > first && total < wall - 300.0,
            "{first} {total} {wall}"
        );
        let r = w.report().expect("report");
        assert_eq!(r.name, t.name);
        assert!(r.write_ios >= 2, "{r:?}");
        assert!((0.0..=100.0).contains(&r.util_pct));
    }
}
