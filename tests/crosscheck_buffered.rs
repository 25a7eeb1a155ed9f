//! Buffered reads measure the storage, not the page cache, as in fio: the cache is dropped when a
//! file is opened (invalidate=1), the access pattern is announced (fadvise_hint=1: no readahead
//! for random jobs), and a time-based job drops the cache again whenever a new pass over the file
//! starts. Two kinds of tests:
//! - residency: the pages of the file cached after a run (mincore(2)) must be the blocks read
//!   since the last pass started, never more: nothing else may have been read ahead or kept;
//! - cross-checks: iogauge's IOPS on a buffered psync job within a noise band of fio's on the
//!   same job, run interleaved in the same test. fio must be installed (CI installs it; with
//!   CI=true a missing fio fails these tests instead of skipping them).
//!
//! Files live under the build directory, not /tmp, which may be a tmpfs whose pages cannot be
//! dropped.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

// Every test here is `serial()` (tests/common): a test running beside another would measure its
// disk traffic too, and one test's file could be evicted by another's reads.

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as u64 }
}

/// Runs `program pre… args… --output-format=json`; the first job of its JSON report.
fn run_job(program: &str, pre: &[&str], args: &[String]) -> Value {
    let out = common::cmd(program)
        .args(pre)
        .args(args)
        .arg("--output-format=json")
        .output()
        .expect("spawn");
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{program}: stdout is not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    v["jobs"][0].clone()
}

fn iogauge(args: &[String]) -> Value {
    run_job(IOGAUGE, &["fio"], args)
}

fn read_ios(job: &Value) -> u64 {
    job["read"]["total_ios"].as_u64().expect("read.total_ios")
}

fn read_iops(job: &Value) -> f64 {
    job["read"]["iops"].as_f64().expect("read.iops")
}

/// How many pages of `path` are in the page cache (mincore on a read-only mapping, which
/// faults nothing in).
fn resident_pages(path: &Path) -> u64 {
    let f = File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let page = page_size() as usize;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: a shared read-only mapping of an open file, unmapped before returning; mincore
    // writes one byte per page into `vec`, which has room for every page of the mapping.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED, "mmap {}", path.display());
        let r = libc::mincore(p, len, vec.as_mut_ptr());
        libc::munmap(p, len);
        assert_eq!(r, 0, "mincore: {}", std::io::Error::last_os_error());
    }
    vec.iter().filter(|&&b| b & 1 == 1).count() as u64
}

/// At least 90% of `want` pages: cached pages can go missing on this VM without anyone dropping
/// them (a few pages of a file read whole and left alone, now and then), so lower bounds are
/// loose; none ever appear unread, so upper bounds are exact.
fn mostly(pages: u64, want: u64) -> bool {
    pages * 10 >= want * 9
}

/// Pages read since the last pass began, after `ios` reads of one page each over a file of
/// `blocks` pages: a pass that just completed counts whole.
fn last_pass(ios: u64, blocks: u64) -> u64 {
    match ios % blocks {
        0 => blocks,
        r => r,
    }
}

