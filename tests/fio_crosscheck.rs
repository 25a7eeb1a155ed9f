//! The same small jobs under fio and iogauge: iogauge's JSON key set must contain fio's, and the
//! I/O and byte counts must be equal. fio must be installed (CI installs it; with CI=true a
//! missing fio fails these tests instead of skipping them).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;

// Runs `args` under both tools in separate temp dirs; returns (fio, iogauge) JSON.
use common::both_args as both;

fn assert_counts_equal(fio: &Value, iog: &Value) {
    let fj = fio["jobs"].as_array().unwrap();
    let gj = iog["jobs"].as_array().unwrap();
    assert_eq!(fj.len(), gj.len(), "number of job entries");
    for (f, g) in fj.iter().zip(gj) {
        assert_eq!(f["jobname"], g["jobname"]);
        assert_eq!(f["groupid"], g["groupid"]);
        for d in ["read", "write", "trim"] {
            assert_eq!(
                u(f, &[d, "total_ios"]),
                u(g, &[d, "total_ios"]),
                "{d} total_ios"
            );
            assert_eq!(
                u(f, &[d, "io_bytes"]),
                u(g, &[d, "io_bytes"]),
                "{d} io_bytes"
            );
        }
    }
}

#[test]
fn etcd_recipe_counts_and_keys_match_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[
        "--rw=write",
        "--ioengine=sync",
        "--fdatasync=1",
        "--directory=@DIR@",
        "--size=2m",
        "--bs=2300",
        "--name=mytest",
    ]);
    assert_keys_superset(&f, &g);
    assert_counts_equal(&f, &g);
    let writes = u(&g, &["jobs", "0", "write", "total_ios"]);
    assert_eq!(writes, 911);
    // fio 3.33 books each fdatasync as a short read; iogauge counts it as sync I/O.
    let fio_syncs =
        u(&f, &["jobs", "0", "sync", "total_ios"]) + u(&f, &["jobs", "0", "read", "short_ios"]);
    assert_eq!(fio_syncs, 911);
    assert_eq!(u(&g, &["jobs", "0", "sync", "total_ios"]), 911);
    assert_eq!(u(&g, &["jobs", "0", "read", "short_ios"]), 0);
    assert_eq!(u(&g, &["jobs", "0", "sync", "lat_ns", "N"]), 911);
}

#[test]
fn null_engine_counts_and_keys_match_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&["--name=null", "--ioengine=null", "--size=64m", "--bs=4k"]);
    assert_keys_superset(&f, &g);
    assert_counts_equal(&f, &g);
    assert_eq!(u(&g, &["jobs", "0", "read", "total_ios"]), 16384);
}

#[test]
fn random_reads_and_mixes_match_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[
        "--name=rr",
        "--directory=@DIR@",
        "--rw=randread",
        "--ioengine=psync",
        "--size=8m",
        "--bs=4k",
    ]);
    assert_keys_superset(&f, &g);
    assert_counts_equal(&f, &g);
    // A mix splits by chance, differently in each tool: compare the total.
    let (f, g) = both(&[
        "--name=mix",
        "--directory=@DIR@",
        "--rw=randrw",
        "--rwmixread=75",
        "--size=8m",
        "--bs=4k",
    ]);
    assert_keys_superset(&f, &g);
    let total = |v: &Value| {
        u(v, &["jobs", "0", "read", "total_ios"]) + u(v, &["jobs", "0", "write", "total_ios"])
    };
    assert_eq!(total(&f), total(&g));
    assert_eq!(total(&g), 2048);
}

#[test]
fn job_file_with_groups_matches_fio() {
    if !have_fio() {
        return;
    }
    let jobdir = scratch();
    let jobfile = jobdir.path().join("groups.fio");
    std::fs::write(
        &jobfile,
        "[global]\nsize=4m\nbs=4k\nioengine=psync\n\n[seqw]\nrw=write\nnumjobs=2\ngroup_reporting\n\n[randr]\nstonewall\nrw=randread\n",
    )
    .unwrap();
    let jf = jobfile.to_str().unwrap().to_string();
    let (f, g) = both(&[jf.as_str(), "--directory=@DIR@"]);
    assert_keys_superset(&f, &g);
    assert_counts_equal(&f, &g);
    assert_eq!(u(&g, &["jobs", "0", "write", "total_ios"]), 2048);
    assert_eq!(u(&g, &["jobs", "1", "groupid"]), 1);
}

#[test]
fn async_engines_counts_and_keys_match_fio() {
    if !have_fio() {
        return;
    }
    for engine in ["libaio", "io_uring"] {
        let eng = format!("--ioengine={engine}");
        let (f, g) = both(&[
            "--name=q",
            "--directory=@DIR@",
            "--rw=randwrite",
            &eng,
            "--iodepth=16",
            "--direct=1",
            "--size=8m",
            "--bs=4k",
        ]);
        assert_keys_superset(&f, &g);
        assert_counts_equal(&f, &g);
        assert_eq!(
            u(&g, &["jobs", "0", "write", "total_ios"]),
            2048,
            "{engine}"
        );
        // slat is measured for queueing engines, as in fio.
        assert_eq!(
            u(&g, &["jobs", "0", "write", "slat_ns", "N"]),
            2048,
            "{engine}"
        );
        // Seed 003 (GitLab), size lowered: gtod_reduce=1 turns latency off in both tools.
        let (f, g) = both(&[
            "--randrepeat=1",
            &eng,
            "--direct=1",
            "--gtod_reduce=1",
            "--name=test",
            "--bs=4k",
            "--iodepth=64",
            "--readwrite=randrw",
            "--rwmixread=75",
            "--size=8m",
            "--filename=@DIR@/testfile",
        ]);
        assert_keys_superset(&f, &g);
        let total = |v: &Value| {
            u(v, &["jobs", "0", "read", "total_ios"]) + u(v, &["jobs", "0", "write", "total_ios"])
        };
        assert_eq!(total(&f), total(&g), "{engine}");
        assert_eq!(u(&g, &["jobs", "0", "read", "clat_ns", "N"]), 0, "{engine}");
    }
}
