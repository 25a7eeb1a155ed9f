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

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

/// Bytes buffered per log file before a write.
const BUF: usize = 128 << 10;
/// fio's io_u_plat layout: 64 bins per power of two, 29 groups.
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Number of fio latency histogram bins.
pub(crate) const PLAT_NR: usize = 29 * PLAT_VAL as usize;
/// fio's LOG_MSEC_SLACK: a non-latency window this close to its end is closed early.
const MSEC_SLACK: u64 = 1;

/// fio's plat_val_to_idx: the histogram bin of a latency in ns.
#[inline]
pub(crate) fn plat_idx(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= PLAT_BITS {
        return v as usize;
    }
    let err = msb - PLAT_BITS;
    let base = ((err + 1) as u64) << PLAT_BITS;
    let off = (PLAT_VAL - 1) & (v >> err);
    ((base + off) as usize).min(PLAT_NR - 1)
}

/// What a job's logs are, resolved from its spec: prefixes, settings.
#[derive(Debug, Clone)]
pub(crate) struct LogPlan {
    /// (kind, path) of every file, kinds as in fio's names (`bw`, `lat`, ...).
    pub files: Vec<(&'static str, PathBuf)>,
}

/// fio's file name of one log: `PREFIX_KIND.N.log` (N = the instance's thread number, from 1,
/// over every job of the run) or `PREFIX_KIND.log` without per_job_logs.
pub(crate) fn log_path(prefix: &str, kind: &str, thread_number: u32, per_job: bool) -> PathBuf {
    if per_job {
        PathBuf::from(format!("{prefix}_{kind}.{thread_number}.log"))
    } else {
        PathBuf::from(format!("{prefix}_{kind}.log"))
    }
}

/// The log files one job instance writes, in fio's order.
pub(crate) fn plan(job: &crate::model::JobSpec, thread_number: u32) -> LogPlan {
    let l = &job.logs;
    let pre = |p: &Option<String>| {
        p.as_ref().map(|s| {
            if s.is_empty() {
                job.name.clone()
            } else {
                s.clone()
            }
        })
    };
    let mut files = Vec::new();
    let path = |p: &str, k: &str| log_path(p, k, thread_number, l.per_job_logs);
    if let Some(p) = pre(&l.lat) {
        // fio: no latency logs when latencies are not measured (gtod_reduce), and none of a
        // latency switched off (disable_lat/slat/clat).
        let r = job.reporting.record;
        if !job.gtod_reduce {
            for (k, on) in [("lat", r.lat), ("slat", r.slat), ("clat", r.clat)] {
                if on {
                    files.push((k, path(&p, k)));
                }
            }
        }
    }
    if let Some(p) = pre(&l.hist) {
        files.push(("clat_hist", path(&p, "clat_hist")));
    }
    if let Some(p) = pre(&l.bw) {
        files.push(("bw", path(&p, "bw")));
    }
    if let Some(p) = pre(&l.iops) {
        files.push(("iops", path(&p, "iops")));
    }
    LogPlan { files }
}

/// fio's running mean/max of one averaging window.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    samples: u64,
    mean: f64,
    max: u64,
}

impl Window {
    fn add(&mut self, v: u64) {
        self.samples += 1;
        self.mean += (v as f64 - self.mean) / self.samples as f64;
        self.max = self.max.max(v);
    }
}

/// One log file and its averaging windows per direction.
struct LogFile {
    out: Option<BufWriter<File>>,
    path: PathBuf,
    error: Option<String>,
    win: [Window; 2],
    last: [u64; 2],
    /// Latency logs close a window exactly at its end; bw/iops allow fio's slack.
    inline: bool,
}

/// Formats unsigned integers into a line on the stack.
struct Line {
    buf: [u8; 160],
    len: usize,
}

impl Line {
    fn new() -> Self {
        Line {
            buf: [0; 160],
            len: 0,
        }
    }

    #[inline]
    fn num(&mut self, mut v: u64) -> &mut Self {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let n = tmp.len() - i;
        self.buf[self.len..self.len + n].copy_from_slice(&tmp[i..]);
        self.len += n;
        self
    }

    #[inline]
    fn sep(&mut self) -> &mut Self {
        self.buf[self.len..self.len + 2].copy_from_slice(b", ");
        self.len += 2;
        self
    }

    fn hex4(&mut self, v: u64) -> &mut Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.buf[self.len..self.len + 2].copy_from_slice(b"0x");
        self.len += 2;
        for shift in [12, 8, 4, 0] {
            self.buf[self.len] = HEX[((v >> shift) & 0xf) as usize];
            self.len += 1;
        }
        self
    }
}

