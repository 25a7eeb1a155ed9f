//! The profiles' unit tests: the built-in ones load, and the format's rules.
use super::*;
use std::time::Duration;

#[test]
fn every_profile_loads_and_builds_its_job() {
    for n in names() {
        let p = get(n).unwrap();
        assert_eq!(p.name, n);
        for m in &p.metrics {
            m.pass.value().unwrap();
            if let Some(w) = &m.warn {
                w.value().unwrap();
            }
        }
        for r in &p.references {
            assert!(
                r.get(MetricKey::SyncP99).is_some()
                    || r.write_iops.is_some()
                    || r.read_iops.is_some()
            );
        }
        if p.small_files.is_some() {
            continue;
        }
        p.job(
            Path::new("/tmp"),
            &Tuning {
                scale: 1.0,
                ..Tuning::default()
            },
        )
        .unwrap();
    }
    for n in DEFAULT_SUITE {
        get(n).unwrap();
    }
}

#[test]
fn the_etcd_profile_is_the_ibm_recipe() {
    let j = get("etcd")
        .unwrap()
        .job(
            Path::new("/d"),
            &Tuning {
                scale: 1.0,
                ..Tuning::default()
            },
        )
        .unwrap();
    assert_eq!(j.bs, [2300; 3]);
    assert_eq!(j.fdatasync, 1);
    assert_eq!(j.ioengine, crate::model::IoEngine::Sync);
    assert_eq!(j.size, Some(SizeSpec::Bytes(22 << 20)));
    assert_eq!(j.directory.as_deref(), Some(Path::new("/d")));
}

#[test]
fn max_size_caps_in_whole_blocks_and_leaves_smaller_files_alone() {
    let cap = |name: &str, max: u64| {
        get(name)
            .unwrap()
            .job(
                Path::new("/d"),
                &Tuning {
                    scale: 1.0,
                    max_size: Some(max),
                    ..Tuning::default()
                },
            )
            .unwrap()
            .size
    };
    // etcd writes 2300-byte blocks: 10 MiB holds 4559 of them.
    assert_eq!(cap("etcd", 10 << 20), Some(SizeSpec::Bytes(4559 * 2300)));
    assert_eq!(cap("etcd", 1 << 30), Some(SizeSpec::Bytes(22 << 20)));
    assert_eq!(cap("sync-iops", 1 << 29), Some(SizeSpec::Bytes(1 << 29)));
    assert_eq!(cap("etcd", 1), Some(SizeSpec::Bytes(2300)));
}

#[test]
fn scale_and_overrides() {
    let p = get("sync-iops").unwrap();
    let j = p
        .job(
            Path::new("/d"),
            &Tuning {
                scale: 0.1,
                ..Tuning::default()
            },
        )
        .unwrap();
    assert_eq!(j.runtime, Some(Duration::from_secs(6)));
    assert_eq!(j.ramp_time, Duration::from_millis(200));
    assert_eq!(j.size, Some(SizeSpec::Bytes(107_372_544)));
    let j = p
        .job(
            Path::new("/d"),
            &Tuning {
                scale: 1.0,
                duration: Some(Duration::from_secs(5)),
                size: Some(8 << 20),
                max_size: None,
            },
        )
        .unwrap();
    assert_eq!(
        (j.runtime, j.size),
        (Some(Duration::from_secs(5)), Some(SizeSpec::Bytes(8 << 20)))
    );
    // The etcd recipe is size-bound: a duration does not apply, a tiny scale keeps 1 MiB.
    let e = get("etcd").unwrap();
    let j = e
        .job(
            Path::new("/d"),
            &Tuning {
                scale: 0.001,
                duration: Some(Duration::from_secs(5)),
                size: None,
                max_size: None,
            },
        )
        .unwrap();
    assert_eq!(j.runtime, None);
    assert_eq!(j.size, Some(SizeSpec::Bytes((1 << 20) / 2300 * 2300)));
}

