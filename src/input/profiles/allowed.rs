//! The fio options a `check` profile's workload may set: the one reviewed list. A profile is
//! data (docs/PROFILES.md), often written by someone other than the root who runs it, so its
//! workload may only shape the I/O iogauge does on its own test file in `--dir`. Every option
//! not listed here is refused when the profile is loaded, before anything runs; the options
//! that would do harm are refused with their reason. Adding an option here is a security
//! review: it must neither execute anything, nor read or write anything but the test file, nor
//! change anything on the host beyond the run's own threads.

/// Options that only say what I/O goes to the test file, how it is timed, checked and
/// reported. Grouped as in `input/fio/options/`; canonical names (aliases resolve to these).
const ALLOWED: &[&str] = &[
    // The I/O pattern: direction, mix, sizes, offsets, randomness. All inside the test file
    // (or files, with nrfiles: their names are still chosen by check, in --dir).
    "description",
    "rw",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "bsrange",
    "bssplit",
    "bs_unaligned",
    "bs_is_seq_rand",
    "ba",
    "size",
    "filesize",
    "nrfiles",
    "offset",
    "offset_increment",
    "offset_align",
    "io_size",
    "number_ios",
    "loops",
    "random_distribution",
    "random_generator",
    "percentage_random",
    "rw_sequencer",
    "randrepeat",
    "allrandrepeat",
    "randseed",
    "norandommap",
    "file_service_type",
    "zonemode",
    "zonerange",
    "zonesize",
    "zoneskip",
    // How the I/O is issued: engine tuning, sync calls, open flags, queue depth. They act on
    // the test file's descriptors and the run's own rings and threads. (ioengine itself is
    // checked by value below: only engines that do plain file I/O.)
    "ioengine",
    "iodepth",
    "iodepth_batch_submit",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "hipri",
    "hipri_percentage",
    "nowait",
    "force_async",
    "nonvectored",
    "userspace_reap",
    "io_submit_mode",
    "direct",
    "buffered",
    "atomic",
    "sync",
    "fsync",
    "fdatasync",
    "end_fsync",
    "fsync_on_close",
    "sync_file_range",
    "write_hint",
    "write_barrier",
    "serialize_overlap",
    // lockfile is a lock mode between the run's own jobs (in memory), not a path.
    "lockfile",
    // Laying out and opening the test file, and its page cache (posix_fadvise on that file
    // only). unlink is checked by value below: the file must go at the end.
    "invalidate",
    "fadvise_hint",
    "fallocate",
    "create_only",
    "create_on_open",
    "create_fsync",
    "create_serialize",
    "allow_file_create",
    "overwrite",
    "file_append",
    "pre_read",
    "openfiles",
    "unlink",
    "unlink_each_loop",
    // Jobs and time: copies (capped like fio's 4096 jobs), phases, pacing, limits.
    "numjobs",
    "thread",
    "group_reporting",
    "new_group",
    "stonewall",
    "wait_for",
    "exitall",
    "exit_what",
    "exitall_on_error",
    "runtime",
    "time_based",
    "ramp_time",
    "startdelay",
    "rate",
    "rate_iops",
    "rate_min",
    "rate_iops_min",
    "rate_cycle",
    "rate_process",
    "rate_ignore_thinktime",
    "max_latency",
    "thinktime",
    "thinktime_spin",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "flow_id",
    "flow",
    "flow_sleep",
    "continue_on_error",
    "ignore_error",
    "error_dump",
    // Data written and checked: buffer contents and verification of the test file's data
    // (read back from the test file; verify_dump, which writes files, is refused below).
    "refill_buffers",
    "zero_buffers",
    "scramble_buffers",
    "buffer_pattern",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "verify",
    "do_verify",
    "verify_pattern",
    "verify_interval",
    "verify_offset",
    "verify_fatal",
    "verify_only",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_async",
    "experimental_verify",
    // What is measured and reported: in-memory statistics only.
    "gtod_reduce",
    "percentile_list",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "bwavgtime",
    "iopsavgtime",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "stats",
    "disk_util",
    "unified_rw_reporting",
    "significant_figures",
    "kb_base",
    "unit_base",
    "clocksource",
    // Where the run's own threads run and their priorities (affinity, NUMA policy, nice, I/O
    // priority): per-thread settings that end with the run, as with fio. Buffers are
    // anonymous memory whatever mem= says.
    "cpus_allowed",
    "cpumask",
    "cpus_allowed_policy",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "nice",
    "prio",
    "prioclass",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
    "mem",
];

const EXECUTES: &str = "it executes a command";
const OUTSIDE: &str = "it reads or writes files outside the test directory";
const HOST: &str = "it changes host state";
const PLACE: &str = "it reads or writes files outside the test directory; where the test file \
                     goes is chosen by iogauge check (--dir)";

