//! The fio job options iogauge supports: name, aliases, help and how each one sets a [`JobSpec`].
//! Options fio knows but iogauge does not are listed in `known.rs`; they are refused, never ignored.

use crate::model::units::{
    parse_bool, parse_bytes, parse_int, parse_int_in, parse_size, parse_time, split_per_direction,
    TimeUnit,
};
use crate::model::{FadviseHint, Fallocate, IoEngine, JobSpec, OpenSync, RwKind, RwMode, SizeSpec};

type Setter = fn(&mut JobSpec, &str) -> Result<(), String>;

pub(super) struct Opt {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// May be written without a value (`--time_based`), meaning 1.
    pub flag: bool,
    pub help: &'static str,
    set: Setter,
}

impl Opt {
    /// The help line's text: `help`, and for the options that take one of a fixed set of
    /// values, that set, written from the table the parser reads (so it cannot go stale).
    pub(super) fn describe(&self) -> String {
        match self.name {
            "rw" => format!(
                "{}: {} (rw=randread:8: a new random offset every 8 I/Os)",
                self.help,
                rw_values()
            ),
            "ioengine" => format!("{}: {}", self.help, engine_names()),
            _ => self.help.to_string(),
        }
    }

    /// Applies the value (None for a valueless flag) to `job`.
    pub(super) fn apply(&self, job: &mut JobSpec, value: Option<&str>) -> Result<(), String> {
        match value {
            // fio: "option bs requires an argument". Only free text may be empty.
            Some("") if !matches!(self.name, "description" | "name") => {
                Err(format!("needs a value, e.g. {}", example(self.name)))
            }
            Some(v) => (self.set)(job, v),
            None if self.flag => (self.set)(job, logs::flag_value(self.name)),
            None => Err(format!("needs a value, e.g. {}", example(self.name))),
        }
    }
}

fn example(name: &str) -> String {
    let v = match name {
        "rw" => "randread",
        "bs" => "4k",
        "size" | "filesize" => "1g",
        "ioengine" => "psync",
        "runtime" | "ramp_time" | "startdelay" => "30s",
        "filename" => "/path/to/file",
        "directory" => "/path/to/dir",
        "random_distribution" => "zipf:1.2",
        "bsrange" => "4k-64k",
        "bssplit" => "4k/50:64k/50",
        "ba" | "zonerange" | "zonesize" | "zoneskip" => "64k",
        "random_generator" => "lfsr",
        "percentage_random" => "50",
        "io_size" | "offset_increment" => "1g",
        "number_ios" => "1000",
        "zonemode" => "strided",
        "file_service_type" => "random:8",
        "rw_sequencer" => "identical",
        "percentile_list" => "50:99:99.9",
        "sync" => "dsync",
        "fallocate" => "none",
        "fadvise_hint" => "0",
        "filename_format" => "$jobname.$jobnum.$filenum",
        "verify" => "md5",
        "name" | "description" => "text",
        _ => "1",
    };
    format!("{name}={v}")
}

macro_rules! opt {
    ($name:literal, [$($alias:literal),*], $flag:expr, $help:literal, $set:expr) => {
        Opt { name: $name, aliases: &[$($alias),*], flag: $flag, help: $help, set: $set }
    };
}

/// Other engine names fio 3.33 accepts.
pub(super) const OTHER_FIO_ENGINES: [&str; 17] = [
    "rbd",
    "splice",
    "netsplice",
    "sg",
    "net",
    "rdma",
    "e4defrag",
    "io_uring_cmd",
    "gfapi",
    "gfapi_async",
    "pmemblk",
    "dev-dax",
    "external",
    "libpmem",
    "nbd",
    "http",
    "windowsaio",
];

/// Every `rw` value iogauge accepts, in the order they are listed: the parser, its error,
/// `--help`, `--cmdhelp` and docs/FIO-OPTIONS.md all read this one table. An entry with the same
/// meaning as the one before it is that one's alias.
pub(super) const RW_VALUES: &[(&str, RwKind, bool)] = &[
    ("read", RwKind::Read, false),
    ("write", RwKind::Write, false),
    ("randread", RwKind::Read, true),
    ("randwrite", RwKind::Write, true),
    ("rw", RwKind::ReadWrite, false),
    ("readwrite", RwKind::ReadWrite, false),
    ("randrw", RwKind::ReadWrite, true),
    ("trim", RwKind::Trim, false),
    ("randtrim", RwKind::Trim, true),
    ("trimwrite", RwKind::TrimWrite, false),
    ("randtrimwrite", RwKind::TrimWrite, true),
];

