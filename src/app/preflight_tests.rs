//! Tests of preflight's pipeline pieces: directory maps and what `--sequential` watches.

use super::*;
use crate::model::sequential::WatchedMetric;

fn loaded(collector: &str, analyzers: &str) -> Preflight {
    let spec = format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nspec:\n  hostCollectors:\n    \
         - filesystemPerformance:\n        collectorName: c\n        directory: /d\n{collector}  \
         hostAnalyzers:\n{analyzers}"
    );
    let mut p = Preflight::default();
    crate::input::troubleshoot::load(&spec, "s.yaml", &mut p).unwrap();
    p
}

fn analyzer(name: &str, exclude: bool, when: &str) -> String {
    format!(
        "    - filesystemPerformance:\n        collectorName: {name}\n        exclude: \
         {exclude}\n        outcomes:\n          - pass: {{when: \"{when}\"}}\n"
    )
}

#[test]
fn a_collector_watches_what_its_own_analyzers_compare() {
    let both = analyzer("c", false, "p99 < 5ms") + &analyzer("c", false, "p90 < 2ms");
    let p = loaded("        datasync: true\n", &both);
    let s = watch_of(&p.collectors[0], &p).unwrap();
    assert_eq!(
        s.watch.iter().map(|w| w.metric).collect::<Vec<_>>(),
        [
            WatchedMetric::SyncQuantile(0.99),
            WatchedMetric::SyncQuantile(0.9)
        ]
    );
    assert_eq!(s.watch[0].key, "fdatasync_p99");
    // Plain writes: their own latency; an excluded analyzer or another collector's is not
    // read, so its average does not make this one run whole.
    let others = analyzer("c", false, "p99 < 5ms")
        + &analyzer("c", true, "average < 1ms")
        + &analyzer("other", false, "max < 1s");
    let p = loaded("", &others);
    let s = watch_of(&p.collectors[0], &p).unwrap();
    assert_eq!(s.watch[0].metric, WatchedMetric::WriteQuantile(0.99));
    assert_eq!(s.watch[0].key, "write_p99");
    let p = loaded("        sync: true\n", &analyzer("c", false, "p99 < 5ms"));
    assert_eq!(
        watch_of(&p.collectors[0], &p).unwrap().watch[0].key,
        "fsync_p99"
    );
}

#[test]
fn background_load_or_no_reader_runs_whole() {
    let bg = "        enableBackgroundIOPS: true\n        backgroundWriteIOPS: 10\n        \
              backgroundWriteIOPSJobs: 1\n";
    let p = loaded(bg, &analyzer("c", false, "p99 < 5ms"));
    assert_eq!(
        watch_of(&p.collectors[0], &p).unwrap_err(),
        "it runs background IOPS jobs, whose load is part of what it measures"
    );
    let p = loaded("", &analyzer("other", false, "p99 < 5ms"));
    assert_eq!(
        watch_of(&p.collectors[0], &p).unwrap_err(),
        "no analyzer reads it (its result files are the output)"
    );
    let p = loaded("", &analyzer("c", false, "max < 5ms"));
    assert_eq!(
        watch_of(&p.collectors[0], &p).unwrap_err(),
        "an analyzer compares max, which only the whole run measures"
    );
}

#[test]
fn a_nested_directory_follows_its_own_map() {
    let mut p = Preflight::default();
    let spec = "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  \
                name: t\nspec:\n  hostCollectors:\n    - filesystemPerformance:\n        \
                collectorName: a\n        directory: /var/lib/etcd\n    - \
                filesystemPerformance:\n        collectorName: b\n        directory: \
                /var/lib/etcd/wal\n    - filesystemPerformance:\n        collectorName: c\n        \
                directory: /var/lib/etcd/x/y\n";
    crate::input::troubleshoot::load(spec, "s.yaml", &mut p).unwrap();
    let maps = [
        (PathBuf::from("/var/lib/etcd"), PathBuf::from("/host/0")),
        (PathBuf::from("/var/lib/etcd/wal"), PathBuf::from("/host/1")),
    ];
    let notes = map_directories(&mut p, &maps).unwrap();
    let dirs: Vec<&Path> = p.collectors.iter().map(|c| c.directory.as_path()).collect();
    assert_eq!(
        dirs,
        [
            Path::new("/host/0"),
            Path::new("/host/1"),
            Path::new("/host/0/x/y")
        ]
    );
    assert_eq!(notes.len(), 3);
}
