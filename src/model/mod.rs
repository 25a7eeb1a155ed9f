//! The job model. Every translator (fio command line, fio job files, troubleshoot YAML,
//! built-in profiles) produces these types; nothing below `run/` knows where a job came from.

pub(crate) mod blocks;
pub mod buffers;
mod check;
mod check_engine;
pub(crate) mod engines;
pub mod files;
pub mod host;
pub mod io;
pub(crate) mod latency;
pub(crate) mod lenient;
pub(crate) mod logs;
pub mod numa;
pub(crate) mod prio;
pub(crate) mod quantity;
pub(crate) mod reporting;
pub mod sequential;
pub mod timing;
pub(crate) mod units;
pub mod verify;

pub use logs::LogSpec;
pub use prio::{CmdPrioSplit, IoPrioSpec};
pub use reporting::{Measured, RecordSpec, ReportingSpec, UnifiedRw};

pub use blocks::{BlocksSpec, BsSplit, FileService, RandomGenerator, Strided, Zone};

pub use engines::{CpuMode, EngineSpec, StatType};

use std::path::PathBuf;
use std::time::Duration;

/// Index of the read direction in per-direction arrays (read, write, trim: fio's order).
pub const DDIR_READ: usize = 0;
/// Index of the write direction in per-direction arrays.
pub const DDIR_WRITE: usize = 1;
/// Index of the trim direction in per-direction arrays.
pub const DDIR_TRIM: usize = 2;

/// What the job does: which direction(s) and whether offsets are sequential or random.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwKind {
    /// Reads only.
    Read,
    /// Writes only.
    Write,
    /// Mixed reads and writes (fio `rw`/`readwrite`/`randrw`), split by `rwmixread`.
    ReadWrite,
    /// Trims only (fio `trim`/`randtrim`).
    Trim,
    /// Each block trimmed, then written (fio `trimwrite`/`randtrimwrite`).
    TrimWrite,
}

/// fio's `rw`: which directions and whether offsets are random.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RwMode {
    /// Which directions the job transfers.
    pub kind: RwKind,
    /// Random offsets; sequential when false.
    pub random: bool,
}

impl RwMode {
    /// fio's name for the mode (`randrw`, `write`, ...), as printed in the text header.
    pub(crate) fn fio_name(&self) -> &'static str {
        match (self.kind, self.random) {
            (RwKind::Read, false) => "read",
            (RwKind::Read, true) => "randread",
            (RwKind::Write, false) => "write",
            (RwKind::Write, true) => "randwrite",
            (RwKind::ReadWrite, false) => "rw",
            (RwKind::ReadWrite, true) => "randrw",
            (RwKind::Trim, false) => "trim",
            (RwKind::Trim, true) => "randtrim",
            (RwKind::TrimWrite, false) => "trimwrite",
            (RwKind::TrimWrite, true) => "randtrimwrite",
        }
    }
}

/// How a job issues its I/O (fio `ioengine`). The variants are in the order of
/// [`engines::ENGINES`], the one engine table (names, the help's order), and a compile-time
/// check there holds them to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoEngine {
    /// read/write on a moving file position (lseek when the offset jumps).
    Sync,
    /// pread/pwrite.
    Psync,
    /// readv/writev on the file position (fio `vsync`).
    Vsync,
    /// preadv/pwritev (fio `pvsync`).
    Pvsync,
    /// preadv2/pwritev2 with RWF_ flags (fio `pvsync2`).
    Pvsync2,
    /// memcpy to and from a shared mapping of the file (fio `mmap`).
    Mmap,
    /// No I/O at all: measures the tool's own overhead.
    Null,
    /// Linux native AIO (io_submit/io_getevents); asynchronous only with O_DIRECT.
    Libaio,
    /// Linux io_uring: a queue of `iodepth` I/Os in flight.
    IoUring,
    /// POSIX AIO, aio_read/aio_write (fio `posixaio`): a queue of `iodepth` I/Os.
    Posixaio,
    /// Times open(O_CREAT) per file; no data I/O (fio `filecreate`).
    Filecreate,
    /// Times stat per file; no data I/O (fio `filestat`).
    Filestat,
    /// Times unlink per file; no data I/O (fio `filedelete`).
    Filedelete,
    /// Times mkdir per "file", a directory; no data I/O (fio 3.37's `dircreate`).
    Dircreate,
    /// Times stat per directory, made before the job; no data I/O (fio 3.37's `dirstat`).
    Dirstat,
    /// Times rmdir per directory, made before the job; no data I/O (fio 3.37's `dirdelete`).
    Dirdelete,
    /// fallocate per I/O (fio `falloc`).
    Falloc,
    /// ftruncate to each write's offset (fio `ftruncate`).
    Ftruncate,
    /// Burns CPU, no I/O (fio `cpuio`).
    Cpuio,
    /// Runs a program for the job's runtime, no I/O (fio `exec`).
    Exec,
}