/// How entries are formatted, shared by every file of a job.
#[derive(Debug, Clone, Copy)]
struct Format {
    /// Added to each entry's time (log_unix_epoch / log_alternate_epoch), set at the epoch.
    time_ms: u64,
    offset: bool,
    prio: bool,
    avg_ms: u64,
    max_value: bool,
}

impl LogFile {
    fn open(path: PathBuf, per_job: bool, inline: bool) -> io::Result<Self> {
        let mut o = OpenOptions::new();
        // fio: "w" for per-job files, "a" when every instance shares one file.
        if per_job {
            o.write(true).create(true).truncate(true);
        } else {
            o.append(true).create(true);
        }
        let f = o.open(&path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create log file '{}': {e}", path.display()),
            )
        })?;
        Ok(LogFile {
            out: Some(BufWriter::with_capacity(BUF, f)),
            path,
            error: None,
            win: [Window::default(); 2],
            last: [0; 2],
            inline,
        })
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.write_all(bytes) {
                self.fail(e);
            }
        }
    }

    #[cold]
    fn fail(&mut self, e: io::Error) {
        self.error = Some(format!(
            "log file '{}' is incomplete: {e}",
            self.path.display()
        ));
        self.out = None;
    }

    /// One entry: `time, value, dir, bs[, offset], prio`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn entry(&mut self, f: Format, ms: u64, val: u64, dir: usize, bs: u64, off: u64, prio: u64) {
        let mut l = Line::new();
        l.num(ms + f.time_ms)
            .sep()
            .num(val)
            .sep()
            .num(dir as u64)
            .sep()
            .num(bs)
            .sep();
        if f.offset {
            l.num(off).sep();
        }
        if f.prio {
            l.hex4(prio);
        } else {
            // fio prints 1 for the real-time class (3), 0 otherwise.
            l.num(u64::from(prio >> 13 == 1));
        }
        l.buf[l.len] = b'\n';
        l.len += 1;
        let n = l.len;
        self.write(&l.buf[..n]);
    }

    /// fio's add_log_sample: one entry per sample, or averaged over `avg_ms` windows.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn sample(&mut self, f: Format, ms: u64, val: u64, dir: usize, bs: u64, off: u64, prio: u64) {
        if f.avg_ms == 0 {
            self.entry(f, ms, val, dir, bs, off, prio);
            return;
        }
        self.win[dir].add(val);
        if ms < self.last[dir] {
            return;
        }
        let this = ms - self.last[dir];
        if this < f.avg_ms && (self.inline || f.avg_ms - this > MSEC_SLACK) {
            return;
        }
        self.close_window(f, dir, ms);
        self.last[dir] = ms - ms % f.avg_ms;
    }

    /// fio's __add_stat_to_log: the window's mean (rounded) or maximum, if it has samples.
    fn close_window(&mut self, f: Format, dir: usize, ms: u64) {
        let w = self.win[dir];
        if w.samples > 0 {
            let v = if f.max_value {
                w.max
            } else {
                (w.mean + 0.5) as u64
            };
            self.entry(f, ms, v, dir, 0, 0, 0);
        }
        self.win[dir] = Window::default();
    }

    fn finish(mut self) -> Result<(), String> {
        if let Some(mut out) = self.out.take() {
            if let Err(e) = out.flush() {
                self.fail(e);
            }
        }
        self.error.map_or(Ok(()), Err)
    }
}

/// The clat histogram log: fio's bins, cumulative per direction, and the counts at the last
/// line.
struct HistLog {
    file: LogFile,
    msec: u64,
    stride: usize,
    cum: Box<[[u64; PLAT_NR]; 2]>,
    prev: Box<[[u64; PLAT_NR]; 2]>,
    last: [u64; 2],
    text: Vec<u8>,
    /// As `Format::time_ms`.
    time_ms: u64,
}

impl HistLog {
    #[inline]
    fn record(&mut self, ms: u64, dir: usize, clat: u64, bs: u64) {
        self.cum[dir][plat_idx(clat)] += 1;
        if self.msec == 0 {
            return;
        }
        if self.last[dir] == 0 {
            self.last[dir] = ms;
        }
        let this = ms - self.last[dir].min(ms);
        if this >= self.msec {
            self.line(ms, dir, bs);
            self.last[dir] = ms - (this - self.msec);
        }
    }

    #[cold]
    fn line(&mut self, ms: u64, dir: usize, bs: u64) {
        let t = &mut self.text;
        t.clear();
        let _ = write!(t, "{}, {dir}, {bs}, ", ms + self.time_ms);
        let (cum, prev) = (&self.cum[dir], &mut self.prev[dir]);
        let mut j = 0;
        while j < PLAT_NR {
            let s: u64 = (j..j + self.stride).map(|k| cum[k] - prev[k]).sum();
            let last = j + self.stride >= PLAT_NR;
            let _ = write!(t, "{s}{}", if last { "\n" } else { ", " });
            j += self.stride;
        }
        prev.copy_from_slice(cum);
        let text = std::mem::take(&mut self.text);
        self.file.write(&text);
        self.text = text;
    }
}

