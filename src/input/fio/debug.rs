//! fio's `--debug=LIST`: the categories fio 3.33 accepts (init.c's debug_levels), `--debug=help`,
//! and the one category iogauge has an equivalent of, `parse`: for each option it applies, fio's
//! parser lines (parse.c's dprint(FD_PARSE, …)) on stdout, where fio prints them, in fio's
//! format `parse    PID  …`. The other categories are accepted and print nothing (docs/FIO.md).

use super::debug_types::TYPES;
use std::cell::Cell;
use std::io::Write;

/// fio 3.33's debug categories, in its order.
const CATEGORIES: [&str; 19] = [
    "process",
    "file",
    "io",
    "mem",
    "blktrace",
    "verify",
    "random",
    "parse",
    "diskutil",
    "job",
    "mutex",
    "profile",
    "time",
    "net",
    "rate",
    "compress",
    "steadystate",
    "helperthread",
    "zbd",
];

thread_local! {
    /// `--debug=parse` (or `all`) is on while this command line is parsed.
    static PARSE: Cell<bool> = const { Cell::new(false) };
}

/// fio's `--debug=help` (and `?`) text.
pub(super) fn help() -> String {
    format!("fio: dumping debug options:{},all\n", CATEGORIES.join(","))
}

/// Whether `v` asks for the list of categories.
pub(super) fn is_help(v: &str) -> bool {
    v == "help" || v == "?"
}

/// Reads `--debug=LIST` as fio's set_debug does (each item a category name or its prefix
/// extension, `all`, or `job:N`), prints fio's confirmation lines on stdout and turns on what
/// iogauge has (parse). A category fio does not know is refused.
pub(super) fn enable(v: &str) -> Result<(), String> {
    let mut lines = Vec::new();
    let mut parse = false;
    for item in v.split(',') {
        // fio compares the leading characters only ("parsefoo" is parse, "allx" is all).
        if item.starts_with("all") {
            lines.push("fio: set all debug options".to_string());
            parse = true;
            continue;
        }
        let Some(cat) = CATEGORIES.iter().find(|c| item.starts_with(**c)) else {
            return Err(format!(
                "--debug={v}: unknown debug category '{item}'; expected one or more of {},all \
                 separated by commas, e.g. --debug=parse (--debug=help lists them)",
                CATEGORIES.join(",")
            ));
        };
        if *cat == "job" {
            let n = item
                .split_once(':')
                .and_then(|(_, n)| n.parse::<u32>().ok())
                .ok_or_else(|| {
                    format!("--debug={v}: missing job number; expected job:N, e.g. job:1")
                })?;
            lines.push(format!("fio: set debug jobno {n}"));
        } else {
            lines.push(format!("fio: set debug option {item}"));
            parse |= *cat == "parse";
        }
    }
    let mut out = std::io::stdout().lock();
    for l in lines {
        // stdout closed: nothing to tell, as for any output.
        let _ = writeln!(out, "{l}");
    }
    PARSE.with(|p| p.set(parse));
    Ok(())
}

/// Off again (each command line parsed starts without it).
pub(super) fn reset() {
    PARSE.with(|p| p.set(false));
}

/// `f` with the parser lines off (options applied again, which fio applies once).
pub(super) fn muted<T>(f: impl FnOnce() -> T) -> T {
    let was = PARSE.with(|p| p.replace(false));
    let r = f();
    PARSE.with(|p| p.set(was));
    r
}

/// A parser line of fio's job file reader (parse_jobs_ini), when parse is on.
pub(super) fn text(t: &str) {
    if PARSE.with(Cell::get) {
        line(t);
    }
}

/// A job file section as fio's reader traces it: its name, and its option lines as written.
pub(super) fn section<'a>(name: &str, entries: impl Iterator<Item = (&'a str, Option<&'a str>)>) {
    if !PARSE.with(Cell::get) {
        return;
    }
    line(&format!("Parsing section [{name}]"));
    if name != "global" {
        line("dup options");
    }
    for (k, v) in entries {
        match v {
            Some(v) => line(&format!("{k}={v}")),
            None => line(k),
        }
    }
}

/// One parser line, as fio's log_prevalist formats it: category, thread id, text.
fn line(text: &str) {
    let _ = writeln!(
        std::io::stdout().lock(),
        "{:<8} {:<5} {text}",
        "parse",
        std::process::id()
    );
}

