//! `iogauge check --device` end to end on real loop devices: the profiles write
//! over the device and nothing else, and every refusal (no --allow-overwrite, not a block device,
//! mounted) happens before a byte is written. Loop devices need root; CI runs as root, so with
//! CI=true these tests must run.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn check(args: &[&str], cwd: &Path) -> Output {
    common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .arg("check")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn iogauge")
}

/// Whether loop devices can be made here (root); with CI=true they must. The calling test is
/// serial from here on: loop devices are the host's.
fn can_loop() -> bool {
    common::serial();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI must run the block device tests: they need root for losetup"
    );
    eprintln!("skipping: --device tests need root (losetup makes the loop device)");
    false
}

fn sh(cmd: &str, args: &[&str]) -> String {
    let o = common::cmd(cmd).args(args).output().expect(cmd);
    assert!(o.status.success(), "{cmd} {args:?}: {}", text(&o.stderr));
    text(&o.stdout).trim().to_string()
}

/// A loop device over an image file on the real disk; detached (and unmounted first, when
/// mounted) on drop, also when the test panics.
struct Loop {
    /// Holds the image (and the mount point).
    dir: tempfile::TempDir,
    img: PathBuf,
    dev: String,
    mounted: Option<PathBuf>,
}

impl Loop {
    fn new(size: &str) -> Loop {
        let dir = scratch();
        let img = dir.path().join("disk.img");
        sh("truncate", &["-s", size, img.to_str().unwrap()]);
        let dev = sh("losetup", &["-f", "--show", img.to_str().unwrap()]);
        Loop {
            dir,
            img,
            dev,
            mounted: None,
        }
    }

    /// Kernel name (`loop3`).
    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    /// The image's bytes, as the device holds them (the loop driver writes through to it).
    fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.img).unwrap()
    }

    /// A loop device whose image holds an MBR with one partition over all but the first MiB;
    /// returns it and the partition's device node.
    fn partitioned(size_mib: u32) -> (Loop, String) {
        let dir = scratch();
        let img = dir.path().join("disk.img");
        sh(
            "truncate",
            &["-s", &format!("{size_mib}M"), img.to_str().unwrap()],
        );
        let mut mbr = vec![0u8; 512];
        // One primary Linux (0x83) entry: first LBA 2048, then its sector count.
        mbr[446 + 4] = 0x83;
        mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
        mbr[446 + 12..446 + 16].copy_from_slice(&(size_mib * 2048 - 2048).to_le_bytes());
        mbr[510] = 0x55;
        mbr[511] = 0xaa;
        let mut data = std::fs::read(&img).unwrap();
        data[..512].copy_from_slice(&mbr);
        std::fs::write(&img, data).unwrap();
        let dev = sh("losetup", &["-P", "-f", "--show", img.to_str().unwrap()]);
        let lo = Loop {
            dir,
            img,
            dev,
            mounted: None,
        };
        // losetup -P does not always scan here: add the partition explicitly (partx fails when
        // the scan already did, which is fine), then wait for the kernel to list it.
        let _ = common::cmd("partx").args(["-a", &lo.dev]).output();
        let sys = Path::new("/sys/class/block")
            .join(format!("{}p1", lo.name()))
            .join("dev");
        wait_for_file(&sys);
        // Without udev no /dev node may appear: make one beside the image, as a pod's
        // devicePath is one (the device is found by its number, not its path).
        let part = lo.dir.path().join(format!("{}p1", lo.name()));
        let devnum = std::fs::read_to_string(&sys).unwrap();
        let (maj, min) = devnum.trim().split_once(':').unwrap();
        sh("mknod", &[part.to_str().unwrap(), "b", maj, min]);
        (lo, part.to_str().unwrap().to_string())
    }

    /// ext4 on `dev` (the device or a partition), mounted on a directory beside the image.
    /// Every inode table and the journal are written now, not lazily in the background, so the
    /// image then stays still.
    fn mount(&mut self, dev: &str) -> PathBuf {
        sh(
            "mkfs.ext4",
            &["-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev],
        );
        let mp = self.dir.path().join("mnt");
        std::fs::create_dir(&mp).unwrap();
        sh("mount", &[dev, mp.to_str().unwrap()]);
        self.mounted = Some(mp.clone());
        sh("sync", &[]);
        mp
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(mp) = &self.mounted {
            let _ = common::cmd("umount").arg(mp).status();
        }
        let _ = common::cmd("losetup").args(["-d", &self.dev]).status();
    }
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}):\n{}{}",
            text(&o.stdout),
            text(&o.stderr)
        )
    })
}