#[test]
fn unknown_profiles_get_a_suggestion() {
    assert_eq!(
        get("etdc").unwrap_err(),
        "unknown profile 'etdc'; did you mean 'etcd'?"
    );
    assert!(get("zzzzzzzz")
        .unwrap_err()
        .starts_with("unknown profile 'zzzzzzzz'; the profiles are etcd, "));
}

#[test]
fn the_documented_example_profile_is_valid() {
    let doc = include_str!("../../../docs/PROFILES.md");
    let start = doc.find("```yaml\n").unwrap() + 8;
    let len = doc[start..].find("```").unwrap();
    let p: Profile = yaml_serde::from_str(&doc[start..start + len]).unwrap();
    p.validate().unwrap();
    assert_eq!(p.name, "vendor-db");
}

#[test]
fn own_profiles_are_validated() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("p.yaml");
    let base = "name: x\ntitle: t\nworkload: [rw=write, fdatasync=1, bs=4k, size=4m]\n";
    let metric = |m: &str| format!("{base}metrics:\n  - {{{m}, source: s}}\n");
    let err = |text: &str| {
        std::fs::write(&f, text).unwrap();
        load_file(&f)
            .unwrap_err()
            .replace(&format!("profile '{}': ", f.display()), "")
    };
    assert_eq!(
        err(&metric(
            "key: sync_p99, label: l, better: lower, pass: 10ms, warn: 5ms"
        )),
        "metric 'sync_p99': warn must be higher than pass (it is the second step)"
    );
    assert_eq!(
        err(&metric("key: read_iops, label: l, better: higher, pass: 10 IOPS")),
        "metric 'read_iops' (l) is not measured by this workload (sync_p99 needs fsync= or fdatasync=; read_iops a read, write_iops a write)"
    );
    assert_eq!(
        err(&metric(
            "key: sync_p99, label: l, better: lower, pass: soon"
        )),
        "metric 'sync_p99': pass: expected a Go duration such as 90s, 2m, 1m30s, 500ms or 1.5h; units: ns, us or µs, ms, s, m, h"
    );
    // A latency without a unit would be nanoseconds; a rate given as a duration, nonsense.
    assert_eq!(
        err(&metric("key: sync_p99, label: l, better: lower, pass: 5")),
        "metric 'sync_p99': pass: 5 has no unit; a latency takes a duration with its unit (ns, us or µs, ms, s, m, h), e.g. pass: 5ms"
    );
    assert_eq!(
        err(&metric("key: sync_p99, label: l, better: lower, pass: 5ms, warn: \"20\"")),
        "metric 'sync_p99': warn: '20' has no time unit; a latency takes a duration with its unit (ns, us or µs, ms, s, m, h), e.g. warn: 10ms"
    );
    assert_eq!(
        err(&metric("key: write_iops, label: l, better: higher, pass: 10ms")),
        "metric 'write_iops': pass: '10ms': write_iops is a rate in IOPS, so write a number with its unit such as 1000 IOPS, not a duration"
    );
    assert_eq!(
        err(&format!(
            "{}references:\n  - {{system: disk, sync_p99: 4.2}}\n",
            metric("key: sync_p99, label: l, better: lower, pass: 5ms")
        )),
        "references: 'disk': sync_p99: 4.2 has no unit; a latency takes a duration with its unit (ns, us or µs, ms, s, m, h), e.g. sync_p99: 4.2ms"
    );
    // A rate needs its unit too, and only its own.
    assert_eq!(
        err(&metric("key: write_iops, label: l, better: higher, pass: 1000")),
        "metric 'write_iops': pass: 1000 has no unit; write_iops is a rate in IOPS, e.g. pass: 1000 IOPS"
    );
    assert_eq!(
        err(&metric("key: write_iops, label: l, better: higher, pass: 1000 IOPS, warn: \"750\"")),
        "metric 'write_iops': warn: '750' has no unit; write_iops is a rate in IOPS, e.g. warn: 750 IOPS"
    );
    assert_eq!(
        err(&metric("key: write_iops, label: l, better: higher, pass: 50 files/s")),
        "metric 'write_iops': pass: '50 files/s': write_iops is a rate in IOPS, not files/s, e.g. pass: 50 IOPS"
    );
    std::fs::write(
        &f,
        metric("key: write_iops, label: l, better: higher, pass: 1000 IOPS, warn: 750iops"),
    )
    .unwrap();
    assert_eq!(load_file(&f).unwrap().metrics[0].pass.value(), Ok(1000.0));
    // A built-in profile's name is refused: compare would mix two different tests.
    assert_eq!(
        err(&metric("key: sync_p99, label: l, better: lower, pass: 1s")
            .replace("name: x", "name: etcd")),
        "name 'etcd' is a built-in profile's; give your profile a name of its own (e.g. name: etcd-custom), so that history and compare never mix the two"
    );
    assert_eq!(
        err("name: s\ntitle: t\nsmall_files: {files: 4000000000, size: 5}\nmetrics:\n  - {key: small_files_total, label: l, better: lower, pass: 10s, source: s}\n"),
        "small_files: at most 1000000 files of at most 16 MiB (16777216 bytes) each"
    );
    assert_eq!(
        err(&format!("{base}metrics: []\n")),
        "'metrics' is empty: a profile needs at least one metric to judge"
    );
    assert_eq!(
        err(&metric("key: sync_p99, label: l, better: lower, pass: 1s")
            .replace("name: x", "name: a/b")),
        "name 'a/b': use up to 64 letters, digits, '-' and '_' (it names the test file)"
    );
    assert_eq!(
        err(&metric("key: sync_p99, label: l, better: lower, pass: 1s")
            .replace("size=4m]", "size=4m, filename=/dev/sda]")),
        "workload: 'filename=/dev/sda': a profile may not set filename: it reads or writes files outside the test directory; where the test file goes is chosen by iogauge check (--dir)"
    );
    assert!(err(
        &metric("key: sync_p99, label: l, better: lower, pass: 1s").replace("bs=4k", "bs=lots")
    )
    .starts_with("profile 'x': "));
    assert!(load_file(Path::new("/nonexistent.yaml"))
        .unwrap_err()
        .starts_with("cannot read profile '/nonexistent.yaml': "));
    std::fs::write(
        &f,
        metric("key: sync_p99, label: l, better: lower, pass: 1s"),
    )
    .unwrap();
    assert_eq!(resolve(f.as_os_str()).unwrap().name, "x");
    assert_eq!(resolve("etcd".as_ref()).unwrap().name, "etcd");
}

