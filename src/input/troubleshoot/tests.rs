//! Loading troubleshoot specs: seed 000's collector, troubleshoot's example analyzer, and each way
//! a spec can be wrong.

use super::analyzer::{Condition, Op, OutcomeKind, Stat};
use super::collector::SyncPolicy;
use super::*;
use std::time::Duration;

fn load_one(text: &str) -> Result<Preflight, String> {
    let mut p = Preflight::default();
    load(text, "spec.yaml", &mut p).map(|_| p)
}

/// Seed 000's example collector, as a SupportBundle.
const SEED_000: &str = r#"
apiVersion: troubleshoot.sh/v1beta2
kind: SupportBundle
metadata:
  name: filesystem-performance
spec:
  hostCollectors:
    - filesystemPerformance:
        collectorName: filesystem-latency-two-minute-benchmark
        timeout: 2m
        directory: /var/lib/etcd
        fileSize: 22Mi
        operationSizeBytes: 2300
        datasync: true
        enableBackgroundIOPS: true
        backgroundIOPSWarmupSeconds: 10
        backgroundWriteIOPS: 300
        backgroundWriteIOPSJobs: 6
        backgroundReadIOPS: 50
        backgroundReadIOPSJobs: 1
"#;

const EXAMPLE_ANALYZER: &str = r#"
apiVersion: troubleshoot.sh/v1beta2
kind: HostPreflight
metadata:
  name: etcd
spec:
  hostCollectors:
    - cpu: {}
    - filesystemPerformance:
        collectorName: etcd-perf
        directory: /var/lib/etcd
        fileSize: 22Mi
        operationSize: 2300
        datasync: true
        runTime: "0"
  hostAnalyzers:
    - cpu:
        outcomes:
          - pass: {message: ok}
    - filesystemPerformance:
        collectorName: etcd-perf
        outcomes:
          - pass: {when: "p99 < 3ms", message: "Write latency is great! (p99: {{ .P99 }})"}
          - pass: {when: "p99 < 5ms", message: "Write latency is ok (p99: {{ .P99 }})"}
          - warn: {when: "p99 < 8ms", message: "Write latency is high {{ .String }}"}
          - fail: {when: "p99 >= 8ms", message: "Write latency is too high {{ .String }}"}
"#;

#[test]
fn seed_000_collector_reads_with_the_misspelt_key_noticed() {
    let p = load_one(SEED_000).unwrap();
    let c = &p.collectors[0];
    assert_eq!(c.collector_name, "filesystem-latency-two-minute-benchmark");
    assert_eq!(c.directory, std::path::PathBuf::from("/var/lib/etcd"));
    assert_eq!(c.file_size, 23_068_672);
    assert_eq!(c.operation_size, 2300);
    assert_eq!(c.sync, SyncPolicy::Fdatasync);
    assert_eq!(c.timeout, Duration::from_secs(120));
    assert_eq!(c.run_time, Some(Duration::from_secs(120)));
    let b = c.background.as_ref().unwrap();
    assert_eq!(
        (b.write_iops, b.write_jobs, b.read_iops, b.read_jobs),
        (300, 6, 50, 1)
    );
    assert_eq!(b.warmup, Duration::from_secs(10));
    assert_eq!(p.notices.len(), 1);
    assert!(p.notices[0].contains("'operationSizeBytes' is read as 'operationSize' (2300 bytes)"));
    let j = c.job();
    assert_eq!((j.bs[1], j.fdatasync, j.fsync), (2300, 1, 0));
}

#[test]
fn example_analyzer_and_skipped_kinds() {
    let p = load_one(EXAMPLE_ANALYZER).unwrap();
    assert_eq!(p.collectors.len(), 1);
    assert_eq!(p.collectors[0].run_time, None);
    let a = &p.analyzers[0];
    assert_eq!(a.check_name, "Filesystem Performance");
    assert_eq!(a.collector_name, "etcd-perf");
    assert_eq!(a.outcomes.len(), 4);
    assert_eq!(
        a.outcomes[0].when,
        Condition::Compare {
            stat: Stat::P(12),
            op: Op::Lt,
            value: 3e6
        }
    );
    assert_eq!(a.outcomes[3].kind, OutcomeKind::Fail);
    assert_eq!(
        p.skipped,
        vec![
            "hostCollectors: cpu".to_string(),
            "hostAnalyzers: cpu".to_string()
        ]
    );
}