/// Every engine iogauge accepts, in the order they are listed: the one table,
/// [`crate::model::engines::ENGINES`].
pub(super) const ENGINES: &[(&str, IoEngine)] = crate::model::engines::ENGINES;

/// "a, b (b2), c or d": a value table as one list, aliases in parentheses.
fn one_of<T: PartialEq>(values: &[(&str, T)]) -> String {
    let mut shown: Vec<String> = Vec::new();
    for (i, (name, meaning)) in values.iter().enumerate() {
        match (i.checked_sub(1).map(|p| &values[p].1), shown.last_mut()) {
            (Some(prev), Some(last)) if prev == meaning => last.push_str(&format!(" ({name})")),
            _ => shown.push(name.to_string()),
        }
    }
    match shown.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => shown.join(""),
    }
}

/// The `rw` values, as the help and the error list them.
pub(super) fn rw_values() -> String {
    let v: Vec<(&str, (RwKind, bool))> = RW_VALUES.iter().map(|&(n, k, r)| (n, (k, r))).collect();
    one_of(&v)
}

/// The engine names, as the help and the error list them.
pub(super) fn engine_names() -> String {
    one_of(ENGINES)
}

fn set_rw(j: &mut JobSpec, v: &str) -> Result<(), String> {
    // `rw=randread:8`, `rw=write:4k`: the offset modifier (options/blocks.rs).
    let (v, modifier) = match v.split_once(':') {
        Some((base, m)) => (base, Some(m)),
        None => (v, None),
    };
    let Some(&(_, kind, random)) = RW_VALUES.iter().find(|(name, ..)| *name == v) else {
        return Err(format!("expected {}", rw_values()));
    };
    j.rw = RwMode { kind, random };
    blocks::set_rw_modifier(j, modifier)
}

fn set_ioengine(j: &mut JobSpec, v: &str) -> Result<(), String> {
    if let Some(&(_, engine)) = ENGINES.iter().find(|(name, _)| *name == v) {
        j.ioengine = engine;
        return Ok(());
    }
    if OTHER_FIO_ENGINES.contains(&v) || super::unsupported::is_engine(v) {
        return Err(super::unsupported::engine_refusal(v));
    }
    Err(format!("expected {}", engine_names()))
}

fn set_bs(j: &mut JobSpec, v: &str) -> Result<(), String> {
    let parts = split_per_direction(v)?;
    let mut bs = j.bs;
    for (d, p) in parts.iter().enumerate() {
        if let Some(p) = p {
            if p.contains('-') {
                return Err("a block size range is not supported by iogauge yet (bsrange)".into());
            }
            let b = parse_bytes(p)?;
            if b == 0 {
                return Err("a block size must be at least 1 byte".into());
            }
            if b > u32::MAX as u64 {
                return Err("a block size must be below 4 GiB".into());
            }
            bs[d] = b;
        }
    }
    j.bs = bs;
    Ok(())
}

fn set_rate(j: &mut JobSpec, v: &str) -> Result<(), String> {
    for (d, p) in split_per_direction(v)?.iter().enumerate() {
        if let Some(p) = p {
            j.rate[d] = Some(parse_bytes(p)?).filter(|&r| r > 0);
        }
    }
    Ok(())
}

fn set_rate_iops(j: &mut JobSpec, v: &str) -> Result<(), String> {
    for (d, p) in split_per_direction(v)?.iter().enumerate() {
        if let Some(p) = p {
            j.rate_iops[d] = Some(parse_int(p)?).filter(|&r| r > 0);
        }
    }
    Ok(())
}

fn positive_u32(v: &str) -> Result<u32, String> {
    parse_int_in(v, 1, u32::MAX as u64).map(|n| n as u32)
}

fn any_u32(v: &str) -> Result<u32, String> {
    parse_int_in(v, 0, u32::MAX as u64).map(|n| n as u32)
}

fn set_size(j: &mut JobSpec, v: &str) -> Result<(), String> {
    j.size = match parse_size(v)? {
        SizeSpec::Bytes(0) => return Err("size must be above 0".into()),
        s => Some(s),
    };
    Ok(())
}

