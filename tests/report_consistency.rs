//! The HTML report against the document it is drawn from (issue 22): the over-time charts cover
//! the whole measured period, the trailing partial interval included, their time axis ends at
//! the job's runtime, and a chart's stated mean is the table's number; one percentile rank,
//! fio's, end to end; fio's JSON lean unless `--json-intervals` asks for the intervals; `report`
//! on a `--status-interval` stream renders its last document.
//!
//! Pages are read as text: the charts are inline SVG whose tick labels, points and data tables
//! this file parses (`chart`, `x_ticks`, `last_point_x`, `data_table`).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;

/// The line chart's drawing: its x axis runs from x = 96 to x = 610 (`svg/mod.rs`: W − RIGHT).
const AXIS_LEFT: f64 = 96.0;
const AXIS_RIGHT: f64 = 610.0;

/// The `<figure>` of the chart titled `title`; None when the page has no such chart.
fn chart<'a>(html: &'a str, title: &str) -> Option<&'a str> {
    let at = html.find(&format!("<title>{title}</title>"))?;
    let start = html[..at].rfind("<figure")?;
    let end = at + html[at..].find("</figure>")?;
    Some(&html[start..end])
}

/// Every chart title on the page, in order.
fn titles(html: &str) -> Vec<String> {
    html.split("<figure class=\"chart\">")
        .skip(1)
        .filter_map(|f| {
            let t = f.split("<title>").nth(1)?;
            Some(t.split("</title>").next()?.to_string())
        })
        .collect()
}

/// `"3 s"`, `"279 IOPS"`, `"1.5 MiB/s"`, `"27.5 µs"`: the number and its unit.
fn number(text: &str) -> (f64, String) {
    let text = text.trim().replace(',', "");
    let (n, unit) = text.split_once(' ').unwrap_or((&text, ""));
    (
        n.parse()
            .unwrap_or_else(|_| panic!("not a number: {text:?}")),
        unit.to_string(),
    )
}

/// A bandwidth label in KiB/s.
fn kib_s(text: &str) -> f64 {
    match number(text) {
        (v, u) if u == "KiB/s" => v,
        (v, u) if u == "MiB/s" => v * 1024.0,
        (v, u) => panic!("not a bandwidth: {v} {u}"),
    }
}

/// A latency label in ns.
fn ns(text: &str) -> f64 {
    let (v, u) = number(text);
    v * match u.as_str() {
        "ns" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => panic!("not a latency: {text}"),
    }
}

/// The x axis' tick values (seconds) and where the axis ends, computed from the last tick's
/// position: a tick v at pixel x means the axis spans v · (right − left) / (x − left).
fn x_ticks(figure: &str) -> (Vec<f64>, f64) {
    let mut ticks = Vec::new();
    let mut last_px = 0.0;
    for part in figure.split("<path class=\"axis\" d=\"M").skip(1) {
        let Some((head, rest)) = part.split_once("v5\"/>") else {
            continue;
        };
        let px: f64 = head.split(',').next().unwrap().parse().unwrap();
        let label = rest.split('>').nth(1).unwrap().split('<').next().unwrap();
        let (v, unit) = number(label);
        assert_eq!(unit, "s", "{label}");
        ticks.push(v);
        last_px = px;
    }
    let last = *ticks.last().expect("x ticks");
    let end = if last > 0.0 {
        last * (AXIS_RIGHT - AXIS_LEFT) / (last_px - AXIS_LEFT)
    } else {
        f64::NAN
    };
    (ticks, end)
}

