//! Every option name fio 3.33 knows (`fio --cmdhelp=all`, aliases, and the options of its
//! common engines), so that an option iogauge does not support is refused by name instead of being
//! mistaken for a typo, and a typo gets the closest real name.

use super::options::OPTIONS;

/// Option names and aliases of fio 3.33, sorted. Supported ones are looked up in `OPTIONS` first.
pub static FIO_OPTIONS: [&str; 276] = [
    "allow_file_create",
    "allow_mounted_write",
    "allrandrepeat",
    "atomic",
    "ba",
    "block_error_percentiles",
    "blockalign",
    "blocksize",
    "blocksize_range",
    "blocksize_unaligned",
    "bs",
    "bs_unaligned",
    "bsrange",
    "bssplit",
    "buffer_compress_chunk",
    "buffer_compress_percentage",
    "buffer_pattern",
    "buffered",
    "busy_poll",
    "bwavgtime",
    "cgroup",
    "cgroup_nodelete",
    "cgroup_weight",
    "clat_percentiles",
    "clientname",
    "clocksource",
    "clustername",
    "cmd_type",
    "cmdprio",
    "cmdprio_bssplit",
    "cmdprio_class",
    "cmdprio_percentage",
    "continue_on_error",
    "cpuchunks",
    "cpuload",
    "cpumask",
    "cpumode",
    "cpus_allowed",
    "cpus_allowed_policy",
    "create_fsync",
    "create_on_open",
    "create_only",
    "create_serialize",
    "dedupe_global",
    "dedupe_mode",
    "dedupe_percentage",
    "dedupe_working_set_percentage",
    "description",
    "direct",
    "directory",
    "disable_bw",
    "disable_bw_measurement",
    "disable_clat",
    "disable_lat",
    "disable_slat",
    "disk_util",
    "do_verify",
    "end_fsync",
    "error_dump",
    "exec_postrun",
    "exec_prerun",
    "exit_on_io_done",
    "exit_what",
    "exitall",
    "exitall_on_error",
    "experimental_verify",
    "fadvise_hint",
    "fallocate",
    "fdatasync",
    "file_append",
    "file_service_type",
    "filename",
    "filename_format",
    "fileoffset",
    "filesize",
    "fill_device",
    "fill_fs",
    "fixedbufs",
    "flow",
    "flow_id",
    "flow_sleep",
    "force_async",
    "fsync",
    "fsync_on_close",
    "gid",
    "group_reporting",
    "gtod_cpu",
    "gtod_reduce",
    "hipri",
    "hipri_percentage",
    "hostname",
    "ignore_error",
    "ignore_zone_limits",
    "interface",
    "invalidate",
    "io_limit",
    "io_size",
    "io_submit_mode",
    "iodepth",
    "iodepth_batch",
    "iodepth_batch_complete",
    "iodepth_batch_complete_max",
    "iodepth_batch_complete_min",
    "iodepth_batch_submit",
    "iodepth_low",
    "ioengine",
    "iomem",
    "iopsavgtime",
    "ioscheduler",
    "job_max_open_zones",
    "kb_base",
    "lat_percentiles",
    "latency_percentile",
    "latency_run",
    "latency_target",
    "latency_window",
    "listen",
    "lockfile",
    "lockmem",
    "log_alternate_epoch",
    "log_alternate_epoch_clock_id",
    "log_avg_msec",
    "log_compression",
    "log_compression_cpus",
    "log_entries",
    "log_hist_coarseness",
    "log_hist_msec",
    "log_max_value",
    "log_offset",
    "log_prio",
    "log_store_compressed",
    "log_unix_epoch",
    "loops",
    "max_latency",
    "max_open_zones",
    "mem",
    "merge_blktrace_file",
    "merge_blktrace_iters",
    "merge_blktrace_scalars",
    "mss",
    "name",
    "new_group",
    "nice",
    "nodelay",
    "nonvectored",
    "norandommap",
    "nowait",
    "nr_files",
    "nrfiles",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "number_ios",
    "numjobs",
    "offset",
    "offset_align",
    "offset_increment",
    "opendir",
    "openfiles",
    "overwrite",
    "per_job_logs",
    "percentage_random",
    "percentile_list",
    "pingpong",
    "pool",
    "port",
    "pre_read",
    "prio",
    "prioclass",
    "profile",
    "protocol",
    "ramp_time",
    "random_distribution",
    "random_generator",
    "randrepeat",
    "randseed",
    "rate",
    "rate_cycle",
    "rate_ignore_thinktime",
    "rate_iops",
    "rate_iops_min",
    "rate_min",
    "rate_process",
    "ratecycle",
    "ratemin",
    "rbdname",
    "read_beyond_wp",
    "read_iolog",
    "read_iolog_chunked",
    "readfua",
    "readwrite",
    "refill_buffers",
    "registerfiles",
    "replay_align",
    "replay_no_stall",
    "replay_redirect",
    "replay_scale",
    "replay_skip",
    "replay_time_scale",
    "runtime",
    "rw",
    "rw_sequencer",
    "rwmixread",
    "rwmixwrite",
    "scramble_buffers",
    "serialize_overlap",
    "sg_write_mode",
    "significant_figures",
    "size",
    "slat_percentiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "ss",
    "ss_dur",
    "ss_ramp",
    "startdelay",
    "stats",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "stonewall",
    "stream_id",
    "sync",
    "sync_file_range",
    "thinktime",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "thinktime_spin",
    "thp",
    "thread",
    "time_based",
    "timeout",
    "trim_backlog",
    "trim_backlog_batch",
    "trim_percentage",
    "trim_verify_zero",
    "ttl",
    "uid",
    "uncached",
    "unified_rw_reporting",
    "unique_filename",
    "unit_base",
    "unlink",
    "unlink_each_loop",
    "userspace_reap",
    "verify",
    "verify_async",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_dump",
    "verify_fatal",
    "verify_interval",
    "verify_offset",
    "verify_only",
    "verify_pattern",
    "verify_state_load",
    "verify_state_save",
    "wait_for",
    "wait_for_previous",
    "window_size",
    "write_barrier",
    "write_bw_log",
    "write_hint",
    "write_hist_log",
    "write_iolog",
    "write_iops_log",
    "write_lat_log",
    "writefua",
    "zero_buffers",
    "zone_reset_frequency",
    "zone_reset_threshold",
    "zonecapacity",
    "zonemode",
    "zonerange",
    "zonesize",
    "zoneskip",
];