fn set_filesize(j: &mut JobSpec, v: &str) -> Result<(), String> {
    if let Some((low, high)) = v.split_once('-') {
        return files::set_filesize_range(j, low, high);
    }
    j.files.filesize_high = None;
    j.filesize = match parse_size(v)? {
        SizeSpec::Bytes(0) => return Err("filesize must be above 0".into()),
        s => Some(s),
    };
    Ok(())
}

fn set_sync(j: &mut JobSpec, v: &str) -> Result<(), String> {
    j.open_sync = match v {
        "none" | "0" => OpenSync::None,
        "sync" | "1" => OpenSync::Sync,
        "dsync" => OpenSync::Dsync,
        _ => return Err("expected none, sync or dsync (0 = none, 1 = sync)".into()),
    };
    Ok(())
}

fn set_fallocate(j: &mut JobSpec, v: &str) -> Result<(), String> {
    j.fallocate = match v {
        "none" | "0" => Fallocate::None,
        "native" => Fallocate::Native,
        "posix" | "1" => Fallocate::Posix,
        "keep" => Fallocate::Keep,
        "truncate" => Fallocate::Truncate,
        _ => return Err("expected none, native, posix, keep or truncate".into()),
    };
    Ok(())
}

fn set_fadvise_hint(j: &mut JobSpec, v: &str) -> Result<(), String> {
    // fio 3.33's values, matched exactly as fio does (`noreuse` came in a later fio).
    j.fadvise_hint = match v {
        "0" => FadviseHint::None,
        "1" => FadviseHint::ByPattern,
        "random" => FadviseHint::Random,
        "sequential" => FadviseHint::Sequential,
        _ => return Err("expected 0, 1, random or sequential".into()),
    };
    Ok(())
}

fn set_percentile_list(j: &mut JobSpec, v: &str) -> Result<(), String> {
    let mut list = Vec::new();
    for p in v.split(':') {
        let x: f64 = p
            .parse()
            .map_err(|_| "expected percentiles separated by ':', e.g. 50:99:99.9")?;
        if !(0.0..=100.0).contains(&x) {
            return Err("each percentile must be from 0 to 100".into());
        }
        list.push(x);
    }
    // fio's FIO_IO_U_LIST_MAX_LEN.
    if list.len() > 20 {
        return Err("at most 20 percentiles".into());
    }
    j.percentile_list = list;
    Ok(())
}

/// bwavgtime/iopsavgtime are plain milliseconds. fio drops any unit (`1000s` means 1000 ms); that
/// trap is refused here, except an explicit `ms`.
fn millis(v: &str) -> Result<u64, String> {
    let n = v.strip_suffix("ms").unwrap_or(v);
    let ms = parse_int(n).map_err(|_| "expected milliseconds as a plain number, e.g. 500")?;
    if ms == 0 {
        return Err("must be at least 1 ms".into());
    }
    Ok(ms)
}

fn set_randseed(j: &mut JobSpec, v: &str) -> Result<(), String> {
    j.randseed = parse_int(v)?;
    Ok(())
}

/// The options of iogauge's first releases; each later group of options has its own file below
/// and its own table in [`TABLES`].
/// The most files one job may have (`nrfiles`): a million, as the small-files test's cap.
const MAX_NRFILES: u32 = 1_000_000;

