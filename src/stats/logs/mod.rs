//! fio's logs for plotting, written as the job runs: `NAME_bw`, `NAME_iops`, `NAME_lat`,
//! `NAME_clat`, `NAME_slat` and `NAME_clat_hist` (fio 3.33's names, columns and averaging; see
//! `LogSpec`).
//!
//! Columns, one entry a line: `time (ms since measurement start), value, direction (0 read,
//! 1 write), block size[, offset], priority`; histogram lines are `time, direction, block size`
//! then fio's 1856 latency bins (merged 2^coarseness at a time), each the count since the
//! previous line of that direction.
//!
//! **Differs from fio on purpose:** fio keeps every entry in memory and writes the files when
//! the job ends; iogauge streams them through one fixed buffer per file (`BUF` bytes, flushed
//! when full), so memory stays bounded however long the job runs, and a file is complete up to
//! the last flush if the run is killed. Per I/O the worker formats one line into a stack
//! buffer: no allocation. With `per_job_logs=0` every instance appends whole lines to one file
//! (O_APPEND), so instances' lines interleave in blocks where fio writes one job after another.
//! Averaged bandwidth and IOPS entries are computed by the worker at its first completion past
//! each `log_avg_msec` boundary (fio's helper thread samples on a timer), so a stall longer
//! than the window gives one entry over the whole stall.
//!
//! With `log_store_compressed` the files are fio's `.log.fz` (zlib streams of fio's binary
//! samples, `packed`), compressed a chunk at a time at the file's flush point, on the job's
//! thread: never per I/O. `log_compression` chunks them; it changes nothing else, since the
//! text logs are streamed and no log is held in memory to compress.
//!
//! `names` says which files a job writes, `file` writes one of them (buffer, entries, averaging
//! windows), `hist` is the clat histogram log, `packed` fio's compressed format (and
//! `--inflate-log`); this file holds every log of one job instance.

mod file;
mod hist;
mod names;
mod packed;

use file::{Format, LogFile, Pack, Window};
use hist::{HistLog, PLAT_NR};
use names::plan;
pub(crate) use packed::inflate;

/// Averaged bandwidth/IOPS: the counters at the previous sample.
struct Rates {
    avg_ns: u64,
    next: u64,
    last_t: u64,
    bytes: [u64; DIRS],
    ios: [u64; DIRS],
    at_last: [(u64, u64); DIRS],
}

/// Every log file of one job instance.
pub(crate) struct JobLogs {
    fmt: Format,
    /// Queueing engine: submission latencies exist (the slat log stays empty otherwise, as fio's).
    queued: bool,
    epoch: u64,
    lat: Option<LogFile>,
    slat: Option<LogFile>,
    clat: Option<LogFile>,
    hist: Option<HistLog>,
    bw: Option<LogFile>,
    iops: Option<LogFile>,
    /// Averaged bw/iops state (log_avg_msec > 0).
    rates: Option<Rates>,
    /// The job's ioprio value (prio/prioclass; 0 when unset), the per-I/O priority column.
    prio: u64,
    /// fio's bw (0) and iops (1) statistics taken per I/O (see `LogSpec::per_io_stats`), per
    /// direction.
    per_io: [bool; 2],
    stats: PerIoStats,
    /// Files fio creates that get no entry: every file under stats=0, the histogram log under
    /// disable_clat, a per-I/O bandwidth log under disable_bw_measurement.
    idle: Vec<LogFile>,
    /// log_unix_epoch / log_alternate_epoch: the clock of the time column's epoch.
    epoch_clock: Option<i32>,
}

/// The directions a log tells apart: read, write and trim (fio's ddir 0, 1, 2).
pub(crate) const DIRS: usize = 3;

/// Per-I/O bandwidth (KiB/s, fio's bytes·10^6/clat) and IOPS (1 per I/O) statistics, [bw, iops]
/// by direction: what fio's JSON bw/iops fields hold when a per-I/O log is written.
pub(crate) type PerIoStats = [[super::periodic::SampleStats; DIRS]; 2];