#[test]
fn defaults_sync_policies_and_run_times() {
    let base = "kind: HostPreflight\nspec:\n  hostCollectors:\n    - filesystemPerformance:\n        directory: /d\n";
    let p = load_one(base).unwrap();
    let c = &p.collectors[0];
    assert_eq!(c.collector_name, "filesystemPerformance");
    assert_eq!((c.file_size, c.operation_size), (10 << 20, 1024));
    assert_eq!(c.sync, SyncPolicy::None);
    assert_eq!(c.timeout, Duration::from_secs(60));
    for (extra, policy) in [
        (
            "        sync: true\n        datasync: true\n",
            SyncPolicy::Fsync,
        ),
        ("        datasync: \"true\"\n", SyncPolicy::Fdatasync),
    ] {
        assert_eq!(
            load_one(&format!("{base}{extra}")).unwrap().collectors[0].sync,
            policy
        );
    }
    for (rt, want) in [
        ("\"2m\"", Some(120)),
        ("30", Some(30)),
        ("\"\"", None),
        ("\"0\"", None),
    ] {
        let p = load_one(&format!("{base}        runTime: {rt}\n")).unwrap();
        assert_eq!(
            p.collectors[0].run_time,
            want.map(Duration::from_secs),
            "{rt}"
        );
    }
}

#[test]
fn every_way_a_spec_can_be_wrong_has_its_message() {
    let c = |extra: &str| {
        load_one(&format!(
            "kind: HostPreflight\nspec:\n  hostCollectors:\n    - filesystemPerformance:\n        directory: /d\n{extra}"
        ))
        .unwrap_err()
    };
    let at = "spec.yaml (document 1): spec.hostCollectors[0].filesystemPerformance";
    assert_eq!(
        c("        filesize: 1Mi\n"),
        format!("{at}: unknown key 'filesize'; did you mean 'fileSize'?")
    );
    assert_eq!(
        c("        fileSize: 22MB\n"),
        format!(
            "{at}.fileSize: '22MB': expected a Kubernetes quantity such as 22Mi, 100M, 1Gi or 4096"
        )
    );
    assert_eq!(
        c("        timeout: 60\n"),
        format!("{at}.timeout: '60': expected a Go duration such as 90s, 2m, 1m30s, 500ms or 1.5h")
    );
    assert_eq!(
        c("        sync: yes please\n"),
        format!("{at}.sync: expected true or false, found 'yes please'")
    );
    assert_eq!(
        c("        operationSize: 2300\n        operationSizeBytes: 2300\n"),
        format!("{at}: both operationSize and operationSizeBytes are set; keep operationSize")
    );
    assert_eq!(
        c("        fileSize: \"1000\"\n        operationSize: 4096\n"),
        format!("{at}: fileSize (1000 bytes) is smaller than one operation (4096 bytes)")
    );
    assert_eq!(
        load_one(
            "kind: HostPreflight\nspec:\n  hostCollectors:\n    - filesystemPerformance: {}\n"
        )
        .unwrap_err(),
        format!("{at}: 'directory' is required (where the benchmark creates its file)")
    );
    assert_eq!(
        load_one("kind: Pod\nspec: {}\n").unwrap_err(),
        "spec.yaml (document 1): kind 'Pod' is not a troubleshoot spec iogauge reads; expected \
         HostPreflight, Preflight, SupportBundle or HostCollector"
    );
    assert!(load_one("kind: [")
        .unwrap_err()
        .starts_with("spec.yaml: not valid YAML: "));

    let a = |outcomes: &str| {
        load_one(&format!(
            "kind: Preflight\nspec:\n  analyzers:\n    - filesystemPerformance:\n        outcomes:\n{outcomes}"
        ))
        .unwrap_err()
    };
    let at = "spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass";
    assert_eq!(
        a("          - pass: {when: \"p99 < 10\"}\n"),
        format!("{at}: when 'p99 < 10': '10': expected a Go duration such as 90s, 2m, 1m30s, 500ms or 1.5h")
    );
    assert_eq!(
        a("          - pass: {when: \"p98 < 10ms\"}\n"),
        format!("{at}: when 'p98 < 10ms': unknown keyword 'p98'; expected min, max, average, p1 … p9999 or iops")
    );
    assert_eq!(
        a("          - pass: {when: \"p99 ~ 10ms\"}\n"),
        format!("{at}: when 'p99 ~ 10ms': unknown operator '~'; expected <, <=, >, >=, = or ==")
    );
    assert_eq!(
        a("          - pass: {when: \"p99<10ms\"}\n"),
        format!("{at}: when 'p99<10ms': expected three words '<keyword> <operator> <duration>', e.g. 'p99 < 10ms'")
    );
    assert_eq!(
        a("          - pass: {when: \"p99 < 10ms\", mesage: hi}\n"),
        format!("{at}: unknown key 'mesage'; did you mean 'message'?")
    );
    assert_eq!(
        a("          - pass: {message: \"{{ .P98 }}\"}\n"),
        format!("{at}.message: unknown placeholder '{{{{ .P98 }}}}'; expected one of .Min, .Max, .Average, .P1 … .P9999, .IOPS or .String")
    );
    assert_eq!(
        a("          - pass: {when: \"p99 < 1ms\"}\n          - fail: {when: fileNotCollected}\n")
            .replace("[0].pass", "[X]"),
        "spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[1].fail: \
         fileNotCollected is only checked in the first outcome; move it first"
    );
    assert_eq!(
        a("          - maybe: {when: \"p99 < 1ms\"}\n"),
        "spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0]: 'maybe' is not \
         an outcome; expected pass, warn or fail"
    );
}