/// Options refused with their reason (the rest of fio's options are simply not listed).
const REFUSED: &[(&str, &str)] = &[
    ("exec_prerun", EXECUTES),
    ("exec_postrun", EXECUTES),
    ("program", EXECUTES),
    ("arguments", EXECUTES),
    ("grace_time", EXECUTES),
    ("std_redirect", EXECUTES),
    ("include", OUTSIDE),
    ("filename", PLACE),
    ("directory", PLACE),
    ("filename_format", PLACE),
    ("opendir", PLACE),
    ("allow_mounted_write", OUTSIDE),
    ("write_bw_log", OUTSIDE),
    ("write_lat_log", OUTSIDE),
    ("write_iops_log", OUTSIDE),
    ("write_hist_log", OUTSIDE),
    ("write_iolog", OUTSIDE),
    ("read_iolog", OUTSIDE),
    ("replay_redirect", OUTSIDE),
    ("verify_dump", OUTSIDE),
    ("verify_state_save", OUTSIDE),
    ("verify_state_load", OUTSIDE),
    ("cgroup", HOST),
    ("cgroup_weight", HOST),
    ("cgroup_nodelete", HOST),
    ("uid", HOST),
    ("gid", HOST),
    ("ioscheduler", HOST),
    ("lockmem", HOST),
    ("fill_device", HOST),
];

/// Engines that do plain reads and writes on the test file, from the one engine table.
fn file_engines() -> impl Iterator<Item = &'static str> {
    crate::model::engines::ENGINES
        .iter()
        .filter(|(_, e)| e.does_file_io())
        .map(|(name, _)| *name)
}

/// Whether a profile may set `key` (`canonical`: its canonical name; None for a name iogauge
/// does not support, which the option parser then refuses with its own message) to `value`.
/// Err: the reason, e.g. "a profile may not set exec_prerun: it executes a command".
pub(super) fn check(key: &str, canonical: Option<&str>, value: Option<&str>) -> Result<(), String> {
    // Names refused by reason include a few iogauge does not support at all (include is a
    // job file directive, read_iolog an unsupported option): the reason is the better message.
    let name = match key.split_whitespace().next() {
        Some("include") => "include",
        _ => canonical.unwrap_or(key),
    };
    if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == name) {
        return Err(format!("a profile may not set {name}: {why}"));
    }
    if canonical.is_none() {
        return Ok(());
    }
    if !ALLOWED.contains(&name) {
        return Err(format!(
            "a profile may not set {name}: it is not one of the options profiles may set \
             (docs/PROFILES.md lists them)"
        ));
    }
    match (name, value) {
        ("ioengine", Some("exec")) => {
            Err(format!("a profile may not set ioengine=exec: {EXECUTES}"))
        }
        ("ioengine", Some(v)) if !file_engines().any(|e| e == v) => Err(format!(
            "a profile may not set ioengine={v}: profiles do plain file I/O in the test \
             directory, with {}",
            file_engines().collect::<Vec<_>>().join(", ")
        )),
        // Offload starts iodepth submitting threads per job copy (iodepth × numjobs threads),
        // a host resource a profile written by someone else must not size; `iogauge fio` runs it.
        ("io_submit_mode", Some("offload")) => Err(
            "a profile may not set io_submit_mode=offload: it starts a thread per iodepth for \
             every job copy (iodepth × numjobs threads); run offloaded jobs with iogauge fio"
                .into(),
        ),
        // Checked with fio's boolean grammar, so that unlink=false is caught too.
        ("unlink", Some(v)) if crate::model::units::parse_bool(v) == Ok(false) => Err(
            "a profile may not set unlink=0: it would leave the test file behind (iogauge check \
             --keep-files keeps it when you ask)"
                .into(),
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_submit_mode_offload_is_refused_inline_allowed() {
        let m = Some("io_submit_mode");
        assert_eq!(check("io_submit_mode", m, Some("inline")), Ok(()));
        let e = check("io_submit_mode", m, Some("offload")).unwrap_err();
        assert!(
            e.starts_with(
                "a profile may not set io_submit_mode=offload: it starts a thread per iodepth"
            ),
            "{e}"
        );
    }

    #[test]
    fn every_listed_option_is_a_supported_one_under_its_canonical_name() {
        for n in ALLOWED {
            assert_eq!(
                crate::input::fio::canonical_option(n),
                Some(*n),
                "{n} is not a canonical option name"
            );
        }
        for (n, _) in REFUSED {
            assert!(!ALLOWED.contains(n), "{n} is both allowed and refused");
        }
    }
}
