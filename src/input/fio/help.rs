//! `iogauge fio --help` and `--cmdhelp`: generated from the option table, so they cannot drift.

use super::{known, options};

pub(super) fn usage() -> String {
    let mut s = String::from(
        "Usage: iogauge fio [OPTIONS] [JOBFILE...]\n\
         Runs fio command lines and job files unchanged and prints fio's output formats.\n\
         Options before the first --name apply to every job (and to job files); each --name starts a job.\n\
         \n\
         fio's program options:\n  \
           --output=FILE            write results to FILE instead of stdout\n  \
           --output-format=LIST     normal, json, json+, terse (comma list; default normal)\n  \
           --minimal                same as --output-format=terse\n  \
           --eta=always|never|auto  progress line on stderr (auto: when stderr is a terminal)\n  \
           --status-interval=TIME   print the results so far every TIME\n  \
           --section=NAME           run only this job file section (repeatable)\n  \
           --parse-only             check the options and exit\n  \
           --debug=LIST             fio's debug categories (help lists them); parse prints each\n                           \
           option as fio's parser reads it, the others print nothing\n  \
           --readonly               refuse every job that writes and every file layout\n  \
           --inflate-log=FILE       print a compressed log (log_store_compressed's .log.fz) as text\n  \
           --max-jobs=N             accepted and ignored, as fio 3.33 does\n  \
           --cmdhelp[=OPTION]       describe one job option, or all of them\n  \
           --version, --help\n\
         \n\
         iogauge's own options (fio has none of these):\n  \
           --keep-files             leave the data files in place (iogauge removes them by default)\n  \
           --allow-overwrite        allow writing into files iogauge did not create\n  \
           --report=FILE            also write a self-contained HTML page of the run (charts)\n  \
           --json-intervals         add iogauge's per-interval data to json/json+ output: IOPS and\n                           \
           bandwidth series and latency histograms per 100 ms (what the\n                           \
           report's over-time charts need; the history keeps them anyway)\n  \
           --iogauge-max-size=S     cap every job's size and filesize at S (a job file run smaller,\n                           \
           unchanged; each cap is noted with the results)\n  \
           --iogauge-max-runtime=T  cap every job's runtime and ramp_time at T\n  \
           --output-format=kube-frames  the JSON and normal output as checksummed log lines (what\n                           \
           an 'iogauge kube fio' pod prints)\n  \
           --no-history             do not save this run in the history (or IOGAUGE_NO_HISTORY=1)\n  \
           --history-db=FILE        the history database to save to (default $IOGAUGE_HISTORY, else\n                           \
           $XDG_DATA_HOME/iogauge/history.db); 'iogauge history' lists the runs\n\
         \n\
         Job options (--option=value on the command line, option=value in job files):\n",
    );
    for o in options::all() {
        s.push_str(&line(o.name, o.aliases, &o.describe()));
    }
    s.push_str(
        "\nAny other fio option is refused with \"option 'X' is not supported by iogauge yet\".\n",
    );
    s
}

fn line(name: &str, aliases: &[&str], help: &str) -> String {
    let label = if aliases.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", aliases.join(", "))
    };
    format!("  {label:<26} {help}\n")
}

/// `--cmdhelp` (all options) or `--cmdhelp=OPTION`.
pub(super) fn cmdhelp(topic: &str) -> Result<String, String> {
    if topic.is_empty() || topic == "all" {
        return Ok(options::all()
            .map(|o| line(o.name, o.aliases, &o.describe()))
            .collect());
    }
    if let Some(o) = options::find(topic) {
        return Ok(line(o.name, o.aliases, &o.describe()));
    }
    if known::is_fio_option(topic) {
        return Ok(format!(
            "{topic}: {}\n",
            super::unsupported::option_refusal(topic)
        ));
    }
    Err(match known::closest(topic) {
        Some(near) => format!("--cmdhelp={topic}: unknown option; did you mean '{near}'?"),
        None => format!(
            "--cmdhelp={topic}: unknown option; 'iogauge fio --cmdhelp' lists the supported ones"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_lists_every_supported_option() {
        let u = usage();
        for o in options::all() {
            assert!(u.contains(&format!("\n  {}", o.name)), "{} missing", o.name);
        }
        assert!(u.contains("  bs (blocksize)"));
    }

    /// The names in a help line's "a, b (b2) or c" list.
    fn names_in(line: &str, lead: &str) -> Vec<String> {
        let list = &line[line.find(lead).unwrap() + lead.len()..];
        let list = list.split(" (rw=").next().unwrap().trim();
        list.replace(" or ", ", ")
            .split(", ")
            .flat_map(|i| i.split(" (").map(|n| n.trim_end_matches(')').to_string()))
            .collect()
    }

    #[test]
    fn engine_and_rw_lists_are_the_parsers_tables() {
        let u = usage();
        let line = u.lines().find(|l| l.starts_with("  ioengine ")).unwrap();
        let shown = names_in(line, "How the job does its I/O: ");
        let accepted: Vec<String> = options::ENGINES
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        assert_eq!(shown, accepted);
        let refused = options::OTHER_FIO_ENGINES
            .iter()
            .chain(super::super::unsupported::ENGINES.iter().map(|(n, _)| n));
        for r in refused {
            assert!(!shown.iter().any(|s| s == r), "{r} is refused but listed");
        }
        let line = u
            .lines()
            .find(|l| l.starts_with("  rw (readwrite) "))
            .unwrap();
        let shown = names_in(line, "The I/O pattern: ");
        let accepted: Vec<String> = options::RW_VALUES
            .iter()
            .map(|(n, ..)| n.to_string())
            .collect();
        assert_eq!(shown, accepted);
    }

    #[test]
    fn cmdhelp_answers_for_supported_unsupported_and_unknown_options() {
        assert!(cmdhelp("readwrite")
            .unwrap()
            .starts_with("  rw (readwrite)"));
        assert!(cmdhelp("profile")
            .unwrap()
            .starts_with("profile: option 'profile' cannot work in iogauge: fio's built-in"));
        assert_eq!(
            cmdhelp("runtiem").unwrap_err(),
            "--cmdhelp=runtiem: unknown option; did you mean 'runtime'?"
        );
        assert_eq!(cmdhelp("").unwrap().lines().count(), options::all().count());
    }
}