#[test]
fn the_job_as_fio_options_reproduces_it() {
    let p = get("sync-iops").unwrap();
    let t = Tuning {
        scale: 0.1,
        ..Tuning::default()
    };
    let mut j = p.job(Path::new("/d"), &t).unwrap();
    j.filename = Some("iogauge-sync-iops.1.2".into());
    let o = p.fio_options(&j);
    assert_eq!(
        o,
        [
            "--name=sync-iops",
            "--directory=/d",
            "--filename=iogauge-sync-iops.1.2",
            "--rw=write",
            "--ioengine=sync",
            "--direct=1",
            "--fdatasync=1",
            "--bs=4k",
            "--size=107372544",
            "--time_based",
            "--ramp_time=200ms",
            "--runtime=6000ms",
        ]
    );
    // Parsed back with fio's grammar, the options give the same job.
    let args: Vec<String> = o.iter().map(|s| s.to_string()).collect();
    let env = |_: &str| None;
    let crate::input::fio::FioCommand::Run(spec, _) =
        crate::input::fio::parse_fio_args(&args, &env, &mut std::io::empty()).unwrap()
    else {
        panic!("not a run")
    };
    let mut parsed = spec.jobs[0].clone();
    parsed.options.clear(); // the options as written, which only the parser records
    assert_eq!(parsed, j);
}
