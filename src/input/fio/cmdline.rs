//! fio's command line: program flags (`--output`, `--output-format`, `--eta`, …), job options
//! (global before the first `--name`, then per job) and job file paths.

use super::{Entry, Origin};
use super::{Eta, OutputFormat};

/// The command line split into what it asks for; job options are checked later.
#[derive(Debug, Default, PartialEq)]
pub(super) struct CmdLine {
    pub globals: Vec<Entry>,
    /// Jobs started by `--name`, each with its options (the name first).
    pub jobs: Vec<Vec<Entry>>,
    pub job_files: Vec<String>,
    pub output_formats: Vec<OutputFormat>,
    pub output: Option<String>,
    pub eta: Option<Eta>,
    pub sections: Vec<String>,
    pub parse_only: bool,
    pub version: bool,
    pub help: bool,
    /// `--cmdhelp[=OPTION]`: Some("") for all options.
    pub cmdhelp: Option<String>,
    pub keep_files: bool,
    pub allow_overwrite: bool,
    /// `--readonly`: refuse every job that writes, and every layout.
    pub readonly: bool,
    /// `--report=FILE`: iogauge's HTML page of the run.
    pub report: Option<String>,
    /// `--json-intervals`: the JSON output with iogauge's per-interval data.
    pub json_intervals: bool,
    /// `--status-interval=TIME`: the results so far every TIME (bare number: seconds).
    pub status_interval: Option<std::time::Duration>,
    /// `--inflate-log=FILE`: print a compressed log's entries as text, and do nothing else.
    pub inflate_log: Option<String>,
    /// `--debug=LIST` (see debug.rs).
    pub debug: Option<String>,
    /// `--iogauge-max-size=S` (iogauge's own): every job's size and filesize at most S.
    pub max_size: Option<u64>,
    /// `--iogauge-max-runtime=T` (iogauge's own): every job's runtime and ramp_time at most T.
    pub max_runtime: Option<std::time::Duration>,
}

/// fio program flags iogauge does not have.
const UNSUPPORTED_FLAGS: [&str; 22] = [
    "bandwidth-log",
    "cpuclock-test",
    "crctest",
    "enghelp",
    "showcmd",
    "eta-interval",
    "eta-newline",
    "alloc-size",
    "warnings-fatal",
    "server",
    "daemonize",
    "client",
    "remote-config",
    "idle-prof",
    "trigger-file",
    "trigger-timeout",
    "trigger",
    "trigger-remote",
    "aux-path",
    "merge-blktrace-only",
    "latency-log",
    "append-terse",
];

fn parse_formats(v: &str, into: &mut Vec<OutputFormat>) -> Result<(), String> {
    for f in v.split(',') {
        let fmt = match f {
            "normal" => OutputFormat::Normal,
            "json" => OutputFormat::Json,
            "json+" => OutputFormat::JsonPlus,
            "terse" => OutputFormat::Terse,
            // iogauge's own: what an `iogauge kube fio` pod prints (report::frames).
            "kube-frames" => OutputFormat::KubeFrames,
            _ => {
                return Err(format!(
                    "--output-format={v}: unknown format '{f}'; expected normal, json, json+ or \
                     terse (several separated by commas)"
                ))
            }
        };
        if !into.contains(&fmt) {
            into.push(fmt);
        }
    }
    Ok(())
}