/// fio's parser lines for option `name` (canonical) with `value`, before it is applied:
/// handle_option, __handle_option with fio's type, and the number it read for a numeric type.
pub(super) fn option(name: &str, value: Option<&str>) {
    if !PARSE.with(Cell::get) {
        return;
    }
    let ptr = value.unwrap_or("(null)");
    let (ty, flags) = TYPES
        .binary_search_by(|(n, _, _)| n.cmp(&name))
        .map_or(("OPT_STR", 0), |i| (TYPES[i].1, TYPES[i].2));
    line(&format!("handle_option={name}, ptr={ptr}"));
    line(&format!("__handle_option={name}, type={ty}, ptr={ptr}"));
    let number = |v: &str| match ty {
        _ if flags & 2 != 0 || ty == "OPT_STR_VAL_TIME" => time_us(v, flags & 1 != 0),
        _ => crate::model::units::parse_bytes(v).ok(),
    };
    let out = |n: Option<u64>| match n {
        Some(n) => line(&format!("  ret=0, out={n}")),
        None => line("  ret=1, out=0"),
    };
    match (ty, value) {
        (
            "OPT_STR_VAL_TIME" | "OPT_INT" | "OPT_ULL" | "OPT_STR_VAL" | "OPT_STR_VAL_ZONE",
            Some(v),
        ) => {
            // fio reads `4k,8k` (one value per direction) part by part, each on its own line.
            let mut parts = v.split(',');
            out(number(parts.next().unwrap_or(v)));
            for p in parts {
                line(&format!("__handle_option={name}, type={ty}, ptr={p}"));
                out(number(p));
            }
        }
        // A flag without a value is 1; a boolean needs one.
        ("OPT_BOOL" | "OPT_STR_SET", Some(v)) => out(crate::model::units::parse_int(v).ok()),
        ("OPT_STR_SET", None) => out(Some(1)),
        ("OPT_BOOL", None) => out(None),
        _ => {}
    }
    if name == "steadystate" {
        if let Some(t) = value.and_then(steadystate) {
            line(&t);
        }
    }
}

/// A time in microseconds, as fio's check_str_time reads it: a bare number in seconds for
/// `is_seconds` options, else in microseconds.
fn time_us(v: &str, seconds: bool) -> Option<u64> {
    if let Ok(n) = v.trim().parse::<u64>() {
        return Some(if seconds {
            n.saturating_mul(1_000_000)
        } else {
            n
        });
    }
    crate::model::units::parse_time(v, crate::model::units::TimeUnit::Seconds)
        .ok()
        .map(|d| d.as_micros() as u64)
}

/// The line fio's steadystate callback prints for a valid `criterion:limit`.
fn steadystate(v: &str) -> Option<String> {
    let (kind, limit) = v.split_once(':')?;
    let limit = limit.trim();
    if let Some(p) = limit.strip_suffix('%') {
        let f: f64 = p.trim().parse().ok()?;
        return Some(format!("set steady state threshold to {f:.6}%"));
    }
    if kind.starts_with("iops") {
        let f: f64 = limit.parse().ok()?;
        return Some(format!("set steady state IOPS threshold to {f:.6}"));
    }
    let n = crate::model::units::parse_bytes(limit).ok()?;
    Some(format!("set steady state BW threshold to {n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_sorted_for_the_search() {
        assert!(TYPES.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn unknown_categories_are_refused_with_fios_list() {
        let e = enable("parse,bogus").unwrap_err();
        assert!(e.contains("unknown debug category 'bogus'"), "{e}");
        assert!(e.contains("process,file,io,mem,blktrace,verify,random,parse,diskutil,job,"));
        assert_eq!(
            enable("job").unwrap_err(),
            "--debug=job: missing job number; expected job:N, e.g. job:1"
        );
        reset();
    }

    #[test]
    fn steady_state_lines_as_fio_prints_them() {
        assert_eq!(
            steadystate("iops:10").as_deref(),
            Some("set steady state IOPS threshold to 10.000000")
        );
        assert_eq!(
            steadystate("iops:.1%").as_deref(),
            Some("set steady state threshold to 0.100000%")
        );
        assert_eq!(
            steadystate("bw:12").as_deref(),
            Some("set steady state BW threshold to 12")
        );
        assert_eq!(time_us("10s", true), Some(10_000_000));
        assert_eq!(time_us("5", true), Some(5_000_000));
        assert_eq!(time_us("5", false), Some(5));
    }
}