fn profile<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["profile"] == name)
        .unwrap_or_else(|| panic!("no {name} in {v}"))
}

/// The exit code check's precedence gives (no --strict): a failure, then an error, then a
/// warning (verdict/check.rs `overall`).
fn expected_exit(v: &Value) -> i32 {
    let verdicts: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["verdict"].as_str().unwrap())
        .collect();
    if verdicts.contains(&"fail") {
        3
    } else if verdicts.contains(&"error") {
        1
    } else if verdicts.contains(&"warn") {
        4
    } else {
        assert!(verdicts.iter().all(|v| *v == "pass"), "{verdicts:?}");
        0
    }
}

#[test]
fn etcd_runs_on_the_device_and_writes_only_there() {
    if !can_loop() {
        return;
    }
    let lo = Loop::new("64M");
    let cwd = scratch();
    let o = check(
        &[
            "etcd",
            "--device",
            &lo.dev,
            "--allow-overwrite",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
        cwd.path(),
    );
    let v = json(&o);
    assert_eq!(o.status.code(), Some(expected_exit(&v)), "{v}");
    assert_eq!(v["device"], true);
    assert_eq!(v["dir"], lo.dev.as_str());
    let etcd = profile(&v, "etcd");
    assert!(etcd["value"].as_f64().unwrap() > 0.0, "{etcd}");
    assert_eq!(etcd["shortened"], true, "--scale shortens it");
    // The job as fio options names the device and no directory.
    let job: Vec<&str> = etcd["job"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert!(
        job.contains(&format!("--filename={}", lo.dev).as_str()),
        "{job:?}"
    );
    assert!(!job.iter().any(|o| o.starts_with("--directory")), "{job:?}");
    // Context: the device itself, no directory or filesystem.
    let c = &v["context"];
    assert!(c["directory"].is_null() && c["filesystem"].is_null(), "{c}");
    assert_eq!(c["device"]["name"], lo.name(), "{c}");
    // The plan line says where, on stderr; stdout is the document alone.
    let err = text(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "iogauge check: etcd: etcd WAL (IBM recipe) on {}: the first 1 MiB in ",
            lo.dev
        )),
        "{err}"
    );
    // The job wrote over the device's first bytes; nothing was made where it ran.
    let bytes = lo.bytes();
    assert!(
        bytes[..4096].iter().any(|&b| b != 0),
        "the first block is still zeros"
    );
    assert_empty(cwd.path());
}

#[test]
fn without_allow_overwrite_nothing_is_written() {
    if !can_loop() {
        return;
    }
    let lo = Loop::new("64M");
    // Something worth keeping on it, so that "unchanged" means something.
    let mut data = lo.bytes();
    for (i, b) in data[..1 << 20].iter_mut().enumerate() {
        *b = (i * 7 % 251) as u8;
    }
    std::fs::write(&lo.img, &data).unwrap();
    let cwd = scratch();
    let o = check(
        &["etcd", "--device", &lo.dev, "--scale", "0.05"],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge check: --device {}: the profiles write over the device's data; pass \
             --allow-overwrite if it holds nothing you need\n",
            lo.dev
        )
    );
    assert!(o.stdout.is_empty());
    assert!(lo.bytes() == data, "the image changed");
    assert_empty(cwd.path());
}