pub(super) fn parse(args: &[String]) -> Result<CmdLine, String> {
    let mut c = CmdLine::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let Some(opt) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .filter(|o| !o.is_empty())
        else {
            c.job_files.push(arg.clone());
            continue;
        };
        let (key, value) = match opt.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (opt, None),
        };
        // Flags that take a value accept `--flag=value` and `--flag value`, as getopt does.
        let mut required = |what: &str| -> Result<String, String> {
            match &value {
                Some(v) => Ok(v.clone()),
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("--{key} needs a value, e.g. --{key}={what}")),
            }
        };
        let no_value = |v: &Option<String>| -> Result<(), String> {
            match v {
                None => Ok(()),
                Some(_) => Err(format!("--{key} takes no value")),
            }
        };
        match key {
            "output" => c.output = Some(required("result.txt")?),
            "output-format" => parse_formats(&required("json")?, &mut c.output_formats)?,
            "minimal" => {
                no_value(&value)?;
                parse_formats("terse", &mut c.output_formats)?
            }
            "terse-version" => {
                if required("3")? != "3" {
                    return Err("--terse-version: iogauge writes terse version 3 only".into());
                }
            }
            "eta" => {
                c.eta = Some(match required("never")?.as_str() {
                    "always" => Eta::Always,
                    "never" => Eta::Never,
                    "auto" => Eta::Auto,
                    v => return Err(format!("--eta={v}: expected always, never or auto")),
                })
            }
            "section" => c.sections.push(required("job1")?),
            "debug" => c.debug = Some(required("parse")?),
            "parse-only" => {
                no_value(&value)?;
                c.parse_only = true
            }
            "version" => c.version = true,
            "help" | "h" => c.help = true,
            "cmdhelp" => c.cmdhelp = Some(value.clone().unwrap_or_default()),
            "keep-files" => {
                no_value(&value)?;
                c.keep_files = true
            }
            "report" => c.report = Some(required("report.html")?),
            "json-intervals" => {
                no_value(&value)?;
                c.json_intervals = true
            }
            "readonly" => {
                no_value(&value)?;
                c.readonly = true
            }
            // fio 3.33 reads and ignores it ("we don't track/need this anymore").
            "max-jobs" => {
                required("16")?;
            }
            "status-interval" => {
                let v = required("1")?;
                let t = crate::model::units::parse_time(&v, crate::model::units::TimeUnit::Seconds)
                    .map_err(|e| format!("--status-interval={v}: {e}"))?;
                // fio: "status interval too small" below 1 ms.
                if t < std::time::Duration::from_millis(1) {
                    return Err(format!(
                        "--status-interval={v}: too small; expected at least 1ms, e.g. --status-interval=1"
                    ));
                }
                c.status_interval = Some(t);
            }
            "iogauge-max-size" => {
                let v = required("64m")?;
                let b = crate::model::units::parse_flag_size(&v)
                    .map_err(|e| format!("--iogauge-max-size={v}: {e}"))?;
                c.max_size = Some(b);
            }
            "iogauge-max-runtime" => {
                let v = required("5s")?;
                let t = crate::model::units::parse_time(&v, crate::model::units::TimeUnit::Seconds)
                    .map_err(|e| format!("--iogauge-max-runtime={v}: {e}"))?;
                c.max_runtime = Some(t);
            }
            "inflate-log" => c.inflate_log = Some(required("job_bw.1.log.fz")?),
            "allow-overwrite" => {
                no_value(&value)?;
                c.allow_overwrite = true
            }
            _ if UNSUPPORTED_FLAGS.contains(&key) => {
                return Err(format!("option '--{key}' is not supported by iogauge yet"))
            }
            _ => {
                let e = Entry {
                    key: key.to_string(),
                    value,
                    origin: Origin::CommandLine,
                };
                if key == "name" {
                    c.jobs.push(vec![e]);
                } else if let Some(job) = c.jobs.last_mut() {
                    job.push(e);
                } else {
                    c.globals.push(e);
                }
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    fn keys(es: &[Entry]) -> Vec<(&str, Option<&str>)> {
        es.iter()
            .map(|e| (e.key.as_str(), e.value.as_deref()))
            .collect()
    }

    #[test]
    fn options_before_the_first_name_are_global() {
        let c = parse(&args(&[
            "--rw=write",
            "--bs=2300",
            "--name=a",
            "--size=1m",
            "--name=b",
            "--time_based",
        ]))
        .unwrap();
        assert_eq!(
            keys(&c.globals),
            vec![("rw", Some("write")), ("bs", Some("2300"))]
        );
        assert_eq!(c.jobs.len(), 2);
        assert_eq!(
            keys(&c.jobs[0]),
            vec![("name", Some("a")), ("size", Some("1m"))]
        );
        assert_eq!(
            keys(&c.jobs[1]),
            vec![("name", Some("b")), ("time_based", None)]
        );
    }

    #[test]
    fn program_flags_job_files_and_single_dashes() {
        let c = parse(&args(&[
            "fio.job",
            "--eta=never",
            "-directory=/scratch",
            "--output",
            "out.json",
            "--output-format=json,normal",
            "--output-format=json",
            "--section",
            "s1",
            "-",
            "--parse-only",
            "--keep-files",
            "--report",
            "r.html",
        ]))
        .unwrap();
        assert_eq!(c.job_files, vec!["fio.job".to_string(), "-".to_string()]);
        assert_eq!(c.eta, Some(Eta::Never));
        assert_eq!(keys(&c.globals), vec![("directory", Some("/scratch"))]);
        assert_eq!(c.output.as_deref(), Some("out.json"));
        assert_eq!(
            c.output_formats,
            vec![OutputFormat::Json, OutputFormat::Normal]
        );
        assert_eq!(c.sections, vec!["s1".to_string()]);
        assert!(c.parse_only && c.keep_files && !c.allow_overwrite);
        assert_eq!(c.report.as_deref(), Some("r.html"));
        assert_eq!(
            parse(&args(&["--report=x.html"]))
                .unwrap()
                .report
                .as_deref(),
            Some("x.html")
        );
        assert_eq!(
            parse(&args(&["--report"])).unwrap_err(),
            "--report needs a value, e.g. --report=report.html"
        );
    }

    #[test]
    fn flag_errors_are_exact() {
        let err = |a: &[&str]| parse(&args(a)).unwrap_err();
        assert_eq!(
            err(&["--output-format=xml"]),
            "--output-format=xml: unknown format 'xml'; expected normal, json, json+ or terse \
             (several separated by commas)"
        );
        assert_eq!(
            err(&["--eta=sometimes"]),
            "--eta=sometimes: expected always, never or auto"
        );
        assert_eq!(
            err(&["--output"]),
            "--output needs a value, e.g. --output=result.txt"
        );
        assert_eq!(
            err(&["--showcmd"]),
            "option '--showcmd' is not supported by iogauge yet"
        );
        assert_eq!(err(&["--parse-only=1"]), "--parse-only takes no value");
        assert_eq!(
            err(&["--terse-version=2"]),
            "--terse-version: iogauge writes terse version 3 only"
        );
        let c = parse(&args(&["--minimal"])).unwrap();
        assert_eq!(c.output_formats, vec![OutputFormat::Terse]);
    }

    #[test]
    fn readonly_and_max_jobs() {
        let c = parse(&args(&[
            "--readonly",
            "--max-jobs=4",
            "--max-jobs",
            "8",
            "--name=a",
        ]))
        .unwrap();
        assert!(c.readonly);
        assert_eq!(c.jobs.len(), 1);
        assert_eq!(
            parse(&args(&["--readonly=1"])).unwrap_err(),
            "--readonly takes no value"
        );
        // fio 3.33 has no --timeout flag: it is the job option (runtime's alias), global here.
        let c = parse(&args(&["--timeout=2", "--runtime=3", "--name=a"])).unwrap();
        assert_eq!(c.globals.len(), 2);
    }
}