/// Averaged bandwidth/IOPS: the counters at the previous sample.
struct Rates {
    avg_ns: u64,
    next: u64,
    last_t: u64,
    bytes: [u64; 2],
    ios: [u64; 2],
    at_last: [(u64, u64); 2],
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

/// Per-I/O bandwidth (KiB/s, fio's bytes·10^6/clat) and IOPS (1 per I/O) statistics, [bw, iops]
/// by direction: what fio's JSON bw/iops fields hold when a per-I/O log is written.
pub(crate) type PerIoStats = [[super::periodic::SampleStats; 2]; 2];

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
        for (kind, path) in plan(job, thread_number).files {
            let inline = matches!(kind, "lat" | "slat" | "clat");
            let f = LogFile::open(path, l.per_job_logs, inline).map_err(|e| e.to_string())?;
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
                        cum: Box::new([[0; PLAT_NR]; 2]),
                        prev: Box::new([[0; PLAT_NR]; 2]),
                        last: [0; 2],
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
                bytes: [0; 2],
                ios: [0; 2],
                at_last: [(0, 0); 2],
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
            f.win = [Window::default(); 2];
            f.last = [0; 2];
        }
        if let Some(r) = self.rates.as_mut() {
            r.next = epoch + r.avg_ns;
            r.last_t = epoch;
            r.bytes = [0; 2];
            r.ios = [0; 2];
            r.at_last = [(0, 0); 2];
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
        for d in 0..2 {
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
                for d in 0..2 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plat_index_matches_fio() {
        // Exact below 128 ns, then 64 bins per power of two.
        assert_eq!(plat_idx(0), 0);
        assert_eq!(plat_idx(127), 127);
        assert_eq!(plat_idx(128), 128);
        assert_eq!(plat_idx(129), 128);
        assert_eq!(plat_idx(256), 192);
        assert_eq!(plat_idx(u64::MAX), PLAT_NR - 1);
    }

    fn averaged(max_value: bool) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x_lat.1.log");
        let f = Format {
            time_ms: 0,
            offset: false,
            prio: false,
            avg_ms: 100,
            max_value,
        };
        let mut l = LogFile::open(path.clone(), true, true).unwrap();
        // Window 1 (ms 10..99): 10 and 21 ns; at 100 ms it closes with the sample taken then.
        for (ms, v) in [(10, 10), (50, 21), (100, 30), (150, 7), (199, 8)] {
            l.sample(f, ms, v, 0, 4096, 0, 0);
        }
        // A write: its direction's window began at 0, so at 120 ms it closes at once (fio's).
        l.sample(f, 120, 1000, 1, 4096, 0, 0);
        for d in 0..2 {
            l.close_window(f, d, 230);
        }
        l.finish().unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn averaging_windows_follow_fio() {
        // Mean of 10, 21, 30 = 20.33 → 20 (rounded half up), closed at 100 ms with no block
        // size; the write's at 120 ms; then 7 and 8 → 7.5 → 8, closed by finish at 230 ms.
        assert_eq!(
            averaged(false),
            "100, 20, 0, 0, 0\n120, 1000, 1, 0, 0\n230, 8, 0, 0, 0\n"
        );
        // log_max_value: the window's maximum instead.
        assert_eq!(
            averaged(true),
            "100, 30, 0, 0, 0\n120, 1000, 1, 0, 0\n230, 8, 0, 0, 0\n"
        );
    }

    #[test]
    fn entry_columns_with_offset_and_prio() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x_clat.1.log");
        let mut l = LogFile::open(path.clone(), true, true).unwrap();
        let plain = Format {
            time_ms: 0,
            offset: false,
            prio: false,
            avg_ms: 0,
            max_value: false,
        };
        let full = Format {
            time_ms: 0,
            offset: true,
            prio: true,
            ..plain
        };
        l.sample(plain, 3, 12345, 1, 4096, 8192, 0x2001);
        l.sample(full, 4, 7, 0, 512, 8192, 0x6004);
        l.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            "3, 12345, 1, 4096, 1\n4, 7, 0, 512, 8192, 0x6004\n"
        );
    }

    #[test]
    fn names_follow_fio() {
        assert_eq!(log_path("j", "bw", 2, true), PathBuf::from("j_bw.2.log"));
        assert_eq!(
            log_path("out/x", "clat_hist", 1, false),
            PathBuf::from("out/x_clat_hist.log")
        );
    }
}