#[test]
fn when_forms_and_operators() {
    use super::analyzer::parse_when;
    assert_eq!(parse_when("").unwrap(), Condition::Always);
    assert_eq!(
        parse_when("fileNotCollected").unwrap(),
        Condition::FileNotCollected
    );
    for (w, stat, op, v) in [
        ("P99 < 10ms", Stat::P(12), Op::Lt, 1e7),
        ("min <= 1us", Stat::Min, Op::Le, 1e3),
        ("Max > 1.5s", Stat::Max, Op::Gt, 1.5e9),
        ("average >= 0", Stat::Average, Op::Ge, 0.0),
        ("avg = 2ms", Stat::Average, Op::Eq, 2e6),
        ("p9999 == 100µs", Stat::P(16), Op::Eq, 1e5),
        ("p1 === 5ns", Stat::P(0), Op::Eq, 5.0),
        ("iops >= 1000", Stat::Iops, Op::Ge, 1000.0),
    ] {
        assert_eq!(
            parse_when(w).unwrap(),
            Condition::Compare { stat, op, value: v },
            "{w}"
        );
    }
    assert!(parse_when("iops >= 1ms").is_err());
}

#[test]
fn several_documents_accumulate() {
    let two = format!("{SEED_000}\n---\n{EXAMPLE_ANALYZER}");
    let p = load_one(&two).unwrap();
    assert_eq!(p.collectors.len(), 2);
    assert_eq!(p.analyzers.len(), 1);
}

#[test]
fn an_analyzer_must_name_a_collector_of_the_specs() {
    let analyzer = |name: &str| {
        format!(
            "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nspec:\n  hostAnalyzers:\n    \
             - filesystemPerformance:\n        collectorName: {name}\n        outcomes:\n          \
             - pass: {{message: ok}}\n"
        )
    };
    let collector = "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nspec:\n  \
                     hostCollectors:\n    - filesystemPerformance:\n        collectorName: a\n        \
                     directory: /tmp/x\n        exclude: true\n";
    // Analyzers only: nothing could ever be collected for them.
    let p = load_one(&analyzer("a")).unwrap();
    assert_eq!(
        p.check_analyzers_have_collectors().unwrap_err(),
        "spec.yaml (document 1): spec.hostAnalyzers[0].filesystemPerformance: analyzer \
         'Filesystem Performance': collectorName 'a' matches no collector; the specs have no \
         filesystemPerformance collector. Add one, or pass --analyze-only DIR to evaluate results \
         collected elsewhere"
    );
    // The collector may come from another spec file, and may be excluded (a toggle, not a typo).
    let mut p = Preflight::default();
    load(collector, "c.yaml", &mut p).unwrap();
    load(&analyzer("a"), "a.yaml", &mut p).unwrap();
    assert_eq!(p.check_analyzers_have_collectors(), Ok(()));
    load(&analyzer("b"), "b.yaml", &mut p).unwrap();
    assert!(p
        .check_analyzers_have_collectors()
        .unwrap_err()
        .starts_with("b.yaml (document 1): spec.hostAnalyzers[0].filesystemPerformance: analyzer"));
}