impl JobLogs {
    /// Creates the job's log files (None when it writes no log). A file that cannot be created
    /// is an error before any I/O.
    pub(crate) fn open(
        job: &crate::model::JobSpec,
        thread_number: u32,
    ) -> Result<Option<JobLogs>, String> {
        let l = &job.logs;
        if !l.any() {
            return Ok(None);
        }
        let mut logs = JobLogs {
            fmt: Format {
                time_ms: 0,
                offset: l.offset,
                prio: l.prio,
                avg_ms: l.avg_msec,
                max_value: l.max_value,
            },
            queued: job.ioengine.is_async(),
            epoch: 0,
            lat: None,
            slat: None,
            clat: None,
            hist: None,
            bw: None,
            iops: None,
            rates: None,
            prio: job.ioprio.value().map_or(0, u64::from),
            per_io: l.per_io_stats,
            stats: Default::default(),
            idle: Vec::new(),
            epoch_clock: l.epoch_clock(),
        };
        let r = job.reporting.record;
        let pack = Pack {
            chunk_bytes: l.compression,
            entries: l.entries,
        };
        for (kind, path) in plan(job, thread_number).files {
            let inline = matches!(kind, "lat" | "slat" | "clat");
            let pack = names::packed(job, kind).then_some((pack, logs.fmt));
            let f = LogFile::open(path, l.per_job_logs, inline, pack).map_err(|e| e.to_string())?;
            let idle = !r.stats
                || (kind == "clat_hist" && !r.clat)
                || (kind == "bw" && !r.bw && l.avg_msec == 0);
            if idle {
                logs.idle.push(f);
                continue;
            }
            match kind {
                "lat" => logs.lat = Some(f),
                "slat" => logs.slat = Some(f),
                "clat" => logs.clat = Some(f),
                "bw" => logs.bw = Some(f),
                "iops" => logs.iops = Some(f),
                _ => {
                    logs.hist = Some(HistLog {
                        file: f,
                        msec: l.hist_msec,
                        stride: 1 << l.hist_coarseness,
                        cum: Box::new([[0; PLAT_NR]; DIRS]),
                        prev: Box::new([[0; PLAT_NR]; DIRS]),
                        last: [0; DIRS],
                        text: Vec::with_capacity(PLAT_NR * 4 + 64),
                        time_ms: 0,
                    })
                }
            }
        }
        if l.avg_msec > 0 && (logs.bw.is_some() || logs.iops.is_some()) {
            logs.rates = Some(Rates {
                avg_ns: l.avg_msec * 1_000_000,
                next: 0,
                last_t: 0,
                bytes: [0; DIRS],
                ios: [0; DIRS],
                at_last: [(0, 0); DIRS],
            });
        }
        Ok(Some(logs))
    }

    /// The priority of the next logged I/O (cmdprio: it varies per I/O).
    #[inline]
    pub(crate) fn set_io_prio(&mut self, prio: u16) {
        self.prio = u64::from(prio);
    }

    /// Measurement (re)starts at `epoch` (ns): times are ms from here, windows start empty.
    #[cold]
    fn start(&mut self, epoch: u64, now: u64) {
        self.epoch = epoch;
        if let Some(id) = self.epoch_clock {
            let t = super::log_time::offset_ms(id, now.saturating_sub(epoch));
            self.fmt.time_ms = t;
            if let Some(h) = self.hist.as_mut() {
                h.time_ms = t;
            }
        }
        for f in [
            &mut self.lat,
            &mut self.slat,
            &mut self.clat,
            &mut self.bw,
            &mut self.iops,
        ]
        .into_iter()
        .flatten()
        {
            f.win = [Window::default(); DIRS];
            f.last = [0; DIRS];
        }
        if let Some(r) = self.rates.as_mut() {
            r.next = epoch + r.avg_ns;
            r.last_t = epoch;
            r.bytes = [0; DIRS];
            r.ios = [0; DIRS];
            r.at_last = [(0, 0); DIRS];
        }
    }

