//! `iogauge check`'s arguments as clap parses them.

use super::*;

fn a(v: &[&str]) -> Result<CheckArgs, String> {
    use clap::Parser;
    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        a: CheckArgs,
    }
    T::try_parse_from(std::iter::once("check").chain(v.iter().copied()))
        .map(|t| t.a)
        .map_err(|e| e.to_string())
}

#[test]
fn arguments() {
    let x = a(&[
        "etcd",
        "--dir",
        "/d",
        "--scale=0.5",
        "--duration",
        "10",
        "--size",
        "64m",
        "--format",
        "json",
        "--strict",
    ])
    .unwrap();
    assert_eq!(x.profiles(), vec![OsString::from("etcd")]);
    assert_eq!(x.dir, PathBuf::from("/d"));
    assert_eq!(x.scale, 0.5);
    assert_eq!(x.duration, Some(Duration::from_secs(10)));
    assert_eq!(x.size, Some(64 << 20));
    assert!(x.format == Format::Json && x.strict);
    // fio's grammar: 1m is a MiB and 1G a GiB, never a milli-byte or 10^9 bytes.
    let size = |s: &str| a(&["--size", s]).unwrap().size;
    assert_eq!(size("1m"), Some(1 << 20));
    assert_eq!(size("1G"), Some(1 << 30));
    assert_eq!(size("1GiB"), Some(1 << 30));
    assert_eq!(
        a(&[]).unwrap().profiles(),
        DEFAULT_SUITE.map(OsString::from).to_vec()
    );
    assert!(a(&["--scale", "2"]).unwrap_err().starts_with(
        "error: invalid value '2' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1"
    ));
    assert!(a(&["--duration", "0"])
        .unwrap_err()
        .contains("must be above 0"));
    assert!(a(&["--bs=4k"])
        .unwrap_err()
        .starts_with("error: unexpected argument '--bs' found"));
    assert!(a(&["--list"]).unwrap().list);
    // The pod's format, compact unless asked.
    let pod = a(&["--format", "kube-frames"]).unwrap();
    assert!(pod.format == Format::KubeFrames && !pod.intervals);
    assert!(
        a(&["--format", "kube-frames", "--intervals"])
            .unwrap()
            .intervals
    );
    // preflight's name for the text format is accepted too.
    assert!(a(&["--format", "human"]).unwrap().format == Format::Text);
    // On a device the default suite leaves small-files out; named, it is kept (and is an
    // error there, with its reason).
    assert_eq!(
        a(&["--device", "/dev/sdz", "--allow-overwrite"])
            .unwrap()
            .profiles(),
        ["etcd", "sync-iops", "gitlab"].map(OsString::from).to_vec()
    );
    assert_eq!(
        a(&["small-files", "--device", "/dev/sdz"])
            .unwrap()
            .profiles(),
        [OsString::from("small-files")]
    );
}
