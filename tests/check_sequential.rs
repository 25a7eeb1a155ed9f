//! `iogauge check`'s sequential verdicts (issue 27) on this disk and on a throttled one: a run
//! either stops early with every threshold decided by a bound on the right side of its margin,
//! or runs the full recipe and says so; `--full` runs the published recipe; the verdict always
//! agrees with the decisions. The stopping rule itself is unit-tested at every boundary
//! (src/stats/sequential, src/run/sequential.rs).

use crate::common;
use common::throttle::Throttle;
use common::*;
use serde_json::Value;

fn check_json(args: &[&str], dir: &std::path::Path) -> (Option<i32>, Value, String) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--dir", dir.to_str().unwrap(), "--format", "json"]);
    let o = iogauge(&all, dir);
    let doc = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), doc, text(&o.stderr))
}

/// What every sequential result must satisfy, whatever this disk's speed.
fn assert_consistent(p: &Value) {
    let s = &p["sequential"];
    assert!(s.is_object(), "{p}");
    let margin = s["margin"].as_f64().unwrap();
    assert_eq!(s["confidence"], 0.999);
    let early = s["stopped_early"].as_bool().unwrap();
    let verdict = p["verdict"].as_str().unwrap();
    for d in s["decisions"].as_array().unwrap() {
        let t = d["threshold"].as_f64().unwrap();
        let side = d["side"].as_str().unwrap();
        if early {
            assert_ne!(side, "undecided", "{p}");
        }
        let bound = d["bound"].as_f64();
        match side {
            // A decision rests on a bound beyond the margin, and the measured value agrees.
            "below" => assert!(bound.unwrap() <= t * (1.0 - margin), "{d}"),
            "above" => assert!(bound.unwrap() >= t * (1.0 + margin), "{d}"),
            _ => assert!(bound.is_none(), "{d}"),
        }
        let m = p["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == d["metric"])
            .unwrap();
        let v = m["value"].as_f64().unwrap();
        match side {
            "below" => assert!(v < t, "{v} {d}"),
            "above" => assert!(v >= t, "{v} {d}"),
            _ => {}
        }
    }
    if early {
        // Stopped before the recipe's end, and not ranked among figures of the full recipe.
        match (s["full_ios"].as_u64(), s["full_seconds"].as_f64()) {
            (Some(n), _) => assert!(s["ios"].as_u64().unwrap() < n, "{s}"),
            (None, Some(secs)) => assert!(s["seconds"].as_f64().unwrap() < secs, "{s}"),
            _ => panic!("no recipe length: {s}"),
        }
        assert!(s["seconds"].as_f64().unwrap() >= 1.0, "the floor: {s}");
        for m in p["metrics"].as_array().unwrap() {
            assert!(m["rank"].is_null(), "{m}");
        }
    }
    assert!(["pass", "warn", "fail"].contains(&verdict), "{p}");
}

#[test]
fn this_disk_is_decided_early_or_the_run_says_why_not() {
    serial();
    let d = scratch();
    let (code, doc, err) = check_json(&["etcd", "gitlab", "--scale", "0.3"], d.path());
    assert!([Some(0), Some(3), Some(4)].contains(&code), "{err}");
    for p in doc["profiles"].as_array().unwrap() {
        assert_consistent(p);
        if !p["sequential"]["stopped_early"].as_bool().unwrap() {
            // The full length of a size-bound recipe: every one of its I/Os.
            let s = &p["sequential"];
            if let Some(n) = s["full_ios"].as_u64() {
                assert_eq!(s["ios"].as_u64(), Some(n), "{s}");
            }
        }
    }
    assert_empty(d.path());
    // The text says how each verdict was reached, right under the profile's line.
    let o = iogauge(
        &[
            "check",
            "etcd",
            "--scale",
            "0.1",
            "--dir",
            d.path().to_str().unwrap(),
        ],
        d.path(),
    );
    let out = text(&o.stdout);
    let second = out.lines().nth(1).unwrap();
    assert!(
        second.starts_with("  decided after ") || second.starts_with("  ran the full recipe ("),
        "{out}"
    );
    assert!(second.contains(" at 99.9 % confidence"), "{out}");
}

#[test]
fn full_runs_the_published_recipe_and_ranks_it() {
    serial();
    let d = scratch();
    let (code, doc, err) = check_json(&["etcd", "--scale", "0.1", "--full"], d.path());
    assert!([Some(0), Some(3), Some(4)].contains(&code), "{err}");
    let p = &doc["profiles"][0];
    assert!(p["sequential"].is_null(), "{p}");
    let writes = p["report"]["jobs"][0]["write"]["total_ios"]
        .as_u64()
        .unwrap();
    assert_eq!(writes, 1002, "the whole 2.2 MiB in 2300-byte writes");
    if p["not_disk"].is_null() {
        assert!(p["metrics"][0]["rank"].is_string(), "{p}");
    }
}

/// A real slow disk (100 write IOPS through a blkio group): etcd's p99 fdatasync lands far above
/// 10 ms, and the sequential run fails it; if it stopped early, the bound says why.
#[test]
fn a_throttled_disk_fails_etcd_and_the_bound_says_why() {
    serial();
    let d = scratch();
    let Some(t) = Throttle::new(d.path(), "write_iops_device", 100) else {
        return;
    };
    let o = t.sh(&format!(
        "exec {} check etcd --scale 0.05 --dir {} --format json",
        env!("CARGO_BIN_EXE_iogauge"),
        d.path().display()
    ));
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &doc["profiles"][0];
    assert_eq!(p["verdict"], "fail");
    assert_consistent(p);
    let s = &p["sequential"];
    if s["stopped_early"] == true {
        assert_eq!(s["decisions"][0]["side"], "above");
    }
    assert_empty(d.path());
}