/// The x pixel of the last point of each line in the figure.
fn last_point_x(figure: &str) -> Vec<f64> {
    figure
        .split("<polyline class=\"line")
        .skip(1)
        .map(|p| {
            let pts = p
                .split("points=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let last = pts.split(' ').next_back().unwrap();
            last.split(',').next().unwrap().parse().unwrap()
        })
        .collect()
}

/// The cells of the first table in `html` after `from`: its header and its rows, as text.
fn data_table(html: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let t = html.split("<table>").nth(1).unwrap();
    let t = t.split("</table>").next().unwrap();
    // `<th>…</th>` or `<td class="num">…</td>`; not `<thead>`.
    let cells = |row: &str, tag: &str| -> Vec<String> {
        row.split(&format!("<{tag}"))
            .skip(1)
            .filter(|c| c.starts_with(['>', ' ']))
            .map(|c| {
                let c = c.split_once('>').unwrap().1;
                c.split(&format!("</{tag}>")).next().unwrap().to_string()
            })
            .collect()
    };
    let (head, body) = t.split_once("</thead>").unwrap();
    let rows = body.split("<tr>").skip(1).map(|r| cells(r, "td")).collect();
    (cells(head, "th"), rows)
}

/// The job's numbers table (the first table after `after` on the page): one row per section.
fn numbers_row(html: &str, after: &str, section: &str) -> Vec<String> {
    let from = html.find(after).unwrap();
    let (head, rows) = data_table(&html[from..]);
    assert_eq!(head[..3], ["section", "I/Os", "IOPS"], "{head:?}");
    rows.into_iter()
        .find(|r| r[0] == section)
        .unwrap_or_else(|| panic!("no {section} row"))
}

/// The legend entry of a mean line: `{dir} mean {value}`.
fn legend_mean(figure: &str, dir: &str) -> String {
    let key = format!("<span class=\"key mean\"></span>{dir} mean ");
    let at = figure
        .find(&key)
        .unwrap_or_else(|| panic!("no {dir} mean in {figure}"));
    let rest = &figure[at + key.len()..];
    rest[..rest.find('<').unwrap()].to_string()
}

/// Within `rel` of each other; the pages print three significant figures, half a unit of the
/// last of which is at most 0.5 %.
fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// Checks one job's charts against its table and its JSON: the means, the percentiles, and
/// that every over-time line reaches the runtime, where the axis ends. `after` finds the job's
/// table on the page.
fn assert_agrees(html: &str, job: &Value, after: &str) {
    let runtime_s = ["read", "write", "trim"]
        .iter()
        .map(|d| job[d]["runtime"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max)
        / 1000.0;
    assert!(runtime_s > 0.0, "{job}");
    let mut over_time = 0;
    for d in ["read", "write", "trim"] {
        let sec = &job[d];
        if sec["total_ios"].as_u64().unwrap_or(0) == 0 {
            continue;
        }
        let row = numbers_row(html, after, d);
        // IOPS: chart legend, table and document.
        let iops = sec["iops"].as_f64().unwrap();
        let fig = chart(html, "IOPS over time").expect("an IOPS chart");
        let mean = legend_mean(fig, d);
        assert_eq!(
            mean, row[2],
            "{d}: the chart's mean is not the table's IOPS"
        );
        let (v, unit) = number(&mean);
        assert_eq!(unit, "IOPS");
        assert!(
            close(v, iops, 0.0051),
            "{d}: {mean} against the document's {iops}"
        );
        // Bandwidth: in KiB/s or MiB/s, each within its three figures of the document's.
        let bw = sec["bw_bytes"].as_f64().unwrap() / 1024.0;
        let fig = chart(html, "Bandwidth over time").expect("a bandwidth chart");
        let mean = kib_s(&legend_mean(fig, d));
        let table = kib_s(&row[3]);
        assert!(
            close(mean, bw, 0.0051),
            "{d}: chart {mean} KiB/s, document {bw}"
        );
        assert!(
            close(table, bw, 0.0051),
            "{d}: table {table} KiB/s, document {bw}"
        );
        // p50 and p99: the table's cells are the document's percentiles.
        let pct = &sec["clat_ns"]["percentile"];
        for (col, key) in [(5, "50.000000"), (6, "99.000000")] {
            let want = pct[key].as_f64().unwrap();
            assert!(
                close(ns(&row[col]), want, 0.0051),
                "{d} p{key}: {}",
                row[col]
            );
        }
        over_time += 1;
    }
    assert!(over_time > 0);
    for title in titles(html) {
        if !title.contains("over time") {
            continue;
        }
        let fig = chart(html, &title).unwrap();
        let (ticks, end) = x_ticks(fig);
        assert!(
            ticks.iter().all(|t| *t <= runtime_s * 1.000_001),
            "{title}: ticks {ticks:?} past the runtime {runtime_s} s"
        );
        assert!(
            close(end, runtime_s, 0.0051),
            "{title}: the axis ends at {end} s, the runtime is {runtime_s} s"
        );
        // Every line reaches the end of the axis: the trailing partial interval is drawn. A rate
        // series without a tail ended on a sample, which covers the time up to the end (a
        // deadline the monitor missed before the job ended is labelled with that deadline): its
        // last point is then within one sampling interval of the end.
        let tail = if title.starts_with("IOPS") {
            "iops_tail"
        } else {
            "bw_tail"
        };
        let ended_on_a_sample = title.starts_with("IOPS") || title.starts_with("Bandwidth");
        let ended_on_a_sample = ended_on_a_sample
            && ["read", "write", "trim"].iter().any(|d| {
                job[d]["total_ios"].as_u64().unwrap_or(0) > 0 && job[d]["iogauge"][tail].is_null()
            });
        // A latency line ends where the last interval with such completions ends: when the
        // run's last 100 ms boundary falls between the last write and its fdatasync, the write
        // line ends at that boundary, the trailing partial interval's width before the axis end.
        let partial = (runtime_s * 1000.0) % 100.0 / 1000.0;
        let slack = if ended_on_a_sample {
            0.5 / runtime_s * (AXIS_RIGHT - AXIS_LEFT) + 1.0
        } else if title.contains("latency") {
            partial / runtime_s * (AXIS_RIGHT - AXIS_LEFT) + 1.0
        } else {
            1.0
        };
        for x in last_point_x(fig) {
            assert!(
                x <= AXIS_RIGHT + 0.05 && AXIS_RIGHT - x <= slack,
                "{title}: a line ends at x={x}, the axis at {AXIS_RIGHT} (runtime {runtime_s} s)"
            );
        }
    }
}

/// A short etcd check: the reproduction's "1,542 IOPS in the table, mean 708 IOPS on the chart".
#[test]
fn a_short_check_run_charts_agree_with_its_tables() {
    let dir = scratch();
    let out = scratch();
    let page = out.path().join("check.html");
    let o = iogauge(
        &[
            "check",
            "etcd",
            "--dir",
            dir.path().to_str().unwrap(),
            "--scale",
            "0.05",
            "--format",
            "json",
            "--report",
            page.to_str().unwrap(),
        ],
        out.path(),
    );
    assert!(
        matches!(o.status.code(), Some(0 | 3 | 4)),
        "{}",
        text(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    let job = &doc["profiles"][0]["report"]["jobs"][0];
    assert_agrees(&html, job, "<h3>Measurements</h3>");
    // The sync row's p99 is the judged number, and the percentile chart's p99 point is it.
    let row = numbers_row(&html, "<h3>Measurements</h3>", "sync");
    let p99 = job["sync"]["lat_ns"]["percentile"]["99.000000"]
        .as_f64()
        .unwrap();
    assert!(close(ns(&row[6]), p99, 0.0051), "{row:?} against {p99}");
    let (head, rows) = data_table(chart(&html, "Latency percentiles").unwrap());
    let col = head
        .iter()
        .position(|h| h == "sync (fsync/fdatasync) latency")
        .unwrap_or_else(|| panic!("{head:?}"));
    let at_p99 = rows.iter().find(|r| r[0] == "p99").unwrap();
    assert_eq!(at_p99[col], row[6]);
}

/// A 2 s fio job: its time axes end at 2 s (not 2.5 s), and its IOPS line reaches them.
#[test]
fn a_fio_pages_time_axes_end_at_the_runtime() {
    let dir = scratch();
    let out = scratch();
    let page = out.path().join("fio.html");
    let o = iogauge(
        &[
            "fio",
            "--name=j",
            "--rw=randread",
            "--bs=4k",
            "--size=4m",
            "--time_based",
            "--runtime=2",
            &format!("--directory={}", dir.path().display()),
            "--output-format=json",
            "--json-intervals",
            "--report",
            page.to_str().unwrap(),
        ],
        out.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    let t = titles(&html);
    for want in [
        "IOPS over time",
        "Bandwidth over time",
        "read clat latency p50 and p99 over time",
    ] {
        assert!(t.iter().any(|x| x == want), "{t:?}");
    }
    assert_agrees(&html, &doc["jobs"][0], "<h2>Job j</h2>");
}

/// fio's rank, end to end: with 1,000 reads, p99.9 is the 1,000th latency (the largest) and
/// p99.8 the 998th, as fio 3.33 reports them (the recorder used to give the 999th for p99.9).
#[test]
fn percentiles_are_the_latencies_at_fios_ranks() {
    let d = scratch();
    let o = iogauge(
        &[
            "fio",
            "--name=p",
            "--rw=randread",
            "--size=4m",
            "--number_ios=1000",
            "--write_lat_log=p",
            "--log_avg_msec=0",
            "--percentile_list=50:99.8:99.9:100",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let clat = &doc["jobs"][0]["read"]["clat_ns"];
    assert_eq!(clat["N"], 1000);
    assert_eq!(clat["iogauge"]["percentile_method"], "exact");
    let log = std::fs::read_to_string(d.path().join("p_clat.1.log")).unwrap();
    let mut v: Vec<u64> = log
        .lines()
        .map(|l| l.split(',').nth(1).unwrap().trim().parse().unwrap())
        .collect();
    v.sort_unstable();
    assert_eq!(v.len(), 1000);
    let pct = &clat["percentile"];
    assert_eq!(pct["50.000000"], v[499]);
    assert_eq!(pct["99.800000"], v[997]);
    assert_eq!(pct["99.900000"], v[999]);
    assert_eq!(pct["100.000000"], v[999]);
    for (p, rank) in [(50.0, 500), (99.8, 998), (99.9, 1000), (100.0, 1000)] {
        assert_eq!(iogauge::report::fio_rank(p, 1000), rank);
    }
}

/// A 1 s job's JSON three ways: lean by default (fio's keys, no per-direction `iogauge`), the
/// intervals with `--json-intervals`, and fio's own for the size. The page of a lean document
/// says why it has no charts over time.
#[test]
fn fios_json_is_lean_unless_the_intervals_are_asked_for() {
    let d = scratch();
    let args = [
        "--name=j",
        "--rw=randread",
        "--bs=4k",
        "--size=4m",
        "--time_based",
        "--runtime=1",
    ];
    let run = |extra: &[&str]| {
        let mut a = vec!["fio"];
        a.extend(args);
        a.push("--output-format=json");
        a.extend(extra);
        let o = iogauge(&a, d.path());
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        o.stdout
    };
    let lean = run(&[]);
    let full = run(&["--json-intervals"]);
    let lv: Value = serde_json::from_slice(&lean).unwrap();
    let fv: Value = serde_json::from_slice(&full).unwrap();
    let read = &lv["jobs"][0]["read"];
    assert!(read.get("iogauge").is_none(), "{read}");
    assert!(read["clat_ns"]["percentile"]["99.000000"].is_u64());
    assert_eq!(lv["iogauge"]["version"], fv["iogauge"]["version"]);
    let fr = &fv["jobs"][0]["read"]["iogauge"];
    assert!(fr["iops_series"].is_array() && fr["lat_intervals"]["intervals"].is_array());
    // Same keys as the full document but the per-direction `iogauge`.
    let mut stripped = fv.clone();
    for dir in ["read", "write", "trim"] {
        stripped["jobs"][0][dir]
            .as_object_mut()
            .unwrap()
            .remove("iogauge");
    }
    let paths = |v: &Value| {
        let mut out = std::collections::BTreeSet::new();
        key_paths(v, "", &mut out);
        out
    };
    assert_eq!(paths(&lv), paths(&stripped));
    eprintln!(
        "1 s psync randread: lean {} bytes, with --json-intervals {} bytes",
        lean.len(),
        full.len()
    );
    assert!(lean.len() < full.len());
    if have_fio() {
        let mut a: Vec<&str> = args.to_vec();
        let dir = format!("--directory={}", d.path().join("fio").display());
        std::fs::create_dir(d.path().join("fio")).unwrap();
        a.push(&dir);
        a.push("--output-format=json");
        let o = cmd("fio").args(&a).current_dir(d.path()).output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        eprintln!("fio's: {} bytes", o.stdout.len());
        // fio's fields and a small iogauge part (where it ran, notes), not a multiple.
        assert!(
            lean.len() < 2 * o.stdout.len(),
            "lean {} bytes against fio's {}",
            lean.len(),
            o.stdout.len()
        );
    }
    // A lean document renders, and says where its over-time charts went.
    std::fs::write(d.path().join("lean.json"), &lean).unwrap();
    std::fs::write(d.path().join("full.json"), &full).unwrap();
    let page = |name: &str| {
        let o = iogauge(&["report", name], d.path());
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert_eq!(text(&o.stderr), "");
        text(&o.stdout)
    };
    let note = "No charts over time: this document has no per-interval data (fio's JSON has \
                none; <code>iogauge fio</code> adds it to its JSON output with \
                <code>--json-intervals</code>";
    let (l, f) = (page("lean.json"), page("full.json"));
    assert!(l.contains(note), "{l}");
    assert!(
        !titles(&l).iter().any(|t| t.contains("over time")),
        "{:?}",
        titles(&l)
    );
    assert!(titles(&l).iter().any(|t| t == "Latency percentiles"));
    assert!(!f.contains(note));
    assert!(titles(&f).iter().any(|t| t == "IOPS over time"));
    // The flag is in `iogauge fio --help`.
    let h = iogauge(&["fio", "--help"], d.path());
    assert!(
        text(&h.stdout).contains("  --json-intervals         add iogauge's per-interval data"),
        "{}",
        text(&h.stdout)
    );
}

/// The documents of a stream, split as a reader would.
fn split_documents(bytes: &[u8]) -> Vec<Value> {
    serde_json::Deserializer::from_slice(bytes)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect()
}

/// `--status-interval=1` with JSON prints a document per second and then the run's: `report`
/// renders that last one (it used to fail with "trailing characters"), and says so; a stream cut
/// short renders its last complete document and says that; text mixed in is refused, named.
#[test]
fn report_renders_the_last_document_of_a_status_interval_stream() {
    let d = scratch();
    let o = iogauge(
        &[
            "fio",
            "--name=s",
            "--ioengine=null",
            "--rw=write",
            "--size=1g",
            "--time_based",
            "--runtime=2500ms",
            "--status-interval=1",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let docs = split_documents(&o.stdout);
    assert!(docs.len() >= 2, "{} documents", docs.len());
    let n = docs.len();
    std::fs::write(d.path().join("stream.json"), &o.stdout).unwrap();
    std::fs::write(
        d.path().join("last.json"),
        serde_json::to_vec(&docs[n - 1]).unwrap(),
    )
    .unwrap();
    std::fs::write(
        d.path().join("before.json"),
        serde_json::to_vec(&docs[n - 2]).unwrap(),
    )
    .unwrap();
    let report = |name: &str| iogauge(&["report", name], d.path());
    let s = report("stream.json");
    assert_eq!(s.status.code(), Some(0), "{}", text(&s.stderr));
    assert_eq!(
        text(&s.stderr),
        format!(
            "iogauge report: stream.json holds {n} JSON documents, one after another (fio's \
             --status-interval output); rendering the last, the run's result\n"
        )
    );
    let last = report("last.json");
    assert_eq!(text(&last.stderr), "");
    assert_eq!(s.stdout, last.stdout);

    // Cut inside the last document: the one before it, said to be an interval's.
    let cut = &o.stdout[..o.stdout.len() - 200];
    std::fs::write(d.path().join("cut.json"), cut).unwrap();
    let c = report("cut.json");
    assert_eq!(c.status.code(), Some(0), "{}", text(&c.stderr));
    assert_eq!(
        text(&c.stderr),
        format!(
            "iogauge report: cut.json holds {} complete JSON documents and an incomplete one \
             after them (a --status-interval stream cut short?); rendering the last complete \
             one, the results as of its interval, not the run's end\n",
            n - 1
        )
    );
    assert_eq!(c.stdout, report("before.json").stdout);

    // fio's text output mixed in: refused with what was found.
    let mut mixed = serde_json::to_vec(&docs[0]).unwrap();
    mixed.extend_from_slice(b"\nRun status group 0 (all jobs):\n");
    std::fs::write(d.path().join("mixed.json"), mixed).unwrap();
    let m = report("mixed.json");
    assert_eq!(m.status.code(), Some(2));
    let err = text(&m.stderr);
    assert!(
        err.starts_with(
            "iogauge report: mixed.json holds 1 JSON document, then something that is not JSON \
             (expected value at line "
        ) && err.ends_with(
            "); expected JSON documents only, as --output-format=json writes them (with \
             several formats, fio mixes text in: use json alone)\n"
        ),
        "{err}"
    );
    assert!(m.stdout.is_empty());
}