/// Runs a 0.5 s time-based read job over a 1 MiB file that iogauge lays out and keeps, with one
/// page per I/O; returns (I/Os done, pages of the file cached afterwards, pages in the file).
fn time_based_residency(extra: &[&str]) -> (u64, u64, u64) {
    let d = scratch();
    let bs = page_size();
    let mut args = vec![
        "--name=inv".to_string(),
        format!("--directory={}", d.path().display()),
        format!("--bs={bs}"),
        "--size=1m".into(),
        "--runtime=500ms".into(),
        "--time_based".into(),
        "--unlink=0".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let job = iogauge(&args);
    let blocks = (1 << 20) / bs;
    let ios = read_ios(&job);
    // Less than one pass would test nothing: only a disk below 512 IOPS fails here.
    assert!(
        ios > blocks,
        "only {ios} I/Os over {blocks} blocks in 0.5 s"
    );
    (ios, resident_pages(&d.path().join("inv.0.0")), blocks)
}

/// Residency after a synchronous run: exactly the pages of the last pass. Without the drop at
/// each new pass, every page stays cached after the first pass.
fn assert_last_pass_resident(ios: u64, resident: u64, blocks: u64) {
    let want = last_pass(ios, blocks);
    // Never more than the last pass: nothing else was read, or kept from earlier passes.
    assert!(
        resident <= want && mostly(resident, want),
        "{resident} of {blocks} pages cached after {ios} I/Os; the last pass read {want}"
    );
}

#[test]
fn time_based_random_read_drops_the_cache_at_every_pass() {
    serial();
    let (ios, resident, blocks) = time_based_residency(&["--rw=randread", "--ioengine=psync"]);
    assert_last_pass_resident(ios, resident, blocks);
}

#[test]
fn time_based_sequential_read_drops_the_cache_at_every_pass() {
    serial();
    // The random hint turns readahead off, so that exactly the blocks read are cached.
    let (ios, resident, blocks) =
        time_based_residency(&["--rw=read", "--ioengine=psync", "--fadvise_hint=random"]);
    assert_last_pass_resident(ios, resident, blocks);
}

#[test]
fn time_based_queued_random_read_drops_the_cache_at_every_pass() {
    serial();
    let depth = 4;
    let (ios, resident, blocks) = time_based_residency(&[
        "--rw=randread",
        "--ioengine=io_uring",
        &format!("--iodepth={depth}"),
    ]);
    // The queue does not drain at a new pass (nor does fio's): up to depth-1 reads of the old
    // pass are in flight, their pages locked and so kept, when the cache is dropped. The reads
    // still in flight at the end complete uncounted, and may have started one more pass.
    let want = last_pass(ios, blocks);
    let in_last = mostly(resident, want) && resident <= want + 2 * depth;
    let wrapped_at_end = want + 2 * depth > blocks && resident <= 2 * depth;
    assert!(
        in_last || wrapped_at_end,
        "{resident} of {blocks} pages cached after {ios} I/Os at iodepth {depth}; the last pass read {want}"
    );
}

/// A file of `size` bytes of unique random data, written by the test, then dropped from the
/// cache and read once more, so that the layers below have seen it read (the first read of a
/// freshly written file is much slower and noisier here). Left cached.
fn data_file(dir: &Path, size: usize) -> PathBuf {
    let p = dir.join("data.dat");
    let mut data = vec![0u8; size];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for b in data.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.copy_from_slice(&x.to_ne_bytes()[..b.len()]);
    }
    std::fs::write(&p, &data).unwrap();
    let f = File::open(&p).unwrap();
    f.sync_all().unwrap();
    // SAFETY: advisory call on an open fd.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    warm(&p);
    p
}

/// Read the whole file through the page cache, so that all of it is cached.
fn warm(p: &Path) {
    std::io::copy(&mut File::open(p).unwrap(), &mut std::io::sink()).unwrap();
}

