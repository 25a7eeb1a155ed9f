//! Cross-checks against fio 3.33 for the files group: openfiles below the number of files,
//! create_fsync, create_serialize, overwrite, file_append, offset_align, fill_device/fill_fs,
//! opendir. Each job file in tests/fixtures/fio/files-*.fio runs under both tools at a small
//! size; counts are compared, iogauge's JSON must hold every key fio prints, and the
//! behaviour each option exists for is asserted.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

/// The total_ios of job `j` in direction `d`.
fn ios(v: &Value, j: usize, d: &str) -> u64 {
    u(v, &["jobs", &j.to_string(), d, "total_ios"])
}

/// iogauge fio with `args` and `--directory=d`: exit code and stderr.
fn iogauge(args: &[&str], d: &Path) -> (i32, String) {
    let out = cmd(IOGAUGE)
        .arg("fio")
        .args(args)
        .arg(format!("--directory={}", d.display()))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stderr).trim().to_string(),
    )
}

#[test]
fn openfiles_below_the_number_of_files_counts_match_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("files-openfiles.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    // Every file's region is covered once per loop, two files at a time.
    assert_eq!(ios(&g.json, 0, "write"), 64);
    assert_eq!(ios(&g.json, 1, "read"), 64);
    assert_eq!(ios(&g.json, 2, "write"), 128);
    assert_eq!(ios(&g.json, 4, "read"), 30);
}