#[test]
fn a_file_or_a_directory_is_not_a_device() {
    let d = scratch();
    let file = d.path().join("plain");
    std::fs::write(&file, b"keep me").unwrap();
    for p in [file.to_str().unwrap(), d.path().to_str().unwrap()] {
        let o = check(&["etcd", "--device", p, "--allow-overwrite"], d.path());
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            text(&o.stderr),
            format!("iogauge check: --device {p}: not a block device; for a directory use --dir\n")
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
    let mut left = files_in(d.path());
    left.sort();
    assert_eq!(left, vec!["plain"]);
    // --dir and --device name the place twice; --allow-overwrite means nothing without --device.
    let o = check(&["etcd", "--device", "/dev/null", "--dir", "."], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr)
        .starts_with("error: the argument '--device <PATH>' cannot be used with '--dir <DIR>'"));
    let o = check(&["etcd", "--allow-overwrite"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--device <PATH>"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_mounted_device_is_refused_naming_the_mount_point() {
    if !can_loop() {
        return;
    }
    let mut lo = Loop::new("64M");
    let dev = lo.dev.clone();
    let mp = lo.mount(&dev);
    std::fs::write(mp.join("data"), b"keep me").unwrap();
    sh("sync", &[]);
    let before = lo.bytes();
    let cwd = scratch();
    let o = check(
        &[
            "etcd",
            "--device",
            &lo.dev,
            "--allow-overwrite",
            "--scale",
            "0.05",
        ],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let mp = mp.display();
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge check: --device {}: it is mounted on {mp}; the profiles would destroy that \
             filesystem: unmount it first, or check the filesystem with --dir {mp}\n",
            lo.dev
        )
    );
    sh("sync", &[]);
    assert!(lo.bytes() == before, "the image changed");
    assert_eq!(
        std::fs::read(lo.mounted.as_ref().unwrap().join("data")).unwrap(),
        b"keep me"
    );
    assert_empty(cwd.path());
}

#[test]
fn small_files_needs_a_filesystem_and_the_others_still_run() {
    if !can_loop() {
        return;
    }
    let lo = Loop::new("64M");
    let cwd = scratch();
    let o = check(
        &[
            "small-files",
            "etcd",
            "--device",
            &lo.dev,
            "--allow-overwrite",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
        cwd.path(),
    );
    let v = json(&o);
    let sf = profile(&v, "small-files");
    assert_eq!(sf["verdict"], "error");
    assert_eq!(
        sf["reason"],
        "needs a filesystem: run it with --dir on a mounted filesystem"
    );
    assert!(sf["value"].is_null());
    let etcd = profile(&v, "etcd");
    assert!(etcd["value"].as_f64().unwrap() > 0.0, "{etcd}");
    assert_eq!(v["summary"]["errors"], 1, "{v}");
    // etcd's failure outranks the error (exit 3); otherwise the error decides: a profile that
    // cannot run on a device is bad input (exit 2).
    let want = if etcd["verdict"] == "fail" { 3 } else { 2 };
    assert_eq!(o.status.code(), Some(want), "{v}");
    assert!(
        text(&o.stderr).contains(&format!(
            "iogauge check: small-files: many small files (GitLab) on {}: not run: needs a \
             filesystem: run it with --dir on a mounted filesystem\n",
            lo.dev
        )),
        "{}",
        text(&o.stderr)
    );
    assert_empty(cwd.path());
}

#[test]
fn a_device_smaller_than_the_profile_caps_it_and_marks_it_shortened() {
    if !can_loop() {
        return;
    }
    let lo = Loop::new("16M");
    let cwd = scratch();
    // etcd at full scale: the recipe's 22 MiB does not fit, so only the device caps it. The
    // whole recipe (--full), so that every capped byte is written.
    let o = check(
        &[
            "etcd",
            "--full",
            "--device",
            &lo.dev,
            "--allow-overwrite",
            "--format",
            "json",
        ],
        cwd.path(),
    );
    let v = json(&o);
    assert_eq!(o.status.code(), Some(expected_exit(&v)), "{v}");
    let etcd = profile(&v, "etcd");
    assert_eq!(etcd["shortened"], true, "{etcd}");
    let whole = (16u64 << 20) / 2300 * 2300;
    assert!(
        etcd["job"]
            .as_array()
            .unwrap()
            .contains(&Value::from(format!("--size={whole}"))),
        "{etcd}"
    );
    let written = etcd["report"]["jobs"][0]["write"]["io_bytes"].as_u64();
    assert_eq!(written, Some(whole), "{etcd}");
    assert!(etcd["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().starts_with("shortened run")));
    assert!(
        text(&o.stderr).contains(&format!("on {}: the first 16 MiB in 7294 writes", lo.dev)),
        "{}",
        text(&o.stderr)
    );
    // A time-based profile larger than the device: capped the same way.
    let o = check(
        &[
            "sync-iops",
            "--device",
            &lo.dev,
            "--allow-overwrite",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
        cwd.path(),
    );
    let v = json(&o);
    assert_eq!(o.status.code(), Some(expected_exit(&v)), "{v}");
    let s = profile(&v, "sync-iops");
    assert_eq!(s["shortened"], true);
    assert!(s["value"].as_f64().unwrap() > 0.0, "{s}");
    assert!(
        s["job"]
            .as_array()
            .unwrap()
            .contains(&Value::from(format!("--size={}", 16u64 << 20))),
        "{s}"
    );
    assert_empty(cwd.path());
}

#[test]
fn partitions_a_mounted_one_refuses_its_disk_and_a_partition_is_described_by_its_disk() {
    if !can_loop() {
        return;
    }
    let (mut lo, part) = Loop::partitioned(64);
    let cwd = scratch();
    // The partition itself, unmounted: measured, and the context names its whole disk.
    let o = check(
        &[
            "etcd",
            "--device",
            &part,
            "--allow-overwrite",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
        cwd.path(),
    );
    let v = json(&o);
    assert_eq!(o.status.code(), Some(expected_exit(&v)), "{v}");
    assert_eq!(v["dir"], part.as_str());
    assert_eq!(v["context"]["device"]["name"], lo.name(), "{v}");
    assert!(profile(&v, "etcd")["value"].as_f64().unwrap() > 0.0);
    // Mounted: the whole disk is refused, naming the partition and where it is mounted.
    let mp = lo.mount(&part);
    sh("sync", &[]);
    let before = lo.bytes();
    let o = check(
        &[
            "etcd",
            "--device",
            &lo.dev,
            "--allow-overwrite",
            "--scale",
            "0.05",
        ],
        cwd.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let mp = mp.display();
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge check: --device {}: its partition {}p1 is mounted on {mp}; the profiles \
             would destroy that filesystem: unmount it first, or check the filesystem with \
             --dir {mp}\n",
            lo.dev,
            lo.name()
        )
    );
    sh("sync", &[]);
    assert!(lo.bytes() == before, "the image changed");
    assert_empty(cwd.path());
}

#[test]
fn the_canary_probes_a_device_and_labels_it() {
    if !can_loop() {
        return;
    }
    let l = Loop::new("64M");
    let mut c = common::canary::Canary::start(&[
        "--device",
        &l.dev,
        "--allow-overwrite",
        "--every",
        "1s",
        "--window",
        "1m",
        "--listen",
        "none",
        "--no-history",
    ]);
    let docs = c.wait_docs(std::time::Duration::from_secs(60), |d| !d.is_empty());
    assert_eq!(c.stop(libc::SIGTERM).code(), Some(0));
    let d = &docs[0];
    assert_eq!(
        (d["dir"].as_str(), d["device"].as_str()),
        (Some(l.dev.as_str()), Some(l.name()))
    );
    assert_eq!(d["budget"]["measured_by"], "device");
    let p = &d["profiles"][0];
    assert!(p["last_success"].is_number(), "{p}");
    // Its fdatasyncs went to the device: etcd's 2300-byte blocks, about 500 of them.
    assert!(p["metrics"][0]["samples"].as_u64().unwrap() >= 400, "{p}");
    assert!(
        l.bytes().iter().any(|b| *b != 0),
        "nothing was written to the device"
    );
    assert_eq!(
        c.stderr_text().lines().last(),
        Some("iogauge canary: stopped by SIGTERM")
    );
}