impl IoEngine {
    /// fio's name of the engine, from [`engines::ENGINES`].
    pub(crate) fn fio_name(&self) -> &'static str {
        engines::ENGINES[*self as usize].0
    }

    /// Whether the engine keeps several I/Os in flight (and so has submit/complete steps).
    pub(crate) fn is_async(&self) -> bool {
        matches!(
            self,
            IoEngine::IoUring | IoEngine::Libaio | IoEngine::Posixaio
        )
    }
}

/// `sync=` option: open flags for synchronous writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenSync {
    /// No sync flag.
    None,
    /// O_SYNC
    Sync,
    /// O_DSYNC
    Dsync,
}

/// How random offsets spread over a file (fio `random_distribution`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Uniform.
    Random,
    /// zipf:theta
    Zipf(f64),
    /// pareto:h
    Pareto(f64),
    /// normal:dev (a deviation in percent of the region)
    Normal(f64),
    /// zoned: shares of the I/Os per percent of the region (the zones are in `BlocksSpec`)
    Zoned,
    /// zoned_abs: shares of the I/Os per byte range (the zones are in `BlocksSpec`)
    ZonedAbs,
}

/// How files are preallocated before laying out (fio `fallocate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallocate {
    /// No preallocation.
    None,
    /// fallocate(fd, 0, 0, size): unwritten extents, fio's default on Linux.
    Native,
    /// posix_fallocate
    Posix,
    /// fallocate with FALLOC_FL_KEEP_SIZE
    Keep,
    /// ftruncate to the size
    Truncate,
}

/// `fadvise_hint=`: the access pattern announced with posix_fadvise when a file is opened.
/// It decides the kernel's readahead: none for random, a doubled window for sequential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FadviseHint {
    /// `0`: no hint (the kernel's default readahead).
    None,
    /// `1` (fio's default): RANDOM for random jobs, SEQUENTIAL for sequential ones.
    ByPattern,
    /// POSIX_FADV_RANDOM.
    Random,
    /// POSIX_FADV_SEQUENTIAL.
    Sequential,
}

/// A size that may be relative to the file or device (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    /// A byte count.
    Bytes(u64),
    /// Percentage 0 < p <= 100 of the existing file or device size.
    Percent(f64),
}

