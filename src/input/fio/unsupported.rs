//! Why a fio option or engine is refused. Most refusals are "not yet"; these cannot work in
//! iogauge at all (they need a network peer, special hardware, a cluster client library or another
//! operating system), so the message says why instead of promising them.

/// Reasons by topic, shared by options and engines.
const NETWORK: &str = "it belongs to fio's network engines; iogauge measures local files and \
                       block devices";
const PASSTHROUGH: &str = "it sends SCSI or NVMe commands past the block layer (passthrough), \
                           which iogauge does not do";
const ZONED: &str = "zoned block devices (zonemode=zbd) are not supported; zonemode=strided \
                     works on ordinary files";
const CLUSTER: &str = "it needs a storage cluster's client library (Ceph, Gluster, HDFS, DAOS); \
                       iogauge measures what the host has mounted";
const PMEM: &str = "it needs persistent-memory hardware (DAX), which iogauge does not support";
const GPU: &str = "it moves data to or from a GPU, which iogauge does not support";
const REPLAY: &str = "replaying I/O logs and block traces is not supported by iogauge";
const OTHER_OS: &str = "it exists only on another operating system";
const PLUGIN: &str = "iogauge does not load engine plugins";
const TRIM_VERIFY: &str = "fio 3.33 cannot do it on files either: measured on ext4, \
                           trim_percentage with verify trims nothing (\"trim entries leaked\"), \
                           trim_backlog aborts on an assertion (fio_ro_check, signal 6), and \
                           rw=trim on a regular file fails with ENOTTY; iogauge's trims \
                           (rw=trim, trimwrite) work on files and devices";
const GTOD_THREAD: &str = "fio 3.33 spins a thread on that CPU calling gettimeofday for every \
                           job to read (microsecond time, one CPU taken from the jobs); \
                           iogauge reads the TSC (or clock_gettime) in place at nanosecond \
                           resolution and keeps every CPU";
const PROFILES: &str = "fio's built-in profiles generate jobs with options of their own \
                        (tiobench: --size, --block, --numruns, --dir, --threads) or hook \
                        fio's latency accounting and print their own report (act); write \
                        tiobench's four jobs (write, randwrite, read, randread) as a job file, \
                        or use iogauge check's profiles";

/// Options that cannot work in iogauge, and why.
static OPTIONS: &[(&str, &str)] = &[
    ("block_error_percentiles", TRIM_VERIFY),
    ("busy_poll", CLUSTER),
    ("clientname", CLUSTER),
    ("clustername", CLUSTER),
    ("cmd_type", PASSTHROUGH),
    ("gtod_cpu", GTOD_THREAD),
    ("hostname", NETWORK),
    ("ignore_zone_limits", ZONED),
    ("interface", NETWORK),
    ("job_max_open_zones", ZONED),
    ("listen", NETWORK),
    ("max_open_zones", ZONED),
    ("merge_blktrace_file", REPLAY),
    ("merge_blktrace_iters", REPLAY),
    ("merge_blktrace_scalars", REPLAY),
    ("mss", NETWORK),
    ("nodelay", NETWORK),
    ("pingpong", NETWORK),
    ("pool", CLUSTER),
    ("port", NETWORK),
    ("profile", PROFILES),
    ("protocol", NETWORK),
    ("rbdname", CLUSTER),
    ("read_beyond_wp", ZONED),
    ("read_iolog", REPLAY),
    ("read_iolog_chunked", REPLAY),
    ("readfua", PASSTHROUGH),
    ("replay_align", REPLAY),
    ("replay_no_stall", REPLAY),
    ("replay_redirect", REPLAY),
    ("replay_scale", REPLAY),
    ("replay_skip", REPLAY),
    ("replay_time_scale", REPLAY),
    ("sg_write_mode", PASSTHROUGH),
    ("stream_id", PASSTHROUGH),
    ("trim_backlog", TRIM_VERIFY),
    ("trim_backlog_batch", TRIM_VERIFY),
    ("trim_percentage", TRIM_VERIFY),
    ("trim_verify_zero", TRIM_VERIFY),
    ("ttl", NETWORK),
    ("window_size", NETWORK),
    ("writefua", PASSTHROUGH),
    ("zone_reset_frequency", ZONED),
    ("zone_reset_threshold", ZONED),
    ("zonecapacity", ZONED),
];

/// Engines that cannot work in iogauge, and why.
pub(super) static ENGINES: &[(&str, &str)] = &[
    ("dev-dax", PMEM),
    ("dfs", CLUSTER),
    ("external", PLUGIN),
    ("gfapi", CLUSTER),
    ("gfapi_async", CLUSTER),
    ("io_uring_cmd", PASSTHROUGH),
    ("libcufile", GPU),
    ("libhdfs", CLUSTER),
    ("libpmem", PMEM),
    ("libzbc", ZONED),
    ("nbd", NETWORK),
    ("net", NETWORK),
    ("netsplice", NETWORK),
    ("pmemblk", PMEM),
    ("rados", CLUSTER),
    ("rbd", CLUSTER),
    ("rdma", NETWORK),
    ("sg", PASSTHROUGH),
    ("windowsaio", OTHER_OS),
    ("xnvme", PASSTHROUGH),
];

fn lookup(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, why)| *why)
}

/// Why an option cannot work in iogauge, if that is why it is refused.
pub(super) fn option_reason(key: &str) -> Option<&'static str> {
    lookup(OPTIONS, key)
}

/// The refusal of a fio option iogauge does not support.
pub(super) fn option_refusal(key: &str) -> String {
    match option_reason(key) {
        Some(why) => format!("option '{key}' cannot work in iogauge: {why}"),
        None => format!("option '{key}' is not supported by iogauge yet"),
    }
}

/// Whether `name` is a fio engine that cannot work in iogauge.
pub(super) fn is_engine(name: &str) -> bool {
    lookup(ENGINES, name).is_some()
}

/// The refusal of a fio engine iogauge does not have.
pub(super) fn engine_refusal(name: &str) -> String {
    match lookup(ENGINES, name) {
        Some(why) => format!("ioengine '{name}' cannot work in iogauge: {why}"),
        None => format!("ioengine '{name}' is not supported by iogauge yet"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_option_is_a_fio_option_and_none_is_supported() {
        for (k, _) in OPTIONS {
            assert!(super::super::known::is_fio_option(k), "{k}");
            assert!(super::super::options::find(k).is_none(), "{k} is supported");
        }
        assert!(OPTIONS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(ENGINES.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn refusals_name_the_reason_or_say_not_yet() {
        assert_eq!(
            option_refusal("hostname"),
            "option 'hostname' cannot work in iogauge: it belongs to fio's network engines; \
             iogauge measures local files and block devices"
        );
        // Every fio 3.33 option is supported or refused with a reason now; a name missing
        // from both would say "not yet".
        assert_eq!(
            option_refusal("no_such_option"),
            "option 'no_such_option' is not supported by iogauge yet"
        );
        assert_eq!(
            engine_refusal("rbd"),
            "ioengine 'rbd' cannot work in iogauge: it needs a storage cluster's client library \
             (Ceph, Gluster, HDFS, DAOS); iogauge measures what the host has mounted"
        );
        assert_eq!(
            engine_refusal("splice"),
            "ioengine 'splice' is not supported by iogauge yet"
        );
    }
}