/// Data files under `dir` that process `pid` holds open now.
fn open_data_files(pid: u32, dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|r| {
            r.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                // The directory itself is held open too (its handle, for files by identity).
                .filter(|t| {
                    t.starts_with(dir) && t != dir && !t.to_string_lossy().contains(".iogauge")
                })
                .map(|t| t.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn openfiles_limit_holds_while_files_rotate() {
    // nrfiles=6 openfiles=2, paced: never more than 2 of the job's files open at once, and
    // every file was open at some point (they rotate through the two slots).
    let d = scratch();
    let mut child = cmd(IOGAUGE)
        .args([
            "fio",
            "--name=t",
            "--rw=write",
            "--bs=4k",
            "--size=384k",
            "--nrfiles=6",
            "--openfiles=2",
            "--rate_iops=400",
            "--output-format=json",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (mut most, mut samples) = (0, 0);
    let mut ever = BTreeSet::new();
    while child.try_wait().unwrap().is_none() {
        let open = open_data_files(child.id(), d.path());
        if !open.is_empty() {
            samples += 1;
        }
        most = most.max(open.len());
        ever.extend(open);
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ios(&v, 0, "write"), 96);
    assert!(
        samples > 10,
        "the job's files were seen open only {samples} times"
    );
    assert_eq!(most, 2, "data files open at once");
    assert_eq!(ever.len(), 6, "files seen open: {ever:?}");
    assert_empty(d.path());
}

#[test]
fn openfiles_combinations_not_covered_are_refused() {
    let d = scratch();
    for (extra, what) in [
        ("--ioengine=io_uring", "with ioengine=io_uring"),
        ("--end_fsync=1", "together with end_fsync"),
        ("--verify=crc32c", "together with verify"),
        (
            "--file_service_type=zipf:1.1",
            "together with file_service_type=zipf/pareto/normal",
        ),
    ] {
        let (code, err) = iogauge(
            &[
                "--name=t",
                "--rw=write",
                "--size=64k",
                "--nrfiles=4",
                "--openfiles=2",
                extra,
            ],
            d.path(),
        );
        assert_eq!(code, 2, "{extra}: {err}");
        assert!(
            err.contains(&format!("openfiles=2 below the job's 4 files {what}")),
            "{extra}: {err}"
        );
        assert_empty(d.path());
    }
}

/// The fixture under `program` (fio, or iogauge with `pre`) in `dir` with its files kept.
fn kept(program: &str, pre: &[&str], name: &str, dir: &Path) -> Out {
    let out = run_fixture(program, pre, name, &[], dir);
    assert_eq!(out.code, 0, "{program}: {}", out.stderr);
    out
}

/// Pages of `p` in the page cache (mincore over a read-only mapping).
fn resident_pages(p: &Path) -> (usize, usize) {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(p).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let pages = len.div_ceil(4096);
    // SAFETY: a read-only shared mapping of an open file, unmapped below; mincore fills one
    // byte per page into a vector of that many bytes.
    unsafe {
        let a = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(a, libc::MAP_FAILED);
        let mut v = vec![0u8; pages];
        assert_eq!(libc::mincore(a, len, v.as_mut_ptr()), 0);
        libc::munmap(a, len);
        (v.iter().filter(|&&b| b & 1 == 1).count(), pages)
    }
}

#[test]
fn create_fsync_leaves_the_layout_cached_only_when_off_as_fio() {
    let check = |d: &Path, who: &str| {
        let (c0, n) = resident_pages(&d.join("c0.0.0"));
        let (c1, _) = resident_pages(&d.join("c1.0.0"));
        // Without the fsync the cache drop cannot remove dirty pages; with it, it removes all.
        assert!(
            c0 > n / 2,
            "{who}: create_fsync=0 left {c0} of {n} pages cached"
        );
        assert!(
            c1 < n / 10,
            "{who}: create_fsync=1 left {c1} of {n} pages cached"
        );
    };
    let gd = scratch();
    let g = kept(
        IOGAUGE,
        &["fio", "--keep-files"],
        "files-create-fsync.fio",
        gd.path(),
    );
    check(gd.path(), "iogauge");
    if have_fio() {
        let fd = scratch();
        let f = kept("fio", &[], "files-create-fsync.fio", fd.path());
        check(fd.path(), "fio");
        assert_keys_superset(&f.json, &g.json);
        assert_counts_equal(&f.json, &g.json);
    }
}

#[test]
fn overwrite_lays_out_a_write_jobs_file_as_fio() {
    use std::os::unix::fs::MetadataExt;
    let blocks = |d: &Path, n: &str| std::fs::metadata(d.join(n)).unwrap().blocks();
    let gd = scratch();
    let g = kept(
        IOGAUGE,
        &["fio", "--keep-files"],
        "files-overwrite.fio",
        gd.path(),
    );
    // overwrite=1: every block of the 1 MiB file written; overwrite=0: none allocated.
    assert_eq!(blocks(gd.path(), "o1.0.0"), 2048);
    assert_eq!(blocks(gd.path(), "o0.0.0"), 0);
    if have_fio() {
        let fd = scratch();
        let f = kept("fio", &[], "files-overwrite.fio", fd.path());
        assert_counts_equal(&f.json, &g.json);
        for n in ["o0.0.0", "o1.0.0"] {
            assert_eq!(blocks(fd.path(), n), blocks(gd.path(), n), "{n}");
        }
        let (f, g) = both("files-overwrite-run.fio", &[]);
        assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
        assert_keys_superset(&f.json, &g.json);
        assert_counts_equal(&f.json, &g.json);
        assert_eq!(ios(&g.json, 0, "write"), 64);
    }
}

#[test]
fn file_append_writes_after_the_end_of_an_existing_file_as_fio() {
    let old: Vec<u8> = (0..64 * 1024u32).map(|i| (i * 13 + 5) as u8).collect();
    let run = |program: &str, pre: &[&str]| {
        let d = scratch();
        std::fs::write(d.path().join("app"), &old).unwrap();
        let out = run_fixture(program, pre, "files-append.fio", &[], d.path());
        let after = std::fs::read(d.path().join("app")).unwrap();
        (out, after, d)
    };
    // The file is the user's: without --allow-overwrite nothing is written.
    let d = scratch();
    std::fs::write(d.path().join("app"), &old).unwrap();
    let args = [
        "--name=app",
        "--filename=app",
        "--rw=write",
        "--size=64k",
        "--file_append=1",
    ];
    let (code, err) = iogauge(&args, d.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--allow-overwrite"), "{err}");
    assert_eq!(std::fs::read(d.path().join("app")).unwrap(), old);
    let (g, after, _d) = run(IOGAUGE, &["fio", "--allow-overwrite"]);
    assert_eq!(g.code, 0, "{}", g.stderr);
    assert_eq!(ios(&g.json, 0, "write"), 16);
    // 64 KiB written after the old 64 KiB, which are untouched.
    assert_eq!(after.len(), 128 * 1024);
    assert_eq!(&after[..old.len()], &old[..]);
    assert!(after[old.len()..].iter().any(|&b| b != 0));
    if have_fio() {
        let (f, fafter, _fd) = run("fio", &[]);
        assert_eq!(f.code, 0, "{}", f.stderr);
        assert_keys_superset(&f.json, &g.json);
        assert_counts_equal(&f.json, &g.json);
        assert_eq!(fafter.len(), after.len());
    }
}

#[test]
fn offset_align_rounds_a_percentage_offset_as_fio() {
    let run = |program: &str, pre: &[&str]| {
        let d = scratch();
        std::fs::write(d.path().join("data"), vec![7u8; 100 * 1024]).unwrap();
        let out = run_fixture(program, pre, "files-offset-align.fio", &[], d.path());
        assert_eq!(out.code, 0, "{program}: {}", out.stderr);
        out
    };
    let g = run(IOGAUGE, &["fio"]);
    // 30% of 100 KiB rounded up to 64 KiB: 36 KiB left, 9 reads (bs alignment would give 17).
    assert_eq!(ios(&g.json, 0, "read"), 9);
    if have_fio() {
        let f = run("fio", &[]);
        assert_keys_superset(&f.json, &g.json);
        assert_counts_equal(&f.json, &g.json);
    }
    let d = scratch();
    let (code, err) = iogauge(&["--name=t", "--size=64k", "--offset_align=0"], d.path());
    assert_eq!(code, 2);
    assert!(
        err.contains("offset_align=0: expected a size of 1 byte or more"),
        "{err}"
    );
    assert_empty(d.path());
}

#[test]
fn opendir_reads_every_file_under_the_directory_and_writes_only_when_allowed() {
    let make = |d: &Path| {
        let data = d.join("data");
        std::fs::create_dir_all(data.join("sub")).unwrap();
        std::fs::write(data.join("a"), vec![1u8; 64 * 1024]).unwrap();
        std::fs::write(data.join("sub/b"), vec![2u8; 32 * 1024]).unwrap();
        std::fs::write(data.join("c:d"), vec![3u8; 16 * 1024]).unwrap();
    };
    let gd = scratch();
    make(gd.path());
    let g = run_fixture(IOGAUGE, &["fio"], "files-opendir.fio", &[], gd.path());
    assert_eq!(g.code, 0, "{}", g.stderr);
    // 64 + 32 + 16 KiB in 4 KiB reads; the user's files are all still there.
    assert_eq!(ios(&g.json, 0, "read"), 28);
    assert_eq!(
        std::fs::read(gd.path().join("data/c:d")).unwrap(),
        vec![3u8; 16 * 1024]
    );
    if have_fio() {
        let fd = scratch();
        make(fd.path());
        let f = run_fixture("fio", &[], "files-opendir.fio", &[], fd.path());
        assert_eq!(f.code, 0, "{}", f.stderr);
        assert_keys_superset(&f.json, &g.json);
        assert_counts_equal(&f.json, &g.json);
    }
    // Writing them needs --allow-overwrite, as filename= of an existing file does.
    let dir = format!("--opendir={}", gd.path().join("data").display());
    let (code, err) = iogauge(&["--name=w", "--rw=write", "--bs=4k", &dir], gd.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--allow-overwrite"), "{err}");
    assert_eq!(
        std::fs::read(gd.path().join("data/a")).unwrap(),
        vec![1u8; 64 * 1024]
    );
    let (code, err) = iogauge(
        &["--name=w", "--opendir=/nonexistent-iogauge-dir"],
        gd.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("opendir: cannot read the directory '/nonexistent-iogauge-dir'"),
        "{err}"
    );
}

/// ext4 on a 32 MiB loop device, mounted in a scratch directory; unmounted and detached on
/// drop. None (with a message) when not root or without losetup/mkfs.ext4.
struct LoopFs {
    dev: String,
    mnt: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

fn sh(cmd_name: &str, args: &[&str]) -> Option<String> {
    let o = cmd(cmd_name).args(args).output().ok()?;
    o.status
        .success()
        .then(|| text(&o.stdout).trim().to_string())
}

impl LoopFs {
    /// The calling test is serial from here on: loop devices and mounts are the host's.
    fn new() -> Option<LoopFs> {
        serial();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipping: fill_fs on a loop device needs root");
            return None;
        }
        let dir = scratch();
        let img = dir.path().join("fs.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let made = sh("truncate", &["-s", "32M", img.to_str().unwrap()])
            .and_then(|_| sh("losetup", &["-f", "--show", img.to_str().unwrap()]));
        let Some(dev) = made else {
            eprintln!("skipping: no loop device could be set up (losetup)");
            return None;
        };
        let fs = LoopFs {
            dev,
            mnt,
            _dir: dir,
        };
        let ok = sh(
            "mkfs.ext4",
            &[
                "-q",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
                &fs.dev,
            ],
        )
        .and_then(|_| sh("mount", &[&fs.dev, fs.mnt.to_str().unwrap()]));
        if ok.is_none() {
            eprintln!("skipping: mkfs.ext4 or mount failed on {}", fs.dev);
            return None;
        }
        std::fs::remove_dir(fs.mnt.join("lost+found")).unwrap();
        Some(fs)
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        for _ in 0..50 {
            if sh("umount", &[self.mnt.to_str().unwrap()]).is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = sh("losetup", &["-d", &self.dev]);
    }
}

#[test]
fn fill_fs_writes_until_the_filesystem_is_full_and_ends_without_an_error() {
    let Some(fs) = LoopFs::new() else {
        return;
    };
    let free = |p: &Path| {
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: statvfs is plain data; all zeroes is a valid value.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: c is a valid C string, s a valid out pointer.
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut s) }, 0);
        s.f_bfree as u64 * s.f_frsize as u64
    };
    let before = free(&fs.mnt);
    let g = run_fixture(IOGAUGE, &["fio"], "files-fill-fs.fio", &[], &fs.mnt);
    assert_eq!(g.code, 0, "{}", g.stderr);
    assert_eq!(u(&g.json, &["jobs", "0", "error"]), 0);
    let written = u(&g.json, &["jobs", "0", "write", "io_bytes"]);
    // Everything free was written (but the file's own metadata), and iogauge's file is gone.
    assert!(
        written <= before && written > before - before / 20,
        "{written} of {before}"
    );
    assert_empty(&fs.mnt);
    assert!(free(&fs.mnt) >= before - 64 * 1024);
    if have_fio() {
        let f = run_fixture("fio", &[], "files-fill-fs.fio", &[], &fs.mnt);
        assert_eq!(f.code, 0, "{}", f.stderr);
        assert_keys_superset(&f.json, &g.json);
        // Both fill the same empty filesystem in 64 KiB writes, the last one failing.
        assert_counts_equal(&f.json, &g.json);
    }
}

#[test]
fn fill_fs_combinations_not_covered_are_refused() {
    let d = scratch();
    let (code, err) = iogauge(&["--name=t", "--rw=read", "--fill_fs=1"], d.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("fill_device (fill_fs) with a job that reads"),
        "{err}"
    );
    let (code, err) = iogauge(&["--name=t", "--rw=randrw", "--fill_device=1"], d.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "use rw=write or randwrite (with verify, do_verify=0 and a later job that reads \
             the file back, as fio's surface-scan example)"
        ),
        "{err}"
    );
    // Writing verify headers is fine (fio's surface scan); reading them back in the job is not.
    let (code, err) = iogauge(
        &[
            "--name=t",
            "--rw=write",
            "--fill_device=1",
            "--verify=crc32c",
        ],
        d.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("fill_device (fill_fs) with a job that reads"),
        "{err}"
    );
    assert_empty(d.path());
}

#[test]
fn writing_a_mounted_device_needs_allow_mounted_write_as_fio() {
    let Some(fs) = LoopFs::new() else {
        return;
    };
    let d = scratch();
    let dev = fs.dev.as_str();
    let filename = format!("--filename={dev}");
    let args = [
        "--name=mw",
        &filename,
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--offset=30m",
    ];
    let read_back = || {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(dev).unwrap();
        f.seek(SeekFrom::Start(30 << 20)).unwrap();
        let mut b = vec![0u8; 64 << 10];
        f.read_exact(&mut b).unwrap();
        b
    };
    let before = read_back();
    // --allow-overwrite alone is not enough for a mounted device: exit 2, nothing written.
    let mut with_flag = vec!["--allow-overwrite"];
    with_flag.extend(args);
    let (code, err) = iogauge(&with_flag, d.path());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("it is mounted on {}", fs.mnt.display()))
            && err.contains("allow_mounted_write=1"),
        "{err}"
    );
    assert!(read_back() == before, "iogauge wrote a mounted device");
    // Reading it is fine without either.
    let mut read = args.to_vec();
    read[2] = "--rw=read";
    assert_eq!(iogauge(&read, d.path()).0, 0);
    if have_fio() {
        // fio refuses the same job (it prints the reason and runs nothing).
        let o = cmd("fio").args(args).output().unwrap();
        assert!(text(&o.stderr).contains("appears mounted, and 'allow_mounted_write' isn't set"));
        assert!(read_back() == before, "fio wrote a mounted device");
    }
    let subst = [("@DEV@", dev)];
    let g = run_fixture(
        IOGAUGE,
        &["fio", "--allow-overwrite"],
        "files-mounted-write.fio",
        &subst,
        d.path(),
    );
    assert_eq!(g.code, 0, "{}", g.stderr);
    assert_eq!(ios(&g.json, 0, "write"), 16);
    assert!(read_back() != before, "the writes did not reach the device");
    if have_fio() {
        let f = run_fixture("fio", &[], "files-mounted-write.fio", &subst, d.path());
        assert_eq!(f.code, 0, "{}", f.stderr);
        assert_keys_superset(&f.json, &g.json);
        assert_counts_equal(&f.json, &g.json);
    }
}