/// One `[job]` section (or `--name=` on the command line) after globals were applied.
/// `numjobs` copies run from this one spec.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// The job's name (job-file section or `--name`).
    pub name: String,
    /// fio's `description`; empty when unset.
    pub description: String,
    /// Options as the user wrote them for this job only (not inherited globals),
    /// in order, for fio's JSON `job options` object.
    pub options: Vec<(String, String)>,

    // --- reporting group structure
    /// Wait for all earlier jobs to finish before starting; also starts a new group.
    pub stonewall: bool,
    /// Start a new reporting group without waiting.
    pub new_group: bool,
    /// Fold the group's jobs into one report entry (fio `group_reporting`).
    pub group_reporting: bool,
    /// Copies of the job, each a thread with its own files (fio `numjobs`).
    pub numjobs: u32,
    /// Runs only while the other jobs of its phase run (troubleshoot's background IOPS).
    pub background: bool,

    // --- target
    /// `filename`, possibly several separated by ':'. Used as is (fio escapes '\:').
    pub filename: Option<String>,
    /// Directory holding the job's files (fio `directory`).
    pub directory: Option<PathBuf>,
    /// Files per job instance (fio `nrfiles`).
    pub nrfiles: u32,
    /// Total bytes of I/O for the job, split across files (fio `size`).
    pub size: Option<SizeSpec>,
    /// Size of each file (fio `filesize`); default size / nrfiles.
    pub filesize: Option<SizeSpec>,
    /// Where I/O starts in each file: bytes, or percent of the file (fio `offset`).
    pub offset: SizeSpec,
    /// Passes over the workload (fio `loops`).
    pub loops: u32,

    // --- workload
    /// Directions and access pattern (fio `rw`).
    pub rw: RwMode,
    /// Percent of reads in a mixed workload (0..=100).
    pub rwmixread: u32,
    /// Block size per direction (read, write, trim).
    pub bs: [u64; 3],

    // --- engine and sync
    /// How I/O is issued.
    pub ioengine: IoEngine,
    /// I/Os kept in flight by queueing engines (synchronous engines have 1).
    pub iodepth: u32,
    /// I/Os to queue before a submit call (`iodepth_batch_submit`; 0 = iodepth).
    pub iodepth_batch_submit: u32,
    /// Fewest completions a reap call waits for (`iodepth_batch_complete_min`).
    pub iodepth_batch_complete_min: u32,
    /// Most completions one reap call takes (`iodepth_batch_complete_max`; 0 = the minimum, as fio).
    pub iodepth_batch_complete_max: u32,
    /// Once the queue is full, reap down to this many in flight before refilling (0 = iodepth).
    pub iodepth_low: u32,
    /// io_uring: registered buffers, registered files, a kernel submission thread, polled I/O.
    pub fixedbufs: bool,
    /// io_uring: register the job's files with the kernel (fio `registerfiles`).
    pub registerfiles: bool,
    /// io_uring: a kernel thread polls the submission queue (fio `sqthread_poll`).
    pub sqthread_poll: bool,
    /// io_uring: polled completions, IORING_SETUP_IOPOLL (fio `hipri`).
    pub hipri: bool,
    /// Open the files with O_DIRECT, bypassing the page cache.
    pub direct: bool,
    /// O_SYNC or O_DSYNC on open (fio `sync`).
    pub open_sync: OpenSync,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    /// fdatasync after every N writes (0 = never).
    pub fdatasync: u32,
    /// fsync every file when the job ends (fio `end_fsync`).
    pub end_fsync: bool,
    /// fsync each file when it is closed (fio `fsync_on_close`).
    pub fsync_on_close: bool,

    // --- time
    /// Cap on the job's run time (after ramp). None = no cap.
    pub runtime: Option<Duration>,
    /// Keep going until `runtime` has passed, repeating the workload if needed (fio `time_based`).
    pub time_based: bool,
    /// Time run before measuring starts; nothing done meanwhile is counted (fio `ramp_time`).
    pub ramp_time: Duration,
    /// Delay before the job starts (fio `startdelay`).
    pub startdelay: Duration,
    /// Bytes per second per direction (None = unlimited).
    pub rate: [Option<u64>; 3],
    /// I/Os per second per direction (None = unlimited).
    pub rate_iops: [Option<u64>; 3],

    // --- randomness and buffers
    /// Seed the random generators the same way every run (fio `randrepeat`).
    pub randrepeat: bool,
    /// Base seed of the random generators when `randrepeat` is set (fio `randseed`).
    pub randseed: u64,
    /// How random offsets are distributed.
    pub random_distribution: Distribution,
    /// Random offsets may repeat within a pass; without it each block is hit once per pass.
    pub norandommap: bool,
    /// Refill the write buffer with new random data before every write (fio `refill_buffers`).
    pub refill_buffers: bool,
    /// Write zeros instead of random data (fio `zero_buffers`).
    pub zero_buffers: bool,

    // --- files
    /// Drop the files' cached pages when they are opened and, unless direct, at the start of
    /// every later pass over a file's I/O region (fio's `invalidate`).
    pub invalidate: bool,
    /// Page-cache hint given when a file is opened (fio `fadvise_hint`).
    pub fadvise_hint: FadviseHint,
    /// How new files are preallocated.
    pub fallocate: Fallocate,
    /// Lay the files out and do no I/O (fio `create_only`).
    pub create_only: bool,
    /// Remove files iogauge created when the job ends. iogauge's default is true,
    /// unlike fio; an explicit `unlink=0` keeps them.
    pub unlink: bool,

    // --- statistics
    /// Measure no latencies, only counts and bandwidth (fio `gtod_reduce`).
    pub gtod_reduce: bool,
    /// Latency percentiles to report, in percent (0..=100).
    pub percentile_list: Vec<f64>,
    /// Report completion-latency percentiles (fio `clat_percentiles`).
    pub clat_percentiles: bool,
    /// Report total-latency percentiles (fio `lat_percentiles`).
    pub lat_percentiles: bool,
    /// Interval of the periodic bandwidth samples, ms (fio `bwavgtime`).
    pub bwavgtime_ms: u64,
    /// Interval of the periodic IOPS samples, ms (fio `iopsavgtime`).
    pub iopsavgtime_ms: u64,

    /// Data verification (fio's `verify` family).
    pub verify: verify::VerifySpec,
    /// What written buffers hold (fio's buffer options).
    pub buffers: buffers::BufferSpec,
    /// Logs for plotting (fio `write_*_log` and `log_*`).
    pub logs: LogSpec,
    /// Reporting settings (fio `slat_percentiles`, ...).
    pub reporting: ReportingSpec,
    /// Job-wide I/O priority (fio `prio`, `prioclass`).
    pub ioprio: IoPrioSpec,
    /// Rate and timing shapes and run control (thinktime, rate_process, steadystate, exitall…).
    pub timing: timing::TimingSpec,
    /// File handling (filename_format, allow_file_create, pre_read).
    pub files: files::FilesSpec,
    // --- block sizes and offsets
    /// Variable block sizes, offset alignment, distribution parameters (model/blocks.rs).
    pub blocks: BlocksSpec,
    /// Per-engine options of the extra ioengines (pvsync2, filestat, ...).
    pub engines: EngineSpec,
    /// Where and how the job's threads run (CPUs, nice, lockmem, exec_prerun, clocksource).
    pub host: host::HostSpec,
    /// latency_target's queue-depth search and flow control (model/latency.rs).
    pub latency: latency::LatencySpec,
    /// How I/Os are issued beyond the basics (sync_file_range, write_hint, …; model/io.rs).
    pub io: io::IoSpec,
}