#[test]
fn opening_drops_a_warm_cache_and_the_random_hint_stops_readahead() {
    serial();
    let d = scratch();
    let size = 32 << 20;
    let path = data_file(d.path(), size);
    let blocks = size as u64 / page_size();
    // A rate-limited part of one pass: ~2000 of 8192 blocks, so that readahead would show.
    let run = |extra: &[&str]| {
        let before = resident_pages(&path);
        assert!(
            mostly(before, blocks),
            "{before} of {blocks} pages cached before the run"
        );
        let mut args = vec![
            "--name=warm".to_string(),
            format!("--filename={}", path.display()),
            format!("--bs={}", page_size()),
            "--rw=randread".into(),
            "--ioengine=psync".into(),
            "--rate_iops=4000".into(),
            "--runtime=500ms".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let ios = read_ios(&iogauge(&args));
        let resident = resident_pages(&path);
        warm(&path); // for the next run
        (ios, resident)
    };

    // Default invalidate=1, fadvise_hint=1: the warm pages were dropped on open, and a random
    // job reads no more than it asks for, so exactly the blocks read are cached.
    let (ios, resident) = run(&[]);
    assert!(ios > 100 && ios < blocks, "{ios} I/Os");
    assert!(
        resident <= ios && mostly(resident, ios),
        "{resident} pages cached after {ios} random reads"
    );

    // fadvise_hint=0: the kernel reads ahead of the random reads (what made a single random
    // pass look 1.8x faster than fio).
    let (ios, resident) = run(&["--fadvise_hint=0"]);
    assert!(
        resident > ios,
        "no readahead without the hint? {resident} pages cached after {ios} reads"
    );

    // invalidate=0: the warm cache stays, as the user asked.
    let (_, resident) = run(&["--invalidate=0"]);
    assert!(
        mostly(resident, blocks),
        "{resident} of {blocks} pages cached"
    );
}

/// `pairs` runs of the job on `file` under each tool, interleaved, the order alternating:
/// the JSON job of each run, fio's first. Before each run the whole file is cached, so a tool
/// that did not drop the cache on open would read memory.
fn interleaved(file: &Path, job: &[&str], pairs: usize) -> (Vec<Value>, Vec<Value>) {
    let (mut fio, mut iog) = (Vec::new(), Vec::new());
    for i in 0..pairs {
        for fio_turn in [i % 2 == 0, i % 2 == 1] {
            let mut args = vec![
                "--name=buffered".to_string(),
                format!("--filename={}", file.display()),
                "--ioengine=psync".into(),
                "--bs=4k".into(),
            ];
            args.extend(job.iter().map(|s| s.to_string()));
            warm(file);
            if fio_turn {
                fio.push(run_job("fio", &[], &args));
            } else {
                iog.push(iogauge(&args));
            }
        }
    }
    (fio, iog)
}

fn best(runs: &[Value]) -> f64 {
    runs.iter().map(read_iops).fold(0.0, f64::max)
}

/// The ratio of iogauge's best IOPS to fio's must lie in [1/band, band]. Best, not median:
/// interference (a neighbour on the VM host, a stall of the virtual disk) only ever slows a run
/// down, and single runs here vary by up to 5x for that reason, so the best run of each tool is
/// the steadiest estimate of what it measures.
fn assert_iops_near_fio(what: &str, fio: &[Value], iog: &[Value], band: f64) {
    let ratio = best(iog) / best(fio);
    let all = |v: &[Value]| v.iter().map(|j| read_iops(j).round()).collect::<Vec<_>>();
    eprintln!(
        "{what}: iogauge/fio best IOPS = {ratio:.2} (iogauge {:?}, fio {:?})",
        all(iog),
        all(fio)
    );
    assert!(
        ratio >= 1.0 / band && ratio <= band,
        "{what}: iogauge/fio best IOPS = {ratio:.2} (iogauge {:?}, fio {:?}), outside 1/{band}..{band}",
        all(iog),
        all(fio)
    );
}

// Bounds, from runs of these tests on the development VM (2 cores shared with other work,
// virtio disk; ratios are iogauge's best over fio's best): time-based 0.77-1.29 after the fix
// (once 0.47 with two pairs, while a neighbour loaded the disk: hence three), 45-51 (random)
// and 3.9-4.5 (sequential: every pass after the first read memory) before it. 2.5 catches
// both bugs and leaves room for noise.
const TIME_BASED_BAND: f64 = 2.5;
// Single pass: 0.94-1.33 after the fix; 1.6-2.1 (random: kernel readahead) and 1.1
// (sequential) before it, so a band cannot tell the readahead bug from noise: the residency
// test above catches it exactly. This band guards against reading memory (tens of x).
const SINGLE_PASS_BAND: f64 = 2.5;

#[test]
fn time_based_random_read_iops_near_fio() {
    if !have_fio() {
        return;
    }
    serial();
    let d = scratch();
    let f = data_file(d.path(), 32 << 20);
    let (fio, iog) = interleaved(
        &f,
        &["--rw=randread", "--size=32m", "--runtime=1", "--time_based"],
        3,
    );
    assert_iops_near_fio("randread 32m, 1 s", &fio, &iog, TIME_BASED_BAND);
}

#[test]
fn time_based_sequential_read_iops_near_fio() {
    if !have_fio() {
        return;
    }
    serial();
    let d = scratch();
    let f = data_file(d.path(), 32 << 20);
    let (fio, iog) = interleaved(
        &f,
        &["--rw=read", "--size=32m", "--runtime=1", "--time_based"],
        3,
    );
    assert_iops_near_fio("read 32m, 1 s", &fio, &iog, TIME_BASED_BAND);
}

#[test]
fn single_pass_random_read_iops_near_fio_and_same_count() {
    if !have_fio() {
        return;
    }
    serial();
    let d = scratch();
    let f = data_file(d.path(), 32 << 20);
    let (fio, iog) = interleaved(&f, &["--rw=randread", "--size=32m"], 3);
    for j in fio.iter().chain(&iog) {
        assert_eq!(read_ios(j), 8192, "32 MiB in 4 KiB reads, each once");
    }
    assert_iops_near_fio("randread 32m, one pass", &fio, &iog, SINGLE_PASS_BAND);
}

#[test]
fn single_pass_sequential_read_iops_near_fio_and_same_count() {
    if !have_fio() {
        return;
    }
    serial();
    let d = scratch();
    let f = data_file(d.path(), 64 << 20);
    let (fio, iog) = interleaved(&f, &["--rw=read", "--size=64m"], 3);
    for j in fio.iter().chain(&iog) {
        assert_eq!(read_ios(j), 16384, "64 MiB in 4 KiB reads, each once");
    }
    assert_iops_near_fio("read 64m, one pass", &fio, &iog, SINGLE_PASS_BAND);
}