    /// One completed I/O of the measured period (`epoch`: its start): `dir` 0 read or 1 write,
    /// prepared at `t_prep`, handed to the kernel at `t_sub`, completed at `t_done` (ns);
    /// `len` asked, `done` transferred, at `offset`. `queued`: slat exists (queueing engines).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_io(
        &mut self,
        epoch: u64,
        dir: usize,
        t_prep: u64,
        t_sub: u64,
        t_done: u64,
        len: u64,
        done: u64,
        offset: u64,
    ) {
        if epoch != self.epoch {
            self.start(epoch, t_done);
        }
        let f = self.fmt;
        let ms = t_done.saturating_sub(epoch) / 1_000_000;
        let clat = t_done.saturating_sub(t_sub);
        let prio = self.prio;
        if let Some(l) = self.lat.as_mut() {
            l.sample(
                f,
                ms,
                t_done.saturating_sub(t_prep),
                dir,
                done,
                offset,
                prio,
            );
        }
        if self.queued {
            if let Some(l) = self.slat.as_mut() {
                let sms = t_sub.saturating_sub(epoch) / 1_000_000;
                l.sample(f, sms, t_sub - t_prep, dir, len, offset, prio);
            }
        }
        if let Some(l) = self.clat.as_mut() {
            l.sample(f, ms, clat, dir, done, offset, prio);
        }
        if let Some(h) = self.hist.as_mut() {
            h.record(ms, dir, clat, done);
        }
        match self.rates.as_mut() {
            None => {
                if let Some(l) = self.bw.as_mut() {
                    // fio's add_bw_sample: bytes·10^6 / completion latency in ns.
                    let rate = (done * 1_000_000).checked_div(clat).unwrap_or(0);
                    l.sample(f, ms, rate, dir, done, offset, prio);
                    if self.per_io[0] {
                        self.stats[0][dir].add(rate as f64);
                    }
                }
                if let Some(l) = self.iops.as_mut() {
                    l.sample(f, ms, 1, dir, done, offset, prio);
                    if self.per_io[1] {
                        self.stats[1][dir].add(1.0);
                    }
                }
            }
            Some(r) => {
                r.bytes[dir] += done;
                r.ios[dir] += 1;
                if t_done >= r.next {
                    self.rate_entries(t_done);
                }
            }
        }
    }

    /// fio's __add_samples: bandwidth (KiB/s) and IOPS of each direction since the last sample,
    /// through the averaging window (whose entries carry no block size, as fio's).
    #[cold]
    fn rate_entries(&mut self, t: u64) {
        let f = self.fmt;
        let Some(r) = self.rates.as_mut() else {
            return;
        };
        let spent = (t - r.last_t) / 1_000_000;
        let ms = (t - self.epoch) / 1_000_000;
        for d in 0..DIRS {
            let (b0, i0) = r.at_last[d];
            let (db, di) = (r.bytes[d] - b0, r.ios[d] - i0);
            if db == 0 {
                continue;
            }
            let bw = (db * 1000).checked_div(spent).unwrap_or(0) / 1024;
            let iops = (di * 1000).checked_div(spent).unwrap_or(0);
            if let Some(l) = self.bw.as_mut() {
                l.sample(f, ms, bw, d, 0, 0, 0);
            }
            if let Some(l) = self.iops.as_mut() {
                l.sample(f, ms, iops, d, 0, 0, 0);
            }
            r.at_last[d] = (r.bytes[d], r.ios[d]);
        }
        r.last_t = t;
        while r.next <= t {
            r.next += r.avg_ns;
        }
    }

    /// The job ended at `end` (ns): close the averaging windows (fio's finalize_logs) and
    /// flush every file. Errors name the file that is incomplete. Returns the per-I/O bw/iops
    /// statistics when fio's JSON takes them from the logs.
    pub(crate) fn finish(mut self, end: u64) -> (Option<PerIoStats>, Result<(), String>) {
        let stats = (self.per_io[0] || self.per_io[1]).then_some(self.stats);
        let f = self.fmt;
        if f.avg_ms > 0 && self.epoch != 0 {
            let ms = end.saturating_sub(self.epoch) / 1_000_000;
            for l in [
                &mut self.lat,
                &mut self.slat,
                &mut self.clat,
                &mut self.bw,
                &mut self.iops,
            ]
            .into_iter()
            .flatten()
            {
                for d in 0..DIRS {
                    l.close_window(f, d, ms);
                }
            }
        }
        let mut errors = Vec::new();
        let files = [self.lat, self.slat, self.clat, self.bw, self.iops]
            .into_iter()
            .flatten()
            .chain(self.hist.map(|h| h.file))
            .chain(self.idle);
        for l in files {
            if let Err(e) = l.finish() {
                errors.push(e);
            }
        }
        let done = if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        };
        (stats, done)
    }
}