/// The block sizes a job is sized by, each with its one rule (fio's td_min_bs / td_max_bs and
/// the unit of a job's transfers), so that layout, limits and buffers never disagree.
impl JobSpec {
    /// The smallest block size over every direction (fio's `td_min_bs`): file regions and
    /// offsets are whole multiples of it.
    pub(crate) fn min_bs(&self) -> u64 {
        (0..3)
            .map(|d| self.bs_range(d).0)
            .filter(|&b| b > 0)
            .min()
            .unwrap_or(4096)
    }

    /// Which latencies the job measures (see [`Measured`]): the one place that combines
    /// gtod_reduce, stats and the disable_* switches.
    pub(crate) fn measured(&self) -> Measured {
        Measured::new(self.gtod_reduce, self.reporting.record)
    }

    /// Whether the I/O loops read the clock around each I/O: not under gtod_reduce or stats=0,
    /// nor when every latency is switched off (decided once, before the loop).
    pub(crate) fn timed(&self) -> bool {
        self.measured().timed
    }

    /// The largest block size over every direction (fio's `td_max_bs`): each I/O buffer holds it.
    pub(crate) fn max_bs(&self) -> u64 {
        (0..3)
            .map(|d| self.bs_range(d).1)
            .max()
            .unwrap_or(4096)
            .max(1)
    }