pub fn is_fio_option(key: &str) -> bool {
    FIO_OPTIONS.binary_search(&key).is_ok()
}

/// The known option closest to a misspelt `key`, if any is close enough to be a likely typo.
pub fn closest(key: &str) -> Option<&'static str> {
    let supported = OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()));
    let limit = (key.chars().count() / 3).max(2);
    supported
        .chain(FIO_OPTIONS.iter().copied())
        .map(|c| (edit_distance(key, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance, counting a swap of two neighbours as one edit (typos are often swaps).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (i, row) in d.chunks_mut(w).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_holds_every_supported_option() {
        assert!(FIO_OPTIONS.windows(2).all(|w| w[0] < w[1]));
        for o in OPTIONS {
            assert!(is_fio_option(o.name), "{} is not a fio option", o.name);
            for a in o.aliases {
                assert!(is_fio_option(a), "{a} is not a fio alias");
            }
        }
        assert!(is_fio_option("write_bw_log"));
        assert!(is_fio_option("hipri"));
        assert!(!is_fio_option("blocksise"));
    }

    #[test]
    fn typos_get_the_nearest_name() {
        assert_eq!(closest("blocksise"), Some("blocksize"));
        assert_eq!(closest("runtiem"), Some("runtime"));
        assert_eq!(closest("fdatsync"), Some("fdatasync"));
        assert_eq!(closest("iodpeth"), Some("iodepth"));
        assert_eq!(closest("ramptime"), Some("ramp_time"));
        assert_eq!(closest("completely_unrelated_words"), None);
    }

    #[test]
    fn edit_distance_counts_swaps_once() {
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "acb"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