static CORE: &[Opt] = &[
    opt!(
        "name",
        [],
        false,
        "Name of the job (starts a new job on the command line)",
        |j, v| {
            j.name = v.to_string();
            Ok(())
        }
    ),
    opt!(
        "description",
        [],
        false,
        "Text description of the job",
        |j, v| {
            j.description = v.to_string();
            Ok(())
        }
    ),
    // workload
    opt!("rw", ["readwrite"], false, "The I/O pattern", set_rw),
    opt!(
        "rwmixread",
        [],
        false,
        "Percent of a mixed workload that is reads",
        |j, v| {
            j.rwmixread = parse_int_in(v, 0, 100)? as u32;
            Ok(())
        }
    ),
    opt!(
        "rwmixwrite",
        [],
        false,
        "Percent of a mixed workload that is writes",
        |j, v| {
            j.rwmixread = 100 - parse_int_in(v, 0, 100)? as u32;
            Ok(())
        }
    ),
    opt!(
        "bs",
        ["blocksize"],
        false,
        "Block size, per direction: bs=4k or bs=4k,8k",
        set_bs
    ),
    opt!(
        "size",
        [],
        false,
        "Total size of I/O for the job, e.g. 1g or 50%",
        set_size
    ),
    opt!(
        "filesize",
        [],
        false,
        "Size of each file (default size/nrfiles)",
        set_filesize
    ),
    opt!(
        "nrfiles",
        ["nr_files"],
        false,
        "Number of files per job",
        |j, v| {
            let n = positive_u32(v)?;
            // Every file is planned (and tracked) up front: bound it as the job count is.
            if n > MAX_NRFILES {
                return Err(format!(
                    "nrfiles={n} is more than iogauge plans per job ({MAX_NRFILES}); use fewer, \
                     larger files"
                ));
            }
            j.nrfiles = n;
            Ok(())
        }
    ),
    opt!(
        "filename",
        [],
        false,
        "File(s) to use, separated by ':'",
        |j, v| {
            j.filename = Some(v.to_string());
            Ok(())
        }
    ),
    opt!(
        "directory",
        [],
        false,
        "Directory to create the job's files in",
        |j, v| {
            if v.contains(':') {
                return Err(
                    "several directories separated by ':' are not supported by iogauge yet".into(),
                );
            }
            j.directory = Some(v.into());
            Ok(())
        }
    ),
    opt!(
        "offset",
        ["fileoffset"],
        false,
        "Start I/O at this offset in each file (size or %)",
        |j, v| {
            j.offset = parse_size(v)?;
            Ok(())
        }
    ),
    opt!("loops", [], false, "Run the job this many times", |j, v| {
        j.loops = positive_u32(v)?;
        Ok(())
    }),
    // engine and sync
    opt!(
        "ioengine",
        [],
        false,
        "How the job does its I/O",
        set_ioengine
    ),
    opt!(
        "iodepth",
        [],
        false,
        "I/Os in flight (1 for synchronous engines)",
        |j, v| {
            j.iodepth = positive_u32(v)?;
            Ok(())
        }
    ),
    opt!(
        "iodepth_batch_submit",
        ["iodepth_batch"],
        false,
        "I/Os to queue before submitting them (0 = iodepth)",
        |j, v| {
            j.iodepth_batch_submit = any_u32(v)?;
            Ok(())
        }
    ),
    opt!(
        "iodepth_batch_complete_min",
        ["iodepth_batch_complete"],
        false,
        "Fewest completions to wait for per reap",
        |j, v| {
            j.iodepth_batch_complete_min = any_u32(v)?;
            Ok(())
        }
    ),
    opt!(
        "iodepth_batch_complete_max",
        [],
        false,
        "Most completions to take per reap (default: the minimum)",
        |j, v| {
            j.iodepth_batch_complete_max = any_u32(v)?;
            Ok(())
        }
    ),
    opt!(
        "iodepth_low",
        [],
        false,
        "Refill a full queue once this few are in flight",
        |j, v| {
            j.iodepth_low = any_u32(v)?;
            Ok(())
        }
    ),
    opt!(
        "fixedbufs",
        [],
        true,
        "io_uring: register the I/O buffers",
        |j, v| {
            j.fixedbufs = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "registerfiles",
        [],
        true,
        "io_uring: register the files",
        |j, v| {
            j.registerfiles = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "sqthread_poll",
        [],
        true,
        "io_uring: a kernel thread polls the submission queue",
        |j, v| {
            j.sqthread_poll = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "hipri",
        [],
        true,
        "io_uring: polled completions (needs direct=1 and poll queues)",
        |j, v| {
            j.hipri = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "direct",
        [],
        false,
        "1 = O_DIRECT (bypass the page cache)",
        |j, v| {
            j.direct = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "buffered",
        [],
        false,
        "0 = O_DIRECT (the opposite of direct)",
        |j, v| {
            j.direct = !parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "sync",
        [],
        false,
        "Open files with none, sync (O_SYNC) or dsync (O_DSYNC)",
        set_sync
    ),
    opt!("fsync", [], false, "fsync after every N writes", |j, v| {
        j.fsync = any_u32(v)?;
        Ok(())
    }),
    opt!(
        "fdatasync",
        [],
        false,
        "fdatasync after every N writes",
        |j, v| {
            j.fdatasync = any_u32(v)?;
            Ok(())
        }
    ),
    opt!(
        "end_fsync",
        [],
        false,
        "fsync each file when the job's writes end",
        |j, v| {
            j.end_fsync = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "fsync_on_close",
        [],
        false,
        "fsync each file when it is closed",
        |j, v| {
            j.fsync_on_close = parse_bool(v)?;
            Ok(())
        }
    ),
    // jobs and time
    opt!(
        "numjobs",
        [],
        false,
        "Run this many copies of the job",
        |j, v| {
            let n = positive_u32(v)?;
            if u64::from(n) > super::MAX_JOBS {
                return Err(format!(
                    "maximum number of jobs ({}) reached: fio runs at most {} jobs in all; \
                     lower numjobs",
                    super::MAX_JOBS,
                    super::MAX_JOBS
                ));
            }
            j.numjobs = n;
            Ok(())
        }
    ),
    opt!(
        "group_reporting",
        [],
        true,
        "Report a group's jobs as one",
        |j, v| {
            j.group_reporting = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "new_group",
        [],
        true,
        "Start a new reporting group",
        |j, v| {
            j.new_group = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "stonewall",
        ["wait_for_previous"],
        true,
        "Wait for earlier jobs; start a new group",
        |j, v| {
            j.stonewall = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "runtime",
        ["timeout"],
        false,
        "Stop after this time (bare number: seconds)",
        |j, v| {
            let t = parse_time(v, TimeUnit::Seconds)?;
            j.runtime = (!t.is_zero()).then_some(t);
            Ok(())
        }
    ),
    opt!(
        "time_based",
        [],
        true,
        "Keep going until runtime, looping over the data",
        |j, v| {
            j.time_based = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "ramp_time",
        [],
        false,
        "Run this long before measuring (bare number: seconds)",
        |j, v| {
            j.ramp_time = parse_time(v, TimeUnit::Seconds)?;
            Ok(())
        }
    ),
    opt!(
        "startdelay",
        [],
        false,
        "Wait this long before starting (bare number: seconds)",
        |j, v| {
            if v.contains('-') {
                return Err("a start delay range is not supported by iogauge yet".into());
            }
            j.startdelay = parse_time(v, TimeUnit::Seconds)?;
            Ok(())
        }
    ),
    opt!(
        "rate",
        [],
        false,
        "Cap bandwidth in bytes/s, per direction (rate=1m,512k)",
        set_rate
    ),
    opt!(
        "rate_iops",
        [],
        false,
        "Cap IOPS, per direction",
        set_rate_iops
    ),
    opt!(
        "thread",
        [],
        true,
        "Accepted: iogauge always runs jobs as threads",
        |_, v| { parse_bool(v).map(|_| ()) }
    ),
    // randomness and buffers
    opt!(
        "randrepeat",
        [],
        false,
        "1 = the same random sequence every run",
        |j, v| {
            j.randrepeat = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "randseed",
        [],
        false,
        "Seed of the random generators",
        set_randseed
    ),
    opt!(
        "norandommap",
        [],
        true,
        "Random offsets may repeat within a pass",
        |j, v| {
            j.norandommap = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "refill_buffers",
        [],
        true,
        "New random data for every write",
        |j, v| {
            j.refill_buffers = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!("zero_buffers", [], true, "Write zeroes", |j, v| {
        j.zero_buffers = parse_bool(v)?;
        Ok(())
    }),
    // files
    opt!(
        "invalidate",
        [],
        false,
        "Drop the files' page cache on open and before each new pass",
        |j, v| {
            j.invalidate = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "fadvise_hint",
        [],
        false,
        "posix_fadvise on open: 0, 1 (by rw pattern), random or sequential",
        set_fadvise_hint
    ),
    opt!(
        "fallocate",
        [],
        false,
        "none, native, posix, keep or truncate",
        set_fallocate
    ),
    opt!(
        "create_only",
        [],
        false,
        "Only lay out the files, do no I/O",
        |j, v| {
            j.create_only = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "unlink",
        [],
        false,
        "Remove the files afterwards (iogauge: default 1)",
        |j, v| {
            j.unlink = parse_bool(v)?;
            Ok(())
        }
    ),
    // statistics
    opt!(
        "gtod_reduce",
        [],
        false,
        "1 = do not measure latency",
        |j, v| {
            j.gtod_reduce = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "percentile_list",
        [],
        false,
        "Percentiles to report, e.g. 50:99:99.9",
        set_percentile_list
    ),
    opt!(
        "clat_percentiles",
        [],
        false,
        "Report completion latency percentiles",
        |j, v| {
            j.clat_percentiles = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "lat_percentiles",
        [],
        false,
        "Report total latency percentiles",
        |j, v| {
            j.lat_percentiles = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "bwavgtime",
        [],
        false,
        "Bandwidth sample interval in ms",
        |j, v| {
            j.bwavgtime_ms = millis(v)?;
            Ok(())
        }
    ),
    opt!(
        "iopsavgtime",
        [],
        false,
        "IOPS sample interval in ms",
        |j, v| {
            j.iopsavgtime_ms = millis(v)?;
            Ok(())
        }
    ),
];

// Group files (declared here, after the `opt!` macro they use): each holds one table of
// options and their setters, listed in TABLES.
mod blocks;
mod buffers;
pub(super) mod engines;
pub(super) mod files;
mod host;
pub(super) mod io;
mod latency;
pub(super) mod logs;
mod prio;
pub(super) mod profile_opts;
mod reporting;
pub(super) mod stats;
pub(super) mod timing;
mod verify;

/// Every table of supported options, one per group of fio features.
static TABLES: &[&[Opt]] = &[
    CORE,
    blocks::OPTIONS,
    verify::OPTIONS,
    buffers::OPTIONS,
    logs::OPTIONS,
    reporting::OPTIONS,
    stats::OPTIONS,
    prio::OPTIONS,
    timing::OPTIONS,
    files::OPTIONS,
    engines::OPTIONS,
    host::OPTIONS,
    latency::OPTIONS,
    io::OPTIONS,
    profile_opts::OPTIONS,
];

/// Every supported option, group by group.
pub(super) fn all() -> impl Iterator<Item = &'static Opt> {
    TABLES.iter().flat_map(|t| t.iter())
}

/// The supported option named `key` (or one of its aliases), from an index built once: a run
/// of 4096 jobs applies a few hundred thousand options.
pub(super) fn find(key: &str) -> Option<&'static Opt> {
    static INDEX: std::sync::OnceLock<std::collections::HashMap<&'static str, &'static Opt>> =
        std::sync::OnceLock::new();
    INDEX
        .get_or_init(|| {
            all()
                .flat_map(|o| {
                    std::iter::once((o.name, o)).chain(o.aliases.iter().map(move |a| (*a, o)))
                })
                .collect()
        })
        .get(key)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Distribution;
    use std::time::Duration;

    fn set(pairs: &[(&str, Option<&str>)]) -> Result<JobSpec, String> {
        let mut j = JobSpec::default();
        for (k, v) in pairs {
            find(k).unwrap_or_else(|| panic!("{k}")).apply(&mut j, *v)?;
        }
        Ok(j)
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> = all()
            .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn the_etcd_recipe_sets_what_it_says() {
        let j = set(&[
            ("rw", Some("write")),
            ("ioengine", Some("sync")),
            ("fdatasync", Some("1")),
            ("directory", Some("test-data")),
            ("size", Some("22m")),
            ("bs", Some("2300")),
            ("name", Some("mytest")),
        ])
        .unwrap();
        assert_eq!(
            j.rw,
            RwMode {
                kind: RwKind::Write,
                random: false
            }
        );
        assert_eq!(j.ioengine, IoEngine::Sync);
        assert_eq!(j.fdatasync, 1);
        assert_eq!(
            j.directory.as_deref(),
            Some(std::path::Path::new("test-data"))
        );
        assert_eq!(j.size, Some(SizeSpec::Bytes(22 << 20)));
        assert_eq!(j.bs, [2300; 3]);
        assert_eq!(j.name, "mytest");
    }

    #[test]
    fn aliases_flags_and_inverse_options() {
        let j = set(&[
            ("readwrite", Some("randrw")),
            ("rwmixwrite", Some("30")),
            ("blocksize", Some("4k,8k")),
            ("buffered", Some("0")),
            ("time_based", None),
            ("wait_for_previous", None),
            ("timeout", Some("2m")),
            ("nr_files", Some("3")),
        ])
        .unwrap();
        assert_eq!(
            j.rw,
            RwMode {
                kind: RwKind::ReadWrite,
                random: true
            }
        );
        assert_eq!(j.rwmixread, 70);
        assert_eq!(j.bs, [4096, 8192, 8192]);
        assert!(j.direct && j.time_based && j.stonewall);
        assert_eq!(j.runtime, Some(Duration::from_secs(120)));
        assert_eq!(j.nrfiles, 3);
        let j = set(&[("time_based", Some("0")), ("runtime", Some("0"))]).unwrap();
        assert!(!j.time_based);
        assert_eq!(j.runtime, None);
    }

    #[test]
    fn per_direction_rates_and_partial_block_sizes() {
        let j = set(&[
            ("bs", Some(",8k")),
            ("rate", Some("1m,")),
            ("rate_iops", Some("100,200")),
        ])
        .unwrap();
        assert_eq!(j.bs, [4096, 8192, 8192]);
        assert_eq!(j.rate, [Some(1 << 20), None, None]);
        assert_eq!(j.rate_iops, [Some(100), Some(200), Some(200)]);
    }

    #[test]
    fn distributions_sync_modes_fallocate_and_percentiles() {
        let j = set(&[
            ("random_distribution", Some("zipf:1.2")),
            ("sync", Some("dsync")),
            ("fallocate", Some("none")),
            ("percentile_list", Some("50:99:99.9")),
            ("randseed", Some("0x1234")),
            ("bwavgtime", Some("1000")),
            ("iopsavgtime", Some("250ms")),
        ])
        .unwrap();
        assert_eq!(j.random_distribution, Distribution::Zipf(1.2));
        assert_eq!(j.open_sync, OpenSync::Dsync);
        assert_eq!(j.fallocate, Fallocate::None);
        assert_eq!(j.percentile_list, vec![50.0, 99.0, 99.9]);
        assert_eq!(j.randseed, 0x1234);
        assert_eq!((j.bwavgtime_ms, j.iopsavgtime_ms), (1000, 250));
        let j = set(&[
            ("random_distribution", Some("pareto:0.9")),
            ("sync", Some("1")),
        ])
        .unwrap();
        assert_eq!(j.random_distribution, Distribution::Pareto(0.9));
        assert_eq!(j.open_sync, OpenSync::Sync);
    }

    #[test]
    fn fadvise_hint_takes_fio_3_33_values() {
        assert_eq!(JobSpec::default().fadvise_hint, FadviseHint::ByPattern);
        for (v, want) in [
            ("0", FadviseHint::None),
            ("1", FadviseHint::ByPattern),
            ("random", FadviseHint::Random),
            ("sequential", FadviseHint::Sequential),
        ] {
            assert_eq!(
                set(&[("fadvise_hint", Some(v))]).unwrap().fadvise_hint,
                want
            );
        }
        // fio 3.33 refuses these too: no boolean spellings, no `noreuse` yet.
        for v in ["true", "noreuse", "2", "Random"] {
            assert_eq!(
                set(&[("fadvise_hint", Some(v))]).unwrap_err(),
                "expected 0, 1, random or sequential"
            );
        }
        assert_eq!(
            set(&[("fadvise_hint", None)]).unwrap_err(),
            "needs a value, e.g. fadvise_hint=0"
        );
    }

    #[test]
    fn bad_values_say_what_was_expected() {
        let err = |k: &str, v: Option<&str>| set(&[(k, v)]).unwrap_err();
        assert_eq!(err("direct", Some("true")), "expected 0 or 1");
        assert_eq!(err("bs", None), "needs a value, e.g. bs=4k");
        assert_eq!(err("bs", Some("0")), "a block size must be at least 1 byte");
        assert_eq!(
            err("rwmixread", Some("120")),
            "expected a whole number from 0 to 100"
        );
        assert_eq!(
            err("numjobs", Some("0")),
            format!("expected a whole number from 1 to {}", u32::MAX)
        );
        assert_eq!(
            err("ioengine", Some("splice")),
            "ioengine 'splice' is not supported by iogauge yet"
        );
        assert_eq!(
            err("ioengine", Some("foo")),
            "expected sync, psync, vsync, pvsync, pvsync2, mmap, null, libaio, io_uring, \
             posixaio, filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, falloc, \
             ftruncate, cpuio or exec"
        );
        assert_eq!(
            err("rw", Some("sideways")),
            "expected read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, \
             trimwrite or randtrimwrite"
        );
        assert_eq!(
            err("random_distribution", Some("zipf:1")),
            "the zipf theta must be above 0 and not 1, e.g. zipf:1.2"
        );
        assert_eq!(
            err("bwavgtime", Some("1000s")),
            "expected milliseconds as a plain number, e.g. 500"
        );
        assert!(err("verify", Some("md6")).starts_with("expected one of md5"));
        assert_eq!(
            err("percentile_list", Some("99:abc")),
            "expected percentiles separated by ':', e.g. 50:99:99.9"
        );
    }
}