    /// The block size of the directions the job transfers: how many bytes make one pass.
    pub(crate) fn unit_bs(&self) -> u64 {
        self.transfer_min_bs()
    }

    /// I/Os the job keeps in flight: `iodepth` on a queueing engine or under offload, one
    /// otherwise.
    pub(crate) fn queue_depth(&self) -> u32 {
        // io_submit_mode=offload: iodepth I/Os handed to the submitting threads.
        if self.ioengine.is_async() || self.io.submit_mode == io::SubmitMode::Offload {
            self.iodepth.max(1)
        } else {
            1
        }
    }

    /// Bytes of I/O buffers one instance allocates: a slot per I/O in flight, each `max_bs`
    /// rounded up to a page.
    pub(crate) fn buffer_bytes(&self) -> u64 {
        self.max_bs()
            .div_ceil(4096)
            .saturating_mul(4096)
            .saturating_mul(self.queue_depth() as u64)
    }
}

#[cfg(test)]
impl JobSpec {
    /// A job with fio's defaults and this name (tests).
    pub(crate) fn named(name: &str) -> JobSpec {
        JobSpec {
            name: name.into(),
            ..JobSpec::default()
        }
    }
}

impl Default for JobSpec {
    /// fio 3.33's defaults (the `.def` values in fio's options.c at tag fio-3.33), except `unlink`
    /// (see field).
    fn default() -> Self {
        JobSpec {
            name: String::new(),
            description: String::new(),
            options: Vec::new(),
            stonewall: false,
            new_group: false,
            group_reporting: false,
            numjobs: 1,
            background: false,
            filename: None,
            directory: None,
            nrfiles: 1,
            size: None,
            filesize: None,
            offset: SizeSpec::Bytes(0),
            loops: 1,
            rw: RwMode {
                kind: RwKind::Read,
                random: false,
            },
            rwmixread: 50,
            bs: [4096; 3],
            ioengine: IoEngine::Psync,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 0,
            iodepth_low: 0,
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            hipri: false,
            direct: false,
            open_sync: OpenSync::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            startdelay: Duration::ZERO,
            rate: [None; 3],
            rate_iops: [None; 3],
            randrepeat: true,
            randseed: 0x89,
            random_distribution: Distribution::Random,
            norandommap: false,
            refill_buffers: false,
            zero_buffers: false,
            invalidate: true,
            fadvise_hint: FadviseHint::ByPattern,
            fallocate: Fallocate::Native,
            create_only: false,
            unlink: true,
            gtod_reduce: false,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            clat_percentiles: true,
            lat_percentiles: false,
            bwavgtime_ms: 500,
            iopsavgtime_ms: 500,
            verify: verify::VerifySpec::default(),
            buffers: buffers::BufferSpec::default(),
            logs: LogSpec::default(),
            reporting: ReportingSpec::default(),
            ioprio: IoPrioSpec::default(),
            timing: timing::TimingSpec::default(),
            files: files::FilesSpec::default(),
            blocks: BlocksSpec::default(),
            engines: EngineSpec::default(),
            host: host::HostSpec::default(),
            latency: latency::LatencySpec::default(),
            io: io::IoSpec::default(),
        }
    }
}

pub(crate) const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// One run: the jobs and what the run itself must know (how the output is printed is the
/// caller's business).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunSpec {
    /// The jobs, in job-file order.
    pub jobs: Vec<JobSpec>,
    /// Options given globally (command line before the first --name, and [global] sections),
    /// as written, for fio's JSON `global options` object.
    pub global_options: Vec<(String, String)>,
    /// `--keep-files`: leave the data files in place (iogauge removes them by default).
    pub keep_files: bool,
    /// `--allow-overwrite`: permit writing into existing files iogauge did not create and block devices.
    pub allow_overwrite: bool,
    /// `--readonly`: no job writes, and no file is created or laid out.
    pub readonly: bool,
}
