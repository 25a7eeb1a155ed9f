//! How a job's I/Os are issued beyond the basics (fio's `sync_file_range`, `write_hint`,
//! `write_barrier`, `allrandrepeat`, `error_dump`, `serialize_overlap`, `force_async`,
//! `io_submit_mode`). `Default` is fio 3.33's defaults.

/// `SYNC_FILE_RANGE_WAIT_BEFORE`, `_WRITE`, `_WAIT_AFTER` (linux/fs.h), as fio passes them.
pub const SFR_WAIT_BEFORE: u32 = 1;
/// See [`SFR_WAIT_BEFORE`].
pub const SFR_WRITE: u32 = 2;
/// See [`SFR_WAIT_BEFORE`].
pub const SFR_WAIT_AFTER: u32 = 4;

/// fio's `sync_file_range=FLAGS[:N]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncFileRange {
    /// The flags given to sync_file_range(2) (the `SFR_*` bits).
    pub flags: u32,
    /// One call after every `every` writes (fio's `:N`, 1 when absent; 0 never calls).
    pub every: u32,
}

/// fio's `write_hint`: the lifetime hint given with F_SET_RW_HINT / F_SET_FILE_RW_HINT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteHint {
    /// RWH_WRITE_LIFE_NONE (1).
    None,
    /// RWH_WRITE_LIFE_SHORT (2).
    Short,
    /// RWH_WRITE_LIFE_MEDIUM (3).
    Medium,
    /// RWH_WRITE_LIFE_LONG (4).
    Long,
    /// RWH_WRITE_LIFE_EXTREME (5).
    Extreme,
}

impl WriteHint {
    /// The kernel's value (include/uapi/linux/fcntl.h); `none` is 1, as fio passes it (0 is
    /// "not set").
    pub fn value(self) -> u64 {
        match self {
            WriteHint::None => 1,
            WriteHint::Short => 2,
            WriteHint::Medium => 3,
            WriteHint::Long => 4,
            WriteHint::Extreme => 5,
        }
    }
}

/// fio's `lockfile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockMode {
    /// No lock (fio's default).
    #[default]
    None,
    /// One I/O at a time over all jobs sharing the file.
    Exclusive,
    /// Reads together, each write alone.
    ReadWrite,
}

/// fio's `io_submit_mode`: who submits a job's I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubmitMode {
    /// The job's own thread submits and completes its I/O (fio's default).
    #[default]
    Inline,
    /// The job's thread prepares each I/O and hands it to a pool of `iodepth` submitting
    /// threads, each with its own engine (`run/offload.rs`), so a rate is kept whatever the
    /// device's completion rate; an I/O's latency includes its wait for a submitter.
    Offload,
}

/// The I/O group's settings of one job.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IoSpec {
    /// `sync_file_range`; None: never called.
    pub sync_file_range: Option<SyncFileRange>,
    /// `write_hint`, set on every data file when it is opened; None leaves the files alone.
    pub write_hint: Option<WriteHint>,
    /// `allrandrepeat`: every random generator seeded the same way every run, whatever
    /// `randrepeat` and `randseed` say (fio seeds them all from its fixed base then).
    pub allrandrepeat: bool,
    /// `error_dump`: print each I/O error's details (iogauge always prints the first).
    pub error_dump: bool,
    /// `serialize_overlap`: a queued I/O never overlaps one still in flight.
    pub serialize_overlap: bool,
    /// `force_async` (io_uring): IOSQE_ASYNC on every N-th submission entry; 0 never.
    pub force_async: u32,
    /// `lockfile`: jobs sharing a file serialize their I/O to it.
    pub lockfile: LockMode,
    /// `ioscheduler`: the I/O scheduler switched to on the device holding the job's files.
    pub ioscheduler: Option<String>,
    /// `io_submit_mode`.
    pub submit_mode: SubmitMode,
}
