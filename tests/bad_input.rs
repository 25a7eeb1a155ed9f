//! Malformed input across every command: each case must exit 2 before anything runs, print
//! nothing on stdout, say on stderr what was wrong with which input (the exact first line is
//! asserted; the messages name the input and what to write instead), and write nothing in the
//! directory it ran in. The history is pointed into that directory too, so a case that saved a
//! run would show up there.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::io::Write;
use std::process::Stdio;

struct Case {
    args: &'static [&'static str],
    /// Files the case reads (job files, specs, profiles, results), created in its directory.
    files: &'static [(&'static str, &'static str)],
    stdin: Option<&'static str>,
    /// The first line of stderr that is not a note.
    err: &'static str,
}

#[rustfmt::skip]
static CASES: &[Case] = &[
    Case {
        args: &["check", "--size=0"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0' for '--size <S>': must be above 0",
    },
    Case {
        args: &["check", "--size=12x"],
        files: &[],
        stdin: None,
        err: "error: invalid value '12x' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--size="],
        files: &[],
        stdin: None,
        err: "error: invalid value '' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--size=1e3"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1e3' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--size=1.5.5m"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1.5.5m' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--size=m"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'm' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--size=10 m"],
        files: &[],
        stdin: None,
        err: "error: invalid value '10 m' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--size=99999999999999999999g"],
        files: &[],
        stdin: None,
        err: "error: invalid value '99999999999999999999g' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--size=-5"],
        files: &[],
        stdin: None,
        err: "error: invalid value '-5' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--size=0x10"],
        files: &[],
        stdin: None,
        err: "iogauge check: --size 16: smaller than one 2300-byte block of profile 'etcd'; use at least 2300 bytes (e.g. 64m)",
    },
    Case {
        args: &["check", "--size=1%"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1%' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--max-size=0"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0' for '--max-size <S>': must be above 0",
    },
    Case {
        args: &["check", "--max-size=abc"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'abc' for '--max-size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--max-size="],
        files: &[],
        stdin: None,
        err: "error: invalid value '' for '--max-size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--max-size=1q"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1q' for '--max-size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--max-size=5%"],
        files: &[],
        stdin: None,
        err: "error: invalid value '5%' for '--max-size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["check", "--duration=0"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0' for '--duration <D>': must be above 0",
    },
    Case {
        args: &["check", "--duration=5x"],
        files: &[],
        stdin: None,
        err: "error: invalid value '5x' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["check", "--duration=-1"],
        files: &[],
        stdin: None,
        err: "error: invalid value '-1' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["check", "--duration=1h2"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1h2' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["check", "--duration="],
        files: &[],
        stdin: None,
        err: "error: invalid value '' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["check", "--duration=1.5.5s"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1.5.5s' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["check", "--duration=ms"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'ms' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["check", "--duration=30 s"],
        files: &[],
        stdin: None,
        err: "error: invalid value '30 s' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["check", "--duration=99999999999999999999"],
        files: &[],
        stdin: None,
        err: "error: invalid value '99999999999999999999' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["check", "--scale=0"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "--scale=2"],
        files: &[],
        stdin: None,
        err: "error: invalid value '2' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "--scale=abc"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'abc' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "--scale=-0.5"],
        files: &[],
        stdin: None,
        err: "error: invalid value '-0.5' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "--scale=nan"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'nan' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "--scale=inf"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'inf' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "--scale="],
        files: &[],
        stdin: None,
        err: "error: invalid value '' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "--scale=1.0001"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1.0001' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "--scale=0,5"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0,5' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["check", "nosuchprofile"],
        files: &[],
        stdin: None,
        err: "iogauge check: unknown profile 'nosuchprofile'; the profiles are etcd, etcd-large, sync-iops, gitlab, small-files",
    },
    Case {
        args: &["check", "ETCD"],
        files: &[],
        stdin: None,
        err: "iogauge check: unknown profile 'ETCD'; the profiles are etcd, etcd-large, sync-iops, gitlab, small-files",
    },
    Case {
        args: &["check", "etcd", "nosuch"],
        files: &[],
        stdin: None,
        err: "iogauge check: unknown profile 'nosuch'; the profiles are etcd, etcd-large, sync-iops, gitlab, small-files",
    },
    Case {
        args: &["check", "--dir", "/nonexistent/dir"],
        files: &[],
        stdin: None,
        err: "iogauge check: directory '/nonexistent/dir' does not exist; create it or choose another with --dir",
    },
    Case {
        args: &["check", "--dir", "/proc"],
        files: &[],
        stdin: None,
        err: "iogauge check: '/proc' is on proc, a pseudo filesystem the kernel generates, not storage; choose a directory on the disk you mean with --dir",
    },
    Case {
        args: &["check", "--dir", "/sys"],
        files: &[],
        stdin: None,
        err: "iogauge check: '/sys' is on sysfs, a pseudo filesystem the kernel generates, not storage; choose a directory on the disk you mean with --dir",
    },
    Case {
        args: &["check", "--dir", "/dev/null"],
        files: &[],
        stdin: None,
        err: "iogauge check: '/dev/null' is not a directory; --dir takes the directory to test in (the test files are created there)",
    },
    Case {
        args: &["check", "--dir", ""],
        files: &[],
        stdin: None,
        err: "error: a value is required for '--dir <DIR>' but none was supplied",
    },
    Case {
        args: &["check", "--format", "xml"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'xml' for '--format <FORMAT>'",
    },
    Case {
        args: &["check", "--format", ""],
        files: &[],
        stdin: None,
        err: "error: a value is required for '--format <FORMAT>' but none was supplied",
    },
    Case {
        args: &["check", "--device", "/dev/null"],
        files: &[],
        stdin: None,
        err: "iogauge check: --device /dev/null: not a block device; for a directory use --dir",
    },
    Case {
        args: &["check", "--device", "/nonexistent"],
        files: &[],
        stdin: None,
        err: "iogauge check: --device /nonexistent: No such file or directory (os error 2); give a block device such as /dev/sdb, or a directory with --dir",
    },
    Case {
        args: &["check", "--device", "."],
        files: &[],
        stdin: None,
        err: "iogauge check: --device .: not a block device; for a directory use --dir",
    },
    Case {
        args: &["check", "--device", ""],
        files: &[],
        stdin: None,
        err: "error: a value is required for '--device <PATH>' but none was supplied",
    },
    Case {
        args: &["check", "--device", "/dev/null", "--dir", "."],
        files: &[],
        stdin: None,
        err: "error: the argument '--device <PATH>' cannot be used with '--dir <DIR>'",
    },
    Case {
        args: &["check", "--report", "/nonexistent/dir/r.html"],
        files: &[],
        stdin: None,
        err: "error: invalid value '/nonexistent/dir/r.html' for '--report <FILE.html>': directory '/nonexistent/dir' does not exist; create it or choose another place",
    },
    Case {
        args: &["check", "--report", "/tmp"],
        files: &[],
        stdin: None,
        err: "error: invalid value '/tmp' for '--report <FILE.html>': '/tmp' is a directory; give a file name in it",
    },
    Case {
        args: &["check", "--report", ""],
        files: &[],
        stdin: None,
        err: "error: invalid value '' for '--report <FILE.html>': expected a file name, e.g. result.html",
    },
    Case {
        args: &["check", "--history-db", "/etc/passwd/x.db"],
        files: &[],
        stdin: None,
        err: "error: invalid value '/etc/passwd/x.db' for '--history-db <FILE>': '/etc/passwd' is a file, not a directory",
    },
    Case {
        args: &["check", "--history-db", "/tmp"],
        files: &[],
        stdin: None,
        err: "error: invalid value '/tmp' for '--history-db <FILE>': '/tmp' is a directory; give a file name in it",
    },
    Case {
        args: &["check", "--frobnicate"],
        files: &[],
        stdin: None,
        err: "error: unexpected argument '--frobnicate' found",
    },
    Case {
        args: &["check", "--rw=write"],
        files: &[],
        stdin: None,
        err: "error: unexpected argument '--rw' found",
    },
    Case {
        args: &["check", "--bs", "4k"],
        files: &[],
        stdin: None,
        err: "error: unexpected argument '--bs' found",
    },
    Case {
        args: &["check", "./nonexistent-profile.yaml"],
        files: &[],
        stdin: None,
        err: "iogauge check: cannot read profile './nonexistent-profile.yaml': No such file or directory (os error 2)",
    },
    Case {
        args: &["check", "missing.yaml"],
        files: &[],
        stdin: None,
        err: "iogauge check: cannot read profile 'missing.yaml': No such file or directory (os error 2)",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "::: not yaml :::")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': unknown field `::`, expected one of `name`, `title`, `workload`, `small_files`, `scale`, `metrics`, `info`, `references`, `advice`; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "[]")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': invalid type: sequence, expected struct Profile; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': missing field `name`; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: 'bad name!'\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': name 'bad name!': use up to 64 letters, digits, '-' and '_' (it names the test file)",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "title: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': missing field `name`; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkloads:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': unknown field `workloads`, expected one of `name`, `title`, `workload`, `small_files`, `scale`, `metrics`, `info`, `references`, `advice` at line 3 column 1; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4x\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': profile 'p': --bs=4x: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - blocksise=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': profile 'p': unknown option 'blocksise'; did you mean 'blocksize'?",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - directory=/tmp\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: 'directory=/tmp': a profile may not set directory: it reads or writes files outside the test directory; where the test file goes is chosen by iogauge check (--dir)",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - filename=x\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: 'filename=x': a profile may not set filename: it reads or writes files outside the test directory; where the test file goes is chosen by iogauge check (--dir)",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=50%\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: give an absolute size such as 'size=1g'",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: give an absolute size such as 'size=1g'",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=sideways\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': profile 'p': --rw=sideways: expected read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, trimwrite or randtrimwrite",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': profile 'p': --rw: needs a value, e.g. rw=randread",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - 42\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': profile 'p': unknown option '42'; did you mean 'rw'?",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: nosuch_metric\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metrics[0].key: unknown variant `nosuch_metric`, expected one of `sync_p99`, `write_iops`, `read_iops`, `small_files_total`, `files_per_sec`, `create_p99`, `read_p99` at line 8 column 10; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: sync_p99\n    label: l\n    better: lower\n    pass: 10ms\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metric 'sync_p99' (l) is not measured by this workload (sync_p99 needs fsync= or fdatasync=; read_iops a read, write_iops a write)",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: read_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metric 'read_iops' (l) is not measured by this workload (sync_p99 needs fsync= or fdatasync=; read_iops a read, write_iops a write)",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: sideways\n    pass: 10 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metrics[0].better: unknown variant `sideways`, expected `lower` or `higher` at line 10 column 13; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: ten\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metric 'write_iops': pass: 'ten': expected a rate in IOPS, e.g. pass: 1000 IOPS",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: -5 IOPS\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metric 'write_iops': pass: expected a threshold above 0, e.g. pass: 500 IOPS",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metrics[0]: missing field `pass` at line 8 column 5; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics: []\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': 'metrics' is empty: a profile needs at least one metric to judge",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\nscale: [everything]\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': scale: 'everything': expected size, runtime, ramp_time or files",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\nsmall_files: {files: 10, size: 5}\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': give either 'workload' (fio options) or 'small_files', not both",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n    warn: 20 IOPS\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metric 'write_iops': warn must be lower than pass (it is the second step)",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\nreferences:\n  - {system: x, write_iops: fast}\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': references[0].write_iops: invalid type: string \"fast\", expected f64 at line 14 column 29; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\nreferences:\n  - {write_iops: 5}\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': references[0]: missing field `system` at line 14 column 5; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\nadvice: notalist\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': advice: invalid type: string \"notalist\", expected a sequence at line 13 column 9; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\ninfo:\n  - key: sync_p99\n    label: x\n    guidance: [{value: abc, label: y}]\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': info[0].guidance[0].value: invalid type: string \"abc\", expected f64 at line 16 column 24; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nworkload:\n  - rw=write\n  - bs=4k\n  - size=1m\nmetrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\nextra_key: 1\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': unknown field `extra_key`, expected one of `name`, `title`, `workload`, `small_files`, `scale`, `metrics`, `info`, `references`, `advice` at line 13 column 1; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nsmall_files: {files: 0, size: 5}\nmetrics:\n  - key: small_files_total\n    label: l\n    better: lower\n    pass: 10s\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': small_files: 'files' and 'size' must be above 0",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nsmall_files: {files: 10, size: -1}\nmetrics:\n  - key: small_files_total\n    label: l\n    better: lower\n    pass: 10s\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': small_files.size: invalid type: integer `-1`, expected usize at line 3 column 32; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nsmall_files: {files: 10}\nmetrics:\n  - key: small_files_total\n    label: l\n    better: lower\n    pass: 10s\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': small_files: missing field `size` at line 3 column 14; the format is described in docs/PROFILES.md",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", "name: p\ntitle: t\nsmall_files: {files: 10, size: 5}\nmetrics:\n  - key: small_files_total\n    label: l\n    better: lower\n    pass: 10 parsecs\n    source: s\n")],
        stdin: None,
        err: "iogauge check: profile './p.yaml': metric 'small_files_total': pass: expected a Go duration such as 90s, 2m, 1m30s, 500ms or 1.5h; units: ns, us or µs, ms, s, m, h",
    },
    Case {
        args: &["check", "./p.yml.txt/"],
        files: &[],
        stdin: None,
        err: "iogauge check: cannot read profile './p.yml.txt/': No such file or directory (os error 2)",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--size=x1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --size=x1: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--size=0%"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --size=0%: a percentage must be above 0 and at most 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--size=150%"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --size=150%: a percentage must be above 0 and at most 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--size="],
        files: &[],
        stdin: None,
        err: "iogauge fio: --size=: needs a value, e.g. size=1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--size=-1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --size=-1: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bs=0"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bs=0: a block size must be at least 1 byte",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bs=k4"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bs=k4: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bs="],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bs=: needs a value, e.g. bs=4k",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bs=4k,x8"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bs=4k,x8: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bssplit=4k/x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bssplit=4k/x: bssplit: expected a whole percentage after '/' (got x), e.g. bssplit=4k/10:64k/50:32k/40",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bssplit=4k/50:x8/50"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bssplit=4k/50:x8/50: bssplit: expected a size such as 4096, 4k, 64KiB or 1g, e.g. bssplit=4k/10:64k/50:32k/40",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bssplit="],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bssplit=: needs a value, e.g. bssplit=4k/50:64k/50",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bssplit=4k/101/2"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bssplit=4k/101/2: bssplit: expected a whole percentage after '/' (got 101/2), e.g. bssplit=4k/10:64k/50:32k/40",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bsrange=x-4k"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bsrange=x-4k: bsrange: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bsrange=4k-"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bsrange=4k-: bsrange: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--blockalign=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --blockalign=x: blockalign: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--random_generator=mersenne"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --random_generator=mersenne: expected tausworthe, lfsr or tausworthe64",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--percentage_random=101"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --percentage_random=101: expected a whole number from 0 to 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--io_size=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --io_size=x: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--number_ios=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --number_ios=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--offset_increment=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --offset_increment=x: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--zonemode=zbd"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --zonemode=zbd: zoned block devices are not supported by iogauge; zonemode=strided works on ordinary files",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--zonemode=weird"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --zonemode=weird: expected none, strided or zbd",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--verify=sha999"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --verify=sha999: expected one of md5, crc64, crc32c, crc32c-intel, crc32, crc16, crc7, sha1, sha256, sha512, sha3-224, sha3-256, sha3-384, sha3-512, xxhash, meta, pattern, null or 0, e.g. verify=crc32c; got 'sha999'",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--verify=1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --verify=1: expected one of md5, crc64, crc32c, crc32c-intel, crc32, crc16, crc7, sha1, sha256, sha512, sha3-224, sha3-256, sha3-384, sha3-512, xxhash, meta, pattern, null or 0, e.g. verify=crc32c; got '1'",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--verify_pattern=0xZZ"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --verify_pattern=0xZZ: '0xZZ': expected 0x hex bytes, a decimal number, \"string\" or %o at 'xZZ'",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--verify_interval=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --verify_interval=x: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--buffer_compress_percentage=101"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --buffer_compress_percentage=101: expected a whole number from 0 to 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--dedupe_percentage=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --dedupe_percentage=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--dedupe_mode=sometimes"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --dedupe_mode=sometimes: expected repeat or working_set, e.g. dedupe_mode=working_set; got 'sometimes'",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--log_avg_msec=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --log_avg_msec=x: expected milliseconds as a plain number, e.g. 1000",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--log_hist_coarseness=7"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --log_hist_coarseness=7: expected a whole number from 0 to 6",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--prio=8"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --prio=8: expected a whole number from 0 to 7",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--prioclass=4"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --prioclass=4: expected a whole number from 0 to 3",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--unified_rw_reporting=sometimes"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --unified_rw_reporting=sometimes: expected none (0), mixed (1) or both (2), e.g. mixed",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--significant_figures=11"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --significant_figures=11: expected a whole number from 1 to 10",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--thinktime=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --thinktime=x: expected microseconds or a time, e.g. 100, 10ms or 1s",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rate_process=bursty"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rate_process=bursty: expected linear or poisson, e.g. rate_process=poisson",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rate_min=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rate_min=x: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--steadystate=iops:x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --steadystate=iops:x: could not read the IOPS limit 'x'; expected iops, iops_slope, bw or bw_slope with a limit, e.g. iops_slope:0.1% or iops:2%",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--steadystate=weird:5%"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --steadystate=weird:5%: expected iops, iops_slope, bw or bw_slope with a limit, e.g. iops_slope:0.1% or iops:2%",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--ss_dur=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ss_dur=x: expected a time such as 30, 30s, 500ms, 2m or 1h",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--exit_what=nothing"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --exit_what=nothing: expected group, stonewall or all, e.g. exit_what=all",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--continue_on_error=sometimes"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --continue_on_error=sometimes: expected none, read, write, io, verify or all, e.g. continue_on_error=io",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--ignore_error=ENOTANERROR"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ignore_error=ENOTANERROR: unknown error ENOTANERROR; give an errno name such as EIO or a number, e.g. ignore_error=,ENOSPC:28",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--filename_format="],
        files: &[],
        stdin: None,
        err: "iogauge fio: --filename_format=: needs a value, e.g. filename_format=$jobname.$jobnum.$filenum",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--allow_file_create=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --allow_file_create=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rw=sideways"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rw=sideways: expected read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, trimwrite or randtrimwrite",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rw="],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rw=: needs a value, e.g. rw=randread",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rw=readd"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rw=readd: expected read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, trimwrite or randtrimwrite",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--ioengine=foo"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ioengine=foo: expected sync, psync, vsync, pvsync, pvsync2, mmap, null, libaio, io_uring, posixaio, filecreate, filestat, filedelete, dircreate, dirstat, dirdelete, falloc, ftruncate, cpuio or exec",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--ioengine="],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ioengine=: needs a value, e.g. ioengine=psync",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iodepth=0"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iodepth=0: expected a whole number from 1 to 4294967295",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iodepth=-1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iodepth=-1: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iodepth=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iodepth=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iodepth=4294967296"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iodepth=4294967296: expected a whole number from 1 to 4294967295",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--numjobs=0"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --numjobs=0: expected a whole number from 1 to 4294967295",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--numjobs=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --numjobs=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--numjobs=-2"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --numjobs=-2: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rwmixread=101"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rwmixread=101: expected a whole number from 0 to 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rwmixread=-1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rwmixread=-1: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rwmixread=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rwmixread=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rwmixwrite=101"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rwmixwrite=101: expected a whole number from 0 to 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--runtime=abc"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --runtime=abc: expected a time such as 30, 30s, 500ms, 2m or 1h",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--runtime=1x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --runtime=1x: expected a time such as 30, 30s, 500ms, 2m or 1h",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--runtime=-1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --runtime=-1: expected a time such as 30, 30s, 500ms, 2m or 1h",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--ramp_time=1x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ramp_time=1x: expected a time such as 30, 30s, 500ms, 2m or 1h",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--ramp_time=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ramp_time=x: expected a time such as 30, 30s, 500ms, 2m or 1h",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--startdelay=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --startdelay=x: expected a time such as 30, 30s, 500ms, 2m or 1h",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rate=x1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rate=x1: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rate=x,"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rate=x,: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rate_iops=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rate_iops=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--rate_iops=1.5"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rate_iops=1.5: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--direct=2"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --direct=2: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--direct=yes"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --direct=yes: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--direct="],
        files: &[],
        stdin: None,
        err: "iogauge fio: --direct=: needs a value, e.g. direct=1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--offset=x1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --offset=x1: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--offset=101%"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --offset=101%: a percentage must be above 0 and at most 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--nrfiles=0"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --nrfiles=0: expected a whole number from 1 to 4294967295",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--nrfiles=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --nrfiles=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--loops=0"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --loops=0: expected a whole number from 1 to 4294967295",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--loops=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --loops=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--randseed=abc"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --randseed=abc: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--randseed=-1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --randseed=-1: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--random_distribution=zipf:abc"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --random_distribution=zipf:abc: expected a number for the zipf theta, e.g. zipf:1.2",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--random_distribution=weird"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --random_distribution=weird: expected random, zipf:THETA, pareto:H, normal:DEV, zoned:A/S:... or zoned_abs:A/SIZE:...",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--random_distribution=pareto:x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --random_distribution=pareto:x: expected a number for the pareto h, e.g. pareto:1.2",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--random_distribution=normal:x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --random_distribution=normal:x: expected a number for the normal deviation, e.g. normal:1.2",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--random_distribution=zoned:50/50:abc"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --random_distribution=zoned:50/50:abc: zone access share: expected a whole number, e.g. zoned:60/10:30/20:8/30:2/40",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--percentile_list=abc"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --percentile_list=abc: expected percentiles separated by ':', e.g. 50:99:99.9",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--percentile_list=101"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --percentile_list=101: each percentile must be from 0 to 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--percentile_list=50::99"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --percentile_list=50::99: expected percentiles separated by ':', e.g. 50:99:99.9",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--percentile_list=-1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --percentile_list=-1: each percentile must be from 0 to 100",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--fallocate=weird"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --fallocate=weird: expected none, native, posix, keep or truncate",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--fadvise_hint=7"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --fadvise_hint=7: expected 0, 1, random or sequential",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--sync=maybe"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --sync=maybe: expected none, sync or dsync (0 = none, 1 = sync)",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--fsync=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --fsync=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--fsync=-1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --fsync=-1: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--fdatasync=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --fdatasync=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--filesize=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --filesize=x: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bwavgtime=1000s"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bwavgtime=1000s: expected milliseconds as a plain number, e.g. 500",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bwavgtime=-5"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bwavgtime=-5: expected milliseconds as a plain number, e.g. 500",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--bwavgtime=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --bwavgtime=x: expected milliseconds as a plain number, e.g. 500",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iopsavgtime=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iopsavgtime=x: expected milliseconds as a plain number, e.g. 500",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--thread=2"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --thread=2: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--gtod_reduce=3"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --gtod_reduce=3: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--clat_percentiles=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --clat_percentiles=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--lat_percentiles=2"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --lat_percentiles=2: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--norandommap=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --norandommap=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--refill_buffers=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --refill_buffers=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--zero_buffers=2"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --zero_buffers=2: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--invalidate=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --invalidate=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--create_only=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --create_only=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--unlink=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --unlink=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--time_based=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --time_based=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--group_reporting=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --group_reporting=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--stonewall=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --stonewall=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--end_fsync=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --end_fsync=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--fsync_on_close=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --fsync_on_close=x: expected 0 or 1",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iodepth_batch_submit=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iodepth_batch_submit=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iodepth_batch_complete_min=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iodepth_batch_complete_min=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iodepth_batch_complete_max=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iodepth_batch_complete_max=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--iodepth_low=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --iodepth_low=x: expected a whole number",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=null", "--size=1m", "--randrepeat=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --randrepeat=x: expected 0 or 1",
    },
    Case {
        args: &["fio"],
        files: &[],
        stdin: None,
        err: "iogauge fio: no jobs defined: give a job file or start a job with --name=NAME (options before the first --name apply to every job)",
    },
    Case {
        args: &["fio", "--size=1m"],
        files: &[],
        stdin: None,
        err: "iogauge fio: no jobs defined: give a job file or start a job with --name=NAME (options before the first --name apply to every job)",
    },
    Case {
        args: &["fio", "--name="],
        files: &[],
        stdin: None,
        err: "iogauge fio: --name= needs a job name, e.g. --name=test",
    },
    Case {
        args: &["fio", "--name=t", "--blocksise=4k"],
        files: &[],
        stdin: None,
        err: "iogauge fio: unknown option 'blocksise'; did you mean 'blocksize'?",
    },
    Case {
        args: &["fio", "--name=t", "--zzzzzz=1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: unknown option 'zzzzzz'; run 'iogauge fio --help' for the options iogauge supports",
    },
    Case {
        args: &["fio", "--output-format=xml", "--name=t"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --output-format=xml: unknown format 'xml'; expected normal, json, json+ or terse (several separated by commas)",
    },
    Case {
        args: &["fio", "--output-format=", "--name=t"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --output-format=: unknown format ''; expected normal, json, json+ or terse (several separated by commas)",
    },
    Case {
        args: &["fio", "--eta=sometimes", "--name=t"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --eta=sometimes: expected always, never or auto",
    },
    Case {
        args: &["fio", "--section=nosuch", "-"],
        files: &[],
        stdin: Some("[a]\nsize=1m\n"),
        err: "iogauge fio: --section=nosuch: no such section in the job files",
    },
    Case {
        args: &["fio", "/nonexistent.fio"],
        files: &[],
        stdin: None,
        err: "iogauge fio: cannot read job file '/nonexistent.fio': No such file or directory (os error 2); check the path (job files are read relative to the current directory)",
    },
    Case {
        args: &["fio", "--name=t", "--fixedbufs"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 't': fixedbufs is an io_uring option, but ioengine=psync; set ioengine=io_uring",
    },
    Case {
        args: &["fio", "--name=t", "--hipri"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 't': hipri is an io_uring option, but ioengine=psync; set ioengine=io_uring",
    },
    Case {
        args: &["fio", "--name=t", "--sqthread_poll"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 't': sqthread_poll is an io_uring option, but ioengine=psync; set ioengine=io_uring",
    },
    Case {
        args: &["fio", "--name=t", "--registerfiles"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 't': registerfiles is an io_uring option, but ioengine=psync; set ioengine=io_uring",
    },
    Case {
        args: &["fio", "--name=t", "--hostname=h"],
        files: &[],
        stdin: None,
        err: "iogauge fio: option 'hostname' cannot work in iogauge: it belongs to fio's network engines; iogauge measures local files and block devices",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=rbd"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ioengine=rbd: ioengine 'rbd' cannot work in iogauge: it needs a storage cluster's client library (Ceph, Gluster, HDFS, DAOS); iogauge measures what the host has mounted",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine=net"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ioengine=net: ioengine 'net' cannot work in iogauge: it belongs to fio's network engines; iogauge measures local files and block devices",
    },
    Case {
        args: &["fio", "--name=t", "--zonemode=zbd"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --zonemode=zbd: zoned block devices are not supported by iogauge; zonemode=strided works on ordinary files",
    },
    Case {
        args: &["fio", "--name=t", "--max_open_zones=2"],
        files: &[],
        stdin: None,
        err: "iogauge fio: option 'max_open_zones' cannot work in iogauge: zoned block devices (zonemode=zbd) are not supported; zonemode=strided works on ordinary files",
    },
    Case {
        args: &["fio", "--name=t", "--read_iolog=x"],
        files: &[],
        stdin: None,
        err: "iogauge fio: option 'read_iolog' cannot work in iogauge: replaying I/O logs and block traces is not supported by iogauge",
    },
    Case {
        args: &["fio", "--cmdhelp=nosuchopt"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --cmdhelp=nosuchopt: unknown option; 'iogauge fio --cmdhelp' lists the supported ones",
    },
    Case {
        args: &["fio", "--name=t", "--rw"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --rw: needs a value, e.g. rw=randread",
    },
    Case {
        args: &["fio", "--name=t", "--ioengine"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --ioengine: needs a value, e.g. ioengine=psync",
    },
    Case {
        args: &["fio", "--name=t", "--size=1m", "--output=/nonexistent/dir/out.txt"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --output=/nonexistent/dir/out.txt: directory '/nonexistent/dir' does not exist; create it or choose another place",
    },
    Case {
        args: &["fio", "--name=t", "--size=1m", "--report=/nonexistent/r.html"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --report=/nonexistent/r.html: directory '/nonexistent' does not exist; create it or choose another place",
    },
    Case {
        args: &["fio", "--name=t", "--filename=/dev/null", "--rw=write", "--size=1m"],
        files: &[],
        stdin: None,
        err: "iogauge fio: refusing to write into existing file '/dev/null', which iogauge did not create; remove it, choose another --directory/--filename, or pass --allow-overwrite",
    },
    Case {
        args: &["fio", "--name=t", "--size=1m", "--directory=/nonexistent/dir"],
        files: &[],
        stdin: None,
        err: "iogauge fio: directory '/nonexistent/dir' does not exist; create it first or choose another --directory",
    },
    Case {
        args: &["fio", "--name=t", "--size=1m", "--directory=/proc/self"],
        files: &[],
        stdin: None,
        err: "iogauge fio: '/proc/self' is on proc, a pseudo filesystem the kernel generates, not storage; choose a --directory on a real filesystem",
    },
    Case {
        args: &["fio", "--history-db=/etc/passwd/h.db", "--name=t"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --history-db /etc/passwd/h.db: '/etc/passwd' is a file, not a directory",
    },
    Case {
        args: &["fio", "--history-db"],
        files: &[],
        stdin: None,
        err: "iogauge fio: --history-db needs a FILE",
    },
    Case {
        args: &["fio", "--name=t"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 't': no size given and 't.0.0' does not exist; set size= (e.g. --size=1g) or filesize=",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[global\nsize=1m\n")],
        stdin: None,
        err: "iogauge fio: job.fio:1: expected a section header like [job1], found '[global'",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nbs = 8k\nsize=1m\n")],
        stdin: None,
        err: "iogauge fio: job.fio:2: the value of 'bs' starts with a space, which fio would keep as part of the value; write 'bs=8k'",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nbs=k4\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: bs=k4: expected a size such as 4096, 4k, 64KiB or 1g",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nrw=sideways\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: rw=sideways: expected read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, trimwrite or randtrimwrite",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "size=1m\n[a]\n")],
        stdin: None,
        err: "iogauge fio: job.fio:1: 'size=1m' comes before any section; put it under [global] or a [job]",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\ninclude nosuch.fio\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: cannot read job file 'nosuch.fio': No such file or directory (os error 2); check the path (job files are read relative to the current directory)",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=${NOSUCH_VAR_IOGAUGE}\n")],
        stdin: None,
        err: "iogauge fio: job.fio:2: ${NOSUCH_VAR_IOGAUGE} is not set in the environment; export NOSUCH_VAR_IOGAUGE=… before running",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nbusy_poll=1\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: option 'busy_poll' cannot work in iogauge: it needs a storage cluster's client library (Ceph, Gluster, HDFS, DAOS); iogauge measures what the host has mounted",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nblocksise=4k\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: unknown option 'blocksise'; did you mean 'blocksize'?",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nioengine=windowsaio\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: ioengine=windowsaio: ioengine 'windowsaio' cannot work in iogauge: it exists only on another operating system",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nioengine=sg\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: ioengine=sg: ioengine 'sg' cannot work in iogauge: it sends SCSI or NVMe commands past the block layer (passthrough), which iogauge does not do",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nhostname=x\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: option 'hostname' cannot work in iogauge: it belongs to fio's network engines; iogauge measures local files and block devices",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[]\nsize=1m\n")],
        stdin: None,
        err: "iogauge fio: job.fio:1: expected a section header like [job1], found '[]'",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\n=1m\n")],
        stdin: None,
        err: "iogauge fio: job.fio:2: expected 'option=value' or 'option', found '=1m'",
    },
    Case {
        args: &["fio", "job.fio", "--section=b"],
        files: &[("job.fio", "[a]\nsize=1m\n")],
        stdin: None,
        err: "iogauge fio: --section=b: no such section in the job files",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nrwmixread=200\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: rwmixread=200: expected a whole number from 0 to 100",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nnumjobs=0\n")],
        stdin: None,
        err: "iogauge fio: job.fio:3: numjobs=0: expected a whole number from 1 to 4294967295",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "[a]\nsize=1m\nioengine=libaio\nfixedbufs=1\n")],
        stdin: None,
        err: "iogauge fio: job 'a': fixedbufs is an io_uring option, but ioengine=libaio; set ioengine=io_uring",
    },
    Case {
        args: &["fio", "job.fio"],
        files: &[("job.fio", "\u{0}\u{1}\u{2}binary")],
        stdin: None,
        err: "iogauge fio: job.fio:1: '\u{0}\u{1}\u{2}binary' comes before any section; put it under [global] or a [job]",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "::: nope :::")],
        stdin: None,
        err: "iogauge preflight: spec.yaml: not valid YAML: mapping values are not allowed in this context at line 1 column 12",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "")],
        stdin: None,
        err: "iogauge preflight: spec.yaml: empty; expected a troubleshoot spec (apiVersion: troubleshoot.sh/v1beta2, kind: HostPreflight, spec: collectors and analyzers)",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v9\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): apiVersion 'troubleshoot.sh/v9' is not troubleshoot.sh/v1beta2",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: Pod\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): kind 'Pod' is not a troubleshoot spec iogauge reads; expected HostPreflight, Preflight, SupportBundle or HostCollector",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Xi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.fileSize: '1Xi': expected a Kubernetes quantity such as 22Mi, 100M, 1Gi or 4096",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: -1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.fileSize: '-1Mi': expected a Kubernetes quantity such as 22Mi, 100M, 1Gi or 4096",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 0\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance: fileSize (0 bytes) is smaller than one operation (2300 bytes)",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: -5\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.operationSizeBytes: expected a whole number, found '-5'",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: big\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.operationSizeBytes: expected a whole number, found 'big'",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 0\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.operationSize: 0: expected 1 byte to 4 GiB",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: maybe\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.datasync: expected true or false, found 'maybe'",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: forever\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.runTime: 'forever': expected seconds such as \"120\" or a duration such as 2m",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"-5\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.runTime: '-5': expected seconds such as \"120\" or a duration such as 2m",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n        timeout: 5 minutes\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.timeout: '5 minutes': expected a Go duration such as 90s, 2m, 1m30s, 500ms or 1.5h",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: \"\"\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance: 'directory' is required (where the benchmark creates its file)",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSise: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance: unknown key 'fileSise'; did you mean 'fileSize'?",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 <<< 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass: when 'p99 <<< 10ms': unknown operator '<<<'; expected <, <=, >, >=, = or ==",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p42 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass: when 'p42 < 10ms': unknown keyword 'p42'; expected min, max, average, p1 … p9999 or iops",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10 parsecs\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass: when 'p99 < 10 parsecs': expected three words '<keyword> <operator> <duration>', e.g. 'p99 < 10ms'",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 <\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass: when 'p99 <': expected three words '<keyword> <operator> <duration>', e.g. 'p99 < 10ms'",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms && p50\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass: when 'p99 < 10ms && p50': expected three words '<keyword> <operator> <duration>', e.g. 'p99 < 10ms'",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"iops > abc\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass: when 'iops > abc': iops needs a number, e.g. 'iops >= 1000'",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: \"{{ .Nope }}\"}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass.message: unknown placeholder '{{ .Nope }}'; expected one of .Min, .Max, .Average, .P1 … .P9999, .IOPS or .String",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: \"{{ .P99 \"}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass.message: '{{' without a closing '}}' in '{{ .P99 '",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: \"{{ range }}\"}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0].pass.message: unknown placeholder '{{ range }}'; expected one of .Min, .Max, .Average, .P1 … .P9999, .IOPS or .String",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          []\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance: 'outcomes' is required: a list of pass/warn/fail entries",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - passs: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0]: 'passs' is not an outcome; expected pass, warn or fail",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n            fail: {message: x}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.analyzers[0].filesystemPerformance.outcomes[0]: expected one of pass:, warn: or fail:",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspecs:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): kind HostPreflight has no 'spec' mapping",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors: notalist\n  x:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors must be a list",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        enableBackgroundIOPS: true\n        backgroundReadIOPS: lots\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.backgroundReadIOPS: expected a whole number, found 'lots'",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        enableBackgroundIOPS: true\n        backgroundIOPSWarmupSeconds: -3\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance.backgroundIOPSWarmupSeconds: expected a whole number, found '-3'",
    },
    Case {
        args: &["preflight", "spec.yaml", "--format", "toml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "error: invalid value 'toml' for '--format <FORMAT>'",
    },
    Case {
        args: &["preflight", "spec.yaml", "--output", "/etc/passwd"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "error: invalid value '/etc/passwd' for '--output <DIR>': '/etc/passwd' is a file, not a directory",
    },
    Case {
        args: &["preflight", "spec.yaml", "--report", "/nonexistent/r.html"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "error: invalid value '/nonexistent/r.html' for '--report <FILE.html>': directory '/nonexistent' does not exist; create it or choose another place",
    },
    Case {
        args: &["preflight", "spec.yaml", "--analyze-only", "/nonexistent/dir"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: fs\n        directory: /tmp\n        fileSize: 1Mi\n        operationSizeBytes: 2300\n        datasync: true\n        runTime: \"0\"\n  analyzers:\n    - filesystemPerformance:\n        collectorName: fs\n        outcomes:\n          - pass: {when: \"p99 < 10ms\", message: ok}\n          - fail: {message: slow}\n")],
        stdin: None,
        err: "error: invalid value '/nonexistent/dir' for '--analyze-only <DIR>': no directory '/nonexistent/dir'; give the directory a preflight or troubleshoot run wrote its results to",
    },
    Case {
        args: &["preflight"],
        files: &[],
        stdin: None,
        err: "error: the following required arguments were not provided:",
    },
    Case {
        args: &["preflight", "/nonexistent.yaml"],
        files: &[],
        stdin: None,
        err: "iogauge preflight: cannot read spec '/nonexistent.yaml': No such file or directory (os error 2)",
    },
    Case {
        args: &["preflight", "a.yaml"],
        files: &[("a.yaml", "\t\tbad: [yaml")],
        stdin: None,
        err: "iogauge preflight: a.yaml: not valid YAML: found character that cannot start any token, while scanning for the next token",
    },
    Case {
        args: &["compare"],
        files: &[],
        stdin: None,
        err: "iogauge compare: expected two runs (compare A B) or groups (--a RUN… --b RUN…)",
    },
    Case {
        args: &["compare", "a"],
        files: &[],
        stdin: None,
        err: "iogauge compare: expected two runs (compare A B) or groups (--a RUN… --b RUN…)",
    },
    Case {
        args: &["compare", "a", "b", "c"],
        files: &[],
        stdin: None,
        err: "iogauge compare: 3 runs given (a b c); compare A B takes two. For groups of repeated runs name each side: compare --a a --b b c",
    },
    Case {
        args: &["compare", "/nonexistent1.json", "/nonexistent2.json"],
        files: &[],
        stdin: None,
        err: "iogauge compare: '/nonexistent1.json': No such file or directory (os error 2); expected a saved JSON document (check or kube --format json, fio --output-format=json)",
    },
    Case {
        args: &["compare", "--noise", "latency=abc", "x", "y"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'latency=abc' for '--noise <KIND=PCT,…>': 'abc': expected a percentage from 0% to 99% (or a fraction below 1), e.g. latency=5%",
    },
    Case {
        args: &["compare", "--noise", "bogus=5%", "x", "y"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'bogus=5%' for '--noise <KIND=PCT,…>': 'bogus': the metric kinds are latency and rate, e.g. latency=10%",
    },
    Case {
        args: &["compare", "--noise", "rate=150%", "x", "y"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'rate=150%' for '--noise <KIND=PCT,…>': '150%': expected a percentage from 0% to 99% (or a fraction below 1), e.g. rate=5%",
    },
    Case {
        args: &["compare", "--noise", "latency", "x", "y"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'latency' for '--noise <KIND=PCT,…>': 'latency': expected latency=PCT or rate=PCT, e.g. latency=10%,rate=5%",
    },
    Case {
        args: &["compare", "--format", "pdf", "x", "y"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'pdf' for '--format <FORMAT>'",
    },
    Case {
        args: &["compare", "99999", "99998", "--history-db", "h.db"],
        files: &[],
        stdin: None,
        err: "iogauge compare: no run with id 99999: there is no history at h.db yet ('99999' is no file either)",
    },
    Case {
        args: &["compare", "a.json", "b.json"],
        files: &[("a.json", "not json"), ("b.json", "{}")],
        stdin: None,
        err: "iogauge compare: 'a.json': not JSON (expected ident at line 1 column 2); save results with --format json (fio: --output-format=json)",
    },
    Case {
        args: &["compare", "a.json", "b.json"],
        files: &[("a.json", "{}"), ("b.json", "{}")],
        stdin: None,
        err: "iogauge compare: a.json: not a result iogauge can compare: expected a check, kube or fio JSON document",
    },
    Case {
        args: &["compare", "a.json", "b.json"],
        files: &[("a.json", "[1,2]"), ("b.json", "{\"x\":1}")],
        stdin: None,
        err: "iogauge compare: a.json: not a result iogauge can compare: expected a check, kube or fio JSON document",
    },
    Case {
        args: &["compare", "--a", "a.json", "--b"],
        files: &[("a.json", "{}")],
        stdin: None,
        err: "error: a value is required for '--b <RUN>...' but none was supplied",
    },
    Case {
        args: &["compare", "--report", "/nonexistent/r.html", "x", "y"],
        files: &[],
        stdin: None,
        err: "error: invalid value '/nonexistent/r.html' for '--report <FILE.html>': directory '/nonexistent' does not exist; create it or choose another place",
    },
    Case {
        args: &["report"],
        files: &[],
        stdin: None,
        err: "error: the following required arguments were not provided:",
    },
    Case {
        args: &["report", "/nonexistent.json"],
        files: &[],
        stdin: None,
        err: "iogauge report: cannot read /nonexistent.json: No such file or directory (os error 2)",
    },
    Case {
        args: &["report", "r.json"],
        files: &[("r.json", "nope")],
        stdin: None,
        err: "iogauge report: r.json is not JSON (expected ident at line 1 column 2); expected a document iogauge wrote with --format json or fio's --output-format=json",
    },
    Case {
        args: &["report", "r.json"],
        files: &[("r.json", "{\"what\": 1}")],
        stdin: None,
        err: "iogauge report: r.json: not a document iogauge knows: expected a check document (schema_version, profiles, dir), a kube check document (targets, run_id), a preflight document (collectors, outcomes), fio's JSON output (\"fio version\", jobs) or a compare document (a, b, method, metrics)",
    },
    Case {
        args: &["report", "r.json", "-o", "/nonexistent/x.html"],
        files: &[("r.json", "{}")],
        stdin: None,
        err: "iogauge report: r.json: not a document iogauge knows: expected a check document (schema_version, profiles, dir), a kube check document (targets, run_id), a preflight document (collectors, outcomes), fio's JSON output (\"fio version\", jobs) or a compare document (a, b, method, metrics)",
    },
    Case {
        args: &["history", "show"],
        files: &[],
        stdin: None,
        err: "error: the following required arguments were not provided:",
    },
    Case {
        args: &["history", "show", "abc"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'abc' for '<ID>': 'abc': expected a run id such as 12 ('iogauge history' lists them)",
    },
    Case {
        args: &["history", "show", "0"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0' for '<ID>': '0': expected a run id such as 12 ('iogauge history' lists them)",
    },
    Case {
        args: &["history", "show", "-3"],
        files: &[],
        stdin: None,
        err: "error: unexpected argument '-3' found",
    },
    Case {
        args: &["history", "show", "999999", "--history-db", "h.db"],
        files: &[],
        stdin: None,
        err: "iogauge history: no run with id 999999 in h.db; 'iogauge history' lists them",
    },
    Case {
        args: &["history", "rm"],
        files: &[],
        stdin: None,
        err: "error: the following required arguments were not provided:",
    },
    Case {
        args: &["history", "rm", "x"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'x' for '<ID>...': 'x': expected a run id such as 12 ('iogauge history' lists them)",
    },
    Case {
        args: &["history", "prune"],
        files: &[],
        stdin: None,
        err: "iogauge history prune: say what to remove: --older-than AGE (e.g. 30d), --keep N, or both (--all: every run)",
    },
    Case {
        args: &["history", "prune", "--older-than", "x"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'x' for '--older-than <AGE>': 'x': expected an age such as 30d, 12h, 2w or 1d12h",
    },
    Case {
        args: &["history", "prune", "--keep", "x"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'x' for '--keep <N>': 'x': expected a whole number of runs, e.g. 20",
    },
    Case {
        args: &["history", "--limit", "x"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'x' for '--limit <N>': 'x': expected a whole number of runs, e.g. 20",
    },
    Case {
        args: &["history", "--kind", "nosuch"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'nosuch' for '--kind <KIND>': 'nosuch': expected check, preflight, fio, kube or canary",
    },
    Case {
        args: &["history", "--format", "xml"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'xml' for '--format <FORMAT>'",
    },
    Case {
        args: &["kube", "check", "--dry-run", "--image", "img"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: no target: name --storage-class NAME, --all-storage-classes, --claim NAME, or --nodes SELECTOR (or --node NAME) with --host-path DIR",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", ""],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --storage-class '': expected a Kubernetes object name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), e.g. fast-ssd",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "Bad_Class"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --storage-class 'Bad_Class': expected a Kubernetes object name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), e.g. fast-ssd",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--claim", ""],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --claim '': expected a Kubernetes object name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), e.g. fast-ssd",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--claim", "UPPER"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --claim 'UPPER': expected a Kubernetes object name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), e.g. fast-ssd",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--claim-size", "10Xi"],
        files: &[],
        stdin: None,
        err: "error: invalid value '10Xi' for '--claim-size <QUANTITY>': '10Xi' is not a Kubernetes quantity: expected a number with Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), e.g. 20Gi",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--claim-size", "0"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0' for '--claim-size <QUANTITY>': '0' is not a whole, positive number of bytes; e.g. 20Gi",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--claim-size", "1.5"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1.5' for '--claim-size <QUANTITY>': '1.5' is not a whole, positive number of bytes; e.g. 20Gi",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--cpu-request", "abc"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --cpu-request 'abc': expected a Kubernetes quantity such as 500m or 256Mi, or 'none'",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--memory-request", "1.5.5Gi"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --memory-request '1.5.5Gi': expected a Kubernetes quantity such as 500m or 256Mi, or 'none'",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--cpu-limit", "-1"],
        files: &[],
        stdin: None,
        err: "error: unexpected argument '-1' found",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--memory-limit", "lots"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --memory-limit 'lots': expected a Kubernetes quantity such as 500m or 256Mi, or 'none'",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--toleration", "=:"],
        files: &[],
        stdin: None,
        err: "error: invalid value '=:' for '--toleration <TAINT>': '=:': the effect '' is not one of NoSchedule, PreferNoSchedule, NoExecute; e.g. dedicated=storage:NoSchedule",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--toleration", "k=v:Sometimes"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'k=v:Sometimes' for '--toleration <TAINT>': 'k=v:Sometimes': the effect 'Sometimes' is not one of NoSchedule, PreferNoSchedule, NoExecute; e.g. dedicated=storage:NoSchedule",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--node-selector", "novalue"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'novalue' for '--node-selector <KEY=VALUE>': expected KEY=VALUE, e.g. disktype=ssd",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--timeout", "x"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'x' for '--timeout <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--pending-timeout", "0"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0' for '--pending-timeout <D>': must be above 0",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--parallel", "0"],
        files: &[],
        stdin: None,
        err: "error: invalid value '0' for '--parallel <N>': '0': expected how many targets run at once, 1 to 65535, e.g. 2",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--parallel", "x"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'x' for '--parallel <N>': 'x': expected how many targets run at once, 1 to 65535, e.g. 2",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--scale", "3"],
        files: &[],
        stdin: None,
        err: "error: invalid value '3' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--duration", "x"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'x' for '--duration <D>': expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--size", "1x"],
        files: &[],
        stdin: None,
        err: "error: invalid value '1x' for '--size <S>': expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--access-mode", "Nope"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'Nope' for '--access-mode <MODE>'",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--volume-mode", "Nope"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'Nope' for '--volume-mode <MODE>'",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--image-pull-policy", "Sometimes"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'Sometimes' for '--image-pull-policy <POLICY>'",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--format", "yaml"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'yaml' for '--format <FORMAT>'",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "nosuchprofile"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: unknown profile 'nosuchprofile'; the profiles are etcd, etcd-large, sync-iops, gitlab, small-files",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "./own.yaml"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: cannot read profile './own.yaml': No such file or directory (os error 2)",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--nodes", "x"],
        files: &[],
        stdin: None,
        err: "error: the following required arguments were not provided:",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--host-path", "/x"],
        files: &[],
        stdin: None,
        err: "error: the following required arguments were not provided:",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--nodes", "a=b", "--host-path", "rel"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --host-path 'rel': expected an absolute path on the node, e.g. /var/lib/etcd",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--claim", "c", "--volume-mode", "Block"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: --volume-mode Block applies to fresh claims: name --storage-class or --all-storage-classes",
    },
    Case {
        args: &["kube", "check", "--image", "img", "--dry-run", "--storage-class", "std", "--volume-mode", "Block", "small-files"],
        files: &[],
        stdin: None,
        err: "iogauge kube check: small-files needs a filesystem, and --volume-mode Block gives the pod a raw device; leave it out or use --volume-mode Filesystem",
    },
    Case {
        args: &["kube", "cleanup", "--run", ""],
        files: &[],
        stdin: None,
        err: "error: invalid value '' for '--run <ID>': '': expected the run id 'iogauge kube check' printed, e.g. k3v9q2",
    },
    Case {
        args: &["kube", "cleanup", "--run", "bad id!"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'bad id!' for '--run <ID>': 'bad id!': expected the run id 'iogauge kube check' printed, e.g. k3v9q2",
    },
    Case {
        args: &["kube", "nosuch"],
        files: &[],
        stdin: None,
        err: "error: unrecognized subcommand 'nosuch'",
    },
    Case {
        args: &["completions", "nosuchshell"],
        files: &[],
        stdin: None,
        err: "error: invalid value 'nosuchshell' for '<SHELL>'",
    },
    Case {
        args: &["nosuchcommand"],
        files: &[],
        stdin: None,
        err: "error: unrecognized subcommand 'nosuchcommand'",
    },
    Case {
        args: &["--frobnicate"],
        files: &[],
        stdin: None,
        err: "error: unexpected argument '--frobnicate' found",
    },
];

fn run(case: &Case) -> Result<(), String> {
    let dir = scratch();
    for (name, text) in case.files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let before = files_in(dir.path());
    let mut c = cmd(env!("CARGO_BIN_EXE_iogauge"));
    c.args(case.args)
        .current_dir(dir.path())
        .env("IOGAUGE_HISTORY", dir.path().join("h.db"))
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .env_remove("IOGAUGE_IMAGE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(case.stdin.unwrap_or("").as_bytes())
        .unwrap();
    drop(input);
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    let first = err
        .lines()
        .find(|l| !l.trim().is_empty() && !l.contains("note:"))
        .unwrap_or("");
    let mut wrong = Vec::new();
    if o.status.code() != Some(2) {
        wrong.push(format!("exit {:?}, not 2", o.status.code()));
    }
    if !o.stdout.is_empty() {
        wrong.push(format!("stdout: {}", text(&o.stdout)));
    }
    if first != case.err {
        wrong.push(format!(
            "stderr's first line\n     is: {first}\n   want: {}",
            case.err
        ));
    }
    let after = files_in(dir.path());
    if after != before {
        wrong.push(format!("wrote files: {after:?} (before: {before:?})"));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{:?}: {}", case.args, wrong.join("; ")))
    }
}

#[test]
fn every_malformed_input_exits_2_names_it_and_writes_nothing() {
    assert!(CASES.len() >= 200, "the table holds {} cases", CASES.len());
    // Two threads: each case is a short process, and the machine has two cores.
    let (a, b) = CASES.split_at(CASES.len() / 2);
    let failures: Vec<String> = std::thread::scope(|s| {
        let h = s.spawn(|| a.iter().filter_map(|c| run(c).err()).collect::<Vec<_>>());
        let mut f: Vec<String> = b.iter().filter_map(|c| run(c).err()).collect();
        f.extend(h.join().unwrap());
        f
    });
    assert!(
        failures.is_empty(),
        "{} of 381 cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// --- resolve: one refusal for every front end ---

/// A `check` profile file holding one job of `workload` options (judged on write_iops).
macro_rules! profile {
    ($($opt:literal),*) => {
        concat!(
            "name: p\ntitle: t\nworkload:\n",
            $("  - ", $opt, "\n",)*
            "metrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 10 IOPS\n    source: s\n"
        )
    };
}

/// Combinations `iogauge fio` refuses, written as fio options and as a user's profile: both
/// front ends refuse them with the same words (the profile's prefixed by where it came from),
/// exit 2, before anything is written. A troubleshoot spec's keys reach only sizes, sync and
/// times (its jobs meet the same checks when loaded): the one refusal it can express, an
/// operation larger than the file, it refuses in its own keys' words, also with exit 2 and
/// nothing written.
#[rustfmt::skip]
static SAME_REFUSAL: &[Case] = &[
    Case {
        args: &["fio", "--name=p", "--rw=write", "--size=1m", "--ioengine=psync", "--fixedbufs"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 'p': fixedbufs is an io_uring option, but ioengine=psync; set ioengine=io_uring",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", profile!("rw=write", "size=1m", "ioengine=psync", "fixedbufs"))],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: job 'p': fixedbufs is an io_uring option, but ioengine=psync; set ioengine=io_uring",
    },
    // Checked per phase at run time before (after laying out the file): now with the options.
    Case {
        args: &["fio", "--name=p", "--rw=write", "--size=1m", "--ioengine=psync", "--cmdprio_percentage=50"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 'p': cmdprio_percentage needs a queueing engine (ioengine=io_uring or libaio), as in fio; psync has no per-I/O priority",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", profile!("rw=write", "size=1m", "ioengine=psync", "cmdprio_percentage=50"))],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: job 'p': cmdprio_percentage needs a queueing engine (ioengine=io_uring or libaio), as in fio; psync has no per-I/O priority",
    },
    Case {
        args: &["fio", "--name=p", "--rw=write", "--size=1m", "--pre_read=1", "--direct=1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 'p': pre_read fills the page cache, which direct=1 bypasses; drop one of them",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", profile!("rw=write", "size=1m", "pre_read=1", "direct=1"))],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: job 'p': pre_read fills the page cache, which direct=1 bypasses; drop one of them",
    },
    Case {
        args: &["fio", "--name=p", "--rw=write", "--size=1m", "--rate=1m", "--rate_min=2m"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 'p': the minimum rate exceeds the rate for read (fio: minimum rate exceeds rate, ddir 0); lower rate_min/rate_iops_min or raise rate/rate_iops",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", profile!("rw=write", "size=1m", "rate=1m", "rate_min=2m"))],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: job 'p': the minimum rate exceeds the rate for read (fio: minimum rate exceeds rate, ddir 0); lower rate_min/rate_iops_min or raise rate/rate_iops",
    },
    Case {
        args: &["fio", "--name=p", "--rw=read", "--size=1m", "--unlink_each_loop=1"],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 'p': unlink_each_loop needs a write-only job (rw=write or randwrite): fio 3.33 unlinks the files after the first loop, so the next loop's reads fail (ENOENT for rw=read, EIO on the new empty file for mixed jobs)",
    },
    Case {
        args: &["check", "./p.yaml"],
        files: &[("p.yaml", profile!("rw=read", "size=1m", "unlink_each_loop=1"))],
        stdin: None,
        err: "iogauge check: profile './p.yaml': workload: job 'p': unlink_each_loop needs a write-only job (rw=write or randwrite): fio 3.33 unlinks the files after the first loop, so the next loop's reads fail (ENOENT for rw=read, EIO on the new empty file for mixed jobs)",
    },
    // A bad job after a stonewall: refused before the first phase runs. Before, the first job
    // wrote its file (kept by unlink=0, so it would show here) and only then was the second
    // refused.
    Case {
        args: &["fio", "sw.fio"],
        files: &[("sw.fio", "[global]\nsize=1m\nbs=4k\n\n[first]\nrw=write\nunlink=0\n\n[second]\nstonewall\nrw=randread\nioengine=psync\ncmdprio_percentage=50\n")],
        stdin: None,
        err: "iogauge fio: job 'second': cmdprio_percentage needs a queueing engine (ioengine=io_uring or libaio), as in fio; psync has no per-I/O priority",
    },    Case {
        args: &["fio", "--name=p", "--rw=write", "--size=1m", "--bs=2m", "--directory=."],
        files: &[],
        stdin: None,
        err: "iogauge fio: job 'p': the I/O region of './p.0.0' (1048576 bytes after offset 0) is smaller than one block of 2097152 bytes; raise size= or lower bs=/offset=",
    },
    Case {
        args: &["preflight", "spec.yaml"],
        files: &[("spec.yaml", "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: p\nspec:\n  collectors:\n    - filesystemPerformance:\n        collectorName: p\n        directory: d\n        fileSize: 1Mi\n        operationSizeBytes: 2097152\n        datasync: true\n  analyzers:\n    - filesystemPerformance:\n        collectorName: p\n        outcomes:\n          - pass:\n              when: \"p99 < 10ms\"\n              message: ok\n")],
        stdin: None,
        err: "iogauge preflight: spec.yaml (document 1): spec.collectors[0].filesystemPerformance: fileSize (1048576 bytes) is smaller than one operation (2097152 bytes)",
    },
];

#[test]
fn a_profile_is_refused_what_fio_refuses_and_a_later_phase_before_the_first_runs() {
    let failures: Vec<String> = SAME_REFUSAL.iter().filter_map(|c| run(c).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
