//! io_uring switched off by the host (sysctl kernel.io_uring_disabled=2): `iogauge fio` exits 2,
//! names the setting and suggests libaio, and leaves no file. This changes a host-wide setting,
//! so it runs only when IOGAUGE_TEST_SYSCTL=1 asks for it (CI's `.ci/run` does), is the only
//! test in its binary (Cargo.toml's second [[test]]: cargo runs test binaries one at a time, so
//! no other test's io_uring sees the switch), needs root, and restores the old value even if the
//! assertions fail. It does without tests/common, so that this binary stays small.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

const KNOB: &str = "/proc/sys/kernel/io_uring_disabled";

struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(KNOB, &self.0);
    }
}

#[test]
fn blocked_io_uring_is_a_usage_error_naming_the_sysctl() {
    if std::env::var("IOGAUGE_TEST_SYSCTL").as_deref() != Ok("1") {
        eprintln!("skipping: changes a host-wide sysctl; set IOGAUGE_TEST_SYSCTL=1 to run it");
        return;
    }
    let Ok(old) = std::fs::read_to_string(KNOB) else {
        eprintln!("skipping: {KNOB} does not exist on this kernel");
        return;
    };
    if std::fs::write(KNOB, "2").is_err() {
        eprintln!("skipping: cannot write {KNOB} (needs root)");
        return;
    }
    let _restore = Restore(old.trim().to_string());
    let d = tempfile::tempdir().unwrap();
    // As tests/common's cmd(): a test never saves to the run history.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_iogauge"))
        .env("IOGAUGE_NO_HISTORY", "1")
        .args(["fio", "--name=u", "--ioengine=io_uring", "--size=1m"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "iogauge fio: io_uring is disabled on this host (sysctl kernel.io_uring_disabled=2); set \
         it to 0 or use --ioengine=libaio\n"
    );
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}
